package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
)

// Confidence is the confidence of every bound a tune gives: 95 %.
const Confidence = 0.95

// DefaultBound is WithBound's default: the answer's deletions must show, at Confidence, that a
// deletion fails with probability below 5 % (59 deletions, none failing).
const DefaultBound = 0.05

// Limits of WithBound: a bound below MinBound needs thousands of deletions, one above MaxBound
// says nothing worth a preStop.
const (
	MinBound = 0.01
	MaxBound = 0.5
)

// UpperBound is the exact (Clopper-Pearson) one-sided upper bound, at Confidence, on the
// probability that one deletion fails when failing of n deletions failed: the probability p at
// which failing or fewer failures in n deletions have probability 1 − Confidence. With none
// failing it is 1 − 0.05^(1/n): 28 clean deletions bound it by about 10 %, 59 by 4.95 %. It is 1
// with no deletion, or when every deletion failed.
func UpperBound(n, failing int) float64 {
	return stats.ClopperPearsonUpper(failing, n, Confidence)
}

// DeletionsNeeded is how many deletions, none failing, bound the probability that a deletion
// fails below bound at Confidence (UpperBound(n, 0) < bound): 59 for 5 %, 29 for 10 %.
func DeletionsNeeded(bound float64) int {
	if bound <= 0 || bound >= 1 {
		return 0
	}
	n := int(math.Floor(math.Log(1-Confidence)/math.Log1p(-bound))) + 1
	for n > 1 && UpperBound(n-1, 0) < bound { // floating point at an exact boundary
		n--
	}
	for UpperBound(n, 0) >= bound {
		n++
	}
	return n
}

// Deletions counts a row's pod deletions and the failing ones among them, against expect (the
// probe's threshold). The deletions are the row's terminations (Times.Terminations), each
// counted in the disruption it happened in: the last one started at or before its deletion
// (the first one, for a deletion seen before any started). A disruption whose deletions were
// not seen (none recorded, as under a kubelet restart, which deletes no pod) counts as one.
//
// A deletion fails when its disruption failed on its own: with a zero-failure threshold, when
// a request of the disruption failed; with an at-most threshold, when the disruption's own
// failure ratio is above it; with a per-disruption success ratio, when the disruption's is
// below it. A rule only the whole run can meet (bounds' failing seconds) fails no deletion: the
// probe's verdict judges it. Requests that fail during a disruption are not told apart by
// pod, so every deletion of a failing disruption counts as failing: the count can only be too
// high, never too low, and a bound from it is never too optimistic.
func Deletions(row *check.Row, expect check.Outcome) (n, failing int) {
	if row == nil || len(row.Disruptions) == 0 {
		return 0, 0
	}
	ds := row.Disruptions
	per := make([]int, len(ds))
	if row.Times != nil {
		for _, term := range row.Times.Terminations {
			i := 0
			for j, d := range ds {
				if !d.Started.After(term.Deleting) {
					i = j
				}
			}
			per[i]++
		}
	}
	for i, d := range ds {
		m := max(per[i], 1)
		n += m
		if disruptionFails(expect, d) {
			failing += m
		}
	}
	return n, failing
}

// disruptionFails says whether disruption d failed expect on its own (Deletions).
func disruptionFails(o check.Outcome, d check.DisruptionResult) bool {
	if r := o.MinSuccessRatioPerDisruption; r > 0 && d.Requests > 0 && d.SuccessRatio < r {
		return true
	}
	switch o.Kind {
	case check.ExpectAtMost:
		return d.Requests > 0 && float64(d.Failed)/float64(d.Requests) > o.MaxRatio
	case check.ExpectBounds:
		return false
	}
	return d.Failed > 0
}

// Evidence is what the runs alone at one preStop value showed: how many ran and were judged,
// how many of them were clean (passed, no failing deletion), their deletions and failing
// deletions (Deletions), how many runs failed the threshold, and the upper bound on the
// probability that one deletion fails (UpperBound, at Confidence).
type Evidence struct {
	PreStop   time.Duration `json:"preStop"`
	Runs      int           `json:"runs"`
	Clean     int           `json:"clean"`
	Deletions int           `json:"deletions"`
	Failing   int           `json:"failing"`
	// FailedRuns counts the runs judged fail: a run may fail its threshold with no failing
	// deletion (failures outside every disruption, or a whole-run rule).
	FailedRuns int     `json:"failedRuns"`
	Upper      float64 `json:"upper"`
}

// String is "0 of 60 deletions failed in 4 runs alone: p ≤ 4.9 % (95 % confidence)".
func (e Evidence) String() string {
	runs := "runs"
	if e.Runs == 1 {
		runs = "run"
	}
	s := fmt.Sprintf("%d of %d deletions failed in %d %s alone", e.Failing, e.Deletions, e.Runs, runs)
	if e.Failing == 0 && e.FailedRuns > 0 {
		s += fmt.Sprintf(", %d failed the threshold", e.FailedRuns)
	}
	return fmt.Sprintf("%s: p ≤ %s %% (%g %% confidence)", s, percent(e.Upper), 100*Confidence)
}

// percent is 100·p with one decimal, or two below 1 %: "4.9", "0.51".
func percent(p float64) string {
	if p < 0.01 {
		return fmt.Sprintf("%.2f", 100*p)
	}
	return fmt.Sprintf("%.1f", 100*p)
}

// refuted says whether a run alone failed the value: a failing deletion or a failing verdict.
func (e Evidence) refuted() bool { return e.Failing > 0 || e.FailedRuns > 0 }

// proven says whether the runs alone bound the per-deletion failure probability below bound.
func (e Evidence) proven(bound float64) bool {
	return !e.refuted() && e.Deletions > 0 && UpperBound(e.Deletions, 0) < bound
}

// add counts a judged probe that ran alone.
func (e *Evidence) add(p Probe) {
	e.Runs++
	e.Deletions += p.Deletions
	e.Failing += p.FailingDeletions
	if p.Status == check.Fail {
		e.FailedRuns++
	}
	if p.Status == check.Pass && p.FailingDeletions == 0 {
		e.Clean++
	}
	e.Upper = UpperBound(e.Deletions, e.Failing)
}
