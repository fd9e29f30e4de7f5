package frontend

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// scheduled runs Schedule over plans with a stand-in run that takes 20 ms, and returns the
// plans in the order they started and the most that ran at once; it fails t when a plan that
// must run alone (check.Plan.RunsAlone) ran beside another.
func scheduled(t *testing.T, plans []check.Plan, parallel int) (started []int, most int) {
	t.Helper()
	var (
		mu      sync.Mutex
		running int
	)
	Schedule(context.Background(), plans, parallel, func(i int, p check.Plan) {
		mu.Lock()
		started = append(started, i)
		running++
		most = max(most, running)
		if why := p.RunsAlone(); why != "" && running != 1 {
			t.Errorf("plan %d, which must run alone (%s), runs with %d others", i, why, running-1)
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
	})
	return started, most
}

// Schedule runs a plan that must run alone (from the host, a node drain) alone and up to
// parallel of the others at once, taking them in their order.
func TestSchedule(t *testing.T) {
	host, pods := check.Plan{}, check.Plan{Load: check.Load{From: check.LoadFromCluster}}
	plans := []check.Plan{pods, pods, pods, host, pods, pods, host, host, pods}
	started, most := scheduled(t, plans, 2)
	// Plans that run together may start in any order; a plan that runs alone waits for every
	// plan before it, and every plan after it waits for it.
	if sorted := slices.Sorted(slices.Values(started)); !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("started %v, want every plan once", started)
	}
	for _, h := range []int{3, 6, 7} {
		if at := slices.Index(started, h); at != h {
			t.Errorf("started %v: host plan %d is the %dth to start, want the %dth", started, h, at, h)
		}
	}
	if most != 2 {
		t.Errorf("at most %d at once, want 2", most)
	}

	// Two drains of a two-worker cluster at once cordon both workers: with load from load pods
	// and 3 at once allowed, each drain runs alone, so the rollout between them runs by itself.
	drain := pods
	drain.Disruption.Kind = check.DrainNode
	started, most = scheduled(t, []check.Plan{drain, pods, drain}, 3)
	if !slices.Equal(started, []int{0, 1, 2}) || most != 1 {
		t.Errorf("drain, rollout, drain: started %v, at most %d at once; want 0 1 2, one at a time", started, most)
	}
	// The plans beside the drains still run together.
	started, most = scheduled(t, []check.Plan{pods, pods, drain, pods, pods}, 3)
	if at := slices.Index(started, 2); len(started) != 5 || at != 2 || most != 2 {
		t.Errorf("started %v, at most %d at once; want the drain third and 2 at once beside it", started, most)
	}

	// Once ctx ends, no plan starts.
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	Schedule(ctx, plans, 1, func(i int, _ check.Plan) {
		n++
		cancel()
	})
	if n != 1 {
		t.Errorf("%d plans ran after the first ended the context, want 1", n-1)
	}
}
