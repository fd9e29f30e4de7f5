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
		{"refused in the outage", failed(1, 8, 0.001, loadgen.ClassRefused), true, timeline.PhaseNoEndpoint},
		// kube-proxy programs the replacement up to the lag (2 s by default) after it is ready.
		{"refused just after the replacement was ready", failed(1, 13, 0.001, loadgen.ClassRefused), true, timeline.PhaseNoEndpoint},
		{"after the lag", failed(1, 14.5, 0.001, loadgen.ClassRefused), true, timeline.PhaseUnknown},
		{"not a drain, three replicas", failed(1, 8, 0.001, loadgen.ClassRefused), false, timeline.PhaseUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := one(t, Input{Requests: []loadgen.Request{tc.req}, Timeline: drained().timeline(), Context: Context{Drain: tc.drain}})
			if a.Phase != tc.want {
				t.Errorf("attributed to %s (%s), want %s", a.Phase, a.Why, tc.want)
			}
			if a.Phase == timeline.PhaseNoEndpoint && (a.Pod != "" || !strings.Contains(a.Why, "no endpoint left (05:00:05.100 to 05:00:12.000")) {
				t.Errorf("why %q, pod %q", a.Why, a.Pod)
			}
		})
	}
	// A pod's own answer is the pod's, outage or not.
	q := failed(1, 8, 0.001, loadgen.HTTP5xxClass(503))
	q.Pod = "c"
	if a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: drained().timeline(), Context: Context{Drain: true}}); a.Phase == timeline.PhaseNoEndpoint {
		t.Errorf("a pod's answer attributed to %s", a.Phase)
	}
}

// TestOutagesSeedsTheFirstPods: the pods that ran when the observer started show only as a
// PodAddress (their endpoints are the baseline); one of three deleted is no outage, the only one
// deleted, exiting before its replacement is ready, is.
func TestOutagesSeedsTheFirstPods(t *testing.T) {
	three := &tl{}
	three.add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"), ev(-10, timeline.PodAddress, "b", "10.244.0.6"), ev(-10, timeline.PodAddress, "c", "10.244.0.7"))
	three.del("a", 0, 0.1)
	three.add(ev(0.1, timeline.EndpointUnready, "a", "serving=false terminating=true"), ev(0.2, timeline.AppEvent, "a", "exiting code=0"))
	if outs := Outages(three.timeline(), "app"); len(outs) != 0 {
		t.Errorf("one of three pods deleted: outages %+v, want none", outs)
	}
	one := &tl{}
	one.add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"))
	one.del("a", 0, 0.1)
	one.add(ev(0.1, timeline.PodCreated, "n", ""), ev(0.2, timeline.AppEvent, "a", "exiting code=0"),
		ev(0.3, timeline.EndpointUnready, "a", "serving=false terminating=true"),
		ev(1, timeline.PodAddress, "n", "10.244.0.8"), ev(2.5, timeline.EndpointReady, "n", "serving=true terminating=false"))
	outs := Outages(one.timeline(), "app")
	if len(outs) != 1 || !outs[0].From.Equal(at(0.2)) || !outs[0].To.Equal(at(2.5)) {
		t.Fatalf("the only pod exiting: outages %+v, want one from 0.2 s (its exiting line) to 2.5 s (the replacement ready)", outs)
	}
	// In a row of one replica the rule applies, and says why without naming a drain.
	a := one.attr(t, Input{Requests: []loadgen.Request{failed(1, 1, 0.001, loadgen.ClassRefused)}, Context: Context{SingleReplica: true}})
	if a.Phase != timeline.PhaseNoEndpoint || !strings.Contains(a.Why, "the last one had stopped before a replacement was ready") {
		t.Errorf("attributed to %s (%s), want no-endpoint, not a drain's", a.Phase, a.Why)
	}
	if a := one.attr(t, Input{Requests: []loadgen.Request{failed(1, 1, 0.001, loadgen.ClassRefused)}}); a.Phase == timeline.PhaseNoEndpoint {
		t.Errorf("a row of several replicas: attributed to %s, want the pod rules", a.Phase)
	}
}

// attr attributes the one request of in on b's timeline.
func (b *tl) attr(t *testing.T, in Input) Attribution {
	t.Helper()
	in.Timeline, in.Container = b.timeline(), "app"
	return one(t, in)
}

// TestOutagesScaleToZero: three pods scaled away together keep answering while they terminate
// and serve (kube-proxy's fallback), and the outage runs from the last one's exit until a new
// one is ready; a failure in it says the app was scaled to zero.
func TestOutagesScaleToZero(t *testing.T) {
	z := &tl{}
	z.add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"), ev(-10, timeline.PodAddress, "b", "10.244.0.6"), ev(-10, timeline.PodAddress, "c", "10.244.0.7"))
	for _, p := range []string{"a", "b", "c"} {
		z.del(p, 0, 0.1)
		z.add(ev(0.2, timeline.EndpointUnready, p, "serving=true terminating=true"))
	}
	z.add(ev(5.1, timeline.AppEvent, "a", "exiting code=0"), ev(5.2, timeline.AppEvent, "b", "exiting code=0"), ev(5.3, timeline.AppEvent, "c", "exiting code=0"),
		ev(6, timeline.PodCreated, "n", ""), ev(7, timeline.PodAddress, "n", "10.244.0.8"), ev(9, timeline.EndpointReady, "n", "serving=true terminating=false"))
	outs := Outages(z.timeline(), "app")
	if len(outs) != 1 || !outs[0].From.Equal(at(5.3)) || !outs[0].To.Equal(at(9)) {
		t.Fatalf("scaled to zero: outages %+v, want one from 5.3 s (the last exit) to 9 s (a new pod ready)", outs)
	}
	a := z.attr(t, Input{Requests: []loadgen.Request{failed(1, 7, 0.001, loadgen.ClassRefused)}, Context: Context{ScaleToZero: true}})
	if a.Phase != timeline.PhaseNoEndpoint || !strings.Contains(a.Why, "scaled to zero") {
		t.Errorf("attributed to %s (%s), want no-endpoint naming the scale", a.Phase, a.Why)
	}
}
