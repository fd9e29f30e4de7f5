package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// The probe's rows: one per node, the sample app without a preStop answering after SIGTERM,
// delete-pod × N, load from a load pod, keep-alive off, valid as any plan; the image's pull
// policy as it reaches the nodes.
func TestMeasurePlans(t *testing.T) {
	nodes := []string{"kind-worker", "ip-10-0-1-17.eu-west-1.compute.internal"}
	plans, err := measurePlans("rollcheck/app:abc", corev1.PullIfNotPresent, nodes, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 {
		t.Fatalf("%d plans, want one per node", len(plans))
	}
	for i, p := range plans {
		if _, err := p.Validate(); err != nil {
			t.Errorf("plan %d: %v", i, err)
		}
		a := p.Applied()
		if !a.PreStop.None || a.Disruption != check.DeletePod || a.Count != 4 || a.LoadFrom != check.LoadFromCluster || a.KeepAlive ||
			a.Replicas != 3 || a.Protocol != "" && a.Protocol != loadgen.ProtocolHTTP1 || !strings.HasPrefix(a.OnSIGTERM, "drain+") {
			t.Errorf("plan %d: %+v", i, a)
		}
		d, err := p.Deployment()
		if err != nil {
			t.Fatal(err)
		}
		if pp := d.Spec.Template.Spec.Containers[0].ImagePullPolicy; pp != corev1.PullIfNotPresent || len(p.App.Images) != 0 {
			t.Errorf("plan %d: pull policy %s, images %v: a pushed image is pulled", i, pp, p.App.Images)
		}
	}
	if got := plans[1].Variant.Name; got != "windows-2-ip-10-0-1-17-eu-west-1-compute" {
		t.Errorf("name %q", got)
	}
	loaded, err := measurePlans("rollcheck/app:abc", corev1.PullNever, nodes[:1], 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range loaded[0].App.Objects {
		if d, ok := o.(*appsv1.Deployment); ok && d.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullNever {
			t.Errorf("a loaded image: pull policy %s", d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
		}
	}
	g, err := grpcPlan("rollcheck/app:abc", corev1.PullNever, 6)
	if err != nil {
		t.Fatal(err)
	}
	if a := g.Applied(); a.Protocol != loadgen.ProtocolGRPC || a.GRPC == nil || a.GRPC.Balancing != loadgen.BalancingRoundRobin || !a.PreStop.None || a.Count != 6 {
		t.Errorf("gRPC plan: %+v", a)
	}
	objs, err := g.Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(objs, func(o check.Object) bool { return o.GetName() == check.LoadHeadlessServiceName }) {
		t.Error("the gRPC plan has no headless Service for its client to resolve")
	}
	if measureDrainDelay < 10*time.Second {
		t.Errorf("the app answers %s after SIGTERM: shorter than kind's routed windows", measureDrainDelay)
	}
}

// The nodes: those named (each must exist), those running a namespace's pods, else every node
// that takes pods.
func TestMeasureNodes(t *testing.T) {
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
		got, err := measureNodes(t.Context(), cs, c.named, c.of)
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

// Bad flags are one line and exit 2, before any cluster work.
func TestWindowsMeasureFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--deletions", "0"}, "--deletions 0: want 1 to 50"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--node", "a", "--nodes-of", "shop"}, "not both"},
		{[]string{"--image-registry", "registry.example:5000"}, "is for an existing cluster"},
		{[]string{"--context", "prod", "--image-registry", "not a registry!"}, "--image-registry"},
		// Every problem at once, on one line.
		{[]string{"--deletions", "99", "--node", "a", "--nodes-of", "shop"}, "--deletions 99: want 1 to 50; give --node or --nodes-of, not both"},
	} {
		var stdout, stderr strings.Builder
		code := dispatch(t.Context(), commands, "rollcheck", append([]string{"windows", "measure"}, c.args...), &stdout, &stderr)
		if msg := stderr.String(); code != exitBadInput || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}
