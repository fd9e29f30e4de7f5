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
	rn := run{endReason: EndDuration}
	var reqs []Request
	for i, r := range results {
		if r == nil {
			return nil, errors.New("merge: a nil result")
		}
		if i == 0 || r.Started.Before(rn.started) {
			rn.started = r.Started
		}
		if r.Ended.After(rn.ended) {
			rn.ended = r.Ended
		}
		switch r.EndReason {
		case EndCanceled:
			rn.endReason = EndCanceled
		case EndStopped:
			if rn.endReason == EndDuration {
				rn.endReason = EndStopped
			}
		}
		if end := r.Started.Add(r.Window); r.EndReason != EndDuration && end.After(rn.stopAt) {
			rn.stopAt = end
		}
		reqs = append(reqs, r.Requests...)
		rn.shares = append(rn.shares, share{started: r.Started, rate: r.Config.Rate})
	}
	if rn.endReason == EndDuration {
		rn.stopAt = time.Time{}
	}
	// One sending order for all: by timestamp, then by each attack's own order.
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.Seq, b.Seq)) })
	for i := range reqs {
		reqs[i].Seq = uint64(i)
	}
	out := aggregate(cfg, rn, reqs)
	for _, r := range results {
		if len(r.DNS) > 0 { // every pod asked the same server: the first one's answers stand
			out.DNS = r.DNS
			break
		}
	}
	return out, nil
}
