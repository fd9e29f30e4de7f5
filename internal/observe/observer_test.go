package observe

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

const (
	testNS  = "rollcheck-test"
	testSel = "app=app"
	testSvc = "app"
)

// world drives a fake clientset through a pod's lifecycle.
type world struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
}

func newWorld(t *testing.T, objs ...k8sruntime.Object) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return &world{t: t, ctx: ctx, client: fake.NewClientset(objs...)}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: testNS, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "app"},
	}}
}

func setReady(p *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	reason := "ContainersNotReady"
	if ready {
		status, reason = corev1.ConditionTrue, ""
	}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: status, Reason: reason},
	}
}

type ep struct {
	pod                         string
	ready, serving, terminating bool
}

func slice(name string, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, Labels: map[string]string{discoveryv1.LabelServiceName: testSvc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.244.0.%d", i+10)},
			Conditions: discoveryv1.EndpointConditions{
				Ready: ptr.To(e.ready), Serving: ptr.To(e.serving), Terminating: ptr.To(e.terminating),
			},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: e.pod},
		})
	}
	return s
}

func k8sEvent(name, podName, reason, msg string, count int32) *corev1.Event {
	now := metav1.Now()
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: testNS},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: podName},
		Reason:         reason, Message: msg, Count: count, Type: corev1.EventTypeNormal,
		FirstTimestamp: now, LastTimestamp: now,
	}
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) createPod(p *corev1.Pod) {
	w.t.Helper()
	_, err := w.client.CoreV1().Pods(testNS).Create(w.ctx, p, metav1.CreateOptions{})
	w.must(err)
}

func (w *world) updatePod(p *corev1.Pod) {
	w.t.Helper()
	_, err := w.client.CoreV1().Pods(testNS).Update(w.ctx, p, metav1.UpdateOptions{})
	w.must(err)
}

func (w *world) putSlice(s *discoveryv1.EndpointSlice, create bool) {
	w.t.Helper()
	var err error
	if create {
		_, err = w.client.DiscoveryV1().EndpointSlices(testNS).Create(w.ctx, s, metav1.CreateOptions{})
	} else {
		_, err = w.client.DiscoveryV1().EndpointSlices(testNS).Update(w.ctx, s, metav1.UpdateOptions{})
	}
	w.must(err)
}

func (w *world) start() *Observer {
	w.t.Helper()
	o, err := Start(w.ctx, w.client, testNS, testSel, testSvc, w.t.Logf)
	if err != nil {
		w.t.Fatalf("Start: %v", err)
	}
	w.t.Cleanup(func() { o.Stop() })
	return o
}

// waitFor polls the timeline until it has n events of kind for pod.
func waitFor(t *testing.T, o *Observer, kind Kind, podName string, n int) Timeline {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tl := o.Snapshot()
		got := 0
		for _, e := range tl.Events {
			if e.Kind == kind && e.Pod == podName {
				got++
			}
		}
		if got >= n {
			return tl
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d %s of %q; timeline:\n%s", n, kind, podName, dump(tl))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func kindsOf(tl Timeline, podName string) []Kind {
	var out []Kind
	for _, e := range tl.Events {
		if e.Pod == podName {
			out = append(out, e.Kind)
		}
	}
	return out
}

func dump(tl Timeline) string {
	var b strings.Builder
	for _, e := range tl.Events {
		fmt.Fprintf(&b, "  %s %-16s %-8s %s\n", e.Time.Format("15:04:05.000000"), e.Kind, e.Pod, e.Detail)
	}
	return b.String()
}

func equalKinds(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// typedAsDetail checks that every event's typed fields say what its Detail says: read from
// the Detail alone, as a row recorded before them is (Timeline.Upgraded), they come out the
// same.
func typedAsDetail(t *testing.T, tl Timeline) {
	t.Helper()
	for _, e := range tl.Events {
		text := e
		text.GraceSeconds, text.Node, text.Address, text.PodPhase, text.Endpoint, text.App = nil, "", "", "", nil, nil
		if got := text.Upgraded(); !reflect.DeepEqual(got, e) {
			t.Errorf("%s %s %q: typed %+v, its Detail says %+v", e.Kind, e.Pod, e.Detail, e, got)
		}
	}
}

func find(tl Timeline, kind Kind, podName string) (Event, bool) {
	for _, e := range tl.Events {
		if e.Kind == kind && e.Pod == podName {
			return e, true
		}
	}
	return Event{}, false
}

// TestLifecycle scripts one pod from creation to deletion, with the harness's marks and a
// Kubernetes Event, and checks the sequence and the propagation delays.
func TestLifecycle(t *testing.T) {
	w := newWorld(t)
	o := w.start()

	p := pod("app-1")
	w.createPod(p)
	waitFor(t, o, PodCreated, "app-1", 1)

	p.Spec.NodeName = "kind-worker"
	w.updatePod(p)
	waitFor(t, o, PodScheduled, "app-1", 1)

	setReady(p, true)
	w.updatePod(p)
	waitFor(t, o, PodReady, "app-1", 1)

	w.putSlice(slice("app-abc", ep{"app-1", true, true, false}), true)
	waitFor(t, o, EndpointReady, "app-1", 1)

	o.Mark(Disruption, "delete pod app-1")
	p.DeletionTimestamp = ptr.To(metav1.Now())
	p.DeletionGracePeriodSeconds = ptr.To[int64](30)
	w.updatePod(p)
	waitFor(t, o, PodDeleting, "app-1", 1)

	_, err := w.client.CoreV1().Events(testNS).Create(w.ctx, k8sEvent("app-1.kill", "app-1", "Killing", "Stopping container app", 1), metav1.CreateOptions{})
	w.must(err)
	waitFor(t, o, K8sEvent, "app-1", 1)

	w.putSlice(slice("app-abc", ep{"app-1", false, true, true}), false)
	waitFor(t, o, EndpointUnready, "app-1", 1)

	setReady(p, false)
	w.updatePod(p)
	waitFor(t, o, PodUnready, "app-1", 1)

	w.putSlice(slice("app-abc"), false)
	waitFor(t, o, EndpointRemoved, "app-1", 1)

	w.must(w.client.CoreV1().Pods(testNS).Delete(w.ctx, "app-1", metav1.DeleteOptions{}))
	waitFor(t, o, PodGone, "app-1", 1)
	o.Mark(DisruptionDone, "settled")

	tl := o.Stop()
	typedAsDetail(t, tl)
	want := []Kind{PodCreated, PodScheduled, PodReady, EndpointReady, PodDeleting, K8sEvent,
		EndpointUnready, PodUnready, EndpointRemoved, PodGone}
	if got := kindsOf(tl, "app-1"); !equalKinds(got, want) {
		t.Fatalf("kinds for app-1:\n got %v\nwant %v\n%s", got, want, dump(tl))
	}
	if e, _ := find(tl, PodDeleting, "app-1"); e.Detail != "grace=30s" || e.GraceSeconds == nil || *e.GraceSeconds != 30 {
		t.Errorf("PodDeleting detail = %q (grace %v), want grace=30s", e.Detail, e.GraceSeconds)
	}
	if e, _ := find(tl, PodScheduled, "app-1"); e.Detail != "kind-worker" {
		t.Errorf("PodScheduled detail = %q, want the node", e.Detail)
	}
	if e, _ := find(tl, EndpointUnready, "app-1"); e.Detail != "serving=true terminating=true" || e.Endpoint == nil || *e.Endpoint != (EndpointConditions{Serving: true, Terminating: true}) {
		t.Errorf("EndpointUnready detail = %q (%+v)", e.Detail, e.Endpoint)
	}
	if e, _ := find(tl, K8sEvent, "app-1"); e.Detail != "Killing: Stopping container app" {
		t.Errorf("K8sEvent detail = %q", e.Detail)
	}
	for _, m := range []struct {
		kind   Kind
		detail string
	}{{Disruption, "delete pod app-1"}, {DisruptionDone, "settled"}} {
		if e, ok := find(tl, m.kind, ""); !ok || e.Detail != m.detail {
			t.Errorf("mark %s: got %+v, found=%t", m.kind, e, ok)
		}
	}
	if got := kindsOf(tl, ""); !equalKinds(got, []Kind{Disruption, DisruptionDone}) {
		t.Errorf("marks in order: %v", got)
	}
	for i := 1; i < len(tl.Events); i++ {
		if tl.Events[i].Time.Before(tl.Events[i-1].Time) {
			t.Fatalf("timeline not sorted at %d:\n%s", i, dump(tl))
		}
	}
	if tl.Namespace != testNS || tl.Started.IsZero() || tl.Ended.Before(tl.Events[len(tl.Events)-1].Time) ||
		tl.Started.After(tl.Events[0].Time) {
		t.Errorf("timeline bounds: ns=%q started=%v ended=%v", tl.Namespace, tl.Started, tl.Ended)
	}

	if len(tl.Propagation) != 1 {
		t.Fatalf("propagation: %+v", tl.Propagation)
	}
	pr := tl.Propagation[0]
	del, _ := find(tl, PodDeleting, "app-1")
	if pr.Pod != "app-1" || !pr.DeletingAt.Equal(del.Time) {
		t.Errorf("propagation for %q at %v, want app-1 at %v", pr.Pod, pr.DeletingAt, del.Time)
	}
	if pr.ToUnready <= 0 || pr.ToRemoved < pr.ToUnready {
		t.Errorf("propagation delays: toUnready=%v toRemoved=%v", pr.ToUnready, pr.ToRemoved)
	}
	unready, _ := find(tl, EndpointUnready, "app-1")
	if pr.ToUnready != unready.Time.Sub(del.Time) {
		t.Errorf("toUnready=%v, want %v", pr.ToUnready, unready.Time.Sub(del.Time))
	}
	if pr.Routed() != pr.ToUnready {
		t.Errorf("Routed=%v, want toUnready %v", pr.Routed(), pr.ToUnready)
	}
}

// TestPodMovesBetweenSlices: a pod that is in a second slice before it leaves the first has
// not left the Service.
func TestPodMovesBetweenSlices(t *testing.T) {
	w := newWorld(t, slice("app-a", ep{"app-1", true, true, false}, ep{"app-2", true, true, false}))
	o := w.start()

	w.putSlice(slice("app-b", ep{"app-1", true, true, false}), true)
	w.putSlice(slice("app-a", ep{"app-2", true, true, false}), false)
	// Barrier: a change on the same watch, after the move.
	w.putSlice(slice("app-a", ep{"app-2", false, false, false}), false)
	waitFor(t, o, EndpointUnready, "app-2", 1)
	if got := kindsOf(o.Snapshot(), "app-1"); len(got) != 0 {
		t.Fatalf("moving app-1 between slices recorded %v", got)
	}

	// Leaving the only slice left is a removal; deleting a slice removes its pods.
	w.must(w.client.DiscoveryV1().EndpointSlices(testNS).Delete(w.ctx, "app-b", metav1.DeleteOptions{}))
	waitFor(t, o, EndpointRemoved, "app-1", 1)
	w.must(w.client.DiscoveryV1().EndpointSlices(testNS).Delete(w.ctx, "app-a", metav1.DeleteOptions{}))
	tl := waitFor(t, o, EndpointRemoved, "app-2", 1)
	if got := kindsOf(tl, "app-1"); !equalKinds(got, []Kind{EndpointRemoved}) {
		t.Errorf("app-1: %v", got)
	}
	if got := kindsOf(tl, "app-2"); !equalKinds(got, []Kind{EndpointUnready, EndpointRemoved}) {
		t.Errorf("app-2: %v", got)
	}
	if e, _ := find(tl, EndpointUnready, "app-2"); e.Detail != "serving=false terminating=false" {
		t.Errorf("EndpointUnready detail = %q", e.Detail)
	}
}

// TestBaseline: what exists at Start is not reported, but it is the state changes are
// measured from; only where each pod runs is (its node, for a node's own endpoints).
func TestBaseline(t *testing.T) {
	p := pod("app-0")
	p.Spec.NodeName = "kind-worker"
	setReady(p, true)
	other := pod("other")
	other.Labels = map[string]string{"app": "other"}
	old := k8sEvent("app-0.sched", "app-0", "Scheduled", "assigned", 1)
	w := newWorld(t, p, other, slice("app-a", ep{"app-0", true, true, false}), old)
	o := w.start()

	time.Sleep(50 * time.Millisecond)
	if tl := o.Snapshot(); len(tl.Events) != 1 || tl.Events[0].Kind != PodScheduled || tl.Events[0].Detail != "kind-worker" {
		t.Fatalf("objects existing before Start were reported, or the pod's node was not:\n%s", dump(tl))
	}

	// A pod outside the selector is not observed.
	other.DeletionTimestamp = ptr.To(metav1.Now())
	w.updatePod(other)

	p.DeletionTimestamp = ptr.To(metav1.Now())
	p.DeletionGracePeriodSeconds = ptr.To[int64](5)
	w.updatePod(p)
	waitFor(t, o, PodDeleting, "app-0", 1)

	// A new occurrence of an Event that existed before Start is reported.
	old.Count = 2
	old.LastTimestamp = metav1.Now()
	_, err := w.client.CoreV1().Events(testNS).Update(w.ctx, old, metav1.UpdateOptions{})
	w.must(err)
	waitFor(t, o, K8sEvent, "app-0", 1)

	w.putSlice(slice("app-a", ep{"app-0", false, false, true}), false)
	waitFor(t, o, EndpointUnready, "app-0", 1)
	w.putSlice(slice("app-a"), false)
	waitFor(t, o, EndpointRemoved, "app-0", 1)
	w.must(w.client.CoreV1().Pods(testNS).Delete(w.ctx, "app-0", metav1.DeleteOptions{}))
	waitFor(t, o, PodGone, "app-0", 1)

	tl := o.Stop()
	typedAsDetail(t, tl)
	want := []Kind{PodScheduled, PodDeleting, K8sEvent, EndpointUnready, EndpointRemoved, PodGone}
	if got := kindsOf(tl, "app-0"); !equalKinds(got, want) {
		t.Fatalf("kinds for app-0:\n got %v\nwant %v\n%s", got, want, dump(tl))
	}
	if got := kindsOf(tl, "other"); len(got) != 0 {
		t.Errorf("pod outside the selector recorded: %v", got)
	}
	if e, _ := find(tl, K8sEvent, "app-0"); e.Detail != "Scheduled: assigned (x2)" {
		t.Errorf("K8sEvent detail = %q", e.Detail)
	}
	if len(tl.Propagation) != 1 {
		t.Fatalf("propagation: %+v", tl.Propagation)
	}
	pr := tl.Propagation[0]
	if pr.Pod != "app-0" || pr.ToUnready <= 0 || pr.ToRemoved < pr.ToUnready {
		t.Errorf("propagation: %+v", pr)
	}
}

// TestForcedDeleteAndNeverRemoved: a pod deleted without an update carrying its
// deletionTimestamp (grace 0) still gets PodDeleting; endpoints never updated give -1.
func TestForcedDeleteAndNeverRemoved(t *testing.T) {
	p := pod("app-0")
	setReady(p, true)
	w := newWorld(t, p)
	o := w.start()
	w.must(w.client.CoreV1().Pods(testNS).Delete(w.ctx, "app-0", metav1.DeleteOptions{}))
	waitFor(t, o, PodGone, "app-0", 1)
	tl := o.Stop()
	typedAsDetail(t, tl)
	// The fake does not set deletionTimestamp on Delete: only PodGone.
	if got := kindsOf(tl, "app-0"); !equalKinds(got, []Kind{PodGone}) {
		t.Fatalf("kinds: %v", got)
	}

	// Through the handler, as a real API server would deliver a forced deletion.
	o2 := &Observer{ns: testNS, logf: t.Logf, cancel: func() {}, pods: map[string]podState{"app-1": {uid: "uid-app-1", ready: true}},
		slices:    map[string]map[string]endpointState{"s": {"app-1": {ready: true, serving: true}}},
		endpoints: map[string]endpointState{"app-1": {ready: true, serving: true}}, inSlice: map[string]bool{"app-1": true},
		atDeletion: map[string]deletionBaseline{}}
	gone := pod("app-1")
	gone.DeletionTimestamp = ptr.To(metav1.Now())
	gone.DeletionGracePeriodSeconds = ptr.To[int64](0)
	o2.onPodDelete(time.Now(), gone, false)
	tl = o2.Stop()
	if got := kindsOf(tl, "app-1"); !equalKinds(got, []Kind{PodDeleting, PodGone}) {
		t.Fatalf("forced delete kinds: %v", got)
	}
	if len(tl.Propagation) != 1 || tl.Propagation[0].ToUnready != -1 || tl.Propagation[0].ToRemoved != -1 ||
		tl.Propagation[0].Routed() != -1 {
		t.Errorf("propagation without endpoint changes: %+v", tl.Propagation)
	}
}

func TestPropagationBaselines(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events := []Event{
		{Time: at(0), Kind: EndpointUnready, Pod: "a"}, // delivered just before the pod update
		{Time: at(1), Kind: PodDeleting, Pod: "a"},
		{Time: at(1), Kind: PodDeleting, Pod: "b"},
		{Time: at(2), Kind: PodDeleting, Pod: "c"},
		{Time: at(40), Kind: EndpointRemoved, Pod: "a"},
		{Time: at(50), Kind: EndpointUnready, Pod: "c"},
		{Time: at(60), Kind: PodCreated, Pod: "c"}, // a new pod of the same name
		{Time: at(70), Kind: EndpointRemoved, Pod: "c"},
	}
	got := propagation(events, map[string]deletionBaseline{
		"a": {present: true, ready: false, everInSlice: true},
		"b": {present: false, everInSlice: true},
		"c": {present: true, ready: true, everInSlice: true},
	})
	want := []Propagation{
		{Pod: "a", DeletingAt: at(1), ToUnready: 0, ToRemoved: 39 * time.Millisecond},
		{Pod: "b", DeletingAt: at(1), ToUnready: -1, ToRemoved: 0},
		{Pod: "c", DeletingAt: at(2), ToUnready: 48 * time.Millisecond, ToRemoved: -1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Pod != want[i].Pod || !got[i].DeletingAt.Equal(want[i].DeletingAt) ||
			got[i].ToUnready != want[i].ToUnready || got[i].ToRemoved != want[i].ToRemoved {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := got[1].Routed(); r != 0 {
		t.Errorf("Routed for b = %v", r)
	}
}

func TestStartErrors(t *testing.T) {
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, client, testNS, testSel, testSvc, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Start on a cancelled context: %v", err)
	}
	for name, args := range map[string][3]string{
		"empty namespace": {"", testSel, testSvc},
		"bad selector":    {testNS, "app in (", testSvc},
		"empty service":   {testNS, testSel, ""},
	} {
		if _, err := Start(context.Background(), client, args[0], args[1], args[2], nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}

	// A list that fails fails Start, with what was being done.
	client.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	_, err := Start(context.Background(), client, testNS, testSel, testSvc, nil)
	if err == nil || !strings.Contains(err.Error(), "list endpointslices") || !strings.Contains(err.Error(), testNS) {
		t.Errorf("Start with a failing list: %v", err)
	}
}

// waitGoroutines waits until the goroutine count is at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d > %d\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStopIdempotentNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	client := fake.NewClientset()
	o, err := Start(context.Background(), client, testNS, testSel, testSvc, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	o.Mark(Disruption, "x")

	// Mark and Snapshot from other goroutines while the watches deliver changes.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				o.Mark(DisruptionDone, fmt.Sprint(i, j))
				o.Snapshot()
			}
		}()
	}
	for i := range 5 {
		_, err := client.CoreV1().Pods(testNS).Create(context.Background(), pod(fmt.Sprint("p-", i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	waitFor(t, o, PodCreated, "p-4", 1)

	start := time.Now()
	tl := o.Stop()
	typedAsDetail(t, tl)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Stop took %v", d)
	}
	again := o.Stop()
	if len(again.Events) != len(tl.Events) || !again.Ended.Equal(tl.Ended) {
		t.Errorf("second Stop differs: %d events vs %d", len(again.Events), len(tl.Events))
	}
	if want := 1 + 80 + 5; len(tl.Events) != want {
		t.Errorf("%d events, want %d", len(tl.Events), want)
	}
	o.Mark(Disruption, "after stop")
	if n := len(o.Snapshot().Events); n != len(tl.Events) {
		t.Errorf("Mark after Stop was recorded")
	}
	waitGoroutines(t, before+2)
}

func TestContextCancelEndsWatches(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	o, err := Start(ctx, fake.NewClientset(), testNS, testSel, testSvc, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitGoroutines(t, before+2)
	done := make(chan struct{})
	go func() { o.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Stop after cancel did not return")
	}
}

// TestWatchReopened: a watch the server closes is re-opened, and one that reports an
// expired resourceVersion leads to a relist, which records what changed meanwhile.
func TestWatchReopened(t *testing.T) {
	w := newWorld(t)
	fc := w.client.(*fake.Clientset)
	var calls atomic.Int32
	controlled := make(chan *watch.RaceFreeFakeWatcher, 2)
	fc.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if calls.Add(1) <= 2 {
			fw := watch.NewRaceFreeFake()
			controlled <- fw
			return true, fw, nil
		}
		return false, nil, nil // the tracker's watch
	})
	o := w.start()

	first := <-controlled
	first.Stop() // the server ends the watch
	second := <-controlled

	// Created while nobody delivers it, then the watch reports 410 Gone.
	w.createPod(pod("missed"))
	second.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	waitFor(t, o, PodCreated, "missed", 1)

	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("pods watch not re-opened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.createPod(pod("later"))
	tl := waitFor(t, o, PodCreated, "later", 1)
	if got := kindsOf(tl, "missed"); !equalKinds(got, []Kind{PodCreated}) {
		t.Errorf("missed: %v", got)
	}
	// The server's close is no gap; the watch that ended with an error is, until the next ran.
	if len(tl.Gaps) != 1 || tl.Gaps[0].What != "pods" || !strings.Contains(tl.Gaps[0].Error, "too old resource version") || tl.Gaps[0].To.Before(tl.Gaps[0].From) {
		t.Errorf("gaps %+v, want one of pods after the expired watch", tl.Gaps)
	}
	if g := tl.GapsWithin(tl.Gaps[0].From.Add(-time.Second), tl.Gaps[0].From.Add(time.Millisecond)); len(tl.Gaps) == 1 && len(g) != 1 {
		t.Errorf("GapsWithin missed the gap: %+v", g)
	}
}
