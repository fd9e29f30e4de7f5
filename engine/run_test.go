package engine

import (
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func TestWindows(t *testing.T) {
	base := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// One request every 100 ms from 0 to 3000 ms, in sending order, as loadgen keeps them.
	var reqs []loadgen.Request
	// Disruption 1 runs from 1000 to 2000 ms: of the resets, only the one at 2000 ms is its own.
	fail := map[int]loadgen.Class{
		900:  loadgen.ClassReset, // just before disruption 1
		1000: loadgen.ClassEOF,   // at its start: counted
		1500: loadgen.ClassEOF,
		2000: loadgen.ClassReset, // at its settling: counted
		2100: loadgen.ClassReset, // just after: not counted
		2800: loadgen.HTTP5xxClass(503),
	}
	for ms := 0; ms <= 3000; ms += 100 {
		c, failed := fail[ms]
		if !failed {
			c = loadgen.ClassOK
		}
		reqs = append(reqs, loadgen.Request{Seq: uint64(ms / 100), Timestamp: at(ms), Class: c})
	}
	recs := []disrupt.Record{
		{Kind: disrupt.Kind(DeletePod), N: 1, Pod: "web-abc", Started: at(1000), Settled: at(2000)},
		// Bounds between requests: 2450..2850 holds 2500, 2600, 2700, 2800.
		{Kind: disrupt.Kind(DeletePod), N: 2, Pod: "web-def", Started: at(2450), Settled: at(2850)},
		// After the last request: nothing sent.
		{Kind: disrupt.Kind(DeletePod), N: 3, Pod: "web-ghi", Started: at(3500), Settled: at(4000)},
	}
	// Every failure attributed: the 503 to a starting pod, the others to propagation.
	phases := map[uint64]timeline.Phase{}
	for ms, c := range fail {
		phases[uint64(ms/100)] = timeline.PhasePropagation
		if c == loadgen.HTTP5xxClass(503) {
			phases[uint64(ms/100)] = timeline.PhaseStartup
		}
	}
	got := windows(recs, reqs, phases)
	want := []DisruptionResult{
		{Kind: DeletePod, N: 1, Pod: "web-abc", Started: at(1000), Settled: at(2000), Requests: 11, Failed: 3,
			SuccessRatio: 8.0 / 11, Failures: map[loadgen.Class]int{loadgen.ClassEOF: 2, loadgen.ClassReset: 1},
			Phases: map[timeline.Phase]int{timeline.PhasePropagation: 3}},
		{Kind: DeletePod, N: 2, Pod: "web-def", Started: at(2450), Settled: at(2850), Requests: 4, Failed: 1,
			SuccessRatio: 3.0 / 4, Failures: map[loadgen.Class]int{loadgen.HTTP5xxClass(503): 1},
			Phases: map[timeline.Phase]int{timeline.PhaseStartup: 1}},
		{Kind: DeletePod, N: 3, Pod: "web-ghi", Started: at(3500), Settled: at(4000)},
	}
	if len(got) != len(want) {
		t.Fatalf("windows: %d results, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.N != w.N || g.Pod != w.Pod || !g.Started.Equal(w.Started) || !g.Settled.Equal(w.Settled) ||
			g.Requests != w.Requests || g.Failed != w.Failed || g.SuccessRatio != w.SuccessRatio || !maps.Equal(g.Failures, w.Failures) || !maps.Equal(g.Phases, w.Phases) {
			t.Errorf("disruption %d = %+v\n          want %+v", i+1, g, w)
		}
	}
	if out := windows(nil, reqs, nil); out == nil || len(out) != 0 {
		t.Errorf("windows(no disruptions) = %#v, want an empty slice", out)
	}
	if out := windows(recs[:1], nil, nil); len(out) != 1 || out[0].Requests != 0 || out[0].SuccessRatio != 0 {
		t.Errorf("windows(no requests) = %+v, want one disruption with no requests", out)
	}
}

func TestPlanObjects(t *testing.T) {
	p := webPlan(t)
	p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second}
	p.Variant.Replicas = ptr.To[int32](2)
	orig := deploymentOf(t, p.App.Objects, "web").DeepCopy()
	objs, err := p.Objects("rc-web-drain", 30080)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, kindOf(o)+"/"+o.GetName())
		if o.GetNamespace() != "rc-web-drain" {
			t.Errorf("%s %s in namespace %q, want rc-web-drain", kindOf(o), o.GetName(), o.GetNamespace())
		}
	}
	if got, want := strings.Join(kinds, " "), "ConfigMap/web-config Service/web Deployment/web Service/rollcheck-load"; got != want {
		t.Fatalf("Objects = %s, want %s", got, want)
	}
	dep := objs[2].(*appsv1.Deployment)
	if r := dep.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("replicas %v, want the variant's 2", r)
	}
	if h := container(t, dep, "app").Lifecycle.PreStop; h.Sleep == nil || h.Sleep.Seconds != 5 || h.Exec != nil {
		t.Errorf("app preStop %+v, want the variant's sleep 5", h)
	}
	if pp := container(t, dep, "app").ImagePullPolicy; pp != corev1.PullNever {
		t.Errorf("app imagePullPolicy %q, want Never", pp)
	}
	// The manifests are left as they were.
	if now := deploymentOf(t, p.App.Objects, "web"); now.Namespace != "" || *now.Spec.Replicas != 3 ||
		now.Spec.Template.Spec.Containers[0].Lifecycle.PreStop.Exec == nil || orig.Name != now.Name {
		t.Errorf("Objects changed the manifests' Deployment: %+v", now)
	}
	for _, o := range p.App.Objects {
		if o.GetNamespace() != "" {
			t.Errorf("Objects set the namespace of the manifests' %s %s", kindOf(o), o.GetName())
		}
	}

	// rollcheck's own Service selects the Deployment's pods on the app's port, on the NodePort.
	svc := objs[3].(*corev1.Service)
	if svc.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("load Service type %q, want NodePort", svc.Spec.Type)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 30080 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("load Service ports %+v, want nodePort 30080 to port 8080", svc.Spec.Ports)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("load Service has no selector")
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("load Service selector %s=%s does not select the pods %v", k, v, dep.Spec.Template.Labels)
		}
	}
	if svc.Labels[PartOfLabel] != PartOfValue {
		t.Errorf("load Service labels %v, want %s=%s", svc.Labels, PartOfLabel, PartOfValue)
	}

	// Without a NodePort the Service is a plain ClusterIP one.
	objs, err = p.Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	if svc := objs[len(objs)-1].(*corev1.Service); svc.Spec.Type != "" || svc.Spec.Ports[0].NodePort != 0 {
		t.Errorf("load Service without a NodePort: type %q, nodePort %d", svc.Spec.Type, svc.Spec.Ports[0].NodePort)
	}

	// A Plan that does not check gives its error and no objects.
	p.App.Port = 9090
	if objs, err := p.Objects("ns", 30080); err == nil || objs != nil {
		t.Errorf("Objects of a bad plan = %d objects, %v", len(objs), err)
	}
}

// A slow request sent before a disruption and cut during it belongs to that disruption; one
// answered before the disruption started does not.
func TestWindowsCountRequestsInFlight(t *testing.T) {
	base := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	reqs := []loadgen.Request{
		{Timestamp: base, Latency: 900 * time.Millisecond, Class: loadgen.ClassOK},                       // done before the start
		{Timestamp: base.Add(200 * time.Millisecond), Latency: 5 * time.Second, Class: loadgen.ClassEOF}, // cut during it
		{Timestamp: base.Add(1500 * time.Millisecond), Class: loadgen.ClassOK},                           // sent during it
		{Timestamp: base.Add(3 * time.Second), Class: loadgen.ClassOK},                                   // after it settled
	}
	recs := []disrupt.Record{{Kind: disrupt.ScaleDown, N: 1, Started: base.Add(time.Second), Settled: base.Add(2 * time.Second)}}
	got := windows(recs, reqs, nil)[0]
	if got.Requests != 2 || got.Failed != 1 || got.Failures[loadgen.ClassEOF] != 1 {
		t.Errorf("window = %d requests, %d failed (%v); want the cut slow request and the one sent during it", got.Requests, got.Failed, got.Failures)
	}
}
