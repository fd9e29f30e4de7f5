package suites

import (
	"testing"

	"github.com/rollcheck/rollcheck/check"
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
	if n := len(AllRows()); n != 20 {
		t.Errorf("%d matrix rows, want 20", n)
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
