package tune

import (
	"context"
	"testing"
	"time"
)

// A search that probes beside others can find a value far above the answer (on 2 cores, probes
// at once failed values that pass alone, and the search went up to 5 s where 2 s passed alone).
// The walk down from it runs each value on the way alone once, and bounds only the lowest
// clean one, not each value on the way (a bound's worth of runs alone per value: over 20
// minutes on a cluster).
func TestWalkDownBoundsOnlyTheAnswer(t *testing.T) {
	b := newBesideRunner(t, 2*sec, 5*sec)
	res, err := Run(context.Background(), b.run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(3))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Found || res.Found != 2*sec {
		t.Fatalf("%s %s (note %q), want found 2s; runs: %v", res.Status, res.Found, res.Note, b.ran)
	}
	runs := map[time.Duration]int{}
	for _, p := range res.Confirm {
		runs[p.PreStop]++
	}
	if runs[3*sec] == 0 {
		t.Fatalf("no confirmation above the answer: the search did not go high; runs: %v", b.ran)
	}
	for d, n := range runs {
		if d != res.Found && n > 1 {
			t.Errorf("%d confirmations at %s, not the answer (%s); runs: %v", n, d, res.Found, b.ran)
		}
	}
}
