package suites

import (
	"slices"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

func TestMeasuredBound(t *testing.T) {
	for _, tc := range []struct{ worst, want float64 }{
		{0, 0.005}, {0.0015, 0.005}, {0.0072, 0.015}, {0.0362, 0.075}, {0.052, 0.105}, {0.0025, 0.005}, {0.00251, 0.010},
	} {
		if got := MeasuredBound(tc.worst); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("MeasuredBound(%v) = %v, want %v", tc.worst, got, tc.want)
		}
	}
}

// Every at-most row's bound is a measured one, below the old 15 % that never failed, and
// every row validates.
func TestRowsBounds(t *testing.T) {
	for _, s := range AllRows() {
		if _, err := s.Plan("matrix", "rollcheck/app:t1"); err != nil {
			t.Errorf("%s: %v", s.Variant.Name, err)
		}
		if e := s.Variant.Expect; e.Kind == check.ExpectAtMost && (e.MaxRatio >= 0.15 || e.MaxRatio < 0.005) {
			t.Errorf("%s under %s: bound %v is not a measured one", s.Variant.Name, s.Disruption.Kind, e.MaxRatio)
		}
	}
	if n := len(AllRows()); n != 35 {
		t.Errorf("%d matrix rows, want 35 (33 configurations, two of them from both paths)", n)
	}
}

// Matrix sends every row one way, or (both) every row from the cluster plus the host twins; a
// row name is never run twice on one path.
func TestMatrixLoadModes(t *testing.T) {
	for _, tc := range []struct {
		mode            knobs.MatrixLoad
		host, inCluster int
	}{{knobs.LoadBoth, 3, 32}, {knobs.LoadHost, 33, 0}, {knobs.LoadCluster, 0, 32}} {
		rows := Matrix(AllRows(), tc.mode)
		seen := map[string]bool{}
		var host, in int
		for _, s := range rows {
			switch s.Load.From {
			case check.LoadFromHost:
				host++
			case check.LoadFromCluster:
				in++
			default:
				t.Errorf("%s: %s has no load path", tc.mode, s.Variant.Name)
			}
			if n := RowName(s); seen[n] {
				t.Errorf("%s: %s twice", tc.mode, n)
			} else {
				seen[n] = true
			}
			if !slices.Contains(RowLabels(s), "load-"+string(s.Load.From)) {
				t.Errorf("%s: %s lacks its load label: %v", tc.mode, s.Variant.Name, RowLabels(s))
			}
		}
		if host != tc.host || in != tc.inCluster {
			t.Errorf("%s: %d rows from the host and %d from the cluster, want %d and %d", tc.mode, host, in, tc.host, tc.inCluster)
		}
	}
}

// Every negative control names the phase its mechanism must produce: judged by class alone, a
// stale-conntrack timeout could pass it for the wrong reason.
func TestNegativeControlsNamePhases(t *testing.T) {
	for _, s := range AllRows() {
		if e := s.Variant.Expect; e.Kind == check.ExpectFailures && len(e.Phases) == 0 {
			t.Errorf("%s under %s: a negative control without expected phases", s.Variant.Name, s.Disruption.Kind)
		}
	}
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
	for _, x := range []check.Termination{
		{Pod: "own", SIGTERM: 4 * s, Exit: 4200 * time.Millisecond, How: "own"},
		{Pod: "late", SIGTERM: 4 * s, Exit: 12 * s, How: "killed"},
		{Pod: "early-sigterm", SIGTERM: 100 * time.Millisecond, Exit: 6 * s, How: "killed"},
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
	// Measured in a CI run: a status seen 1.5 s late, the window [10.5 s, 11.5 s].
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
}
