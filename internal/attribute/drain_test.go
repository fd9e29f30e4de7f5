package attribute

import (
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// drained is a drain of both replicas a and b at 0 s: their endpoints serve while terminating
// until 5 s (a preStop), are removed at 6 s, and replacement c is ready at 12 s.
func drained() *tl {
	b := &tl{}
	b.add(ev(-10, timeline.EndpointReady, "a", "serving=true terminating=false"), ev(-10, timeline.EndpointReady, "b", "serving=true terminating=false"))
	b.del("a", 0, 0.1).del("b", 0, 0.1)
	b.add(ev(0.1, timeline.EndpointUnready, "a", "serving=true terminating=true"), ev(0.1, timeline.EndpointUnready, "b", "serving=true terminating=true"),
		ev(5, timeline.EndpointUnready, "a", "serving=false terminating=true"), ev(5.1, timeline.EndpointUnready, "b", "serving=false terminating=true"),
		ev(6, timeline.EndpointRemoved, "a", ""), ev(6, timeline.EndpointRemoved, "b", ""),
		ev(1, timeline.PodCreated, "c", ""), ev(12, timeline.EndpointReady, "c", "serving=true terminating=false"))
	return b
}

func TestOutages(t *testing.T) {
	outs := Outages(drained().timeline(), "app")
	if len(outs) != 1 || !outs[0].From.Equal(at(5.1)) || !outs[0].To.Equal(at(12)) {
		t.Errorf("outages %+v, want one from 5.1 s to 12 s", outs)
	}
	// The app's own lines say when the last serving pod stopped accepting, before its probe did.
	b := drained()
	b.add(ev(3, timeline.AppEvent, "a", "listener_closed"), ev(4, timeline.AppEvent, "b", "exiting code=0"))
	if outs := Outages(b.timeline(), "app"); len(outs) != 1 || !outs[0].From.Equal(at(4)) {
		t.Errorf("outages %+v, want one from 4 s (b's exiting line)", outs)
	}
	// Before any deletion, no endpoint means none was seen yet.
	b = &tl{}
	b.add(ev(-1, timeline.EndpointRemoved, "x", ""), ev(0, timeline.EndpointReady, "a", ""))
	if outs := Outages(b.timeline(), "app"); len(outs) != 0 {
		t.Errorf("outages %+v before a deletion", outs)
	}
	// Still open at the end.
	b = drained()
	b.events = b.events[:len(b.events)-1]
	if outs := Outages(b.timeline(), "app"); len(outs) != 1 || !outs[0].To.IsZero() {
		t.Errorf("outages %+v, want one still open", outs)
	}
}

func TestDrainOutage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   loadgen.Request
		drain bool
		want  timeline.Phase
	}{
		{"refused in the outage", failed(1, 8, 0.001, loadgen.ClassRefused), true, timeline.PhaseDrainOutage},
		// kube-proxy programs the replacement up to the lag (2 s by default) after it is ready.
		{"refused just after the replacement was ready", failed(1, 13, 0.001, loadgen.ClassRefused), true, timeline.PhaseDrainOutage},
		{"after the lag", failed(1, 14.5, 0.001, loadgen.ClassRefused), true, timeline.PhaseUnknown},
		{"not a drain", failed(1, 8, 0.001, loadgen.ClassRefused), false, timeline.PhaseUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := one(t, Input{Requests: []loadgen.Request{tc.req}, Timeline: drained().timeline(), Drain: tc.drain})
			if a.Phase != tc.want {
				t.Errorf("attributed to %s (%s), want %s", a.Phase, a.Why, tc.want)
			}
			if a.Phase == timeline.PhaseDrainOutage && (a.Pod != "" || !strings.Contains(a.Why, "no endpoint left (05:00:05.100 to 05:00:12.000")) {
				t.Errorf("why %q, pod %q", a.Why, a.Pod)
			}
		})
	}
	// A pod's own answer is the pod's, outage or not.
	q := failed(1, 8, 0.001, loadgen.HTTP5xxClass(503))
	q.Pod = "c"
	if a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: drained().timeline(), Drain: true}); a.Phase == timeline.PhaseDrainOutage {
		t.Errorf("a pod's answer attributed to %s", a.Phase)
	}
}
