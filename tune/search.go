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

// key is one run the tune may need: the k-th value of the grid, as a search probe or as a
// confirmation. One path of the search never needs the same search key twice (a retry aside),
// so its verdict, once judged, answers every path that reaches it: that is what lets a probe
// run ahead of the search. A confirmation key runs as often as the bound needs, always alone.
type key struct {
	k       int
	confirm bool
}

// tally is what the runs of one key gave: a verdict (a search key's first), or how many runs
// in a row could not be judged.
type tally struct {
	judged   bool
	pass     bool
	unjudged int
	probe    Probe // the judged run, or the last one that could not be judged
}

// outcomes gives the verdict of a key when it is known (or assumed).
type outcomes func(key) (pass, known bool)

// ending is how the search or the tune ended: its status ("" for a search that found searched,
// which the confirmation takes up), the index the search found, the index confirmed (Found),
// those that runs alone failed going up from searched, in order, and the index whose runs
// alone counted no deletion to bound (stuck, -1 for none).
type ending struct {
	status              Status
	searched, confirmed int
	failed              []int
	stuck               int
}

// next is the serial search over the verdicts at gives: the key it needs next (ending nil), or
// how it ends. It probes index 0; when that fails, 1, 2, 4, ... (capped at kMax) until one
// passes, then bisects between the last failing and the first passing index. The confirmation
// (confirmNext) takes up the index found.
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
	return key{}, &ending{searched: hi, stuck: -1}
}

// evidence is what the judged runs alone at index k showed.
func (t *tuner) evidence(k int) Evidence {
	if e := t.alone[k]; e != nil {
		return *e
	}
	return Evidence{PreStop: t.value(k), Upper: 1}
}

// cleanUpTo says whether a run alone at index k or below was clean.
func (t *tuner) cleanUpTo(k int) bool {
	for i, e := range t.alone {
		if i <= k && e.Clean > 0 {
			return true
		}
	}
	return false
}

// stuck says whether the runs alone at e cannot bound it: none failed, but they counted no
// deletion, or fewer than one a run (rows without disruptions).
func (t *tuner) stuck(e Evidence) bool {
	return !e.refuted() && e.Runs > 0 && (e.Deletions == 0 || e.Runs > t.res.DeletionsNeeded)
}

// confirmNext is the confirmation over the runs alone so far, from the index the search found:
// the key it needs next (always run alone), or how the tune ends. An index is failed when a
// run alone there failed (a failing deletion or verdict), bounded when its runs alone bound
// the probability that one deletion fails below the bound. Failed, it goes one up. Clean so far
// but not bounded, it looks one down before it runs the index again: no run alone there yet,
// that index runs once; clean there, it goes down; failed there (or the range's start), the
// index runs until it is failed or bounded. Bounded, it looks one down: failed there (or the
// range's start) is the answer; bounded there, it goes down; neither, that index runs. The
// answer is so the same whichever index the search found, as long as the runs alone give the
// same verdicts: at any parallelism. Going up ends at the range's end, or at the
// Confirmations-th failed index at or above one that passed alone (a verdict that changes
// from run to run: an app that fails now and then at every value); a failed index with no
// clean run alone at or below it only shows that the search's probes (beside others) were too
// kind, and costs nothing.
func (t *tuner) confirmNext(searched int) (key, *ending) {
	e := &ending{status: Unconfirmed, searched: searched, stuck: -1}
	flaky := 0
	for k := searched; ; {
		ev := t.evidence(k)
		switch {
		case ev.refuted():
			e.failed = append(e.failed, k)
			if t.cleanUpTo(k) {
				flaky++
			}
			if k == t.kMax || flaky == Confirmations {
				return key{}, e
			}
			k++
		case ev.proven(t.o.bound):
			below := t.evidence(k - 1)
			switch {
			case k == 0 || below.refuted() || t.stuck(below):
				e.status, e.confirmed = Found, k
				return key{}, e
			case below.proven(t.o.bound):
				k--
			default:
				return key{k - 1, true}, nil
			}
		case t.stuck(ev):
			e.stuck = k
			return key{}, e
		case ev.Runs > 0 && k > 0:
			// Clean so far, not yet bounded: one run alone below first, and the runs that
			// bound only at the lowest clean index (each index on the way down bounded
			// first cost a bound's worth of runs alone per step: a search that parallel
			// probes sent high walked down for over 20 minutes).
			below := t.evidence(k - 1)
			switch {
			case below.refuted() || t.stuck(below):
				return key{k, true}, nil
			case below.Runs == 0:
				return key{k - 1, true}, nil
			default:
				k--
			}
		default:
			return key{k, true}, nil
		}
	}
}

// known is the verdicts the search's runs so far gave.
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
// then the failing branch); once the search has ended, the one confirmation key the
// confirmation needs, alone. It is the tune's end instead when it has one, and an error when
// the key it needs could not be judged in attempt.Max runs in a row (the front ends' one
// retry policy; tune retries a run that ended in an error too, not only a harness fault).
func (t *tuner) schedule() ([]key, *ending, error) {
	need, end := t.next(t.known)
	if end != nil && end.status == "" {
		need, end = t.confirmNext(end.searched)
	}
	if end != nil {
		return nil, end, nil
	}
	if c := t.tallies[need]; c != nil && c.unjudged >= attempt.Max {
		p := c.probe
		return nil, nil, fmt.Errorf("tune %s: probe %d, preStop %s: %s twice, the last: %s", t.base.Variant.Name, p.N, p.PreStop, p.Status, p.Reason)
	}
	keys := []key{need}
	if need.confirm {
		return keys, nil, nil // a confirmation runs alone
	}
	var open []branch
	seq := 0
	expand := func(from branch) {
		for _, pass := range []bool{false, true} {
			b, ok := t.lookAhead(append(slices.Clone(from.assumed), assumption{from.need, pass}))
			if c := t.tallies[b.need]; !ok || b.width <= 0 || b.need.confirm || (c != nil && c.unjudged >= attempt.Max) {
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
// against its key; its retry is the next round's business. A round of one key runs it alone:
// its judged probe is evidence for the answer. The end of ctx is an error once every probe in
// flight has returned.
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
		probes[i] = Probe{N: len(t.ran) + i + 1, Round: t.res.Rounds, Confirm: k.confirm, Alone: len(keys) == 1,
			Retry: c != nil && c.unjudged > 0, PreStop: d, Variant: p.Variant.Name, Started: time.Now()}
		t.progress(probes[i])
		go func() {
			res, err := p.Resolve() // newTuner resolved the range's ends; each probe's plan once more, its own
			if err != nil {
				ended <- result{i, nil, err, time.Now()}
				return
			}
			row, err := run(ctx, res)
			ended <- result{i, row, err, time.Now()}
		}()
	}
	for range keys {
		r := <-ended
		pr := &probes[r.i]
		pr.fill(r.row, r.err, t.base.Variant.Expect)
		if c := t.tallies[keys[r.i]]; pr.Retry && c != nil {
			// The front ends' one policy: the row records that it is a retry, and why. The
			// first attempt's row has a name of its own already (its Repeat).
			attempt.Mark(pr.Row, c.probe.Reason)
		}
		pr.Wall = r.ended.Sub(pr.Started)
		t.tally(keys[r.i], *pr)
		if pr.Alone && pr.Judged() {
			k := keys[r.i].k
			if t.alone[k] == nil {
				t.alone[k] = &Evidence{PreStop: pr.PreStop}
			}
			t.alone[k].add(*pr)
		}
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

// file puts the probes into the result in the order of N: the confirmations in Confirm, every
// other probe in Probes; those of keys the search did not read are Ahead.
func (t *tuner) file() {
	read := map[key]bool{}
	t.next(func(k key) (bool, bool) {
		read[k] = true
		return t.known(k)
	})
	for _, r := range t.ran {
		if r.k.confirm {
			t.res.Confirm = append(t.res.Confirm, r.p)
			continue
		}
		r.p.Ahead = !read[r.k]
		t.res.Probes = append(t.res.Probes, r.p)
	}
}

// tally records a probe's verdict for its key: a search key keeps its first, a confirmation
// key counts only the runs in a row that could not be judged (Evidence has the rest).
func (t *tuner) tally(k key, p Probe) {
	c := t.tallies[k]
	if c == nil {
		c = &tally{}
		t.tallies[k] = c
	}
	switch {
	case k.confirm && p.Judged():
		c.unjudged, c.probe = 0, p
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

// finish sets the result from the tune's end: the answer, what the runs alone showed at it and
// one resolution below, the confirming row's recommendation and what the Note should say.
func (t *tuner) finish(e *ending) {
	res := t.res
	res.Status = e.status
	var failed []string
	for _, k := range e.failed {
		failed = append(failed, t.value(k).String())
	}
	searched := t.value(e.searched)
	at := e.searched
	switch e.status {
	case Found:
		at = e.confirmed
		res.Found, res.FoundOK = t.value(at), true
		// The recommendation of the last run alone at the answer that has one.
		for _, r := range slices.Backward(t.ran) {
			if p := r.p; p.Alone && p.Judged() && r.k.k == at && p.Row != nil && p.Row.Explanation != nil {
				res.Recommendation = p.Row.Explanation.Recommendation
				break
			}
		}
		switch {
		case len(failed) > 0:
			t.note("the search found %s; runs alone failed at %s; %s met the bound", searched, strings.Join(failed, ", "), res.Found)
		case at < e.searched:
			t.note("the search found %s; runs alone met the bound at %s too", searched, res.Found)
		}
		if below := t.evidence(at - 1); at > 0 && t.stuck(below) {
			t.note("the runs alone at %s counted no deletion", below.PreStop)
		}
	case Unconfirmed:
		res.Found = searched
		if e.stuck >= 0 {
			t.note("the search found %s but the runs alone at %s counted no deletion to bound (rows without disruptions)", searched, t.value(e.stuck))
		} else {
			t.note("the search found %s but no value met the bound (runs alone failed at %s)", searched, strings.Join(failed, ", "))
		}
	default:
		return
	}
	if ev := t.evidence(at); ev.Runs > 0 {
		res.AtFound = &ev
	}
	if ev := t.evidence(at - 1); at > 0 && ev.Runs > 0 {
		res.Below = &ev
	}
}

func (t *tuner) note(format string, a ...any) {
	if t.res.Note != "" {
		t.res.Note += "; "
	}
	t.res.Note += fmt.Sprintf(format, a...)
}
