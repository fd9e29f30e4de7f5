package tune

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
)

func TestUpperBound(t *testing.T) {
	for _, tc := range []struct {
		n, k   int
		lo, hi float64 // the bound lies in [lo, hi]
	}{
		{59, 0, 0.0494, 0.0496}, // 1 − 0.05^(1/59) = 4.95 %: below 5 %
		{58, 0, 0.0503, 0.0504}, // one fewer is not
		{28, 0, 0.1014, 0.1016}, // 28 clean deletions: only about 10 %
		{15, 0, 0.1810, 0.1812},
		{1, 0, 0.95, 0.95},
		// Exact Clopper-Pearson one-sided upper bounds (the 0.95 quantile of Beta(k+1, n−k)),
		// as computed independently with exact binomial sums.
		{59, 1, 0.0778, 0.0780},
		{93, 1, 0.0498, 0.0500},
		{15, 3, 0.4397, 0.4399},
		{100, 10, 0.1636, 0.1638},
		{7785, 10, 0.00217, 0.00219},
		{10, 10, 1, 1},
		{0, 0, 1, 1},
	} {
		got := UpperBound(tc.n, tc.k)
		if got < tc.lo || got > tc.hi {
			t.Errorf("UpperBound(%d, %d) = %.5f, want %.5f to %.5f", tc.n, tc.k, got, tc.lo, tc.hi)
		}
	}
	// The bound is exact: at it, k or fewer failures have probability 1 − Confidence.
	for _, nk := range [][2]int{{20, 1}, {59, 2}, {300, 7}} {
		p := UpperBound(nk[0], nk[1])
		if cdf := stats.BinomialCDF(nk[1], nk[0], p); math.Abs(cdf-(1-Confidence)) > 1e-9 {
			t.Errorf("UpperBound(%d, %d) = %g: P(X ≤ k) there is %g, want %g", nk[0], nk[1], p, cdf, 1-Confidence)
		}
	}
	// More deletions lower it; more failures raise it.
	for n := 1; n < 200; n++ {
		if UpperBound(n+1, 1) >= UpperBound(n, 1) && n > 1 {
			t.Fatalf("UpperBound(%d, 1) does not fall below UpperBound(%d, 1)", n+1, n)
		}
		if UpperBound(n, 1) <= UpperBound(n, 0) {
			t.Fatalf("UpperBound(%d, 1) not above UpperBound(%d, 0)", n, n)
		}
	}
}

func TestDeletionsNeeded(t *testing.T) {
	for bound, want := range map[float64]int{0.05: 59, 0.1: 29, 0.01: 299, 0.5: 5, 0.2: 14} {
		got := DeletionsNeeded(bound)
		if got != want || UpperBound(got, 0) >= bound || UpperBound(got-1, 0) < bound {
			t.Errorf("DeletionsNeeded(%g) = %d, want %d", bound, got, want)
		}
	}
}

// deletionRow is a row of disruptions, each with its requests failed and its deletions.
func deletionRow(failed []int, deletions []int) *check.Row {
	row := &check.Row{Times: &check.Times{}}
	for i, f := range failed {
		d := check.DisruptionResult{N: i + 1, Started: t0.Add(time.Duration(i) * time.Minute), Requests: 100, Failed: f,
			SuccessRatio: float64(100-f) / 100}
		row.Disruptions = append(row.Disruptions, d)
		for j := range deletions[i] {
			row.Times.Terminations = append(row.Times.Terminations, check.Termination{Deleting: d.Started.Add(time.Duration(j) * time.Second)})
		}
	}
	return row
}

func TestDeletions(t *testing.T) {
	for _, tc := range []struct {
		name               string
		row                *check.Row
		expect             check.Outcome
		wantN, wantFailing int
	}{
		{"clean", deletionRow([]int{0, 0, 0}, []int{3, 3, 3}), check.Zero(), 9, 0},
		// A disruption that lost a request: every deletion of it fails (which one did is not known).
		{"one disruption lost", deletionRow([]int{0, 2, 0}, []int{3, 3, 3}), check.Zero(), 9, 3},
		// A disruption whose deletions were not seen counts as one deletion.
		{"none seen", deletionRow([]int{0, 1}, []int{0, 0}), check.Zero(), 2, 1},
		{"no times", &check.Row{Disruptions: deletionRow([]int{1, 0}, []int{2, 2}).Disruptions}, check.Zero(), 2, 1},
		{"no disruption", &check.Row{}, check.Zero(), 0, 0},
		{"nil", nil, check.Zero(), 0, 0},
		// An at-most threshold fails a disruption whose own ratio is above it.
		{"at most", deletionRow([]int{1, 3}, []int{2, 2}), check.AtMost(0.02), 4, 2},
		// A per-disruption success ratio fails a disruption below it.
		{"per disruption", deletionRow([]int{1, 6}, []int{2, 2}), check.Bounds().WithMinSuccessRatioPerDisruption(0.95), 4, 2},
		// A rule of the whole run fails no deletion: the verdict judges it.
		{"bounds", deletionRow([]int{1, 6}, []int{2, 2}), check.Bounds(), 4, 0},
	} {
		n, failing := Deletions(tc.row, tc.expect)
		if n != tc.wantN || failing != tc.wantFailing {
			t.Errorf("%s: %d deletions, %d failing; want %d, %d", tc.name, n, failing, tc.wantN, tc.wantFailing)
		}
	}
	// A deletion goes to the disruption it happened in: the last one started at or before it;
	// one seen before any started, to the first.
	row := deletionRow([]int{0, 4}, []int{0, 0})
	for _, at := range []time.Duration{-time.Second, 0, 59 * time.Second, time.Minute, 2 * time.Minute} {
		row.Times.Terminations = append(row.Times.Terminations, check.Termination{Deleting: t0.Add(at)})
	}
	if n, failing := Deletions(row, check.Zero()); n != 5 || failing != 2 {
		t.Errorf("deletions by time: %d, %d failing; want 5, 2", n, failing)
	}
}

func TestEvidenceString(t *testing.T) {
	e := Evidence{}
	for range 4 {
		e.add(Probe{Status: check.Pass, Deletions: 15})
	}
	if got, want := e.String(), "0 of 60 deletions failed in 4 runs alone: p ≤ 4.9 % (95 % confidence)"; got != want || !e.proven(0.05) || e.proven(0.04) {
		t.Errorf("%q, want %q (proven at 5 %%: %v)", got, want, e.proven(0.05))
	}
	f := Evidence{}
	f.add(Probe{Status: check.Fail, Deletions: 15, FailingDeletions: 3})
	if got := f.String(); got != "3 of 15 deletions failed in 1 run alone: p ≤ 44.0 % (95 % confidence)" || !f.refuted() {
		t.Errorf("%q", got)
	}
	g := Evidence{}
	g.add(Probe{Status: check.Fail, Deletions: 15})
	if got := g.String(); !strings.Contains(got, "0 of 15 deletions failed in 1 run alone, 1 failed the threshold") || !g.refuted() {
		t.Errorf("%q", got)
	}
}
