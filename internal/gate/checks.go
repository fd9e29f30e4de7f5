package gate

import (
	"context"
	"sync"
	"time"
)

// A RunFunc runs one check and returns its verdict; ctx ends when the server stops.
type RunFunc func(ctx context.Context, key string) Verdict

// Checks runs each key's check once and keeps its verdict, so that a controller that asks
// again (a second poll, a retried AnalysisRun, a webhook called once more after its timeout)
// gets the same answer and never disrupts the app twice: a key is a release (Argo's
// pod-template hash, Flagger's checksum). One check runs at a time; the others wait their turn.
// A pass or a fail is kept (the last Keep keys); an Inconclusive verdict is answered to the
// requests waiting for it and then dropped, so that the next request for its key checks anew.
type Checks struct {
	run RunFunc
	ctx context.Context
	// Keep is how many keys' verdicts are kept (the oldest go first); 0: 64.
	Keep int
	// Now is the clock (tests).
	Now func() time.Time

	turn  sync.Mutex // one check at a time
	mu    sync.Mutex
	byKey map[string]*entry
	order []string // keys in the order they started, for Keep
	wg    sync.WaitGroup
}

type entry struct {
	done    chan struct{}
	started time.Time
	v       Verdict // set before done is closed
}

// NewChecks is Checks whose checks run under ctx: when it ends, the running check is cancelled
// (and restores what it changed) and the waiting ones end Inconclusive.
func NewChecks(ctx context.Context, run RunFunc) *Checks {
	return &Checks{run: run, ctx: ctx, byKey: map[string]*entry{}, Now: time.Now}
}

// Get starts key's check unless it is running or done, and waits for its verdict until ctx
// ends or wait passes (wait ≤ 0: until ctx ends): the verdict when it is done, else a Running
// one, with started set (the check goes on).
func (c *Checks) Get(ctx context.Context, key string, wait time.Duration) Verdict {
	e := c.start(key)
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-e.done:
		return e.v
	case <-ctx.Done():
	case <-timeout:
	}
	select {
	case <-e.done:
		return e.v
	default:
		return Verdict{SchemaVersion: SchemaVersion, State: Running, Key: key, Started: e.started}
	}
}

// Wait waits until every check started has ended (after the server's context ended).
func (c *Checks) Wait() { c.wg.Wait() }

func (c *Checks) start(key string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		return e
	}
	e := &entry{done: make(chan struct{}), started: c.Now().UTC()}
	c.byKey[key] = e
	c.order = append(c.order, key)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.turn.Lock()
		var v Verdict
		if err := c.ctx.Err(); err != nil {
			v = Verdict{SchemaVersion: SchemaVersion, State: Done, Verdict: Inconclusive, Reason: "the gate server stopped before the check ran"}
		} else {
			v = c.run(c.ctx, key)
		}
		c.turn.Unlock()
		v.Key = key
		if v.State == "" {
			v.State = Done
		}
		c.finish(key, e, v)
	}()
	return e
}

func (c *Checks) finish(key string, e *entry, v Verdict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.v = v
	close(e.done)
	if v.Verdict != Pass && v.Verdict != Fail {
		c.drop(key)
		return
	}
	keep := c.Keep
	if keep <= 0 {
		keep = 64
	}
	for len(c.order) > keep {
		old := c.order[0]
		if o := c.byKey[old]; o != nil {
			select {
			case <-o.done:
			default:
				return // the oldest still runs or waits: keep it
			}
		}
		c.drop(old)
	}
}

// drop forgets key (c.mu held).
func (c *Checks) drop(key string) {
	delete(c.byKey, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
