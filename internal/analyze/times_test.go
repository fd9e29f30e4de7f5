package analyze

import (
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/timeline"
)

// Only the pods deleted during a disruption are its terminations, in order of deletion, each
// moment from the deletion; a moment not seen stays zero.
func TestTerminations(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := time.Second
	ds := []check.DisruptionResult{{Started: t0, Complete: t0.Add(20 * s), Settled: t0.Add(25 * s)}}
	lives := []attribute.Life{
		{Pod: "late", Deleting: t0.Add(8 * s), End: attribute.End{ExitFrom: t0.Add(38 * s), ExitBy: t0.Add(39 * s), Exit: attribute.ExitKilled}, Gone: t0.Add(40 * s)},
		{Pod: "first", Deleting: t0.Add(2 * s), End: attribute.End{SIGTERM: t0.Add(7 * s), ExitFrom: t0.Add(7500 * time.Millisecond), ExitBy: t0.Add(7500 * time.Millisecond),
			ExitExact: true, Exit: attribute.ExitOwn}, Gone: t0.Add(8 * s)},
		{Pod: "replacement", Created: t0.Add(2100 * time.Millisecond), EndpointReady: t0.Add(4 * s)}, // never deleted
		{Pod: "teardown", Deleting: t0.Add(time.Minute)},                                             // deleted after the disruptions
		{Pod: "unseen", Deleting: t0.Add(12 * s)},                                                    // nothing seen after its deletion
	}
	events := []timeline.Event{{Kind: timeline.PodGone, Pod: "first", PodPhase: "Succeeded"}, {Kind: timeline.PodGone, Pod: "late", PodPhase: "Failed"}}
	got := terminations(lives, ds, events)
	if len(got) != 3 || got[0].Pod != "first" || got[1].Pod != "late" || got[2].Pod != "unseen" {
		t.Fatalf("terminations %+v", got)
	}
	if f := got[0]; f.SIGTERM != 5*s || f.Exit != 5500*time.Millisecond || f.ExitUncertainty != 0 || f.How != "own" || f.Gone != 6*s {
		t.Errorf("first: %+v", f)
	}
	if got[0].FinalPhase != "Succeeded" || got[1].FinalPhase != "Failed" || got[2].FinalPhase != "" {
		t.Errorf("final phases %q %q %q", got[0].FinalPhase, got[1].FinalPhase, got[2].FinalPhase)
	}
	if f := got[0]; f.Replacement != "replacement" || f.ReplacementCreated != 100*time.Millisecond || f.ReplacementReady != 2*s || f.Overlap != 3500*time.Millisecond {
		t.Errorf("first's replacement: %+v", f)
	}
	if l := got[1]; l.SIGTERM != 0 || l.Exit != 31*s || l.ExitUncertainty != s || l.How != "killed" || l.Gone != 32*s {
		t.Errorf("late: %+v", l)
	}
	if u := got[2]; u.Exit != 0 || u.Gone != 0 || u.ExitUncertainty != 0 {
		t.Errorf("unseen: %+v", u)
	}
}
