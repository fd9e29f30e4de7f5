package attribute

import (
	"slices"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// t0 is the synthetic deletion moment every case is built around.
var t0 = time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)

func at(d float64) time.Time { return t0.Add(time.Duration(d * float64(time.Second))) }

// ev is an event as a row records it: the typed fields read from detail, written as the
// observer writes it ("grace=30s", "serving=true terminating=false", "sigterm mode=drain").
func ev(d float64, k timeline.Kind, pod, detail string) timeline.Event {
	return timeline.Event{Time: at(d), Kind: k, Pod: pod, Detail: detail, Container: "app"}.Upgraded()
}

func exited(d float64, pod string, code int32, reported float64) timeline.Event {
	e := ev(d, timeline.ContainerExited, pod, "")
	e.ExitCode = &code
	e.Reported = at(reported)
	return e
}

// deleted is a pod's deletion at d with its endpoint routed for routed seconds more.
func deleted(pod string, d, routed float64) ([]timeline.Event, timeline.Propagation) {
	return []timeline.Event{ev(d, timeline.PodDeleting, pod, "grace=30s")},
		timeline.Propagation{Pod: pod, DeletingAt: at(d), ToUnready: time.Duration(routed * float64(time.Second)), ToRemoved: -1}
}

// failed is a failed request sent at sent, failing after lat seconds.
func failed(seq uint64, sent, lat float64, c loadgen.Class) loadgen.Request {
	return loadgen.Request{Seq: seq, Timestamp: at(sent), Latency: time.Duration(lat * float64(time.Second)), Class: c}
}

type tl struct {
	events []timeline.Event
	props  []timeline.Propagation
}

func (b *tl) del(pod string, d, routed float64) *tl {
	es, p := deleted(pod, d, routed)
	b.events = append(b.events, es...)
	b.props = append(b.props, p)
	return b
}

func (b *tl) add(es ...timeline.Event) *tl { b.events = append(b.events, es...); return b }

func (b *tl) timeline() timeline.Timeline {
	es := slices.Clone(b.events)
	slices.SortStableFunc(es, func(a, b timeline.Event) int { return a.Time.Compare(b.Time) })
	return timeline.Timeline{Events: es, Propagation: b.props}
}

func one(t *testing.T, in Input) Attribution {
	t.Helper()
	res := Attribute(in)
	if len(res.Failed) != 1 {
		t.Fatalf("attributed %d requests, want 1: %+v", len(res.Failed), res.Failed)
	}
	a := res.Failed[0]
	if res.Counts[a.Phase] != 1 || res.BySeq[a.Seq] != a.Phase {
		t.Errorf("counts %v / by seq %v disagree with %+v", res.Counts, res.BySeq, a)
	}
	return a
}

func want(t *testing.T, a Attribution, phase timeline.Phase, pod string) {
	t.Helper()
	if a.Phase != phase || a.Pod != pod {
		t.Errorf("attributed to %s (pod %q: %s), want %s (pod %q)", a.Phase, a.Pod, a.Why, phase, pod)
	}
}

func TestSIGKILLByExitCode(t *testing.T) {
	// Slow requests, grace 3 s: SIGTERM at 2 s (after preStop), exit code 137 at 4.3 s
	// (finishedAt truncated to 4 s, status received at 4.9 s).
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(2, timeline.AppEvent, "web-1", "sigterm mode=drain"),
		ev(2.001, timeline.AppEvent, "web-1", "listener_closed addr=:8080"),
		exited(4.9, "web-1", 137, 4),
	)
	q := failed(1, -0.5, 4.8, loadgen.ClassEOF) // sent before the deletion, cut at 4.3 s
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseSIGKILL, "web-1")
}

func TestSIGKILLByLogEndAfterForcedDelete(t *testing.T) {
	// A forced delete: the pod object is gone at once, so no container status ever says
	// how the process ended; the app's log says SIGTERM came and no "exiting" before the
	// stream ended at 3.05 s.
	b := (&tl{}).del("web-1", 0, 0).add(
		ev(0.01, timeline.PodGone, "web-1", ""),
		ev(1, timeline.AppEvent, "web-1", "sigterm mode=drain"),
		ev(1.001, timeline.AppEvent, "web-1", "listener_closed"),
		ev(3.05, timeline.AppLogEnded, "web-1", "no exiting line"),
	)
	q := failed(1, -1, 4, loadgen.ClassReset) // fails at 3.0 s
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseSIGKILL, "web-1")
}

func TestInFlightCut(t *testing.T) {
	// Exit at SIGTERM: a request in flight at the exit is cut.
	b := (&tl{}).del("web-1", 0, 0.3).add(
		ev(0.002, timeline.AppEvent, "web-1", "sigterm mode=exit"),
		ev(0.005, timeline.AppEvent, "web-1", "exiting code=0 reason=sigterm"),
		exited(1.2, "web-1", 0, 0),
	)
	q := failed(1, -0.1, 0.11, loadgen.ClassReset)
	a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()})
	want(t, a, timeline.PhaseInFlightCut, "web-1")
}

func TestPinnedConnectionAtExit(t *testing.T) {
	// preStop 5 s then exit, keep-alive: the endpoint left at 0.1 s, yet a POST sent at 4.99 s
	// reached the pod and was cut at its exit: only a kept-alive connection takes it there.
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(5, timeline.AppEvent, "web-1", "sigterm mode=exit"),
		ev(5.001, timeline.AppEvent, "web-1", "exiting code=0"),
	)
	q := failed(1, 4.99, 0.02, loadgen.ClassEOF)
	in := Input{Requests: []loadgen.Request{q}, Timeline: b.timeline(), Context: Context{KeepAlive: true}}
	want(t, one(t, in), timeline.PhasePinnedConnection, "web-1")
	// Without keep-alive the same request is an in-flight cut.
	in.KeepAlive = false
	want(t, one(t, in), timeline.PhaseInFlightCut, "web-1")
}

func TestPinnedConnectionClosedByDrain(t *testing.T) {
	// Drain closes idle kept-alive connections at SIGTERM (5 s); a request written into one
	// as it closes fails at once, well before the exit at 5.2 s.
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(5, timeline.AppEvent, "web-1", "sigterm mode=drain"),
		ev(5.0005, timeline.AppEvent, "web-1", "listener_closed"),
		ev(5.2, timeline.AppEvent, "web-1", "exiting code=0 reason=drained"),
	)
	q := failed(1, 5.0, 0.001, loadgen.ClassEOF)
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline(), Context: Context{KeepAlive: true}}), timeline.PhasePinnedConnection, "web-1")
}

func TestPropagation(t *testing.T) {
	// Naive: the app exits at SIGTERM, right at the deletion; the endpoint leaves at 0.3 s and
	// kube-proxy programs it up to the lag later. New connections in between fail: at once
	// (EOF through docker-proxy) or, once the pod's network is gone, by timing out.
	b := (&tl{}).del("web-1", 0, 0.3).add(
		ev(0.002, timeline.AppEvent, "web-1", "sigterm mode=exit"),
		ev(0.004, timeline.AppEvent, "web-1", "exiting code=0"),
	)
	in := Input{Timeline: b.timeline(), Requests: []loadgen.Request{
		failed(1, 0.5, 0.001, loadgen.ClassEOF),
		failed(2, 1.0, 2, loadgen.ClassTimeout),
		failed(3, 3.0, 0.001, loadgen.ClassEOF), // after routed + lag (2.3 s): not propagation
	}}
	res := Attribute(in)
	got := []timeline.Phase{res.Failed[0].Phase, res.Failed[1].Phase, res.Failed[2].Phase}
	if !slices.Equal(got, []timeline.Phase{timeline.PhasePropagation, timeline.PhasePropagation, timeline.PhaseUnknown}) {
		t.Errorf("phases %v, want propagation, propagation, unknown: %+v", got, res.Failed)
	}
	// kube-proxy's measured lag widens the window.
	in.ProgrammingLag = 3 * time.Second
	if p := Attribute(in).Failed[2].Phase; p != timeline.PhasePropagation {
		t.Errorf("with a 3 s programming lag: %s, want propagation", p)
	}
}

func TestPropagationWithoutAppLines(t *testing.T) {
	// An app that writes no lifecycle lines: the window opens at the deletion.
	b := (&tl{}).del("web-1", 0, 0.3).add(exited(2, "web-1", 0, 1))
	q := failed(1, 0.2, 0.001, loadgen.ClassReset)
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhasePropagation, "web-1")
}

// An app that writes no lines behind a 16 s native preStop sleep: a timeout sent 3 s after the
// deletion, however long kube-proxy lagged (9 s here, a saturated node), reached a pod that was
// still in its preStop and accepting: not propagation. After the sleep, the window opens.
func TestPropagationHeldByPreStopSleep(t *testing.T) {
	b := (&tl{}).del("web-1", 0, 0.1).add(exited(16.2, "web-1", 0, 16.5))
	in := Input{Timeline: b.timeline(), ProgrammingLag: 9 * time.Second, HeldFor: 16 * time.Second}
	in.Requests = []loadgen.Request{failed(1, 3, 2, loadgen.ClassTimeout)}
	if a := one(t, in); a.Phase == timeline.PhasePropagation {
		t.Errorf("a timeout during the preStop sleep is %s (%s)", a.Phase, a.Why)
	}
	in.HeldFor = 0
	want(t, one(t, in), timeline.PhasePropagation, "web-1")
	// A 2 s sleep ends inside the 9 s window: a request sent then is propagation.
	in.HeldFor = 2 * time.Second
	in.Requests = []loadgen.Request{failed(1, 4, 2, loadgen.ClassTimeout)}
	want(t, one(t, in), timeline.PhasePropagation, "web-1")
}

func TestStartup(t *testing.T) {
	b := (&tl{}).add(
		ev(0, timeline.PodCreated, "web-2", ""),
		ev(3, timeline.EndpointReady, "web-2", ""),
	)
	q := failed(1, 3.2, 0.01, loadgen.HTTP5xxClass(503))
	q.Pod = "web-2"
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseStartup, "web-2")
	// No identity: sent within the startup window after the endpoint became ready.
	q.Pod = ""
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseStartup, "web-2")
}

func TestSteady(t *testing.T) {
	b := (&tl{}).del("web-1", 0, 0.3).add(ev(0.004, timeline.AppEvent, "web-1", "exiting"), ev(1, timeline.PodGone, "web-1", ""))
	q := failed(1, 60, 0.01, loadgen.HTTP5xxClass(500))
	a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()})
	want(t, a, timeline.PhaseSteady, "")
}

func TestUnknown(t *testing.T) {
	// A pod is terminating (preStop 20 s, routed at 0.1 s), keep-alive off, a request fails at
	// 10 s: nothing explains it.
	b := (&tl{}).del("web-1", 0, 0.1).add(ev(20, timeline.AppEvent, "web-1", "exiting"))
	q := failed(1, 10, 0.01, loadgen.ClassEOF)
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseUnknown, "")
}

func TestTwoPodsTerminatingAtOnce(t *testing.T) {
	// Two naive pods deleted 80 ms apart (a rollout with maxUnavailable 2): a failure in
	// both propagation windows is attributed to the pod that stopped accepting nearest to it,
	// and the other is named.
	b := (&tl{}).del("web-1", 0, 0.3).del("web-3", 0.08, 0.3).add(
		ev(0.004, timeline.AppEvent, "web-1", "exiting"),
		ev(0.084, timeline.AppEvent, "web-3", "exiting"),
	)
	q := failed(1, 0.5, 0.001, loadgen.ClassEOF)
	a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()})
	want(t, a, timeline.PhasePropagation, "web-3")
	if !slices.Equal(a.Others, []string{"web-1"}) {
		t.Errorf("others %v, want [web-1]", a.Others)
	}
	// A request that names its pod is matched to that pod only.
	q.Pod, q.Class = "web-1", loadgen.HTTP5xxClass(502)
	a = one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()})
	want(t, a, timeline.PhasePropagation, "web-1")
	if len(a.Others) != 0 {
		t.Errorf("others %v, want none", a.Others)
	}
}

func TestRuleOrderAcrossPods(t *testing.T) {
	// web-1 is killed at 4 s while a slow request is in flight; web-3, deleted at 3.9 s, exits
	// at once and is still routable: the cut request matches both, and the kill (the stronger
	// evidence, tried first) wins.
	b := (&tl{}).del("web-1", 0, 0.1).del("web-3", 3.9, 0.3).add(
		ev(2, timeline.AppEvent, "web-1", "sigterm"),
		exited(4.5, "web-1", 137, 4),
		ev(3.901, timeline.AppEvent, "web-3", "exiting"),
	)
	q := failed(1, 0.5, 3.6, loadgen.ClassEOF) // fails at 4.1 s
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseSIGKILL, "web-1")
}

func TestOtherContainersIgnored(t *testing.T) {
	b := (&tl{}).del("web-1", 0, 0.1)
	side := exited(4.5, "web-1", 137, 4)
	side.Container = "sidecar"
	b.add(side)
	q := failed(1, 0.5, 3.6, loadgen.ClassEOF)
	a := one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline(), Container: "app"})
	if a.Phase == timeline.PhaseSIGKILL {
		t.Errorf("a sidecar's exit code made the request a SIGKILL cut: %+v", a)
	}
}

func TestExitWindowNarrowed(t *testing.T) {
	// finishedAt says [4, 5); the log stream ended at 4.3 s: the exit is within [4, 4.3].
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(2, timeline.AppEvent, "web-1", "sigterm"),
		ev(4.3, timeline.AppLogEnded, "web-1", ""),
		exited(5.2, "web-1", 137, 4),
	)
	ls := Lives(b.timeline(), "app")
	if len(ls) != 1 {
		t.Fatalf("lives %+v", ls)
	}
	l := ls[0]
	if !l.ExitFrom.Equal(at(4)) || !l.ExitBy.Equal(at(4.3)) || l.Exit != ExitKilled || l.Routed != at(0.1) {
		t.Errorf("life %+v: want exit killed within [4, 4.3], routed at 0.1", l)
	}
}

func TestExitWindowStatusOverLateLogEnd(t *testing.T) {
	// finishedAt says [4, 5); the log stream's end was seen only at 8.05 s, past the 2 s its
	// bound allows (a loaded machine), and reported before the status: the status stands.
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(2, timeline.AppEvent, "web-1", "sigterm"),
		ev(8.05, timeline.AppLogEnded, "web-1", ""),
		exited(8.1, "web-1", 137, 4),
	)
	ls := Lives(b.timeline(), "app")
	if len(ls) != 1 || !ls[0].ExitFrom.Equal(at(4)) || !ls[0].ExitBy.Equal(at(5)) {
		t.Fatalf("lives %+v: want exit within [4, 5], the status's window", ls)
	}
	q := failed(1, 0.5, 3.7, loadgen.ClassEOF) // fails at 4.2 s, cut by the kill
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline()}), timeline.PhaseSIGKILL, "web-1")
}

// A status's finishedAt and a log end seen late overlap: the status's start stands. Measured in
// CI (a negative control for in-flight-cut, stopsignal-missing): deleted at 0.619 s, the app died
// at its SIGTERM when the 5 s preStop ended, cutting its 5 s requests at 5.946 s (EOF); finishedAt
// said 6 s, the log end was seen at 8.262 s. The old window, [6.262, 7], put the exit after the
// cut, and the failure went to startup, a new pod having turned ready 0.58 s before it was sent.
func TestExitWindowStatusStartOverLogEnd(t *testing.T) {
	b := (&tl{}).del("web-1", 0.619, 0.07).add(
		ev(-3, timeline.PodCreated, "web-2", ""),
		ev(0.569, timeline.EndpointReady, "web-2", ""),
		ev(8.262, timeline.AppLogEnded, "web-1", "exiting=false sigterm=false lines=2"),
		exited(10.08, "web-1", 2, 6),
	)
	ls := Lives(b.timeline(), "app")
	var l Life
	for _, x := range ls {
		if x.Pod == "web-1" {
			l = x
		}
	}
	if !l.ExitFrom.Equal(at(6)) || !l.ExitBy.Equal(at(7)) || l.Exit != ExitOwn {
		t.Fatalf("life %+v: want an own exit within [6, 7], the status's window", l)
	}
	q := failed(1, 1.15, 4.796, loadgen.ClassEOF) // sent at 1.15 s, cut at 5.946 s
	want(t, one(t, Input{Requests: []loadgen.Request{q}, Timeline: b.timeline(), Container: "app"}), timeline.PhaseInFlightCut, "web-1")
	// The log end still brings the end earlier when it comes within the status's window.
	b = (&tl{}).del("web-1", 0, 0.1).add(
		ev(6.4, timeline.AppLogEnded, "web-1", ""),
		exited(9, "web-1", 2, 6),
	)
	if ls := Lives(b.timeline(), "app"); len(ls) != 1 || !ls[0].ExitFrom.Equal(at(6)) || !ls[0].ExitBy.Equal(at(6.4)) {
		t.Errorf("lives %+v: want the exit within [6, 6.4]", ls)
	}
}

func TestOKRequestsNotAttributed(t *testing.T) {
	res := Attribute(Input{Requests: []loadgen.Request{{Seq: 1, Timestamp: t0, Class: loadgen.ClassOK}}})
	if len(res.Failed) != 0 || len(res.Counts) != 0 {
		t.Errorf("attributed %+v", res)
	}
}

func TestSentAfterListenerClosedIsNotInFlight(t *testing.T) {
	// Drain without preStop: the listener closes at SIGTERM (0 s), the drained app exits at
	// 50 ms. A request sent at 20 ms found no listener and failed at once, at the exit: it was
	// never in flight, the data plane sent it to a pod that no longer accepted.
	b := (&tl{}).del("web-1", 0, 0.3).add(
		ev(0, timeline.AppEvent, "web-1", "sigterm mode=drain"),
		ev(0.0001, timeline.AppEvent, "web-1", "listener_closed"),
		ev(0.05, timeline.AppEvent, "web-1", "exiting code=0 reason=drained"),
		exited(1.1, "web-1", 0, 0),
	)
	in := Input{Timeline: b.timeline(), Requests: []loadgen.Request{
		failed(1, 0.02, 0.005, loadgen.ClassEOF),
		failed(2, -0.5, 0.55, loadgen.ClassReset), // accepted before the close, cut at the exit
	}}
	res := Attribute(in)
	if p := res.Failed[0].Phase; p != timeline.PhasePropagation {
		t.Errorf("sent after the listener closed: %s (%s), want propagation", p, res.Failed[0].Why)
	}
	if p := res.Failed[1].Phase; p != timeline.PhaseInFlightCut {
		t.Errorf("accepted before the close: %s (%s), want in-flight-cut", p, res.Failed[1].Why)
	}
	if l := res.Lives[0]; l.ExitWhy != `app line "exiting", exit code 0` || !l.ExitExact {
		t.Errorf("exit %q exact %t", l.ExitWhy, l.ExitExact)
	}
}

// A client inside the cluster sees what docker-proxy hid: a connection refused (or reset while
// connecting) by a pod that is exiting. It was never accepted, so it is never an in-flight cut
// (nor a SIGKILL's): the data plane sent it to a pod that no longer accepted. The same timing
// with a reset on an open connection is a cut.
func TestNeverConnectedIsNotInFlight(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     loadgen.Request
		phase timeline.Phase
	}{
		{"refused", failed(1, -0.1, 0.11, loadgen.ClassRefused), timeline.PhasePropagation},
		{"reset while connecting", func() loadgen.Request {
			q := failed(1, -0.1, 0.11, loadgen.ClassReset)
			q.Error = `Get "http://10.96.0.10:80/": dial tcp 0.0.0.0:0->10.96.0.10:80: connect: connection reset by peer`
			return q
		}(), timeline.PhasePropagation},
		{"reset on an open connection", failed(1, -0.1, 0.11, loadgen.ClassReset), timeline.PhaseInFlightCut},
	} {
		for _, killed := range []bool{false, true} {
			code := int32(0)
			if killed {
				code = 137
			}
			b := (&tl{}).del("web-1", 0, 0.3).add(
				ev(0.002, timeline.AppEvent, "web-1", "sigterm mode=exit"),
				exited(0.005, "web-1", code, 0),
			)
			a := one(t, Input{Requests: []loadgen.Request{tc.q}, Timeline: b.timeline()})
			want := tc.phase
			if killed && want == timeline.PhaseInFlightCut {
				want = timeline.PhaseSIGKILL
			}
			if a.Phase != want {
				t.Errorf("%s (killed %v): %s (%s), want %s", tc.name, killed, a.Phase, a.Why, want)
			}
		}
	}
}

// A slow request sent just after the app's listener line that lasted until the exit was
// accepted and served (the line can come a moment before the listener really closes): the
// exit cut it. Seen under a forced delete of the 5 s-request row: 40 of 147 such requests,
// failing after 4.7 s at the SIGKILL, had been called propagation.
func TestServedAfterListenerLineIsInFlight(t *testing.T) {
	for _, code := range []int32{0, 137} {
		b := (&tl{}).del("web-1", 0, 0.3).add(
			ev(1, timeline.AppEvent, "web-1", "sigterm mode=drain"),
			ev(1.0001, timeline.AppEvent, "web-1", "listener_closed"),
			exited(3, "web-1", code, 3),
		)
		a := one(t, Input{Requests: []loadgen.Request{failed(1, 1.01, 1.99, loadgen.ClassEOF)}, Timeline: b.timeline()})
		want := timeline.PhaseInFlightCut
		if code == 137 {
			want = timeline.PhaseSIGKILL
		}
		if a.Phase != want {
			t.Errorf("exit code %d: %s (%s), want %s", code, a.Phase, a.Why, want)
		}
	}
}

func TestSIGKILLSeenLateOnALoadedNode(t *testing.T) {
	// Measured with three rows at once on 2 cores (slow-requests under delete-pod, grace 3 s):
	// SIGTERM and the listener's line at 2.4 s, the requests cut at 5.2 s, finishedAt in the
	// second after 6 s and the status seen at 8 s. The exit window the status gives, [6, 7],
	// starts after the cut; the app's last line bounds the kill from below, and the status from
	// above, so a request sent before that line and cut in between was in flight at the kill.
	b := (&tl{}).del("web-1", 0, 0.1).add(
		ev(2.4, timeline.AppEvent, "web-1", "sigterm mode=drain"),
		ev(2.401, timeline.AppEvent, "web-1", "listener_closed"),
		exited(8, "web-1", 137, 6),
		ev(8.05, timeline.AppLogEnded, "web-1", "no exiting line"),
	)
	in := Input{Requests: []loadgen.Request{failed(1, 0.2, 5, loadgen.ClassEOF)}, Timeline: b.timeline()}
	want(t, one(t, in), timeline.PhaseSIGKILL, "web-1")
	// Sent after the app's last line, the same failure is not known to be the kill's: the
	// process may have been killed before it was sent.
	in.Requests = []loadgen.Request{failed(2, 2.5, 2.7, loadgen.ClassEOF)}
	if got := one(t, in); got.Phase == timeline.PhaseSIGKILL {
		t.Errorf("sent after the last line: %s (%s), want no sigkill", got.Phase, got.Why)
	}
	// Cut within Tolerance of the app's own line is the app's doing (a drain closing a
	// kept-alive connection), not a kill's.
	in.Requests = []loadgen.Request{failed(3, 2.3, 0.105, loadgen.ClassEOF)}
	if got := one(t, in); got.Phase == timeline.PhaseSIGKILL {
		t.Errorf("cut at the app's own line: %s (%s), want no sigkill", got.Phase, got.Why)
	}
}
