package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/klient"
	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// fakeAPIServer answers the few requests SweepNamespaces makes: discovery, listing namespaces by
// label, deleting one, listing the nodes (none cordoned). A namespace named "*-stuck" is only marked terminating, as one whose
// finalizers never finish.
type fakeAPIServer struct {
	mu      sync.Mutex
	ns      map[string]*corev1.Namespace
	deleted []string
	coredns *corev1.ConfigMap // kube-system/coredns, got and updated
	updates int
	leases  map[string]*coordinationv1.Lease // the runs' Leases in RunsNamespace, by name
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	switch {
	case r.URL.Path == "/api":
		reply(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		reply(metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}})
	case r.URL.Path == "/api/v1":
		reply(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Kind: "Namespace", Verbs: metav1.Verbs{"list", "delete", "get"}},
			{Name: "nodes", Kind: "Node", Verbs: metav1.Verbs{"list", "get", "patch"}},
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "update"}},
		}})
	case r.URL.Path == "/api/v1/namespaces/kube-system/configmaps/coredns" && f.coredns != nil && r.Method == http.MethodGet:
		reply(f.coredns)
	case r.URL.Path == "/api/v1/namespaces/kube-system/configmaps/coredns" && f.coredns != nil && r.Method == http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil) // the client sends protobuf
		cm, ok := obj.(*corev1.ConfigMap)
		if err != nil || !ok {
			http.Error(w, fmt.Sprintf("decode %T: %v", obj, err), http.StatusBadRequest)
			return
		}
		cm.TypeMeta = metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}
		f.coredns, f.updates = cm, f.updates+1
		reply(f.coredns)
	case strings.HasPrefix(r.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/"+RunsNamespace+"/leases/"):
		name := strings.TrimPrefix(r.URL.Path, "/apis/coordination.k8s.io/v1/namespaces/"+RunsNamespace+"/leases/")
		l, ok := f.leases[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			reply(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404})
			return
		}
		if r.Method == http.MethodDelete {
			delete(f.leases, name)
		}
		reply(l)
	case r.URL.Path == "/api/v1/nodes" && r.Method == http.MethodGet:
		reply(corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}})
	case r.URL.Path == "/api/v1/namespaces" && r.Method == http.MethodGet:
		sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		list := corev1.NamespaceList{TypeMeta: metav1.TypeMeta{Kind: "NamespaceList", APIVersion: "v1"}}
		for _, n := range f.ns {
			if sel.Matches(labels.Set(n.Labels)) {
				list.Items = append(list.Items, *n)
			}
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		reply(list)
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && r.Method == http.MethodDelete:
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/")
		n, ok := f.ns[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			reply(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404})
			return
		}
		f.deleted = append(f.deleted, name)
		if strings.HasSuffix(name, "-stuck") {
			now := metav1.Now()
			n.DeletionTimestamp = &now
		} else {
			delete(f.ns, name)
		}
		reply(n)
	default:
		http.Error(w, "fake API server: unexpected "+r.Method+" "+r.URL.String(), http.StatusNotImplemented)
	}
}

func clusterOn(t *testing.T, f *fakeAPIServer) *Cluster {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cl, err := klient.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Options: Options{Name: "test", Logf: t.Logf}, Client: cl}
}

func namespaces(names ...string) map[string]*corev1.Namespace {
	m := map[string]*corev1.Namespace{}
	for _, n := range names {
		name, value, labelled := strings.Cut(n, "=")
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if labelled {
			ns.Labels = map[string]string{check.PartOfLabel: value}
		}
		m[name] = ns
	}
	return m
}

func TestSweepNamespaces(t *testing.T) {
	f := &fakeAPIServer{ns: namespaces("rc-old-1=rollcheck", "rc-old-2=rollcheck", "someone-else=other", "kube-system")}
	c := clusterOn(t, f)
	n, _, err := c.SweepNamespaces(context.Background(), false)
	if err != nil || n != 2 {
		t.Fatalf("swept %d, error %v; want 2, nil", n, err)
	}
	sort.Strings(f.deleted)
	if want := []string{"rc-old-1", "rc-old-2"}; !reflect.DeepEqual(f.deleted, want) {
		t.Fatalf("deleted %v, want %v", f.deleted, want)
	}
	if _, ok := f.ns["someone-else"]; !ok || len(f.ns) != 2 {
		t.Fatalf("left %v, want someone-else and kube-system", f.ns)
	}
	// Nothing left: nothing to do.
	if n, _, err := c.SweepNamespaces(context.Background(), false); n != 0 || err != nil {
		t.Fatalf("second sweep: %d, %v; want 0, nil", n, err)
	}
}

func TestSweepNamespacesGivesUpOnAStuckNamespace(t *testing.T) {
	f := &fakeAPIServer{ns: namespaces("rc-stuck=rollcheck")}
	c := clusterOn(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, _, err := c.SweepNamespaces(ctx, false)
	if err == nil || n != 1 || !strings.Contains(err.Error(), "rc-stuck") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("swept %d, error %v; want 1 and a one-line error naming rc-stuck", n, err)
	}
}

// Two runs on one cluster: a sweep deletes the namespaces of runs whose Lease expired or is gone
// and of none (no run label), and leaves those of a run whose Lease is live, and its own until
// its teardown.
func TestSweepSkipsLiveRuns(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	saved := leaseClock
	leaseClock = clocktesting.NewFakeClock(now)
	t.Cleanup(func() { leaseClock = saved })
	lease := func(run string, renewed time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: RunLeaseName(run), Namespace: RunsNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(run), LeaseDurationSeconds: ptr.To[int32](15),
				AcquireTime: &metav1.MicroTime{Time: renewed}, RenewTime: &metav1.MicroTime{Time: renewed}}}
	}
	f := &fakeAPIServer{ns: namespaces("rc-unlabelled=rollcheck", "someone-else=other"), leases: map[string]*coordinationv1.Lease{
		RunLeaseName("live"): lease("live", now.Add(-3*time.Second)),
		RunLeaseName("dead"): lease("dead", now.Add(-20*time.Second)),
		RunLeaseName("self"): lease("self", now),
	}}
	for name, run := range map[string]string{"rc-live": "live", "rc-dead": "dead", "rc-gone": "gone", "rc-self": "self"} {
		f.ns[name] = &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{check.PartOfLabel: check.PartOfValue, engine.RunLabel: run}}}
	}
	c := clusterOn(t, f)
	c.RunID = "self"
	n, live, err := c.SweepNamespaces(context.Background(), false)
	if err != nil || n != 3 || !reflect.DeepEqual(live, []string{"live"}) {
		t.Fatalf("swept %d, live %v, error %v; want 3, [live], nil", n, live, err)
	}
	sort.Strings(f.deleted)
	if want := []string{"rc-dead", "rc-gone", "rc-unlabelled"}; !reflect.DeepEqual(f.deleted, want) {
		t.Errorf("deleted %v, want %v", f.deleted, want)
	}
	if _, ok := f.leases[RunLeaseName("dead")]; ok {
		t.Error("the dead run's Lease is left")
	}
	if _, ok := f.leases[RunLeaseName("live")]; !ok {
		t.Error("the live run's Lease was deleted")
	}
	// The teardown: this run's namespaces go too; the live run's stay.
	if n, _, err := c.SweepNamespaces(context.Background(), true); n != 1 || err != nil {
		t.Fatalf("the run's own sweep: %d, %v; want its one namespace", n, err)
	}
	if _, ok := f.ns["rc-live"]; !ok {
		t.Error("the teardown's sweep deleted the live run's namespace")
	}
	// Once the other run's Lease expired, its namespaces are swept too.
	leaseClock.(*clocktesting.FakeClock).Step(15 * time.Second)
	if n, live, err := c.SweepNamespaces(context.Background(), false); n != 1 || len(live) != 0 || err != nil {
		t.Errorf("after the live run's Lease expired: %d, %v, %v; want its namespace swept", n, live, err)
	}
}

// Each run holds a Lease of its own in RunsNamespace, which the first run makes; the sweep reads
// them (staleRuns); a released run's Lease is gone, so its namespaces are stale at once.
func TestHoldRunAndStaleRuns(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	saved := leaseClock
	leaseClock = clocktesting.NewFakeClock(now)
	t.Cleanup(func() { leaseClock = saved })
	ns := func(name, run string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{check.PartOfLabel: check.PartOfValue, engine.RunLabel: run}}}
	}
	cs := fake.NewClientset(ns("rc-a", "a"), ns("rc-b", "b"), ns("rc-b2", "b"))
	a, err := holdRun(ctx, cs, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := holdRun(ctx, cs, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release(ctx)
	runs, err := staleRuns(ctx, cs, "a", now)
	if err != nil || len(runs.Dead) != 0 || !reflect.DeepEqual(runs.Live, []string{"b"}) {
		t.Fatalf("staleRuns while b holds its Lease: %+v, %v; want b live", runs, err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err = staleRuns(ctx, cs, "b", now)
	if err != nil || !reflect.DeepEqual(runs.Dead, []string{"a"}) || len(runs.Live) != 0 {
		t.Errorf("staleRuns after a released its Lease: %+v, %v; want a dead", runs, err)
	}
}

// fakeTool writes an executable shell script named name into dir and returns its path.
func fakeTool(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// failingDocker puts first on PATH a docker CLI that fails every call and records it ("docker
// ARGS", a line each) into the file it returns.
func failingDocker(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeTool(t, dir, "docker", `echo "docker $*" >>`+calls+`
exit 1
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// A node image choice resolves without pulling: upstream is kind's own constant, offline the
// newest rollcheck/kind-node image the Docker engine lists, auto the upstream image when present.
func TestResolveNodeImage(t *testing.T) {
	dir := t.TempDir()
	// docker image ls lists the repository asked for ($5), newest first; the variant's only when
	// FAKE_VARIANT is set.
	fakeTool(t, dir, "docker", `case "$1 $2 $5" in
  "image inspect"*) exit 1 ;;
  "image ls rollcheck/kind-node") printf '%s\n' rollcheck/kind-node:v1.34.3-new rollcheck/kind-node:v1.34.3-old ;;
  "image ls rollcheck/kind-node-containerd2") [ -z "$FAKE_VARIANT" ] || printf '%s\n' rollcheck/kind-node-containerd2:v1.34.3-c2-new rollcheck/kind-node-containerd2:v1.34.3-c2-old ;;
  *) exit 1 ;;
esac
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_VARIANT", "1")
	for choice, want := range map[string]string{
		"upstream":            kinddefaults.Image,
		"offline":             "rollcheck/kind-node:v1.34.3-new",
		"auto":                "rollcheck/kind-node:v1.34.3-new",
		"offline-containerd2": "rollcheck/kind-node-containerd2:v1.34.3-c2-new",
		"example/n:v1":        "example/n:v1",
	} {
		if got, err := ResolveNodeImage(context.Background(), choice); err != nil || got != want {
			t.Errorf("ResolveNodeImage(%q) = %q, %v; want %q", choice, got, err, want)
		}
	}
	// No variant built: an error that says how to build one, never the default offline image.
	t.Setenv("FAKE_VARIANT", "")
	if got, err := ResolveNodeImage(context.Background(), "offline-containerd2"); err == nil || !strings.Contains(err.Error(), "a checkout of rollcheck builds one (make e2e-stopsignal") {
		t.Errorf("ResolveNodeImage(offline-containerd2) with none built = %q, %v; want an error saying how to build one", got, err)
	}
}

// A node image the Docker engine lacks stops Up before any cluster work, in one line that names
// what a user of the binary can run (docker pull, rollcheck cluster node-image), never a make
// target alone; nothing is pulled.
func TestUpNodeImageMissing(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeTool(t, dir, "docker", `echo "$*" >>"`+calls+`"
case "$1" in
  info) echo 28.0.0 ;;
  *) exit 1 ;;
esac
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err := Up(context.Background(), Options{Name: "rollcheck-test", NodeImage: "upstream", Logf: t.Logf})
	want := "node image " + kinddefaults.Image + " is not in the Docker engine, and rollcheck never pulls one by surprise: `docker pull " + kinddefaults.Image + "` (or `rollcheck cluster node-image`"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Up = %v; want one line with %q", err, want)
	}
	b, _ := os.ReadFile(calls)
	if strings.Contains(string(b), "pull") {
		t.Errorf("docker was asked to pull: %s", b)
	}
}

// fakeKind stands in for kind's provider and records the calls; its clusters have nodes.
type fakeKind struct {
	clusters []string
	nodes    []nodes.Node
	mu       sync.Mutex
	calls    []string
}

func (f *fakeKind) call(c string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeKind) List() ([]string, error) {
	f.call("List")
	return f.clusters, nil
}
func (f *fakeKind) Create(name string, _ ...kindcluster.CreateOption) error {
	f.call("Create " + name)
	return nil
}
func (f *fakeKind) KubeConfig(name string, _ bool) (string, error) {
	f.call("KubeConfig " + name)
	return "", errors.New("no kubeconfig in the fake")
}
func (f *fakeKind) ListNodes(name string) ([]nodes.Node, error) {
	f.call("ListNodes " + name)
	return f.nodes, nil
}
func (f *fakeKind) CollectLogs(name, dir string) error {
	f.call("CollectLogs " + name)
	return nil
}
func (f *fakeKind) Delete(name, kubeconfig string) error {
	f.call("Delete " + name)
	if kubeconfig == "" {
		return errors.New("kind would edit the user's kubeconfig")
	}
	return nil
}

func useFakeKind(t *testing.T, f *fakeKind) {
	t.Helper()
	saved := newKindAPI
	newKindAPI = func(func(string, ...any)) kindAPI { return f }
	t.Cleanup(func() { newKindAPI = saved })
}

// TestExistingCreatesNothing: Existing (behind `rollcheck cluster versions`) only looks for the
// cluster; with none it says so in one line and never creates one.
func TestExistingCreatesNothing(t *testing.T) {
	f := &fakeKind{clusters: []string{"other-cluster"}}
	useFakeKind(t, f)
	o := Options{Name: "rollcheck", NodeImage: "kindest/node:v1"}
	c, err := Existing(context.Background(), o)
	if err == nil || c != nil {
		t.Fatalf("Existing with no cluster: %v, %v; want an error", c, err)
	}
	if want := `no kind cluster "rollcheck"`; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q, want one line containing %q", err, want)
	}
	if got := strings.Join(f.calls, ", "); got != "List" {
		t.Fatalf("calls: %s; want only List", got)
	}
}

// The policy: logs when the run failed, the cluster deleted only when this run created it and
// it is not kept. (Without a client the namespace sweeps have nothing to talk to.)
func TestTeardownPolicy(t *testing.T) {
	for _, c := range []struct {
		created, keep, failed bool
		want                  string
	}{
		{false, false, false, ""},
		{false, false, true, "CollectLogs rc"},
		{true, false, false, "Delete rc"},
		{true, true, false, ""},
		{true, false, true, "CollectLogs rc, Delete rc"},
		{true, true, true, "CollectLogs rc"},
	} {
		f := &fakeKind{}
		var lines []string
		logf := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
		r := &Run{LogsDir: t.TempDir(), Failed: c.failed,
			Cluster: &Cluster{Options: Options{Name: "rc", Keep: c.keep, Logf: logf}, Created: c.created, kind: f}}
		if err := r.Teardown(context.Background(), DefaultTeardown...); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(f.calls, ", "); got != c.want {
			t.Errorf("created %v keep %v failed %v: calls %q, want %q (log %q)", c.created, c.keep, c.failed, got, c.want, lines)
		}
	}
	// Nothing acquired: nothing to release.
	if err := (&Run{Failed: true}).Teardown(context.Background(), DefaultTeardown...); err != nil {
		t.Fatal(err)
	}
}

// Setup stops at the first failing Func and marks the run failed; Teardown runs every Func
// even when the context is cancelled.
func TestSetupAndTeardownOrder(t *testing.T) {
	var ran []string
	fn := func(name string, err error) Func {
		return func(ctx context.Context, r *Run) error { ran = append(ran, name); return err }
	}
	r := &Run{}
	if err := r.Setup(context.Background(), fn("a", nil), fn("b", errors.New("b failed")), fn("c", nil)); err == nil || !r.Failed {
		t.Fatalf("Setup: %v, failed %v", err, r.Failed)
	}
	if got := strings.Join(ran, ""); got != "ab" {
		t.Fatalf("Setup ran %q, want ab", got)
	}
	ran = nil
	r.Cluster = &Cluster{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.Teardown(ctx, fn("x", errors.New("x failed")), func(ctx context.Context, r *Run) error {
		ran = append(ran, "y")
		return ctx.Err()
	})
	if got := strings.Join(ran, ""); got != "xy" || err == nil || !strings.Contains(err.Error(), "x failed") || strings.Contains(err.Error(), "canceled") {
		t.Fatalf("Teardown ran %q, error %v; want xy, x's error only", ran, err)
	}
}

func TestImageSource(t *testing.T) {
	for ref, want := range map[string]string{
		"rollcheck/kind-node:v1.34.3-0123456789ab":                               SourceOffline,
		"rollcheck/kind-node-containerd2:v1.34.3-containerd-v2.3.7-0123456789ab": SourceOffline,
		"offline-containerd2":                SourceOffline,
		"rollcheck/kind-node-containerd3:v1": SourceUpstream,
		"kindest/node:v1.34.0@sha256:0123":   SourceUpstream,
		"example.com/rollcheck/kind-node:v1": SourceUpstream,
	} {
		if got := knobs.ImageSource(ref); got != want {
			t.Errorf("knobs.ImageSource(%q) = %q, want %q", ref, got, want)
		}
	}
}

// CoreDNS's forwarding is removed only in a cluster this run created: by default for the
// offline node image, never by default for the upstream one; ROLLCHECK_ISOLATE_DNS forces it.
func TestDNSIsolation(t *testing.T) {
	cases := []struct {
		setting, source string
		created         bool
		isolate         bool
		why             string
	}{
		{"", SourceOffline, true, true, "=auto: the offline node image"},
		{"auto", SourceOffline, true, true, "=auto: the offline node image"},
		{"", SourceUpstream, true, false, "=auto: the upstream node image"},
		{"auto", SourceUpstream, true, false, "=auto: the upstream node image"},
		{"true", SourceUpstream, true, true, knobs.EnvIsolateDNS + "=true"},
		{"On", SourceUpstream, true, true, knobs.EnvIsolateDNS + "=On"},
		{"false", SourceOffline, true, false, knobs.EnvIsolateDNS + "=false"},
		{"0", SourceOffline, true, false, knobs.EnvIsolateDNS + "=0"},
		// A reused cluster is never changed, whatever the setting.
		{"", SourceOffline, false, false, "reused"},
		{"true", SourceUpstream, false, false, "reused"},
	}
	for _, c := range cases {
		isolate, why, err := dnsIsolation(c.setting, c.source, c.created)
		if err != nil || isolate != c.isolate || !strings.Contains(why, c.why) || strings.Contains(why, "\n") {
			t.Errorf("dnsIsolation(%q, %s, created %v) = %v, %q, %v; want %v, a line with %q",
				c.setting, c.source, c.created, isolate, why, err, c.isolate, c.why)
		}
	}
	for _, bad := range []string{"maybe", "Auto", " auto", "2"} {
		if _, _, err := dnsIsolation(bad, SourceOffline, true); err == nil || !strings.HasPrefix(err.Error(), knobs.EnvIsolateDNS+"=") {
			t.Errorf("dnsIsolation(%q): error %v, want one naming %s", bad, err, knobs.EnvIsolateDNS)
		}
		if errs := knobs.Check(func(k string) string { return map[string]string{knobs.EnvIsolateDNS: bad}[k] }, true); len(errs) != 1 {
			t.Errorf("%s=%q: %v, want one problem", knobs.EnvIsolateDNS, bad, errs)
		}
		if err := (Options{Name: "rc", NodeImage: "kindest/node:v1", IsolateDNS: bad}).Validate(); err == nil {
			t.Errorf("Options with IsolateDNS %q validated", bad)
		}
	}
}

func TestWithoutForward(t *testing.T) {
	corefile := ".:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n" +
		"    forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n    cache 30\n}\n"
	got, changed := withoutForward(corefile)
	want := ".:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n    cache 30\n}\n"
	if !changed || got != want {
		t.Fatalf("withoutForward: changed %v,\n%s\nwant:\n%s", changed, got, want)
	}
	if again, changed := withoutForward(got); changed || again != got {
		t.Errorf("second pass changed %v:\n%s", changed, again)
	}
	oneLine := ".:53 {\n    forward . 8.8.8.8\n    cache 30\n}\n"
	if got, changed := withoutForward(oneLine); !changed || got != ".:53 {\n    cache 30\n}\n" {
		t.Errorf("one-line forward: changed %v,\n%s", changed, got)
	}
}

// A cluster whose CoreDNS already forwards nowhere is still marked isolated, without a restart
// of CoreDNS, so that a later run reusing it fences its nodes again; an unmarked one is not
// taken for isolated.
func TestIsolatedMarked(t *testing.T) {
	cm := func(corefile string, annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", Annotations: annotations},
			Data:       map[string]string{"Corefile": corefile}}
	}
	f := &fakeAPIServer{coredns: cm(".:53 {\n    cache 30\n}\n", nil)}
	c := clusterOn(t, f)
	ctx := context.Background()
	if was, err := c.isolatedBefore(ctx); err != nil || was {
		t.Fatalf("unmarked: isolatedBefore = %v, %v", was, err)
	}
	changed, err := c.isolateDNS(ctx)
	if err != nil || changed {
		t.Fatalf("isolateDNS with no forward = %v, %v; want unchanged (no restart)", changed, err)
	}
	if was, err := c.isolatedBefore(ctx); err != nil || !was || f.updates != 1 {
		t.Errorf("after isolateDNS: isolatedBefore = %v, %v after %d update(s); want marked by one", was, err, f.updates)
	}
	if _, err := c.isolateDNS(ctx); err != nil || f.updates != 1 {
		t.Errorf("isolateDNS again: %v, %d updates; want none more", err, f.updates)
	}
}
