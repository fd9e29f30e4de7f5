//go:build e2e

package proxies_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/internal/scenario"
)

// TestProxiesOnKind deploys, for each Config, the sample app (2 replicas) and the proxy's objects
// in a namespace of its own on rollcheck's kind cluster (which must exist: make cluster), sends
// requests through the front Service's pod (a port-forward to 127.0.0.1) and checks that each
// response is the app's (X-Pod-Name) and names the upstream the proxy chose (X-Upstream: the
// pod's address, or the ClusterIP for NginxKeepalive; none for TraefikIngress). Then it
// force-deletes one app pod and logs what the next 3 s of requests got: the proxy's own errors
// must carry X-Upstream too, where the proxy names it.
// It is no row of the matrix (make e2e does not run it): go test -tags e2e -run
// TestProxiesOnKind ./internal/proxies/ with the cluster up.
func TestProxiesOnKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	opts, err := cluster.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.Logf = t.Logf
	c, err := cluster.Existing(ctx, opts)
	if errors.Is(err, cluster.ErrNoCluster) {
		t.Skipf("%v: make cluster first", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	appImage, err := c.BuildAppImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var images proxies.Images
	var refs []string
	for _, p := range proxies.All {
		ref, err := proxies.EnsureImage(ctx, p, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		images = images.With(p, ref)
		refs = append(refs, ref)
	}
	if err := c.LoadImages(ctx, refs); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range proxies.Configs {
		t.Run(string(cfg), func(t *testing.T) { proxyOnKind(ctx, t, c, cfg, appImage, images) })
	}
}

func proxyOnKind(ctx context.Context, t *testing.T, c *cluster.Cluster, cfg proxies.Config, appImage string, images proxies.Images) {
	// Not rollcheck's part-of label: a concurrent run's sweep of stale namespaces would take it.
	ns, err := kube.CreateNamespace(ctx, c.Client, "proxy-"+string(cfg), map[string]string{"rollcheck.io/proxies-e2e": "true"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kube.TeardownNamespace(context.Background(), c.Client, ns); err != nil {
			t.Errorf("tear down %s: %v", ns, err)
		}
	})
	appObjs, err := scenario.Render("proxy-"+string(cfg), scenario.Sample{OnSIGTERM: scenario.ShutdownExit}, appImage)
	if err != nil {
		t.Fatal(err)
	}
	var app *appsv1.Deployment
	for _, o := range appObjs {
		if d, ok := o.(*appsv1.Deployment); ok {
			app = d
			d.Spec.Replicas = ptr.To[int32](2)
		}
	}
	if app == nil {
		t.Fatal("the sample app's manifests have no Deployment")
	}
	apply(ctx, t, c.Client, ns, appObjs)
	if err := kube.WaitRollout(ctx, c.Client, ns, app.Name, 3*time.Minute); err != nil {
		t.Fatalf("app: %v (%s)", err, kube.PodProblems(ctx, c.Client, ns, "app="+app.Name))
	}
	objs, err := proxies.Objects(cfg, images, proxies.AppRef{Selector: app.Spec.Selector.MatchLabels, Port: scenario.SampleAppPort})
	if err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, c.Client, ns, objs)
	if err := kube.WaitRollout(ctx, c.Client, ns, proxies.FrontName, 3*time.Minute); err != nil {
		t.Fatalf("front: %v (%s)", err, kube.PodProblems(ctx, c.Client, ns, "app.kubernetes.io/name=front"))
	}

	var pods corev1.PodList
	if err := c.Client.Resources(ns).List(ctx, &pods, resources.WithLabelSelector("app.kubernetes.io/name=front")); err != nil || len(pods.Items) != 1 {
		t.Fatalf("the front pod: %d pods, %v", len(pods.Items), err)
	}
	local, stop, err := portForward(ctx, c.Client.RESTConfig(), ns, pods.Items[0].Name, proxies.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	want := "" // the X-Upstream of NginxKeepalive: the ClusterIP Service's address
	if cfg == proxies.NginxKeepalive {
		var svc corev1.Service
		if err := c.Client.Resources(ns).Get(ctx, proxies.ClusterIPServiceName, ns, &svc); err != nil {
			t.Fatal(err)
		}
		want = fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, scenario.SampleAppPort)
	}
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	// Ready is not yet serving: Traefik answers its ping before it applied the Ingress (404).
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if r := get(client, local); r.err == nil && r.status == 200 {
			break
		}
	}
	seen := map[string]string{}
	for i := 0; i < 20; i++ {
		r := get(client, local)
		if r.err != nil || r.status != 200 || r.pod == "" {
			t.Errorf("request %d: %s", i, r)
			continue
		}
		up := want
		switch {
		case !cfg.UpstreamNamed():
			up = "" // Traefik names no upstream
		case up == "":
			up = fmt.Sprintf("%s:%d", r.podIP, scenario.SampleAppPort)
		}
		if r.upstream != up {
			t.Errorf("request %d: X-Upstream %q, want %q (%s)", i, r.upstream, up, r)
		}
		seen[r.pod] = r.upstream
		if i < 3 {
			t.Logf("%s: %s", cfg, r)
		}
	}
	t.Logf("%s: 20 requests, pods seen (X-Pod-Name -> X-Upstream): %v", cfg, seen)

	// The proxy's own error responses: force-delete one app pod, then 3 s of requests.
	var appPods corev1.PodList
	if err := c.Client.Resources(ns).List(ctx, &appPods, resources.WithLabelSelector("app="+app.Name)); err != nil || len(appPods.Items) == 0 {
		t.Fatalf("app pods: %v", err)
	}
	victim := appPods.Items[0]
	if err := c.Client.Resources(ns).Delete(ctx, &victim, resources.WithGracePeriod(0)); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		r := get(client, local)
		key := fmt.Sprintf("status=%d pod=%q X-Upstream=%q", r.status, r.pod, r.upstream)
		if r.err != nil {
			key = "error " + r.err.Error()
		}
		counts[key]++
		if r.status >= 500 && r.pod == "" && r.upstream == "" && cfg.UpstreamNamed() {
			t.Errorf("the proxy's own %d has no X-Upstream: %s", r.status, r)
		}
	}
	lines := make([]string, 0, len(counts))
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%3d × %s", n, k))
	}
	sort.Strings(lines)
	t.Logf("%s: 3 s after force-deleting %s (%s):\n  %s", cfg, victim.Name, victim.Status.PodIP, strings.Join(lines, "\n  "))
}

func apply(ctx context.Context, t *testing.T, client klient.Client, ns string, objs []check.Object) {
	t.Helper()
	for _, o := range objs {
		o.SetNamespace(ns)
		if err := kube.Apply(ctx, client, o); err != nil {
			t.Fatal(err)
		}
	}
}

// result is one response seen through the proxy.
type result struct {
	status               int
	pod, podIP, upstream string
	body                 string
	err                  error
}

func (r result) String() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	return fmt.Sprintf("%d X-Pod-Name=%q X-Pod-IP=%q X-Upstream=%q body=%q", r.status, r.pod, r.podIP, r.upstream, strings.TrimSpace(r.body))
}

func get(client *http.Client, port int) result {
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return result{status: resp.StatusCode, pod: resp.Header.Get("X-Pod-Name"), podIP: resp.Header.Get("X-Pod-IP"),
		upstream: resp.Header.Get("X-Upstream"), body: string(b)}
}

// portForward forwards a free port of 127.0.0.1 to port of the pod, through the API server, and
// returns it and how to stop forwarding.
func portForward(ctx context.Context, cfg *rest.Config, ns, pod string, port int32) (int, func(), error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, nil, err
	}
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, (*url.URL)(u))
	stopCh, readyCh := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stopCh, readyCh, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- fw.ForwardPorts() }()
	select {
	case <-readyCh:
	case err := <-errCh:
		return 0, nil, fmt.Errorf("port-forward to %s/%s: %w", ns, pod, err)
	case <-ctx.Done():
		close(stopCh)
		return 0, nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		close(stopCh)
		return 0, nil, fmt.Errorf("port-forward to %s/%s: ports %v, %v", ns, pod, ports, err)
	}
	return int(ports[0].Local), func() { close(stopCh) }, nil
}
