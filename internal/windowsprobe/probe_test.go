package windowsprobe

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/loadgen"
)

// measureMapper knows the kinds of windows measure's plans, as a cluster's discovery does.
func measureMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	return m
}

// The probe's rows: one per node, the sample app without a preStop answering after SIGTERM,
// delete-pod × N, load from a load pod, keep-alive off, valid as any plan; the image's pull
// policy as it reaches the nodes.
func TestPlans(t *testing.T) {
	nodes := []string{"kind-worker", "ip-10-0-1-17.eu-west-1.compute.internal"}
	plans, err := Plans("rollcheck/app:abc", corev1.PullIfNotPresent, nodes, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 {
		t.Fatalf("%d plans, want one per node", len(plans))
	}
	for i, r := range plans {
		p := r.Plan()
		a := r.Applied()
		if !a.PreStop.None || a.Disruption != check.DeletePod || a.Count != 4 || a.LoadFrom != check.LoadFromCluster || a.KeepAlive ||
			a.Replicas != 3 || a.Protocol != "" && a.Protocol != loadgen.ProtocolHTTP1 || !strings.HasPrefix(a.OnSIGTERM, "drain+") {
			t.Errorf("plan %d: %+v", i, a)
		}
		d := r.Deployment()
		if pp := d.Spec.Template.Spec.Containers[0].ImagePullPolicy; pp != corev1.PullIfNotPresent || len(p.App.Images) != 0 {
			t.Errorf("plan %d: pull policy %s, images %v: a pushed image is pulled", i, pp, p.App.Images)
		}
		// The DNS window: the load pod asks for a headless Service of the app's pods, and the
		// load still goes to rollcheck's load Service (no proxy in front to resolve it).
		if a.Resolve != headlessName || p.Load.Through() || a.ResolveRefresh != 0 {
			t.Errorf("plan %d: resolve %q, url %q, refresh %s: want %s asked, measured only", i, a.Resolve, p.Load.URL, a.ResolveRefresh, headlessName)
		}
		var headless *corev1.Service
		if objs, err := r.Objects("rollcheck-windows-1", 0); err != nil {
			t.Fatal(err)
		} else if k := slices.IndexFunc(objs, func(o check.Object) bool { return o.GetName() == headlessName }); k >= 0 {
			headless, _ = objs[k].(*corev1.Service)
		}
		switch {
		case headless == nil:
			t.Errorf("plan %d: no Service %s among its objects", i, headlessName)
		case headless.Spec.ClusterIP != corev1.ClusterIPNone || headless.Namespace != "rollcheck-windows-1" || headless.Spec.PublishNotReadyAddresses:
			t.Errorf("plan %d: Service %+v: want headless, ready pods only, in the row's namespace", i, headless)
		case !maps.Equal(headless.Spec.Selector, d.Spec.Selector.MatchLabels) || !labels.SelectorFromSet(headless.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)):
			t.Errorf("plan %d: selector %v, want the Deployment's pods (%v)", i, headless.Spec.Selector, d.Spec.Template.Labels)
		case len(headless.Spec.Ports) != 1 || headless.Spec.Ports[0].Port != p.App.Port || headless.Spec.Ports[0].TargetPort.IntValue() != int(p.App.Port):
			t.Errorf("plan %d: ports %+v, want the app's %d", i, headless.Spec.Ports, p.App.Port)
		}
	}
	// The rights asked for before any work cover the headless Service: core's create on
	// Services, nothing of the manifests' own.
	need, err := access.PlansNeed(plans, measureMapper())
	if err != nil {
		t.Fatal(err)
	}
	if len(need.Features) != 1 || need.Features[0] != access.Core || len(need.Objects) != 0 ||
		!slices.ContainsFunc(access.Of(access.Core), func(r access.Right) bool { return r.Resource == "services" && slices.Contains(r.Verbs, "create") }) {
		t.Errorf("windows measure's rights: %+v, want core's alone, which creates Services", need)
	}
	if got := plans[1].Plan().Variant.Name; got != "windows-2-ip-10-0-1-17-eu-west-1-compute" {
		t.Errorf("name %q", got)
	}
	loaded, err := Plans("rollcheck/app:abc", corev1.PullNever, nodes[:1], 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range loaded[0].Plan().App.Objects {
		if d, ok := o.(*appsv1.Deployment); ok && d.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullNever {
			t.Errorf("a loaded image: pull policy %s", d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
		}
	}
	g, err := GRPCPlan("rollcheck/app:abc", corev1.PullNever, 6)
	if err != nil {
		t.Fatal(err)
	}
	if a := g.Applied(); a.Protocol != loadgen.ProtocolGRPC || a.GRPC == nil || a.GRPC.Balancing != loadgen.BalancingRoundRobin || !a.PreStop.None || a.Count != 6 {
		t.Errorf("gRPC plan: %+v", a)
	}
	objs, err := checktest.Resolve(t, g)[0].Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(objs, func(o check.Object) bool { return o.GetName() == check.LoadHeadlessServiceName }) {
		t.Error("the gRPC plan has no headless Service for its client to resolve")
	}
	if DrainDelay < 10*time.Second {
		t.Errorf("the app answers %s after SIGTERM: shorter than kind's routed windows", DrainDelay)
	}
}

// The nodes: those named (each must exist), those running a namespace's pods, else every node
// that takes pods.
func TestNodes(t *testing.T) {
	node := func(name string, ready, cordoned bool, taint corev1.TaintEffect) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
		n.Spec.Unschedulable = cordoned
		if taint != "" {
			n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: taint}}
		}
		return n
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}, Spec: corev1.PodSpec{NodeName: "b"}}
	cs := fake.NewClientset(node("cp", true, false, corev1.TaintEffectNoSchedule), node("a", true, false, ""), node("b", true, false, ""),
		node("c", false, false, ""), node("d", true, true, ""), node("e", true, false, corev1.TaintEffectPreferNoSchedule), pod)
	for _, c := range []struct {
		named   []string
		of      string
		want    string
		wantErr string
	}{
		{nil, "", "a b e", ""},
		{[]string{"cp"}, "", "cp", ""},
		{[]string{"z"}, "", "", "--node z: the cluster has no such node"},
		{nil, "shop", "b", ""},
		{nil, "empty", "", "no pod of that namespace"},
	} {
		got, err := Nodes(t.Context(), cs, c.named, c.of)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v %q: err %v, want %q", c.named, c.of, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%v %q: %v (%v), want %s", c.named, c.of, got, err, c.want)
		}
	}
}

// The windows file of windows measure's rows: the DNS window pooled over the rows and per node where
// each node's row measured it (its load pod's answers), with the TTL; a row without DNS samples
// gives its node no DNS window; the gRPC row counts in the pool, not per node; the source says
// what was measured.
func TestWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, x := range n {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	nodeRowOf := func(start int, cp, dp, dns []time.Duration, ttl uint32) check.Row {
		return check.Row{Started: t0.Add(time.Duration(start) * time.Minute), Duration: time.Minute,
			Config: check.Applied{LoadFrom: check.LoadFromCluster, Resolve: headlessName},
			Explanation: &check.Explanation{Propagation: check.PropagationSummary{ControlPlane: check.Summarize(cp),
				DataPlane: check.Summarize(dp), DNS: check.Summarize(dns), DNSTTL: ttl}}}
	}
	byNode := []NodeRow{
		{Node: "kind-worker", Row: nodeRowOf(0, ms(80, 90, 100), ms(900, 1000, 1100), ms(250, 500, 750), 30)},
		{Node: "kind-worker2", Row: nodeRowOf(2, ms(70, 85, 95), ms(800, 950, 1050), ms(1250, 1500), 5)},
		{Node: "kind-worker3", Row: nodeRowOf(4, ms(60, 75), ms(700, 850), nil, 0)}, // its load pod's DNS answers measured nothing
	}
	grpcRow := check.Row{Started: t0.Add(6 * time.Minute), Duration: time.Minute,
		Config:      check.Applied{LoadFrom: check.LoadFromCluster, Protocol: loadgen.ProtocolGRPC, GRPC: &check.GRPCLoad{Balancing: loadgen.BalancingRoundRobin}},
		Explanation: &check.Explanation{Propagation: check.PropagationSummary{ControlPlane: check.Summarize(ms(50)), Client: check.Summarize(ms(30000))}}}
	nodes := []string{"kind-worker", "kind-worker2", "kind-worker3"}
	deletions, grpc := 3, true
	w, err := Windows(byNode, &grpcRow, nodes, deletions, grpc, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if d := w.Windows.DNS; d == nil || d.N != 5 || d.P99.D() != 1500*time.Millisecond || d.TTLSeconds != 30 {
		t.Errorf("pooled DNS window %+v: want the 5 pods of both nodes, p99 1.5s, the largest TTL 30", d)
	}
	if w.Windows.ControlPlane == nil || w.Windows.ControlPlane.N != 9 || w.Windows.Client == nil {
		t.Errorf("pooled windows %+v: want every row's control plane, the gRPC row's client window", w.Windows)
	}
	if len(w.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(w.Nodes))
	}
	for i, want := range []*struct {
		n   int
		p99 time.Duration
		ttl uint32
	}{{3, 750 * time.Millisecond, 30}, {2, 1500 * time.Millisecond, 5}, nil} {
		n := w.Nodes[i]
		d := n.Windows.DNS
		switch {
		case n.Node != nodes[i]:
			t.Errorf("nodes[%d] is %s, want %s", i, n.Node, nodes[i])
		case want == nil && d != nil:
			t.Errorf("%s: DNS window %+v, want none (nothing measured)", n.Node, d)
		case want != nil && (d == nil || d.N != want.n || d.P99.D() != want.p99 || d.TTLSeconds != want.ttl):
			t.Errorf("%s: DNS window %+v, want n %d p99 %s TTL %d", n.Node, d, want.n, want.p99, want.ttl)
		case n.Windows.Client != nil || n.Windows.DataPlane == nil:
			t.Errorf("%s: windows %+v: want its own data plane, no gRPC client's", n.Node, n.Windows)
		}
	}
	// The file as written reads back, per-node DNS windows included.
	b, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := audit.DecodeWindows(strings.NewReader(string(b)))
	if err != nil || back.Nodes[1].Windows.DNS == nil || back.Nodes[1].Windows.DNS.TTLSeconds != 5 {
		t.Errorf("read back: %v, %s", err, b)
	}
	want := "rollcheck windows measure: a row per node (kind-worker, kind-worker2, kind-worker3), each 3 graceful deletions of one of 3 pods of the sample app (no preStop, answering 15s after SIGTERM) under 100 req/s from a load pod on that node, a new connection per request; " +
		"the DNS window of a headless Service of the pods (deletion → the first DNS answer without the pod's address, asked 4 times a second from the load pod on each node), TTL 30 s; " +
		"a gRPC round_robin client's window over a headless Service (one more row)"
	if w.Measured.Source != want {
		t.Errorf("source\n %q\nwant %q", w.Measured.Source, want)
	}
	// No DNS window anywhere: the source says so, and the file still holds the rest.
	byNode[0].Row.Explanation.Propagation.DNS, byNode[1].Row.Explanation.Propagation.DNS = check.Durations{}, check.Durations{}
	grpc = false
	w, err = Windows(byNode, nil, nodes, deletions, grpc, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if w.Windows.DNS != nil || !strings.HasSuffix(w.Measured.Source, "asked 4 times a second from the load pod on each node): not measured (no answer dropped a deleted pod's address); no gRPC client window (--grpc measures one)") {
		t.Errorf("no DNS window: %+v, source %q", w.Windows.DNS, w.Measured.Source)
	}
}
