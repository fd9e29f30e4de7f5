//go:build !e2e

// Not in the e2e suite's binary: these tests need no cluster and run with go test ./suites,
// and inside a Ginkgo run their failure would fail the suite with none of their output shown.

package matrix

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/scenario"
)

// Every at-most row's bound, as declared and on each load path, is a measured one, below the
// 15 % that kube-proxy's minSyncPeriod alone would allow and that could not fail, and every row
// validates.
func TestRowsBounds(t *testing.T) {
	for _, r := range slices.Concat(AllEntries(), Matrix(AllEntries(), knobs.LoadBoth), Matrix(AllEntries(), knobs.LoadHost)) {
		s := r.Scenario
		if s.Variant.Expect.Kind == check.ExpectAtMost && s.Load.From == "" {
			continue // as declared, with no load path: Matrix gives it its path's bound
		}
		if _, err := s.Plan("matrix", "rollcheck/app:t1"); err != nil {
			t.Errorf("%s: %v", s.Variant.Name, err)
		}
		if e := s.Variant.Expect; e.Kind == check.ExpectAtMost && (e.MaxRatio >= 0.15 || e.MaxRatio < 0.005) {
			t.Errorf("%s under %s: bound %v is not a measured one", s.Variant.Name, s.Disruption.Kind, e.MaxRatio)
		}
	}
}

// Matrix sends every row one way, or (both) every row from the cluster plus the host twins; a
// row name is never run twice on one path.
func TestMatrixLoadModes(t *testing.T) {
	declared := map[check.LoadFrom]int{}
	for _, r := range AllEntries() {
		declared[r.Scenario.Load.From]++
	}
	free, fromHost, fromCluster := declared[""], declared[check.LoadFromHost], declared[check.LoadFromCluster]
	if free == 0 || fromHost == 0 || fromCluster == 0 {
		t.Fatalf("rows by declared load path %v: want rows with none, twins from the host and from the cluster", declared)
	}
	for _, tc := range []struct {
		mode            knobs.MatrixLoad
		host, inCluster int
	}{{knobs.LoadBoth, fromHost, free + fromCluster}, {knobs.LoadHost, free + fromHost - len(wantUnboundedFromHost), 0}, {knobs.LoadCluster, 0, free + fromCluster}} {
		rows := Matrix(AllEntries(), tc.mode)
		var left []string
		for _, u := range Unbounded(AllEntries(), tc.mode) {
			left = append(left, u[:strings.Index(u, ": no bound")])
		}
		if want := map[knobs.MatrixLoad][]string{knobs.LoadHost: wantUnboundedFromHost}[tc.mode]; !slices.Equal(left, want) {
			t.Errorf("%s: left out for want of a bound %q, want %q", tc.mode, left, want)
		}
		seen := map[string]bool{}
		var host, in int
		for _, r := range rows {
			s := r.Scenario
			switch s.Load.From {
			case check.LoadFromHost:
				host++
			case check.LoadFromCluster:
				in++
			default:
				t.Errorf("%s: %s has no load path", tc.mode, s.Variant.Name)
			}
			if n := r.Name(); seen[n] {
				t.Errorf("%s: %s twice", tc.mode, n)
			} else {
				seen[n] = true
			}
			if !slices.Contains(r.AllLabels(), "load-"+string(s.Load.From)) {
				t.Errorf("%s: %s lacks its load label: %v", tc.mode, s.Variant.Name, r.AllLabels())
			}
		}
		if host != tc.host || in != tc.inCluster {
			t.Errorf("%s: %d rows from the host and %d from the cluster, want %d and %d", tc.mode, host, in, tc.host, tc.inCluster)
		}
	}
}

// wantUnboundedFromHost are the at-most rows Matrix leaves out from the host: no run of theirs
// from the host was ever recorded, so they have no bound there (Bound), and run from a load pod.
var wantUnboundedFromHost = []string{
	"naive: preStop=none sigterm=exit grace=30s keepalive=off delete-pod×3",
	"naive: preStop=none sigterm=exit grace=30s keepalive=off force-delete×3",
	"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off force-delete×3",
	"naive: preStop=none sigterm=exit grace=30s keepalive=off scale-down×3",
}

// Every negative control names the phase its mechanism must produce: judged by class alone, a
// stale-conntrack timeout could pass it for the wrong reason. A row that expects failures is a
// negative control and says so in its labels, and only such a row does: a row added without the
// label would drop out of ROLLCHECK_LABELS=negative-control unseen.
func TestNegativeControlsNamePhases(t *testing.T) {
	for _, r := range AllEntries() {
		s := r.Scenario
		e := s.Variant.Expect
		if e.Kind == check.ExpectFailures && len(e.Phases) == 0 {
			t.Errorf("%s under %s: a negative control without expected phases", s.Variant.Name, s.Disruption.Kind)
		}
		if labelled := slices.Contains(r.Labels, LabelNegativeControl); labelled != (e.Kind == check.ExpectFailures) {
			t.Errorf("%s under %s: expects %s, labelled %v", s.Variant.Name, s.Disruption.Kind, e.Kind, r.Labels)
		}
	}
}

// A negative control that accepts several phases is for the first (check.Outcome.Mechanism):
// its text names that one and says it is the row's, so that the order is a choice, not an
// accident of the list.
func TestSeveralPhasesNameTheirMechanism(t *testing.T) {
	for _, r := range AllEntries() {
		v := r.Scenario.Variant
		if m := v.Expect.Mechanism(); len(v.Expect.Phases) > 1 && !strings.Contains(v.Why, string(m)+", the mechanism the row is for") {
			t.Errorf("%s under %s: expects %s, and its text does not say %q", v.Name, r.Scenario.Disruption.Kind, v.Expect, string(m)+", the mechanism the row is for")
		}
	}
}

// The table's specs, in every load mode, include every one the matrix declared before its
// rows became data, each with the same labels (so the same selection by every label filter),
// run alone or not as it was, and with the same Also check; a row added since only adds specs.
// The table reads nothing else: Specs is all it uses, and a Spec is its Row's fields.
func TestSpecsAsPinned(t *testing.T) {
	specs := func(mode knobs.MatrixLoad) map[string]pinnedSpec {
		got := map[string]pinnedSpec{}
		for _, sp := range Specs(AllEntries(), mode, 1) {
			got[sp.Name] = pinnedSpec{sp.Name, strings.Join(sp.Labels, " "), sp.Serial, alsoPrint(sp.Also, sp.Scenario)}
			if sp.Labels == nil || !slices.Equal(sp.Labels, sp.AllLabels()) || sp.Serial != (sp.SerialReason() != "") || sp.Timeout != sp.Entry.Timeout() || sp.Run != 0 || sp.Runs != 1 {
				t.Errorf("%s: spec %s does not carry its row's fields: %+v", mode, sp.Name, sp)
			}
		}
		return got
	}
	inCluster := specs(knobs.LoadCluster)
	for _, mode := range []knobs.MatrixLoad{knobs.LoadBoth, knobs.LoadHost} {
		if len(pinned[mode]) == 0 {
			t.Fatalf("%s: nothing pinned", mode)
		}
		got := specs(mode)
		for _, w := range pinned[mode] {
			if mode == knobs.LoadHost && slices.Contains(wantUnboundedFromHost, w.name) {
				if _, ok := got[w.name]; ok {
					t.Errorf("%s: spec %s, which has no bound from the host", mode, w.name)
				}
				continue
			}
			if g, ok := got[w.name]; !ok {
				t.Errorf("%s: no spec %s", mode, w.name)
			} else if g != w {
				t.Errorf("%s:\n got %+v\nwant %+v", mode, g, w)
			}
			if g, ok := inCluster[w.name]; mode == knobs.LoadBoth && slices.Contains(strings.Fields(w.labels), "load-cluster") && g != w {
				t.Errorf("%s:\n got %+v (ok %v)\nwant %+v", knobs.LoadCluster, g, ok, w)
			}
		}
	}
}

// A row's labels and whether it runs alone come from its fields, never from its name: renamed,
// every row keeps them.
func TestRowsReadNoName(t *testing.T) {
	for _, r := range Matrix(AllEntries(), knobs.LoadBoth) {
		renamed := r
		renamed.Scenario.Variant.Name = "renamed"
		if !slices.Equal(renamed.AllLabels(), r.AllLabels()) || renamed.SerialReason() != r.SerialReason() {
			t.Errorf("%s: renamed, labels %v and serial %q; were %v and %q", r.Name(), renamed.AllLabels(), renamed.SerialReason(), r.AllLabels(), r.SerialReason())
		}
	}
}

// A row runs alone for check.Plan.RunsAlone's reason: its load comes from the host (one
// NodePort), or it drains a node; a row not yet given a load path counts as from the host.
func TestSerialReason(t *testing.T) {
	for _, tc := range []struct {
		from check.LoadFrom
		kind check.DisruptionKind
		want string
	}{
		{"", check.RolloutRestart, "load from the host: "},
		{check.LoadFromHost, check.RolloutRestart, "load from the host: "},
		{check.LoadFromHost, check.DrainNode, "load from the host: "},
		{check.LoadFromCluster, check.RolloutRestart, ""},
		{check.LoadFromCluster, check.ScaleToZero, ""},
		{check.LoadFromHost, check.KubeletRestart, "load from the host: "}, // the only load a kubelet restart takes
		{check.LoadFromCluster, check.DrainNode, "a node drain "},
	} {
		r := Entry{Scenario: under(PreStopDrain, tc.kind, check.Zero(), "because")}
		r.Scenario.Load.From = tc.from
		got := r.SerialReason()
		if p, err := r.Scenario.Plan("matrix", "rollcheck/app:name"); err != nil || got != p.RunsAlone() || !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("from %q under %s: %q (plan: %v), want it to start with %q", tc.from, tc.kind, got, err, tc.want)
		}
	}
}

// With ROLLCHECK_REPEAT=N every row is N specs, "name #k/N", run k of N, with the row's fields.
func TestSpecsRepeat(t *testing.T) {
	once := Specs(AllEntries(), knobs.LoadCluster, 1)
	thrice := Specs(AllEntries(), knobs.LoadCluster, 3)
	if len(thrice) != 3*len(once) {
		t.Fatalf("%d specs repeated 3 times, %d once", len(thrice), len(once))
	}
	for i, sp := range thrice {
		o, k := once[i/3], i%3+1
		if sp.Name != fmt.Sprintf("%s #%d/3", o.Name, k) || sp.Run != k || sp.Runs != 3 || !slices.Equal(sp.Labels, o.Labels) || sp.Serial != o.Serial || sp.Scenario.Variant.Name != o.Scenario.Variant.Name {
			t.Errorf("spec %d: %q run %d/%d, want %q #%d/3", i, sp.Name, sp.Run, sp.Runs, o.Name, k)
		}
	}
}

// alsoPrint identifies a row's Also: the function that made it, and whether it holds ("ok") or
// not ("err") on three probe terminations built from the row's own configuration, which tell
// the checks' arguments apart (heardSIGTERM(true) from (false), a native sidecar's order from a
// classic one's, with or without its preStop).
func alsoPrint(also func(*check.Row) error, s scenario.Scenario) string {
	if also == nil {
		return ""
	}
	parts := strings.Split(runtime.FuncForPC(reflect.ValueOf(also).Pointer()).Name(), ".")
	for len(parts) > 1 && strings.HasPrefix(parts[len(parts)-1], "func") {
		parts = parts[:len(parts)-1] // a closure: name the function that returned it
	}
	out := parts[len(parts)-1]
	p, err := s.Plan("matrix", "rollcheck/app:probe")
	if err != nil {
		return out + " (invalid)"
	}
	a := p.Applied()
	pre, _ := a.PreStop.Duration()
	grace := time.Duration(a.GraceSeconds) * time.Second
	ms := time.Millisecond
	for _, x := range []check.Termination{
		{Pod: "p", How: check.EndedOwn, SIGTERM: pre, Exit: pre + 100*ms, Front: &check.SidecarEnd{SIGTERM: pre, Exit: pre + time.Second}},
		{Pod: "p", How: check.EndedKilled, Exit: grace, Front: &check.SidecarEnd{Exit: 100 * ms}},
		{Pod: "p", How: check.EndedOwn, SIGTERM: pre, Exit: pre + 100*ms, Front: &check.SidecarEnd{Exit: pre + time.Second}},
	} {
		row := &check.Row{Config: a, Times: check.NewTimes([]check.Termination{x}, nil), StopSignalReported: a.StopSignal,
			Explanation: &check.Explanation{Recommendation: &check.Recommendation{Advice: "the container's PID 1 did not pass SIGTERM on"}}}
		if also(row) == nil {
			out += " ok"
		} else {
			out += " err"
		}
	}
	return out
}

// The past-grace claim holds for a pod killed at grace + 2 s and fails for one that went at the
// grace period's end by itself, or was killed late.
func TestKilledAtGracePlus2(t *testing.T) {
	row := func(ts ...check.Termination) *check.Row {
		return &check.Row{Config: check.Applied{GraceSeconds: 4}, Times: check.NewTimes(ts, nil)}
	}
	s := time.Second
	if err := killedAtGracePlus2(row(check.Termination{Pod: "a", SIGTERM: 4100 * time.Millisecond, Exit: 6900 * time.Millisecond, How: "killed"})); err != nil {
		t.Errorf("held: %v", err)
	}
	// A status seen late: the exit window [7.5 s, 8.5 s] still meets 6 s ± 1.5 s.
	if err := killedAtGracePlus2(row(check.Termination{Pod: "late-status", SIGTERM: 4 * s, Exit: 8500 * time.Millisecond, ExitUncertainty: s, How: "killed"})); err != nil {
		t.Errorf("a late status: %v", err)
	}
	// A loaded kubelet (CI, two rows at once on 2 cores): SIGTERM 4.8 s after the deletion and
	// the exit 2.3 to 2.6 s after it. The old rule, timing the exit from the deletion, failed it.
	if err := killedAtGracePlus2(row(check.Termination{Pod: "late-kubelet", SIGTERM: 4820 * time.Millisecond, Exit: 8700 * time.Millisecond, ExitUncertainty: s, How: "killed"})); err != nil {
		t.Errorf("a late kubelet: %v", err)
	}
	for _, x := range []check.Termination{
		{Pod: "own", SIGTERM: 4 * s, Exit: 4200 * time.Millisecond, How: "own"},
		{Pod: "late", SIGTERM: 4 * s, Exit: 12 * s, How: "killed"},
		{Pod: "early-sigterm", SIGTERM: 100 * time.Millisecond, Exit: 6 * s, How: "killed"},
		{Pod: "no-sigterm", Exit: 6 * s, How: "killed"},
		// The kubelet that waits for the hook: SIGTERM at its end (10 s), SIGKILL 2 s later.
		{Pod: "after-hook", SIGTERM: 10 * s, Exit: 12 * s, How: "killed"},
		// SIGTERM on time, but the kill waited 5 s, not 2.
		{Pod: "slow-kill", SIGTERM: 4 * s, Exit: 9 * s, How: "killed"},
	} {
		if err := killedAtGracePlus2(row(x)); err == nil {
			t.Errorf("%s: held", x.Pod)
		}
	}
	if err := killedAtGracePlus2(row()); err == nil {
		t.Error("no termination: held")
	}
}

// The shell row's check: no SIGTERM heard, killed at the grace period's end, judged by the exit
// window; the exec and tini rows': SIGTERM heard after the preStop, an exit of its own.
func TestHeardSIGTERM(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	row := func(ts ...check.Termination) *check.Row {
		return &check.Row{Config: check.Applied{GraceSeconds: 10, PreStop: check.NativeSleep(2 * s)}, Times: check.NewTimes(ts, nil),
			Explanation: &check.Explanation{Recommendation: &check.Recommendation{Advice: "… the container's PID 1 did not pass SIGTERM on …"}}}
	}
	// As measured: a status seen 1.5 s late, the window [10.5 s, 11.5 s].
	if err := heardSIGTERM(false)(row(check.Termination{Pod: "shell", Exit: 11509 * ms, ExitUncertainty: s, How: "killed"})); err != nil {
		t.Errorf("shell, late status: %v", err)
	}
	if err := heardSIGTERM(false)(row(check.Termination{Pod: "shell", SIGTERM: 2 * s, Exit: 10 * s, How: "killed"})); err == nil {
		t.Error("shell row whose app heard SIGTERM: held")
	}
	if err := heardSIGTERM(true)(row(check.Termination{Pod: "tini", SIGTERM: 2 * s, Exit: 2100 * ms, How: "own"})); err != nil {
		t.Errorf("tini: %v", err)
	}
	if err := heardSIGTERM(true)(row(check.Termination{Pod: "tini", Exit: 10 * s, How: "killed"})); err == nil {
		t.Error("tini row killed at grace end: held")
	}
	// A loaded kubelet acts late, never early: as measured with three rows at once on 2 cores,
	// a pod of grace 15 s killed within [17.05 s, 18.03 s] still shows the grace period's end;
	// one killed well before it, or far past it, does not.
	late := func(exit, unc time.Duration) *check.Row {
		r := row(check.Termination{Pod: "shell", Exit: exit, ExitUncertainty: unc, How: "killed"})
		r.Config.GraceSeconds = 15
		return r
	}
	if err := heardSIGTERM(false)(late(18030*ms, 985*ms)); err != nil {
		t.Errorf("shell, late kubelet: %v", err)
	}
	if err := heardSIGTERM(false)(late(12*s, 500*ms)); err == nil {
		t.Error("shell killed 3 s before its grace period's end: held")
	}
	if err := heardSIGTERM(false)(late(22*s, 500*ms)); err == nil {
		t.Error("shell killed 7 s after its grace period's end: held")
	}
	// The heard rows: SIGTERM 2.5 s late with the exit right after it holds; an exit long
	// after the SIGTERM (the app did not exit when it heard it) does not.
	if err := heardSIGTERM(true)(row(check.Termination{Pod: "tini", SIGTERM: 4500 * ms, Exit: 4600 * ms, How: "own"})); err != nil {
		t.Errorf("tini, late kubelet: %v", err)
	}
	if err := heardSIGTERM(true)(row(check.Termination{Pod: "tini", SIGTERM: 2 * s, Exit: 9 * s, How: "own"})); err == nil {
		t.Error("tini exiting 7 s after its SIGTERM: held")
	}
}

func TestStaleList(t *testing.T) {
	row := &check.Row{Explanation: &check.Explanation{}}
	if staleList(row) == nil {
		t.Error("no stale pod passed")
	}
	row.Explanation.Propagation.ProxyStale = 3
	if err := staleList(row); err != nil {
		t.Error(err)
	}
	if staleList(&check.Row{}) == nil {
		t.Error("a row without an explanation passed")
	}
}

// Every row that accepts several phases has its recorded shares in the table, every recorded
// run clears the floor (or the floor would have failed a run that showed its mechanism), and
// check.MinMechanismShare is the rule's number for the table as it is.
func TestMechanismSharesHoldTheFloor(t *testing.T) {
	multi := map[string]bool{}
	for _, r := range AllEntries() {
		if v := r.Scenario.Variant; len(v.Expect.Phases) > 1 {
			k := mechanismKey(v.Name, r.Scenario.Disruption.Kind)
			multi[k] = true
			if _, ok := mechanismShares[k]; !ok {
				t.Errorf("%s accepts several phases (%s) and has no entry in mechanismShares", k, v.Expect)
			}
		}
	}
	for k, runs := range mechanismShares {
		if !multi[k] && k != "as-is rollout-restart" {
			t.Errorf("mechanismShares has %s, which is no row of the matrix accepting several phases", k)
		}
		for _, r := range runs {
			if r.Failures <= 0 || r.Mechanism > r.Failures {
				t.Errorf("%s, %s: %d of %d", k, r.Source, r.Mechanism, r.Failures)
			}
			if r.Share() < check.MinMechanismShare {
				t.Errorf("%s, %s: %d of %d (%.1f%%) in the mechanism, under the floor %.0f%%: that run would fail", k, r.Source, r.Mechanism, r.Failures, 100*r.Share(), 100*check.MinMechanismShare)
			}
		}
	}
	if got := mechanismFloor(); got != check.MinMechanismShare {
		t.Errorf("the rule gives %v for the recorded shares, check.MinMechanismShare is %v", got, check.MinMechanismShare)
	}
}

// The stopsignal-missing check: the app hears no stop signal and dies by itself when the preStop
// ends, even when a loaded kubelet ends the preStop late; a drain, a kill at the grace period's
// end or a heard signal fail it.
func TestDiedAtSIGTERM(t *testing.T) {
	s := time.Second
	row := func(ts ...check.Termination) *check.Row {
		return &check.Row{Config: check.Applied{GraceSeconds: 20, PreStop: check.NativeSleep(5 * s)}, Times: check.NewTimes(ts, nil)}
	}
	for _, x := range []check.Termination{
		{Pod: "on-time", Exit: 5500 * time.Millisecond, ExitUncertainty: s, How: check.EndedOwn},
		{Pod: "late-kubelet", Exit: 9 * s, ExitUncertainty: s, How: check.EndedOwn},
	} {
		if err := diedAtSIGTERM(row(x)); err != nil {
			t.Errorf("%s: %v", x.Pod, err)
		}
	}
	for _, x := range []check.Termination{
		{Pod: "heard", SIGTERM: 5 * s, Exit: 6 * s, How: check.EndedOwn},
		{Pod: "killed", Exit: 20 * s, ExitUncertainty: s, How: check.EndedKilled},
		{Pod: "drained-late", Exit: 13 * s, How: check.EndedOwn},
		{Pod: "early", Exit: 2 * s, How: check.EndedOwn},
	} {
		if err := diedAtSIGTERM(row(x)); err == nil {
			t.Errorf("%s: held", x.Pod)
		}
	}
	if err := diedAtSIGTERM(row()); err == nil {
		t.Error("no termination: held")
	}
}
