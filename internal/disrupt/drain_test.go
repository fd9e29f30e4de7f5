package disrupt

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

// refusals is an eviction interceptor: it refuses (429) a pod's first n evictions (n < 0: every
// one), checks that the pod's node is cordoned at each, and counts what it refused.
type refusals struct {
	n      int
	mu     sync.Mutex
	seen   map[string]int
	asked  []string // every eviction asked for, by pod name
	failed []string // evictions that found their node schedulable
	also   func()   // called at each refusal (a test cancels its context there)
	err    error    // returned instead of a 429, when set
	// firstFree accepts the first pod asked for at once (a budget that allows one disruption);
	// the others are refused n times.
	firstFree bool
	first     string
	// accepted is when the last eviction was accepted.
	accepted time.Time
}

func (r *refusals) funcs() interceptor.Funcs {
	return interceptor.Funcs{SubResourceCreate: func(ctx context.Context, cl client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
		if sub != "eviction" {
			return cl.SubResource(sub).Create(ctx, obj, subObj, opts...)
		}
		r.mu.Lock()
		r.asked = append(r.asked, obj.GetName())
		r.mu.Unlock()
		var p corev1.Pod
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), &p); err != nil {
			return err
		}
		var n corev1.Node
		if err := cl.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); err != nil {
			return err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !n.Spec.Unschedulable {
			r.failed = append(r.failed, p.Name)
		}
		if r.err != nil {
			return r.err
		}
		if r.seen == nil {
			r.seen = map[string]int{}
		}
		r.seen[p.Name]++
		if r.firstFree && r.first == "" {
			r.first = p.Name
		}
		if (r.n < 0 || r.seen[p.Name] <= r.n) && !(r.firstFree && r.first == p.Name) {
			if r.also != nil {
				r.also()
			}
			return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		r.accepted = time.Now()
		return cl.SubResource(sub).Create(ctx, obj, subObj, opts...)
	}}
}

// onNodes returns a fake cluster with nodes and Deployment ns/web of n replicas placed over
// them by the fake's scheduler (the fewest pods first), another app's pod db-0 on the first
// node, and its Target; r refuses evictions.
func onNodes(t *testing.T, n int32, r *refusals, nodes ...string) (*kubefake.Cluster, Target) {
	t.Helper()
	objs := []client.Object{}
	for _, name := range nodes {
		objs = append(objs, kubefake.Node(name))
	}
	db := kubefake.ReadyPod("ns", "db-0", map[string]string{"app": "db"})
	db.Spec.NodeName = nodes[0]
	d := kubefake.Deployment("ns", "web", n, appLabels)
	c := kubefake.NewCluster(t, r.funcs(), append(objs, db, d)...)
	if err := c.Reconcile(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	c.Lag = 3
	return c, Target{Client: c.Client, Namespace: "ns", Deployment: "web", Selector: "app=web", Timeout: 5 * time.Second,
		DrainTimeout: 5 * time.Second, Logf: t.Logf}
}

// podsOn names the pods on node, every app's.
func podsOn(t *testing.T, c *kubefake.Cluster, node string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := c.Fake.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			names = append(names, p.Name)
		}
	}
	return names
}

func node(t *testing.T, c *kubefake.Cluster, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := c.Fake.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// uncordoned fails t unless the node is schedulable and without the drain's annotation.
func uncordoned(t *testing.T, c *kubefake.Cluster, name string) {
	t.Helper()
	if n := node(t, c, name); n.Spec.Unschedulable || n.Annotations[CordonedBy] != "" {
		t.Errorf("node %s: unschedulable %t, annotations %v after the drain: want it uncordoned", name, n.Spec.Unschedulable, n.Annotations)
	}
}

func TestDrainEvictsOnlyTheAppsPodsOnTheBusiestNode(t *testing.T) {
	r := &refusals{}
	c, target := onNodes(t, 3, r, "node-a", "node-b")
	onA := slices.DeleteFunc(podsOn(t, c, "node-a"), func(n string) bool { return n == "db-0" })
	onB := podsOn(t, c, "node-b")
	if len(onA) != 2 || len(onB) != 1 {
		t.Fatalf("placed %v on node-a, %v on node-b: want 2 and 1", onA, onB)
	}
	rec := Record{Kind: DrainNode, Started: time.Now()}
	if _, err := once(context.Background(), target, DrainNode, &rec); err != nil {
		t.Fatal(err)
	}
	dr := rec.Drain
	var want []string
	for _, p := range onA {
		want = append(want, "ns/"+p)
	}
	if got := c.Evictions(); !slices.Equal(got, want) {
		t.Errorf("evicted %v, want %v: only the app's pods on node-a", got, want)
	}
	if len(r.failed) > 0 {
		t.Errorf("evicted %v while the node was schedulable: cordon first", r.failed)
	}
	if dr.Node != "node-a" || !slices.Equal(dr.Pods, onA) || dr.Evictions != 2 || dr.Refused429 != 0 || dr.Blocked {
		t.Errorf("drain %+v, want node-a, pods %v, 2 evictions, none refused", dr, onA)
	}
	if dr.Drained.Before(rec.Started) || dr.Uncordoned.Before(dr.Drained) || dr.ReplacementsReady.IsZero() {
		t.Errorf("moments: started %s, drained %s, uncordoned %s, replacements ready %s: want them in that order, replacements seen",
			rec.Started.Format(time.StampMicro), dr.Drained.Format(time.StampMicro), dr.Uncordoned.Format(time.StampMicro), dr.ReplacementsReady.Format(time.StampMicro))
	}
	uncordoned(t, c, "node-a")
	if !slices.Contains(podsOn(t, c, "node-a"), "db-0") || !slices.Equal(podsOn(t, c, "node-b")[:1], onB) {
		t.Errorf("node-a has %v, node-b %v after the drain: another app's pod and the other node's must stay", podsOn(t, c, "node-a"), podsOn(t, c, "node-b"))
	}
	if pods := podNames(t, c); len(pods) != 4 { // 3 of web, db-0
		t.Errorf("pods %v after the drain: want the Deployment settled at 3 and db-0", pods)
	}
}

func TestDrainRetriesRefusedEvictions(t *testing.T) {
	r := &refusals{n: 2}
	c, target := onNodes(t, 3, r, "node-a", "node-b")
	recs, err := Repeat(context.Background(), target, DrainNode, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dr := recs[0].Drain
	if dr == nil || dr.Evictions != 2 || dr.Refused429 != 4 || dr.Blocked || dr.Drained.IsZero() {
		t.Fatalf("drain %+v, want 2 evictions after 2 refusals each (4), drained", dr)
	}
	if len(c.Evictions()) != 2 {
		t.Errorf("evictions that reached the API server: %v", c.Evictions())
	}
	uncordoned(t, c, "node-a")
}

// TestDrainReplacementsReadyAfterTheLastEviction: with a budget that lets one pod go at a time,
// the first evicted pod's replacement is ready while the second is still refused; the
// replacements are ready only once the last one's is, after its eviction.
func TestDrainReplacementsReadyAfterTheLastEviction(t *testing.T) {
	r := &refusals{n: 2, firstFree: true}
	c, target := onNodes(t, 3, r, "node-a", "node-b")
	// The ReplicaSet replaces the first evicted pod while the second's eviction is refused.
	r.also = func() {
		var d appsv1.Deployment
		if err := c.Fake.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, &d); err == nil {
			_ = c.Reconcile(context.Background(), &d)
		}
	}
	recs, err := Repeat(context.Background(), target, DrainNode, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dr := recs[0].Drain
	if dr == nil || dr.Evictions != 2 || dr.Refused429 != 2 || dr.ReplacementsReady.IsZero() {
		t.Fatalf("drain %+v, want 2 evictions, the second after 2 refusals, replacements ready", dr)
	}
	if dr.ReplacementsReady.Before(r.accepted) {
		t.Errorf("replacements ready at %s, before the last eviction was accepted at %s", dr.ReplacementsReady.Format(time.StampMicro), r.accepted.Format(time.StampMicro))
	}
}

func TestDrainBlockedUncordonsAndGoesOn(t *testing.T) {
	r := &refusals{n: -1}
	c, target := onNodes(t, 1, r, "node-a")
	target.DrainTimeout = 30 * time.Millisecond
	before := podNames(t, c)
	rec := Record{Kind: DrainNode, Started: time.Now()}
	if _, err := once(context.Background(), target, DrainNode, &rec); err != nil {
		t.Fatalf("a blocked drain is no error: %v", err)
	}
	dr := rec.Drain
	if !dr.Blocked || dr.Evictions != 0 || dr.Refused429 < 2 || !dr.Drained.IsZero() || !dr.ReplacementsReady.IsZero() || dr.Uncordoned.IsZero() {
		t.Errorf("drain %+v, want blocked, nothing evicted, several refusals, uncordoned", dr)
	}
	if d := dr.Uncordoned.Sub(rec.Started); d < target.DrainTimeout {
		t.Errorf("uncordoned %s after the start, before the drain's timeout %s", d, target.DrainTimeout)
	}
	uncordoned(t, c, "node-a")
	if after := podNames(t, c); !slices.Equal(after, before) {
		t.Errorf("pods %v, were %v: nothing may go", after, before)
	}
}

func TestDrainUncordonsOnErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name string
		r    *refusals
		ctx  context.Context
		want func(error) bool
	}{
		{"eviction error", &refusals{err: apierrors.NewInternalError(errors.New("etcd is down"))}, context.Background(),
			func(err error) bool {
				return strings.Contains(err.Error(), "evict pod ns/web-") && strings.Contains(err.Error(), "etcd is down")
			}},
		{"context cancelled", &refusals{n: -1, also: cancel}, ctx,
			func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, target := onNodes(t, 2, tc.r, "node-a")
			rec := Record{Kind: DrainNode, Started: time.Now()}
			_, err := once(tc.ctx, target, DrainNode, &rec)
			if err == nil || !tc.want(err) {
				t.Fatalf("drain = %v", err)
			}
			if rec.Drain == nil || rec.Drain.Node != "node-a" || rec.Drain.Uncordoned.IsZero() {
				t.Errorf("drain %+v: want node-a, uncordoned", rec.Drain)
			}
			uncordoned(t, c, "node-a")
		})
	}
}

func TestDrainLeavesANodeCordonedByOthersCordoned(t *testing.T) {
	c, target := onNodes(t, 2, &refusals{}, "node-a", "node-b")
	n := node(t, c, "node-a")
	n.Spec.Unschedulable = true
	if err := c.Fake.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	rec := Record{Kind: DrainNode, Started: time.Now()}
	if _, err := once(context.Background(), target, DrainNode, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Drain.Node != "node-a" || rec.Drain.Evictions != 1 || !rec.Drain.Uncordoned.IsZero() || !node(t, c, "node-a").Spec.Unschedulable {
		t.Errorf("drain %+v, node-a unschedulable %t: want it drained and left cordoned", rec.Drain, node(t, c, "node-a").Spec.Unschedulable)
	}
}

func TestPickNodeCountsReadyPodsAndBreaksTiesByName(t *testing.T) {
	pod := func(name, node string, ready bool) *corev1.Pod {
		p := kubefake.ReadyPod("ns", name, appLabels)
		p.Spec.NodeName = node
		if !ready {
			p.Status.Conditions[0].Status = corev1.ConditionFalse
		}
		return p
	}
	c := kubefake.NewCluster(t, interceptor.Funcs{},
		pod("web-1", "node-c", true), pod("web-2", "node-c", false), pod("web-3", "node-b", true), pod("web-4", "node-a", false),
		pod("web-5", "node-b", false))
	target := Target{Client: c.Client, Namespace: "ns", Selector: "app=web"}
	node, pods, err := pickNode(context.Background(), target)
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	// node-b and node-c run one ready pod each: node-b, by name, and both its pods go.
	if err != nil || node != "node-b" || strings.Join(names, " ") != "web-3 web-5" {
		t.Errorf("pickNode = %s %v %v, want node-b with web-3 and web-5", node, names, err)
	}
	// A named node (the load's entry) is drained whatever the others run, if it runs a ready pod.
	target.Node = "node-c"
	if node, pods, err := pickNode(context.Background(), target); err != nil || node != "node-c" || len(pods) != 2 {
		t.Errorf("pickNode of node-c = %s %d pods %v, want node-c with web-1 and web-2", node, len(pods), err)
	}
	target.Node = "node-a"
	if _, _, err := pickNode(context.Background(), target); err == nil || !strings.Contains(err.Error(), "drain-node: node node-a runs no ready pod app=web of ns: nothing to drain there (the pods run on node-b, node-c)") {
		t.Errorf("pickNode of node-a, which runs no ready pod: %v", err)
	}
	target.Node, target.Selector = "", "app=none"
	if _, _, err := pickNode(context.Background(), target); err == nil || err.Error() != "drain-node: no ready pod app=none in ns on any node" {
		t.Errorf("pickNode with no pod: %v", err)
	}
}

func TestDrainOfAMissingDeployment(t *testing.T) {
	_, target := onNodes(t, 1, &refusals{}, "node-a")
	target.Deployment = "gone"
	if _, err := Once(context.Background(), target, DrainNode); err == nil || err.Error() != `drain-node: get Deployment ns/gone: deployments.apps "gone" not found` {
		t.Errorf("Once = %v", err)
	}
}

// A pod whose eviction was refused and that is gone meanwhile (deleted by someone else) needs no
// eviction: the drain goes on with the others.
func TestDrainForgetsARefusedPodGoneMeanwhile(t *testing.T) {
	r := &refusals{n: -1}
	c, target := onNodes(t, 2, r, "node-a")
	target.DrainTimeout = 30 * time.Millisecond
	pods := slices.DeleteFunc(podsOn(t, c, "node-a"), func(n string) bool { return n == "db-0" })
	var first sync.Once
	r.also = func() {
		first.Do(func() {
			p := kubefake.ReadyPod("ns", pods[0], nil)
			if err := c.Fake.Delete(context.Background(), p); err != nil {
				t.Error(err)
			}
		})
	}
	rec := Record{Kind: DrainNode, Started: time.Now()}
	if _, err := once(context.Background(), target, DrainNode, &rec); err != nil {
		t.Fatalf("drain = %v", err)
	}
	if !rec.Drain.Blocked || rec.Drain.Evictions != 0 || len(r.seen) != 2 || r.seen[pods[0]] != 1 || r.seen[pods[1]] < 2 {
		t.Errorf("drain %+v, evictions asked %v: want %s asked once, %s until blocked", rec.Drain, r.seen, pods[0], pods[1])
	}
	for _, name := range r.asked {
		if name != pods[0] && name != pods[1] {
			t.Fatalf("asked to evict %q: only %v are on the node", name, pods)
		}
	}
}

// A drain's cordon names the row's own namespace (Target.Owner), not the app's when the app is
// checked in place, so that a later run finds the namespace of a killed drain gone.
func TestCordonNamesTheOwner(t *testing.T) {
	c, target := onNodes(t, 1, &refusals{}, "node-a")
	target.Owner = "rc-row-x"
	if ok, err := cordon(context.Background(), c.Client.Resources().GetControllerRuntimeClient(), "node-a", target.owner()); err != nil || !ok {
		t.Fatalf("cordon: %v %v", ok, err)
	}
	if n := node(t, c, "node-a"); n.Annotations[CordonedBy] != "rc-row-x" {
		t.Errorf("cordoned by %q, want the row's namespace rc-row-x", n.Annotations[CordonedBy])
	}
	if (Target{Namespace: "ns"}).owner() != "ns" {
		t.Error("without Owner a cordon names the app's namespace, the row's own")
	}
}
