package attribute

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// proxyEv is an event of the sidecar container "proxy".
func proxyEv(d float64, k timeline.Kind, pod, detail string) timeline.Event {
	e := ev(d, k, pod, detail)
	e.Container = "proxy"
	return e
}

// speakingProxy is a pod deleted at 0 whose classic proxy, without preStop, says it got SIGTERM
// and exited at once, while the app sat in its 5 s preStop and then drained.
func speakingProxy() *tl {
	return (&tl{}).del("p1", 0, 1.5).add(
		proxyEv(0.01, timeline.AppEvent, "p1", "sigterm mode=exit"),
		proxyEv(0.02, timeline.AppEvent, "p1", "exiting code=0"),
		ev(5, timeline.AppEvent, "p1", "sigterm mode=drain"),
		ev(5, timeline.AppEvent, "p1", "listener_closed"),
		ev(5.01, timeline.AppEvent, "p1", "exiting code=0"),
	)
}

// A classic proxy sidecar without preStop exits at the deletion while the app sits in its 5 s
// preStop: the requests it carried and those sent to it until routing stopped are its failures;
// the app's own exit, later, explains none.
func TestSidecarExit(t *testing.T) {
	b := speakingProxy()
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

// quietProxy is a pod deleted at 0.6 s (routed until 2.1 s) whose app sits in a 5 s preStop
// and then drains, behind a proxy that writes no lines: only its container status (exit code 0,
// finishedAt 1 s, received at 1.8 s) and the end of its empty log (1.35 s) say when it ended.
// With exit, the proxy's exit window ends at that moment instead. The app writes its lines
// (the sample app) or, quiet, is known by its container status only (finishedAt 5 s).
func quietProxy(appQuiet bool, exit ...float64) *tl {
	b := (&tl{}).del("p1", 0.6, 1.5)
	if appQuiet {
		b.add(status("app", 6.2, 5))
	} else {
		b.add(
			ev(5.6, timeline.AppEvent, "p1", "sigterm mode=drain"),
			ev(5.6, timeline.AppEvent, "p1", "listener_closed"),
			ev(5.61, timeline.AppEvent, "p1", "exiting code=0"),
		)
	}
	seen, logEnd := 1.8, 1.35
	if len(exit) > 0 {
		seen, logEnd = exit[0], exit[0]
	}
	return b.add(status("proxy", seen, float64(int(seen-0.5))), proxyEv(logEnd, timeline.AppLogEnded, "p1", "exiting=false sigterm=false lines=0"))
}

// status is container's exit with code 0 in pod p1, received at seen, finishedAt reported.
func status(container string, seen, reported float64) timeline.Event {
	e := exited(seen, "p1", 0, reported)
	e.Container = container
	return e
}

// The reported case: a classic proxy without preStop that writes no lines exits at the deletion
// while the app sits in its 5 s preStop. Its status gives the exit only to the second, so the
// requests refused between the deletion and the start of that window were called propagation
// (an app without lines: "deleted" from the deletion) or unknown (the sample app, whose lines
// say it still accepted); from its spec (no preStop: SIGTERM at the deletion) they are its own.
func TestQuietClassicSidecar(t *testing.T) {
	spec := FrontSpec{Known: true}
	for _, c := range []struct {
		name   string
		req    loadgen.Request
		before timeline.Phase // without the spec, behind an app without lines
		phase  timeline.Phase
	}{
		{"refused before its status's window", failed(1, 0.7, 0.001, loadgen.ClassRefused), timeline.PhasePropagation, timeline.PhaseSidecarExit},
		{"in flight through it", failed(2, 0.5, 0.8, loadgen.ClassEOF), timeline.PhaseSidecarExit, timeline.PhaseSidecarExit},
		{"reset just before routing stopped", failed(3, 4.0, 0.001, loadgen.ClassReset), timeline.PhaseSidecarExit, timeline.PhaseSidecarExit},
		// A timeout is not a closed port (that answers at once): not the sidecar's by assumption.
		{"timeout after its SIGTERM", failed(4, 0.8, 2, loadgen.ClassTimeout), timeline.PhaseSidecarExit, timeline.PhasePropagation},
	} {
		for _, appQuiet := range []bool{true, false} {
			in := Input{Timeline: quietProxy(appQuiet).timeline(), Container: "app", Front: "proxy", Requests: []loadgen.Request{c.req}}
			if a := one(t, in); appQuiet && a.Phase != c.before {
				t.Errorf("%s, without the spec: %s (%s), want %s", c.name, a.Phase, a.Why, c.before)
			}
			in.FrontSpec = spec
			a := one(t, in)
			if c.phase == timeline.PhasePropagation && !appQuiet {
				continue // the app's lines say it still accepted: no rule has it
			}
			want(t, a, c.phase, "p1")
			if c.phase == timeline.PhaseSidecarExit && (a.Container != "proxy" || !strings.Contains(a.Why, "SIGTERM from its spec: no preStop; it writes no lines") || !strings.Contains(a.Why, "05:00:00.600")) {
				t.Errorf("%s (app quiet %v): container %q, why %q", c.name, appQuiet, a.Container, a.Why)
			}
		}
	}
	// Refused once the app no longer accepted (its lines, or the start of its exit window): the
	// app's phases, not the sidecar's.
	for _, appQuiet := range []bool{true, false} {
		in := Input{Timeline: quietProxy(appQuiet).timeline(), Container: "app", Front: "proxy", FrontSpec: spec, Requests: []loadgen.Request{failed(5, 5.7, 0.001, loadgen.ClassRefused)}}
		if a := one(t, in); a.Phase == timeline.PhaseSidecarExit {
			t.Errorf("after the app stopped (app quiet %v): %+v", appQuiet, a)
		}
	}
	res := Attribute(Input{Timeline: quietProxy(false).timeline(), Container: "app", Front: "proxy", FrontSpec: spec})
	if f := res.Lives[0].Front; f == nil || !f.SIGTERM.IsZero() || !f.SpecSIGTERM.Equal(at(0.6)) || !f.ExitFrom.Equal(at(1)) || !f.ExitBy.Equal(at(1.35)) {
		t.Errorf("front life: %+v", f)
	}
}

// A quiet classic proxy with its own preStop gets SIGTERM when that ends: a refusal during its
// preStop is not its; one after it is. A forced delete's grace cuts the preStop to 1 s.
func TestQuietSidecarPreStop(t *testing.T) {
	spec := FrontSpec{Known: true, PreStop: 2 * time.Second}
	in := Input{Timeline: quietProxy(false, 3.1).timeline(), Container: "app", Front: "proxy", FrontSpec: spec}
	in.Requests = []loadgen.Request{failed(1, 1.5, 0.001, loadgen.ClassRefused)}
	if a := one(t, in); a.Phase == timeline.PhaseSidecarExit {
		t.Errorf("during its preStop: %+v", a)
	}
	in.Requests = []loadgen.Request{failed(1, 2.7, 0.001, loadgen.ClassRefused)}
	if a := one(t, in); a.Phase != timeline.PhaseSidecarExit || !strings.Contains(a.Why, "SIGTERM from its spec: after its 2s preStop; it writes no lines") {
		t.Errorf("after its preStop: %s (%s)", a.Phase, a.Why)
	}

	b := quietProxy(false, 2.1)
	b.events[0].GraceSeconds, b.events[0].Detail = new(int64), "grace=0s" // a forced delete
	in = Input{Timeline: b.timeline(), Container: "app", Front: "proxy", FrontSpec: spec, Requests: []loadgen.Request{failed(1, 1.7, 0.001, loadgen.ClassRefused)}}
	if a := one(t, in); a.Phase != timeline.PhaseSidecarExit || !strings.Contains(a.Why, "its 2s preStop cut at the grace period's 1s") {
		t.Errorf("forced delete: %s (%s)", a.Phase, a.Why)
	}
}

// A quiet proxy whose status says it exited before the SIGTERM its spec gives (a 5 s preStop,
// yet gone within [1 s, 1.5 s]) stopped accepting by then: the status wins over the spec.
func TestQuietSidecarExitedBeforeSpec(t *testing.T) {
	in := Input{Timeline: quietProxy(false, 1.5).timeline(), Container: "app", Front: "proxy", FrontSpec: FrontSpec{Known: true, PreStop: 5 * time.Second},
		Requests: []loadgen.Request{failed(1, 1.9, 0.001, loadgen.ClassRefused)}}
	if a := one(t, in); a.Phase != timeline.PhaseSidecarExit || !strings.Contains(a.Why, "its exit window (container status), before the SIGTERM its spec gives at 05:00:05.600") {
		t.Errorf("%s (%s)", a.Phase, a.Why)
	}
}

// A quiet native proxy gets SIGTERM only once the app exited: it never went first, and what
// fails after the app stopped is the app's.
func TestQuietNativeSidecar(t *testing.T) {
	b := (&tl{}).del("p1", 0, 1.5).add(
		ev(0, timeline.AppEvent, "p1", "sigterm mode=exit"),
		ev(0.01, timeline.AppEvent, "p1", "exiting code=0"),
	)
	code := int32(0)
	st := proxyEv(1.6, timeline.ContainerExited, "p1", "exitCode=0")
	st.ExitCode, st.Reported = &code, at(1)
	b.add(st)
	in := Input{Timeline: b.timeline(), Container: "app", Front: "proxy", FrontSpec: FrontSpec{Known: true, Native: true},
		Requests: []loadgen.Request{failed(1, 0.6, 0.001, loadgen.ClassRefused)}}
	if a := one(t, in); a.Phase != timeline.PhasePropagation || a.Container != "" {
		t.Errorf("after the app: %+v", a)
	}
	if f := Attribute(in).Lives[0].Front; f == nil || !f.SpecSIGTERM.Equal(at(0.01)) || !strings.Contains(f.SpecWhy, "native, once the app exited") {
		t.Errorf("front life: %+v", f)
	}
}

// Where the sidecar writes its lines, they say when it stopped, whatever its spec says: the
// spec is read only for a sidecar that wrote no line of its end.
func TestSidecarLinesWinOverSpec(t *testing.T) {
	b := speakingProxy()
	reqs := []loadgen.Request{failed(1, -0.1, 0.12, loadgen.ClassEOF), failed(2, 0.5, 0.001, loadgen.ClassRefused), failed(3, 3.4, 2, loadgen.ClassTimeout)}
	plain := Attribute(Input{Timeline: b.timeline(), Container: "app", Front: "proxy", Requests: reqs})
	specd := Attribute(Input{Timeline: b.timeline(), Container: "app", Front: "proxy", Requests: reqs, FrontSpec: FrontSpec{Known: true, PreStop: 3 * time.Second}})
	if !reflect.DeepEqual(plain, specd) {
		t.Errorf("with a spec:\n%+v\nwithout:\n%+v", specd, plain)
	}
}
