package loadgen

import (
	"cmp"
	"errors"
	"slices"
	"time"
)

// Merge is the Result of several attacks run at once against one target, each at its share of
// the rate (a row's load pods): their ledgers in one, renumbered in sending order, with the
// timeline, the bursts and the validity judged against cfg, the whole load (Rate the sum of the
// shares, Duration the bound they shared). It started when the first did and ended when the last
// did; it was stopped (or cancelled) when any of them was, and its window is the longest one.
// The attacks need not start together: each is owed its own rate from its own start, so a load
// pod that started a few seconds after the first costs the merged rate nothing.
func Merge(cfg Config, results ...*Result) (*Result, error) {
	if len(results) == 0 {
		return nil, errors.New("merge: no results")
	}
	cfg = cfg.WithDefaults()
	rn := Run{EndReason: EndDuration}
	var reqs []Request
	var shares []share
	for i, r := range results {
		if r == nil {
			return nil, errors.New("merge: a nil result")
		}
		if i == 0 || r.Started.Before(rn.Started) {
			rn.Started = r.Started
		}
		if r.Ended.After(rn.Ended) {
			rn.Ended = r.Ended
		}
		switch r.EndReason {
		case EndCanceled:
			rn.EndReason = EndCanceled
		case EndStopped:
			if rn.EndReason == EndDuration {
				rn.EndReason = EndStopped
			}
		}
		if end := r.Started.Add(r.Window); r.EndReason != EndDuration && end.After(rn.StopAt) {
			rn.StopAt = end
		}
		reqs = append(reqs, r.Requests...)
		shares = append(shares, share{started: r.Started, rate: r.Config.Rate})
	}
	if rn.EndReason == EndDuration {
		rn.StopAt = time.Time{}
	}
	// One sending order for all: by timestamp, then by each attack's own order.
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.Seq, b.Seq)) })
	for i := range reqs {
		reqs[i].Seq = uint64(i)
	}
	out := aggregate(cfg, rn, shares, reqs)
	out.shareStalls(results)
	for _, r := range results {
		if len(r.DNS) > 0 { // every pod asked the same server: the first one's answers stand
			out.DNS = r.DNS
			break
		}
	}
	return out, nil
}

// shareStalls adds to a merged result the stalls of each attack on its own: one attack that
// stalled (its pod frozen, starved or lost) while the others sent leaves no gap in the merged
// ledger, yet the failures in flight across its stall are the harness's. Each attack is judged
// against its own stalls, an attack that ended before the others (a lost pod) with its silence
// until the merged end as one; StallFailed is the larger of the merged ledger's count and the
// attacks' summed (a gap of the merged ledger is a gap of every attack).
func (r *Result) shareStalls(results []*Result) {
	end := r.Started.Add(r.Window)
	sum := 0
	for _, sh := range results {
		cp := *sh
		if sh.EndReason != EndDuration && end.After(sh.Started.Add(sh.Window)) {
			cp.Window = end.Sub(sh.Started)
		}
		cp.judge(nil)
		sum += cp.StallFailed
		for _, st := range cp.Stalls {
			if !slices.Contains(r.Stalls, st) {
				r.Stalls = append(r.Stalls, st)
			}
		}
	}
	r.StallFailed = max(r.StallFailed, sum)
}
