package attribute

import (
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// proxyEv is an event of the sidecar container "proxy".
func proxyEv(d float64, k timeline.Kind, pod, detail string) timeline.Event {
	e := ev(d, k, pod, detail)
	e.Container = "proxy"
	return e
}

// A classic proxy sidecar without preStop exits at the deletion while the app sits in its 5 s
// preStop: the requests it carried and those sent to it until routing stopped are its failures;
// the app's own exit, later, explains none.
func TestSidecarExit(t *testing.T) {
	b := (&tl{}).del("p1", 0, 1.5).add(
		proxyEv(0.01, timeline.AppEvent, "p1", "sigterm mode=exit"),
		proxyEv(0.02, timeline.AppEvent, "p1", "exiting code=0"),
		ev(5, timeline.AppEvent, "p1", "sigterm mode=drain"),
		ev(5, timeline.AppEvent, "p1", "listener_closed"),
		ev(5.01, timeline.AppEvent, "p1", "exiting code=0"),
	)
	in := Input{Timeline: b.timeline(), Container: "app", Front: "proxy"}
	for _, c := range []struct {
		name      string
		req       loadgen.Request
		phase     timeline.Phase
		container string
	}{
		{"in flight through it", failed(1, -0.1, 0.12, loadgen.ClassEOF), timeline.PhaseSidecarExit, "proxy"},
		{"sent to it after it stopped", failed(2, 0.5, 0.001, loadgen.ClassRefused), timeline.PhaseSidecarExit, "proxy"},
		{"sent to it just before routing stopped", failed(3, 3.4, 0.001, loadgen.ClassRefused), timeline.PhaseSidecarExit, "proxy"},
	} {
		in.Requests = []loadgen.Request{c.req}
		a := one(t, in)
		want(t, a, c.phase, "p1")
		if a.Container != c.container {
			t.Errorf("%s: container %q, want %q (%s)", c.name, a.Container, c.container, a.Why)
		}
	}
	// Without Front nothing explains it: the app still accepted then.
	in.Front, in.Requests = "", []loadgen.Request{failed(2, 0.5, 0.001, loadgen.ClassRefused)}
	if a := one(t, in); a.Phase != timeline.PhaseUnknown || a.Container != "" {
		t.Errorf("without front: %+v", a)
	}
	res := Attribute(Input{Timeline: b.timeline(), Container: "app", Front: "proxy"})
	if f := res.Lives[0].Front; f == nil || f.Container != "proxy" || f.Exit != ExitOwn || !f.SIGTERM.Equal(at(0.01)) {
		t.Errorf("front life: %+v", f)
	}
}

// A native sidecar stops after the app: failures after the app stopped are the app's phases.
func TestSidecarAfterApp(t *testing.T) {
	b := (&tl{}).del("p1", 0, 1.5).add(
		ev(0, timeline.AppEvent, "p1", "sigterm mode=exit"),
		ev(0.01, timeline.AppEvent, "p1", "exiting code=0"),
		proxyEv(0.5, timeline.AppEvent, "p1", "sigterm mode=exit"),
		proxyEv(0.51, timeline.AppEvent, "p1", "exiting code=0"),
	)
	in := Input{Timeline: b.timeline(), Container: "app", Front: "proxy", Requests: []loadgen.Request{failed(1, 0.6, 0.001, loadgen.ClassRefused)}}
	if a := one(t, in); a.Phase != timeline.PhasePropagation || a.Container != "" {
		t.Errorf("after the app: %+v", a)
	}
}
