package analyze

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func TestWindows(t *testing.T) {
	base := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// One request every 100 ms from 0 to 3000 ms, in sending order, as loadgen keeps them.
	var reqs []loadgen.Request
	// check.Disruption 1 runs from 1000 to 2000 ms: of the resets, only the one at 2000 ms is its own.
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
	recs := []check.DisruptionResult{
		{Kind: check.DeletePod, N: 1, Pod: "web-abc", Started: at(1000), Settled: at(2000)},
		// check.Bounds between requests: 2450..2850 holds 2500, 2600, 2700, 2800.
		{Kind: check.DeletePod, N: 2, Pod: "web-def", Started: at(2450), Settled: at(2850)},
		// After the last request: nothing sent.
		{Kind: check.DeletePod, N: 3, Pod: "web-ghi", Started: at(3500), Settled: at(4000)},
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
	want := []check.DisruptionResult{
		{Kind: check.DeletePod, N: 1, Pod: "web-abc", Started: at(1000), Settled: at(2000), Requests: 11, Failed: 3,
			SuccessRatio: 8.0 / 11, Failures: map[loadgen.Class]int{loadgen.ClassEOF: 2, loadgen.ClassReset: 1},
			Phases: map[timeline.Phase]int{timeline.PhasePropagation: 3}},
		{Kind: check.DeletePod, N: 2, Pod: "web-def", Started: at(2450), Settled: at(2850), Requests: 4, Failed: 1,
			SuccessRatio: 3.0 / 4, Failures: map[loadgen.Class]int{loadgen.HTTP5xxClass(503): 1},
			Phases: map[timeline.Phase]int{timeline.PhaseStartup: 1}},
		{Kind: check.DeletePod, N: 3, Pod: "web-ghi", Started: at(3500), Settled: at(4000)},
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
	recs := []check.DisruptionResult{{Kind: check.ScaleDown, N: 1, Started: base.Add(time.Second), Settled: base.Add(2 * time.Second)}}
	got := windows(recs, reqs, nil)[0]
	if got.Requests != 2 || got.Failed != 1 || got.Failures[loadgen.ClassEOF] != 1 {
		t.Errorf("window = %d requests, %d failed (%v); want the cut slow request and the one sent during it", got.Requests, got.Failed, got.Failures)
	}
}

// A request that overlaps two disruptions' windows (sent before the first settled, failed after
// the second started) counts once, in the one it was sent in; one sent before both, in the first.
func TestWindowsCountEachRequestOnce(t *testing.T) {
	base := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	recs := []check.DisruptionResult{
		{Kind: check.RolloutRestart, N: 1, Started: base.Add(time.Second), Settled: base.Add(2 * time.Second)},
		{Kind: check.RolloutRestart, N: 2, Started: base.Add(2100 * time.Millisecond), Settled: base.Add(3 * time.Second)},
	}
	reqs := []loadgen.Request{
		{Timestamp: base.Add(1900 * time.Millisecond), Latency: 500 * time.Millisecond, Class: loadgen.ClassEOF},   // sent in the first, ended in the second
		{Timestamp: base.Add(500 * time.Millisecond), Latency: 2 * time.Second, Class: loadgen.ClassTimeout},       // sent before both, spans both
		{Timestamp: base.Add(2050 * time.Millisecond), Latency: 200 * time.Millisecond, Class: loadgen.ClassReset}, // sent between them, ended in the second
	}
	got := windows(recs, reqs, nil)
	if got[0].Failed != 2 || got[0].Failures[loadgen.ClassEOF] != 1 || got[0].Failures[loadgen.ClassTimeout] != 1 {
		t.Errorf("first window: %d failed (%v), want the EOF sent in it and the timeout sent before it", got[0].Failed, got[0].Failures)
	}
	if got[1].Failed != 1 || got[1].Failures[loadgen.ClassReset] != 1 {
		t.Errorf("second window: %d failed (%v), want only the reset", got[1].Failed, got[1].Failures)
	}
}

// The attribution reads a quiet sidecar's SIGTERM from the applied spec of the one in front: its
// preStop's length when known, native or not; nothing for a preStop of unknown length or none in
// front.
func TestFrontSpec(t *testing.T) {
	front := func(native bool, pre check.PreStop) check.Applied {
		return check.Applied{Sidecars: []check.Sidecar{{Name: "log", PreStop: check.PreStop{Exec: []string{"sh", "-c", "flush"}}}, {Name: "proxy", Native: native, Front: true, PreStop: pre}}}
	}
	for _, c := range []struct {
		cfg  check.Applied
		want attribute.FrontSpec
	}{
		{check.Applied{}, attribute.FrontSpec{}},
		{front(false, check.PreStop{None: true}), attribute.FrontSpec{Known: true}},
		{front(false, check.PreStop{HTTPGet: "/prestop?sleep=5s"}), attribute.FrontSpec{Known: true, PreStop: 5 * time.Second}},
		{front(false, check.PreStop{Exec: []string{"/drain.sh"}}), attribute.FrontSpec{}},
		{front(true, check.PreStop{Exec: []string{"/drain.sh"}}), attribute.FrontSpec{Known: true, Native: true}},
		{front(true, check.PreStop{Sleep: 3 * time.Second}), attribute.FrontSpec{Known: true, Native: true, PreStop: 3 * time.Second}},
	} {
		if got := frontSpec(c.cfg); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.cfg.Sidecars, got, c.want)
		}
	}
}

// Failures seen while the observer was blind cannot be judged by phase; a row without failures,
// or a gap outside the load, is judged as usual.
func TestBlindFailures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &loadgen.Result{Started: t0, Ended: t0.Add(30 * time.Second)}
	res.Totals.Failed = 12
	gap := timeline.Gap{What: "pods", From: t0.Add(10 * time.Second), To: t0.Add(25 * time.Second), Error: "EOF"}
	if got := blindFailures(timeline.Timeline{Gaps: []timeline.Gap{gap}}, res); !strings.Contains(got, "(pods unwatched 15s from 00:00:10.000 (EOF)): 12 failed requests") {
		t.Errorf("blindFailures = %q", got)
	}
	late := gap
	late.From, late.To = t0.Add(40*time.Second), t0.Add(50*time.Second)
	if got := blindFailures(timeline.Timeline{Gaps: []timeline.Gap{late}}, res); got != "" {
		t.Errorf("a gap after the load: %q", got)
	}
	res.Totals.Failed = 0
	if got := blindFailures(timeline.Timeline{Gaps: []timeline.Gap{gap}}, res); got != "" {
		t.Errorf("no failures: %q", got)
	}
}

// The verdict is a harness fault when fewer disruptions ran than asked, or when the observer was
// blind to the failures of a row judged by phase, unless the requests sent already break the
// rule: a zero-failure row with a failure fails whatever the harness saw. Otherwise it is the
// Outcome's judgement, of the mechanism too.
func TestVerdict(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &loadgen.Result{Started: t0, Ended: t0.Add(10 * time.Second), EndReason: loadgen.EndStopped, Valid: true, AchievedRate: 10}
	for i := range 100 {
		c := loadgen.ClassOK
		if i == 50 {
			c = loadgen.ClassRefused
		}
		res.Requests = append(res.Requests, loadgen.Request{Seq: uint64(i), Timestamp: t0.Add(time.Duration(i) * 100 * time.Millisecond), Class: c})
	}
	res.Totals = loadgen.Totals{Requests: 100, OK: 99, Failed: 1, Failures: map[loadgen.Class]int{loadgen.ClassRefused: 1}}
	cfg := check.Applied{Name: "x", Disruption: check.DeletePod, Count: 1, Expect: check.Zero(), GraceSeconds: 30}
	in := Input{Config: cfg, Load: res, Timeline: timeline.Timeline{Started: t0, Ended: t0.Add(10 * time.Second)},
		Disruptions: []check.DisruptionResult{{Kind: check.DeletePod, N: 1, Started: t0.Add(4 * time.Second), Settled: t0.Add(6 * time.Second), Requests: 99, Failed: 99}}}
	a := Row(in)
	if d := a.Disruptions[0]; d.Requests != 21 || d.Failed != 1 {
		t.Errorf("the disruption's counts: %d requests, %d failed; want them counted again (21, 1)", d.Requests, d.Failed)
	}
	if v := Verdict(cfg, a); v.Status != check.Fail {
		t.Errorf("one failure, zero expected: %+v", v)
	}
	cfg.Count = 2
	if v := Verdict(cfg, a); v.Status != check.Fail || !strings.HasSuffix(v.Reason, "the app failed them whatever the harness did: 1 of 2 disruptions ran") {
		t.Errorf("fewer disruptions than asked, a failure in a zero-failure row: %+v", v)
	}
	neg := cfg
	neg.Expect = check.Failures().ByPhase(timeline.PhasePropagation)
	if v := Verdict(neg, a); v.Status != check.HarnessFault || v.Reason != "1 of 2 disruptions ran" {
		t.Errorf("fewer disruptions than asked, a negative control: %+v", v)
	}
	cfg.Count, neg.Count = 1, 1
	in.Timeline.Gaps = []timeline.Gap{{What: "pods", From: t0.Add(3 * time.Second), To: t0.Add(7 * time.Second), Error: "EOF"}}
	if v := Verdict(cfg, Row(in)); v.Status != check.Fail || !strings.Contains(v.Reason, "its phases come from late events: the observer could not watch the cluster") {
		t.Errorf("blind, a zero-failure row (judged on its requests): %+v", v)
	}
	if v := Verdict(neg, Row(in)); v.Status != check.HarnessFault || !strings.Contains(v.Reason, "the observer could not watch the cluster") {
		t.Errorf("blind, a negative control judged by phase: %+v", v)
	}
	in.Timeline.Gaps = nil
	in.Fault = "the load generator sent nothing for 4s"
	if v := Verdict(cfg, Row(in)); v.Status != check.Fail || !strings.HasSuffix(v.Reason, "whatever the harness did: the load generator sent nothing for 4s") {
		t.Errorf("the run's own fault, a failure the app caused: %+v", v)
	}
	if v := Verdict(neg, Row(in)); v.Status != check.HarnessFault || v.Reason != in.Fault {
		t.Errorf("the run's own fault, a negative control: %+v", v)
	}
}
