package tune

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// besideRunner is a Runner whose app fails differently beside other probes than alone, as
// on a cluster where probes at once slow each other's rollouts: alone it passes from preStop
// alone on, beside another call from beside on. It tells by itself: a call that overlapped
// another (each holds for hold, long enough for the other calls of a round to start) ran
// beside it.
type besideRunner struct {
	t             testing.TB
	hold          time.Duration
	alone, beside time.Duration

	mu      sync.Mutex
	next    int
	flight  map[int]bool // calls in flight, by id
	overlap map[int]bool // calls that overlapped another
	ran     []string     // "1.5s alone", "1s beside", in the order the calls ended
}

func newBesideRunner(t testing.TB, alone, beside time.Duration) *besideRunner {
	return &besideRunner{t: t, hold: 30 * time.Millisecond, alone: alone, beside: beside, flight: map[int]bool{}, overlap: map[int]bool{}}
}

func (b *besideRunner) run(_ context.Context, pr *check.Resolved) (*check.Row, error) {
	p := pr.Plan()
	d := preStopOf(b.t, p)
	b.mu.Lock()
	b.next++
	id := b.next
	for other := range b.flight {
		b.overlap[other], b.overlap[id] = true, true
	}
	b.flight[id] = true
	b.mu.Unlock()
	time.Sleep(b.hold)
	b.mu.Lock()
	delete(b.flight, id)
	beside := b.overlap[id]
	from, how := b.alone, "alone"
	if beside {
		from, how = b.beside, "beside"
	}
	b.ran = append(b.ran, fmt.Sprintf("%s %s", d, how))
	b.mu.Unlock()
	failed := 0
	if d < from {
		failed = 4
	}
	return fakeRow(p, failed), nil
}

// The answer does not move with the parallelism: beside other probes the app here passes from
// 1 s (rollouts slowed by sibling probes leave propagation more time), alone only from 2 s. The
// old tune took the search's 1 s, confirmed by a run beside the search's last probe; the answer
// now rests on runs alone, and is 2 s at every parallelism. Probes beside others that fail more
// than runs alone (from 3 s) do not raise it either.
func TestAnswerSameAtAnyParallelism(t *testing.T) {
	for _, tc := range []struct {
		name          string
		alone, beside time.Duration
	}{
		{"cleaner beside", 2 * sec, sec},
		{"dirtier beside", 2 * sec, 3 * sec},
	} {
		for _, n := range []int{1, 2, 3, 4, 8} {
			b := newBesideRunner(t, tc.alone, tc.beside)
			res, err := Run(context.Background(), b.run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(n))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != Found || res.Found != tc.alone || !res.FoundOK {
				t.Errorf("%s, parallel %d: %s %s (note %q), want found %s; runs: %v", tc.name, n, res.Status, res.Found, res.Note, tc.alone, b.ran)
			}
		}
	}
}

// One clean run at the boundary says little. Here the app loses requests in every third run
// at 1 s and 1.5 s, and never from 2 s on: the old tune answered 1 s, its search probe and its
// one confirmation clean. Now the answer needs 59 clean deletions alone (4 runs of 15), which
// 1 s and 1.5 s never give.
func TestOneCleanRunIsNotEnough(t *testing.T) {
	for _, n := range []int{1, 3} {
		var mu sync.Mutex
		runs := map[time.Duration]int{}
		run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
			p := pr.Plan()
			d := preStopOf(t, p)
			mu.Lock()
			runs[d]++
			i := runs[d]
			mu.Unlock()
			failed := 0
			if d < sec || (d < 2*sec && i%3 == 0) {
				failed = 2
			}
			return fakeRow(p, failed), nil
		}
		res, err := Run(context.Background(), run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(n))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Found || res.Found != 2*sec {
			t.Errorf("parallel %d: %s %s (note %q), want found 2s", n, res.Status, res.Found, res.Note)
		}
	}
}

// What the answer rests on: every confirmation ran alone, the runs alone at the answer bound
// the per-deletion failure probability below the bound, and those one resolution below failed.
func TestAnswerRestsOnRunsAlone(t *testing.T) {
	for _, n := range []int{1, 3} {
		b := newBesideRunner(t, 2*sec, sec)
		res, err := Run(context.Background(), b.run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(n))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Confirm {
			if !p.Alone || !p.Confirm || p.Deletions != 5*fakeReplicas {
				t.Errorf("parallel %d: confirmation %d: alone %v, %d deletions", n, p.N, p.Alone, p.Deletions)
			}
		}
		at, below := res.AtFound, res.Below
		if at == nil || at.PreStop != 2*sec || at.Failing != 0 || at.Deletions < DeletionsNeeded(DefaultBound) || at.Upper >= DefaultBound {
			t.Errorf("parallel %d: at the answer %+v", n, at)
		}
		if below == nil || below.PreStop != 1500*time.Millisecond || below.Failing == 0 || below.Upper <= DefaultBound {
			t.Errorf("parallel %d: below the answer %+v", n, below)
		}
		if res.Bound != DefaultBound || res.Confidence != Confidence || res.DeletionsNeeded != 59 {
			t.Errorf("parallel %d: bound %g at %g, %d deletions", n, res.Bound, res.Confidence, res.DeletionsNeeded)
		}
	}
}

// The bound sets how many runs alone confirm: 10 % needs 29 deletions (two runs of 15), 1 % 299
// (20 runs); a run whose deletion fails ends the value's confirmation at once.
func TestBoundSetsTheRuns(t *testing.T) {
	for bound, runs := range map[float64]int{0.1: 2, 0.05: 4, 0.01: 20} {
		var ran []time.Duration
		res, err := Run(context.Background(), threshold(t, 2*sec, &ran), tunePlan(t), WithPreStop(execSleep), WithBound(bound))
		if err != nil {
			t.Fatal(err)
		}
		// The search's run alone at 2 s counts: the confirmation adds the rest.
		if res.Status != Found || res.Found != 2*sec || len(res.Confirm) != runs-1 || res.AtFound.Runs != runs {
			t.Errorf("bound %g: %s %s, %d confirmations, evidence %+v; want %d runs alone", bound, res.Status, res.Found, len(res.Confirm), res.AtFound, runs)
		}
	}
	for _, bad := range []float64{0, 0.005, 0.6, -1} {
		if err := Validate(tunePlan(t), WithPreStop(execSleep), WithBound(bad)); err == nil {
			t.Errorf("bound %g: no error", bad)
		}
	}
}

// Rows that record no deletion cannot bound anything: the tune says so instead of running on.
func TestNoDeletionNoBound(t *testing.T) {
	run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		row := fakeRow(p, 0)
		row.Disruptions, row.Times = nil, nil
		return row, nil
	}
	res, err := Run(context.Background(), run, tunePlan(t), WithPreStop(execSleep))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Unconfirmed || res.FoundOK || len(res.Probes)+len(res.Confirm) != 1 {
		t.Errorf("%s, %d probes, note %q", res.Status, len(res.Probes)+len(res.Confirm), res.Note)
	}
}
