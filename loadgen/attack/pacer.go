package attack

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rollcheck/rollcheck/loadgen"
)

// steadyPacer is vegeta's ConstantPacer that does not make up for a stall. Behind its schedule
// by more than loadgen.StallGap (the generator was stopped, frozen or starved of CPU, or the app
// held every worker), vegeta's pacer sends every missed request at once as soon as it can: a
// burst of up to the stall's length × Rate, which the row never asked for and whose failures
// would be the harness's doing, counted against the app. This one drops the missed requests and
// goes on at the asked rate from where it is. The stall stays a stall (loadgen.Result.Stalls: the
// run is invalid, and the failures in flight during it are the harness's), and what follows it is
// the load the row asked for. A lag shorter than StallGap (a late wake-up, a busy node) is made up
// as vegeta does, so that a run that did not stall keeps its rate.
type steadyPacer struct {
	vegeta.ConstantPacer
	// dropped counts the requests the pacer let go: the schedule counts them as sent.
	dropped uint64
}

func newSteadyPacer(rate int) *steadyPacer {
	return &steadyPacer{ConstantPacer: vegeta.ConstantPacer{Freq: rate, Per: time.Second}}
}

// Pace is vegeta's Pace for hits sent (and the ones dropped). It is called by one goroutine.
func (p *steadyPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.Freq > 0 && p.Per > 0 {
		due := uint64(float64(elapsed) * float64(p.Freq) / float64(p.Per))
		if sent := hits + p.dropped; due > sent && time.Duration(due-sent)*p.Per/time.Duration(p.Freq) > loadgen.StallGap {
			p.dropped = due - hits
		}
	}
	return p.ConstantPacer.Pace(elapsed, hits+p.dropped)
}
