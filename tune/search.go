package tune

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attempt"
)

// key is one run the search may need: the k-th value of the grid, as a search probe or as a
// confirmation. One path of the search never needs the same key twice (a retry aside), so a
// key's verdict, once judged, answers every path that reaches it: that is what lets a probe
// run ahead of the search.
type key struct {
	k       int
	confirm bool
}

// tally is what the runs of one key gave: a verdict, or how many runs could not be judged.
type tally struct {
	judged   bool
	pass     bool
	unjudged int
	probe    Probe // the judged run, or the last one that could not be judged
}

// outcomes gives the verdict of a key when it is known (or assumed).
type outcomes func(key) (pass, known bool)

// ending is how the search ended: its status, the index the search found, the index whose
// confirmation passed (Found) and those whose confirmation failed, in order.
type ending struct {
	status              Status
	searched, confirmed int
	failed              []int
}

// next is the serial search over the verdicts at gives: the key it needs next (ending nil), or
// how it ends. It probes index 0; when that fails, 1, 2, 4, ... (capped at kMax) until one
// passes, then bisects between the last failing and the first passing index; then confirms
// the index found, moving one up after each failed confirmation.
func (t *tuner) next(at outcomes) (key, *ending) {
	first := key{0, false}
	pass, ok := at(first)
	if !ok {
		return first, nil
	}
	lo, hi := -1, 0 // lo: the largest index that failed; hi: the smallest that passed
	if !pass {
		lo = 0
		for stride := 1; ; stride *= 2 {
			k := key{min(stride, t.kMax), false}
			if pass, ok = at(k); !ok {
				return k, nil
			}
			if pass {
				hi = k.k
				break
			}
			lo = k.k
			if k.k == t.kMax {
				return key{}, &ending{status: NotFound}
			}
		}
		for hi-lo > 1 {
			k := key{(lo + hi) / 2, false}
			if pass, ok = at(k); !ok {
				return k, nil
			}
			if pass {
				hi = k.k
			} else {
				lo = k.k
			}
		}
	}
	e := &ending{status: Unconfirmed, searched: hi}
	for range Confirmations {
		k := key{hi, true}
		if pass, ok = at(k); !ok {
			return k, nil
		}
		if pass {
			e.status, e.confirmed = Found, hi
			return key{}, e
		}
		e.failed = append(e.failed, hi)
		if hi == t.kMax {
			break
		}
		hi++
	}
	return key{}, e
}

// known is the verdicts the runs so far gave.
func (t *tuner) known(k key) (pass, ok bool) {
	if c := t.tallies[k]; c != nil && c.judged {
		return c.pass, true
	}
	return false, false
}

// assumption is a verdict assumed for a key not run yet, to look ahead.
type assumption struct {
	key
	pass bool
}

// branch is a path of the search ahead of the verdicts known: the verdicts it assumes, the key
// it needs then, and its width: how many thresholds of a curve that fails below some index
// and passes from it (or never passes) agree with the verdicts on its path.
type branch struct {
	assumed []assumption
	need    key
	width   int
	seq     int
}

// lookAhead is the search's next key under the known verdicts and those assumed, with the
// width of that path; ok is false when that path ends there.
func (t *tuner) lookAhead(assumed []assumption) (b branch, ok bool) {
	lo, hi := -1, t.kMax+1 // the thresholds left: (lo, hi]; kMax+1 stands for "never passes"
	need, end := t.next(func(k key) (bool, bool) {
		pass, ok := t.known(k)
		if !ok {
			i := slices.IndexFunc(assumed, func(a assumption) bool { return a.key == k })
			if i < 0 {
				return false, false
			}
			pass, ok = assumed[i].pass, true
		}
		if pass {
			hi = min(hi, k.k)
		} else {
			lo = max(lo, k.k)
		}
		return pass, ok
	})
	return branch{assumed: assumed, need: need, width: hi - lo}, end == nil
}

// schedule is the keys the next round runs: the one the search needs, then up to parallel-1
// that it needs next on the widest paths ahead (ties: the first found, which is the shallower,
// then the failing branch). It is the search's end instead when it has one, and an
// error when the key it needs could not be judged in attempt.Max runs (the front ends' one
// retry policy; tune retries a run that ended in an error too, not only a harness fault).
func (t *tuner) schedule() ([]key, *ending, error) {
	need, end := t.next(t.known)
	if end != nil {
		return nil, end, nil
	}
	if c := t.tallies[need]; c != nil && c.unjudged >= attempt.Max {
		p := c.probe
		return nil, nil, fmt.Errorf("tune %s: probe %d, preStop %s: %s twice, the last: %s", t.base.Variant.Name, p.N, p.PreStop, p.Status, p.Reason)
	}
	keys := []key{need}
	var open []branch
	seq := 0
	expand := func(from branch) {
		for _, pass := range []bool{false, true} {
			b, ok := t.lookAhead(append(slices.Clone(from.assumed), assumption{from.need, pass}))
			if c := t.tallies[b.need]; !ok || b.width <= 0 || (c != nil && c.unjudged >= attempt.Max) {
				continue
			}
			seq++
			b.seq = seq
			open = append(open, b)
		}
	}
	expand(branch{need: need})
	// A path may need a key another path already scheduled: it takes no slot, and the paths
	// are finite, but bound the walk all the same.
	for walked := 0; len(keys) < t.o.parallel && len(open) > 0 && walked < 64*MaxParallel; walked++ {
		i := 0
		for j, b := range open {
			if c := cmp.Or(cmp.Compare(b.width, open[i].width), cmp.Compare(open[i].seq, b.seq)); c > 0 {
				i = j
			}
		}
		b := open[i]
		open = slices.Delete(open, i, i+1)
		if !slices.Contains(keys, b.need) {
			keys = append(keys, b.need)
		}
		expand(b)
	}
	return keys, nil, nil
}

// search runs rounds of probes until the search ends.
func (t *tuner) search(ctx context.Context, run Runner) error {
	for {
		keys, end, err := t.schedule()
		if err != nil {
			return err
		}
		if end != nil {
			t.finish(end)
			return nil
		}
		if err := t.round(ctx, run, keys); err != nil {
			return err
		}
	}
}

// round runs the keys at once, each on its own goroutine, and waits for all of them. The
// probes start in the order of keys (N), the progress callback is called from this goroutine
// only, and the probes are recorded in the order of N. A probe that cannot be judged counts
// against its key; its retry is the next round's business. The end of ctx is an error once
// every probe in flight has returned.
func (t *tuner) round(ctx context.Context, run Runner, keys []key) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tune %s interrupted: %w", t.base.Variant.Name, err)
	}
	t.res.Rounds++
	type result struct {
		i     int
		row   *check.Row
		err   error
		ended time.Time
	}
	ended := make(chan result, len(keys))
	probes := make([]Probe, len(keys))
	for i, k := range keys {
		d := t.value(k.k)
		p := t.plan(d)
		t.runs[d]++
		p.Repeat = t.runs[d]
		c := t.tallies[k]
		probes[i] = Probe{N: len(t.ran) + i + 1, Round: t.res.Rounds, Confirm: k.confirm,
			Retry: c != nil && c.unjudged > 0, PreStop: d, Variant: p.Variant.Name, Started: time.Now()}
		t.progress(probes[i])
		go func() {
			row, err := run(ctx, p)
			ended <- result{i, row, err, time.Now()}
		}()
	}
	for range keys {
		r := <-ended
		pr := &probes[r.i]
		pr.fill(r.row, r.err)
		if c := t.tallies[keys[r.i]]; pr.Retry && c != nil {
			// The front ends' one policy: the row records that it is a retry, and why. The
			// first attempt's row has a name of its own already (its Repeat).
			attempt.Mark(pr.Row, c.probe.Reason)
		}
		pr.Wall = r.ended.Sub(pr.Started)
		t.tally(keys[r.i], *pr)
		t.progress(*pr)
	}
	for i, pr := range probes {
		t.ran = append(t.ran, ran{keys[i], pr})
	}
	if err := ctx.Err(); err != nil {
		at := fmt.Sprintf("probe %d", probes[0].N)
		if len(probes) > 1 {
			at = fmt.Sprintf("probes %d to %d", probes[0].N, probes[len(probes)-1].N)
		}
		return fmt.Errorf("tune %s interrupted at %s: %w", t.base.Variant.Name, at, err)
	}
	return nil
}

// ran is a probe and the key it ran for.
type ran struct {
	k key
	p Probe
}

// file puts the probes into the result in the order of N: the confirmations the search read in
// Confirm, every other probe in Probes; those of keys the search did not read are Ahead.
func (t *tuner) file() {
	read := map[key]bool{}
	t.next(func(k key) (bool, bool) {
		read[k] = true
		return t.known(k)
	})
	for _, r := range t.ran {
		r.p.Ahead = !read[r.k]
		if r.k.confirm && read[r.k] {
			t.res.Confirm = append(t.res.Confirm, r.p)
		} else {
			t.res.Probes = append(t.res.Probes, r.p)
		}
	}
}

// tally records a probe's verdict for its key.
func (t *tuner) tally(k key, p Probe) {
	c := t.tallies[k]
	if c == nil {
		c = &tally{}
		t.tallies[k] = c
	}
	switch {
	case c.judged: // a verdict is kept: the search already read it
	case p.Judged():
		c.judged, c.pass, c.probe = true, p.Status == check.Pass, p
	default:
		c.unjudged++
		c.probe = p
	}
}

func (t *tuner) progress(p Probe) {
	if t.o.progress != nil {
		t.o.progress(p)
	}
}

// finish sets the result from the search's end.
func (t *tuner) finish(e *ending) {
	res := t.res
	res.Status = e.status
	var failed []string
	for _, k := range e.failed {
		failed = append(failed, t.value(k).String())
	}
	searched := t.value(e.searched)
	switch e.status {
	case Found:
		c := t.tallies[key{e.confirmed, true}].probe
		res.Found, res.FoundOK = c.PreStop, true
		if c.Row != nil && c.Row.Explanation != nil {
			res.Recommendation = c.Row.Explanation.Recommendation
		}
		if len(failed) > 0 {
			t.note("the search found %s; its confirmation failed at %s, %s passed", searched, strings.Join(failed, ", "), c.PreStop)
		}
	case Unconfirmed:
		res.Found = searched
		t.note("the search found %s but no confirmation passed (failed at %s)", searched, strings.Join(failed, ", "))
	}
}

func (t *tuner) note(format string, a ...any) {
	if t.res.Note != "" {
		t.res.Note += "; "
	}
	t.res.Note += fmt.Sprintf(format, a...)
}
