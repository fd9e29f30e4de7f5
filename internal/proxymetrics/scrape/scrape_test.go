package scrape

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/internal/proxymetrics"
)

// The fixtures are proxymetrics' (see its tests for what they hold).
const (
	fixtureIPv4      = "../testdata/kube-proxy-v1.34-ipv4.metrics"
	fixtureDualStack = "../testdata/kube-proxy-v1.34-dualstack.metrics"
	fixtureFresh     = "../testdata/kube-proxy-v1.34-fresh.metrics"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkCounts checks the histogram's count, sum and the cumulative counts of the buckets want names.
func checkCounts(t *testing.T, h proxymetrics.Histogram, n uint64, sum float64, want map[float64]uint64) {
	t.Helper()
	if h.Count != n || math.Abs(h.Sum-sum) > 1e-9 {
		t.Errorf("count %d sum %g, want %d and %g", h.Count, h.Sum, n, sum)
	}
	got := map[float64]uint64{}
	for _, b := range h.Buckets {
		got[b.UpperBound] = b.Count
	}
	for le, c := range want {
		if got[le] != c {
			t.Errorf("bucket le=%g: %d, want %d", le, got[le], c)
		}
	}
}

// fakeAPIServer answers the two requests Scrape makes: the kube-proxy pod list and each pod's
// /metrics through the pod proxy.
type fakeAPIServer struct {
	pods    []corev1.Pod
	metrics map[string]string // pod -> its /metrics; a pod missing here answers 503 as the API server does when the dial fails
	mu      sync.Mutex
	proxied []string // pods whose metrics were asked for
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const pods = "/api/v1/namespaces/kube-system/pods"
	reply := func(code int, obj any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(obj)
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == pods:
		if sel := r.URL.Query().Get("labelSelector"); sel != proxymetrics.Selector {
			http.Error(w, "fake API server: labelSelector "+sel, http.StatusBadRequest)
			return
		}
		reply(http.StatusOK, &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: f.pods})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, pods+"/http:") && strings.HasSuffix(r.URL.Path, ":10249/proxy/metrics"):
		pod := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, pods+"/http:"), ":10249/proxy/metrics")
		f.mu.Lock()
		f.proxied = append(f.proxied, pod)
		f.mu.Unlock()
		body, ok := f.metrics[pod]
		if !ok {
			reply(http.StatusServiceUnavailable, &metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable,
				Reason:  metav1.StatusReasonServiceUnavailable,
				Message: "error trying to reach service: dial tcp 172.18.0.2:10249: connect: connection refused",
			})
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	default:
		http.Error(w, "fake API server: unexpected "+r.Method+" "+r.URL.String(), http.StatusNotImplemented)
	}
}

func clientOn(t *testing.T, f *fakeAPIServer) kubernetes.Interface {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func kubeProxyPod(name string, phase corev1.PodPhase, restarts int32) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: proxymetrics.Namespace, Labels: map[string]string{"k8s-app": "kube-proxy"}}}
	p.Status.Phase = phase
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-proxy", RestartCount: restarts}}
	return p
}

func TestScrapeSumsEveryRunningKubeProxy(t *testing.T) {
	f := &fakeAPIServer{
		pods: []corev1.Pod{
			kubeProxyPod("kube-proxy-wrk1", corev1.PodRunning, 2),
			kubeProxyPod("kube-proxy-ctl0", corev1.PodRunning, 0),
			kubeProxyPod("kube-proxy-new9", corev1.PodPending, 0),
		},
		metrics: map[string]string{"kube-proxy-ctl0": read(t, fixtureIPv4), "kube-proxy-wrk1": read(t, fixtureDualStack)},
	}
	h, err := KubeProxy(context.Background(), clientOn(t, f))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, h, 38, 81.97, map[float64]uint64{0.25: 7, 0.5: 18, 1: 32, 2: 36, 60: 37, 65: 38, math.Inf(1): 38})
	if want := []proxymetrics.Source{{Pod: "kube-proxy-ctl0"}, {Pod: "kube-proxy-wrk1", Restarts: 2}}; !reflect.DeepEqual(h.Sources, want) {
		t.Errorf("Sources %v, want %v", h.Sources, want)
	}
	if want := []string{"kube-proxy-ctl0", "kube-proxy-wrk1"}; !reflect.DeepEqual(f.proxied, want) {
		t.Errorf("read the metrics of %v, want %v (running pods only)", f.proxied, want)
	}
}

func TestScrapeFreshKubeProxy(t *testing.T) {
	f := &fakeAPIServer{pods: []corev1.Pod{kubeProxyPod("kube-proxy-ctl0", corev1.PodRunning, 0)}, metrics: map[string]string{"kube-proxy-ctl0": read(t, fixtureFresh)}}
	h, err := KubeProxy(context.Background(), clientOn(t, f))
	if err != nil || h.Count != 0 || len(h.Sources) != 1 {
		t.Fatalf("got %+v, %v; want no observation from one source", h, err)
	}
}

func TestScrapeNoKubeProxy(t *testing.T) {
	_, err := KubeProxy(context.Background(), clientOn(t, &fakeAPIServer{}))
	if !errors.Is(err, proxymetrics.ErrNoKubeProxy) {
		t.Fatalf("error %v, want proxymetrics.ErrNoKubeProxy", err)
	}
}

func TestScrapeErrors(t *testing.T) {
	cases := map[string]struct {
		f    *fakeAPIServer
		want []string
	}{
		"metrics on 127.0.0.1": {
			&fakeAPIServer{pods: []corev1.Pod{kubeProxyPod("kube-proxy-ctl0", corev1.PodRunning, 0)}},
			[]string{"kube-system/kube-proxy-ctl0", "connection refused", `metricsBindAddress: "0.0.0.0:10249"`},
		},
		"none running": {
			&fakeAPIServer{pods: []corev1.Pod{kubeProxyPod("kube-proxy-ctl0", corev1.PodPending, 0)}},
			[]string{"none of the 1 kube-proxy pods"},
		},
		"not kube-proxy's metrics": {
			&fakeAPIServer{pods: []corev1.Pod{kubeProxyPod("kube-proxy-ctl0", corev1.PodRunning, 0)}, metrics: map[string]string{"kube-proxy-ctl0": "go_goroutines 48\n"}},
			[]string{"kube-system/kube-proxy-ctl0", "not kube-proxy's"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := KubeProxy(context.Background(), clientOn(t, c.f))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
			if errors.Is(err, proxymetrics.ErrNoKubeProxy) {
				t.Errorf("error %q is proxymetrics.ErrNoKubeProxy", err)
			}
		})
	}
	_, err := KubeProxy(context.Background(), kubernetesUnreachable(t))
	if err == nil || !strings.Contains(err.Error(), "list the kube-proxy pods") {
		t.Fatalf("unreachable API server: error %v, want one saying the list failed", err)
	}
}

func kubernetesUnreachable(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A user without the rights to kube-proxy's pods gets an error that names the rights and the
// manifest that grants them: the row's KubeProxyError, which the reports show.
func TestForbiddenNamesTheRight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
			Message: `pods is forbidden: User "system:serviceaccount:rollcheck:rollcheck" cannot list resource "pods" in API group "" in the namespace "kube-system"`})
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = KubeProxy(context.Background(), cs)
	if err == nil || !strings.Contains(err.Error(), "list pods in namespace kube-system, get pods/proxy in namespace kube-system (examples/rbac/kube-proxy-metrics.yaml grants them)") {
		t.Errorf("error %v does not name the missing rights", err)
	}
}
