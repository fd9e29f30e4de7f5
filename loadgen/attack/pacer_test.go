package attack

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// sends runs vegeta's sending loop over p on a virtual clock for 10 s at most, the generator
// frozen from 2 s to 6 s (a load pod stopped, a starved process), and counts the requests sent
// in the first 100 ms after it wakes up and over the whole run.
func sends(p vegeta.Pacer) (afterFreeze, total int) {
	var now time.Duration
	hits := uint64(0)
	for now < 10*time.Second {
		if now >= 2*time.Second && now < 6*time.Second {
			now = 6 * time.Second // frozen: no Pace call, no send
		}
		wait, stop := p.Pace(now, hits)
		if stop {
			break
		}
		now += max(wait, 0)
		if now >= 10*time.Second {
			break
		}
		hits++
		if now >= 6*time.Second && now < 6*time.Second+100*time.Millisecond {
			afterFreeze++
		}
	}
	return afterFreeze, int(hits)
}

// After a 4 s freeze at 200/s, vegeta's own pacer sends the 800 missed requests at once; the
// steady pacer sends at the asked rate from where it is (20 in 100 ms, give or take the one due
// at once), and the run holds the 2 s before and the 4 s after the freeze at 200/s.
func TestSteadyPacerSendsNoBurstAfterAStall(t *testing.T) {
	if burst, _ := sends(vegeta.ConstantPacer{Freq: 200, Per: time.Second}); burst < 700 {
		t.Fatalf("vegeta's ConstantPacer sent %d in the 100 ms after the freeze: the test no longer shows its burst", burst)
	}
	burst, total := sends(newSteadyPacer(200))
	if burst > 22 {
		t.Errorf("the steady pacer sent %d requests in the 100 ms after a 4 s freeze, want about 20 (200/s)", burst)
	}
	if total < 1190 || total > 1202 {
		t.Errorf("the steady pacer sent %d requests in the 6 s it was awake at 200/s, want about 1200", total)
	}
}

// A lag shorter than loadgen.StallGap is made up, as vegeta's pacer does: a run that did not
// stall keeps its rate.
func TestSteadyPacerMakesUpAShortLag(t *testing.T) {
	p := newSteadyPacer(200)
	// 1.5 s in, 200 sent: 100 are due, at once.
	if wait, _ := p.Pace(1500*time.Millisecond, 200); wait > 0 {
		t.Fatalf("the pacer waits %s half a second behind, want at once", wait)
	}
	if p.dropped != 0 {
		t.Errorf("dropped %d requests after a 500 ms lag, want none", p.dropped)
	}
	if wait, _ := p.Pace(3*time.Second, 100); wait <= 0 || p.dropped != 500 {
		t.Errorf("2 s behind: wait %s, dropped %d; want to wait for the next slot, 500 dropped", wait, p.dropped)
	}
}
