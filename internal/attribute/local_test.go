package attribute

import (
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// entryDrained is 4 replicas, a and b on w1 (where the load enters), c and d on w2, all running
// when the observer started (PodScheduled and PodAddress only), and a drain of w1 at 0 s: a and
// b serve while terminating through their 5 s preStop, close their listeners at 5 s and 5.1 s,
// are not serving at 5.2 s and removed at 6 s; their replacements e and f go to w2 (w1 is
// cordoned) and are ready at 2 s. Nothing comes back to w1.
func entryDrained() *tl {
	b := &tl{}
	for pod, node := range map[string]string{"a": "w1", "b": "w1", "c": "w2", "d": "w2"} {
		b.add(ev(-10, timeline.PodScheduled, pod, node), ev(-10, timeline.PodAddress, pod, "10.244.1."+pod))
	}
	b.del("a", 0, 0.1).del("b", 0, 0.1)
	b.add(ev(0.1, timeline.EndpointUnready, "a", "serving=true terminating=true"), ev(0.1, timeline.EndpointUnready, "b", "serving=true terminating=true"),
		ev(0.2, timeline.PodCreated, "e", ""), ev(0.2, timeline.PodCreated, "f", ""),
		ev(0.3, timeline.PodScheduled, "e", "w2"), ev(0.3, timeline.PodScheduled, "f", "w2"),
		ev(2, timeline.EndpointReady, "e", "serving=true terminating=false"), ev(2, timeline.EndpointReady, "f", "serving=true terminating=false"),
		ev(5, timeline.AppEvent, "a", "listener_closed"), ev(5.1, timeline.AppEvent, "b", "listener_closed"),
		ev(5.2, timeline.EndpointUnready, "a", "serving=false terminating=true"), ev(5.2, timeline.EndpointUnready, "b", "serving=false terminating=true"),
		ev(6, timeline.EndpointRemoved, "a", ""), ev(6, timeline.EndpointRemoved, "b", ""))
	return b
}

func TestLocalOutages(t *testing.T) {
	tl := entryDrained().timeline()
	outs := LocalOutages(tl, "app", "w1")
	if len(outs) != 1 || !outs[0].From.Equal(at(5.1)) || !outs[0].To.IsZero() || outs[0].Node != "w1" {
		t.Errorf("w1's outages %+v, want one from 5.1 s (b's listener closed), open to the end", outs)
	}
	if outs := LocalOutages(tl, "app", "w2"); len(outs) != 0 {
		t.Errorf("w2 kept its own pods and got the replacements: outages %+v", outs)
	}
	if outs := Outages(tl, "app"); len(outs) != 0 {
		t.Errorf("the Service kept ready endpoints on w2: outages %+v", outs)
	}
	// A pod ready on w1 again closes the window.
	b := entryDrained()
	b.add(ev(19, timeline.PodCreated, "g", ""), ev(19.1, timeline.PodScheduled, "g", "w1"), ev(20, timeline.EndpointReady, "g", "serving=true terminating=false"))
	if outs := LocalOutages(b.timeline(), "app", "w1"); len(outs) != 1 || !outs[0].To.Equal(at(20)) {
		t.Errorf("outages %+v, want one closed at 20 s (g ready on w1)", outs)
	}
}

func TestNoLocalEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   loadgen.Request
		local string // Context.LocalEntry
		extra []timeline.Event
		want  timeline.Phase // "": any phase but no-local-endpoint and no-endpoint
	}{
		{"dropped after the entry node's last pod stopped serving", failed(1, 8, 2, loadgen.ClassTimeout), "w1", nil, timeline.PhaseNoLocalEndpoint},
		{"reset as the listener closed, within the tolerance", failed(1, 4.9, 0.001, loadgen.ClassReset), "w1", nil, timeline.PhaseNoLocalEndpoint},
		{"still at the row's end", failed(1, 30, 2, loadgen.ClassTimeout), "w1", nil, timeline.PhaseNoLocalEndpoint},
		{"Cluster: the Service had endpoints, no such rule", failed(1, 8, 2, loadgen.ClassTimeout), "", nil, ""},
		{"while the terminating pods still served", failed(1, 3, 2, loadgen.ClassTimeout), "w1", nil, ""},
		{"after a pod on w1 was ready again plus the lag", failed(1, 23, 2, loadgen.ClassTimeout), "w1",
			[]timeline.Event{ev(19, timeline.PodCreated, "g", ""), ev(19.1, timeline.PodScheduled, "g", "w1"), ev(20, timeline.EndpointReady, "g", "serving=true terminating=false")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := entryDrained().add(tc.extra...)
			a := b.attr(t, Input{Requests: []loadgen.Request{tc.req}, Context: Context{Drain: true, LocalEntry: tc.local}})
			switch {
			case tc.want == "" && (a.Phase == timeline.PhaseNoLocalEndpoint || a.Phase == timeline.PhaseNoEndpoint):
				t.Errorf("attributed to %s (%s), want another phase", a.Phase, a.Why)
			case tc.want != "" && a.Phase != tc.want:
				t.Errorf("attributed to %s (%s), want %s", a.Phase, a.Why, tc.want)
			}
			if a.Phase == timeline.PhaseNoLocalEndpoint && (a.Pod != "" || !strings.Contains(a.Why, "w1, the node the load entered, had no local endpoint left (05:00:05.100 to the end of the run")) {
				t.Errorf("why %q, pod %q", a.Why, a.Pod)
			}
		})
	}
	// A pod's own answer is the pod's.
	q := failed(1, 8, 0.001, loadgen.HTTP5xxClass(503))
	q.Pod = "c"
	if a := entryDrained().attr(t, Input{Requests: []loadgen.Request{q}, Context: Context{Drain: true, LocalEntry: "w1"}}); a.Phase == timeline.PhaseNoLocalEndpoint {
		t.Errorf("a pod's answer attributed to %s", a.Phase)
	}
}
