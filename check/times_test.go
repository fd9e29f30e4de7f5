package check

import (
	"testing"
	"time"
)

// NewTimes summarises each moment over the pods that showed it, counts the kills and measures
// each disruption from its start to the Deployment settling.
func TestNewTimes(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := time.Second
	tm := NewTimes([]Termination{
		{Pod: "a", SIGTERM: 5 * s, Exit: 5100 * time.Millisecond, How: "own", Gone: 6 * s},
		{Pod: "b", Exit: 32 * s, ExitUncertainty: s, How: "killed", Gone: 33 * s}, // no sigterm line
		{Pod: "c"}, // nothing seen but its deletion
	}, []DisruptionResult{
		{Started: t0, Complete: t0.Add(20 * s), Settled: t0.Add(25 * s)},
		{Started: t0.Add(30 * s), Complete: t0.Add(40 * s)},
		{Started: t0.Add(50 * s)}, // never completed: not a duration
	})
	if tm.SIGTERM.N != 1 || tm.Exit.N != 2 || tm.Gone.N != 2 || tm.Killed != 1 {
		t.Errorf("counts: sigterm %d, exit %d, gone %d, killed %d", tm.SIGTERM.N, tm.Exit.N, tm.Gone.N, tm.Killed)
	}
	if tm.Exit.Max != 32*s || tm.Disruption.N != 2 || tm.Disruption.Max != 20*s || tm.Disruption.P50 != 10*s {
		t.Errorf("exit %+v, disruption %+v", tm.Exit, tm.Disruption)
	}
	if got := tm.TerminationString(); got != "p50 5.1s · max 32s (1 of 3 killed)" {
		t.Errorf("TerminationString = %q", got)
	}
	if got := tm.DisruptionString(); got != "p50 10s · max 20s" {
		t.Errorf("DisruptionString = %q", got)
	}
	var none *Times
	if none.TerminationString() != "—" || none.DisruptionString() != "—" {
		t.Error("a row without times must show —")
	}
}
