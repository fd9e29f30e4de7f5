// Package scrape reads kube-proxy's network-programming histogram from a cluster, through the
// API server's pod proxy; package proxymetrics holds the histogram and its arithmetic, with no
// cluster client, so that the reports can pool rows without one.
package scrape

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/proxymetrics"
)

// KubeProxy reads proxymetrics.Metric from every running kube-proxy pod of the cluster through the API server's
// pod proxy and returns the sum. It returns proxymetrics.ErrNoKubeProxy when there is no kube-proxy pod, and
// an error when one cannot be read: a sum over only some nodes would be wrong without saying so.
func KubeProxy(ctx context.Context, cs kubernetes.Interface) (proxymetrics.Histogram, error) {
	lctx, cancel := context.WithTimeout(ctx, proxymetrics.CallTimeout)
	pods, err := cs.CoreV1().Pods(proxymetrics.Namespace).List(lctx, metav1.ListOptions{LabelSelector: proxymetrics.Selector})
	cancel()
	if err != nil {
		return proxymetrics.Histogram{}, forbidden(fmt.Errorf("list the kube-proxy pods (%s in %s): %w", proxymetrics.Selector, proxymetrics.Namespace, err))
	}
	if len(pods.Items) == 0 {
		return proxymetrics.Histogram{}, proxymetrics.ErrNoKubeProxy
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	var total proxymetrics.Histogram
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		h, err := scrapePod(ctx, cs, p.Name)
		if err != nil {
			return proxymetrics.Histogram{}, err
		}
		if total, err = total.Add(h); err != nil {
			return proxymetrics.Histogram{}, fmt.Errorf("add the metrics of kube-proxy %s to the others': %w", p.Name, err)
		}
		var restarts int32
		for _, st := range p.Status.ContainerStatuses {
			restarts += st.RestartCount
		}
		total.Sources = append(total.Sources, proxymetrics.Source{Pod: p.Name, Restarts: restarts})
	}
	if len(total.Sources) == 0 {
		return proxymetrics.Histogram{}, fmt.Errorf("none of the %d kube-proxy pods (%s in %s) is running", len(pods.Items), proxymetrics.Selector, proxymetrics.Namespace)
	}
	return total, nil
}

// ProxyMode asks a running kube-proxy pod which mode it runs in (its metrics server's
// /proxyMode: "iptables", "nftables", "ipvs"), through the API server's pod proxy. Every
// kube-proxy of a cluster runs with one configuration, so one answer stands for all.
func ProxyMode(ctx context.Context, cs kubernetes.Interface) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, proxymetrics.CallTimeout)
	defer cancel()
	pods, err := cs.CoreV1().Pods(proxymetrics.Namespace).List(lctx, metav1.ListOptions{LabelSelector: proxymetrics.Selector})
	if err != nil {
		return "", forbidden(fmt.Errorf("list the kube-proxy pods (%s in %s): %w", proxymetrics.Selector, proxymetrics.Namespace, err))
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		b, err := cs.CoreV1().Pods(proxymetrics.Namespace).ProxyGet("http", p.Name, proxymetrics.MetricsPort, "proxyMode", nil).DoRaw(lctx)
		if err != nil {
			return "", forbidden(fmt.Errorf("read the mode of kube-proxy %s/%s through the API server's pod proxy: %w", proxymetrics.Namespace, p.Name, err))
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", proxymetrics.ErrNoKubeProxy
}

func scrapePod(ctx context.Context, cs kubernetes.Interface, pod string) (proxymetrics.Histogram, error) {
	ctx, cancel := context.WithTimeout(ctx, proxymetrics.CallTimeout)
	defer cancel()
	b, err := cs.CoreV1().Pods(proxymetrics.Namespace).ProxyGet("http", pod, proxymetrics.MetricsPort, "metrics", nil).DoRaw(ctx)
	if err != nil {
		// DoRaw's error says only "the server is currently unable to handle the request": the
		// API server's reason is in the Status it answered with.
		var st metav1.Status
		if json.Unmarshal(b, &st) == nil && st.Kind == "Status" && st.Message != "" {
			err = fmt.Errorf("%w: %s", err, st.Message)
		}
		err = fmt.Errorf("read the metrics of kube-proxy %s/%s through the API server's pod proxy (port %s): %w", proxymetrics.Namespace, pod, proxymetrics.MetricsPort, err)
		err = forbidden(err)
		if apierrors.IsServiceUnavailable(err) {
			// The API server could not connect to the pod (its own answer: "error trying to reach service").
			err = fmt.Errorf("%w; kube-proxy serves its metrics on 127.0.0.1:%s by default, out of the pod proxy's reach: set metricsBindAddress: \"0.0.0.0:%s\" in its KubeProxyConfiguration (rollcheck's kind-config.yaml does; an existing cluster needs creating anew)", err, proxymetrics.MetricsPort, proxymetrics.MetricsPort)
		}
		return proxymetrics.Histogram{}, err
	}
	h, err := proxymetrics.Parse(bytes.NewReader(b))
	if err != nil {
		return proxymetrics.Histogram{}, fmt.Errorf("kube-proxy %s/%s: %w", proxymetrics.Namespace, pod, err)
	}
	return h, nil
}

// forbidden adds to an error the API server answered with 403 which right is missing and what
// grants it (internal/access: kube-proxy's metrics are an optional right of a run).
func forbidden(err error) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	var missing []string
	for _, c := range access.Checks(access.Of(access.KubeProxyMetrics)) {
		missing = append(missing, c.String())
	}
	return fmt.Errorf("%w; not measured without the rights %s (%s grants them)", err, strings.Join(missing, ", "), access.Hint(access.KubeProxyMetrics))
}
