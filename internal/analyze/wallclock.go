package analyze

import (
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// wallClock returns in with every time as a row records it: the wall clock alone. A time taken
// in the process that ran the row also carries a monotonic reading, which Sub and the
// comparisons prefer and which no file keeps: a live row's windows and terminations would come
// out some nanoseconds from its replay's (enough to tip a rounding to the whole second), so the
// analysis reads the wall clock only. in's slices are copied, never changed.
func wallClock(in Input) Input {
	if in.Load != nil {
		l := *in.Load
		wall(&l.Started, &l.Ended)
		l.Requests = walls(l.Requests, func(q *loadgen.Request) { wall(&q.Timestamp) })
		l.DNS = walls(l.DNS, func(a *loadgen.DNSAnswer) { wall(&a.Time) })
		l.Bursts = walls(l.Bursts, func(b *loadgen.Burst) { wall(&b.First, &b.Last) })
		l.Stalls = walls(l.Stalls, func(s *loadgen.Stall) { wall(&s.From, &s.To) })
		in.Load = &l
	}
	tl := &in.Timeline
	wall(&tl.Started, &tl.Ended)
	tl.Events = walls(tl.Events, func(e *timeline.Event) { wall(&e.Time, &e.Reported) })
	tl.Propagation = walls(tl.Propagation, func(p *timeline.Propagation) { wall(&p.DeletingAt) })
	tl.Gaps = walls(tl.Gaps, func(g *timeline.Gap) { wall(&g.From, &g.To) })
	in.Disruptions = walls(in.Disruptions, func(d *check.DisruptionResult) {
		wall(&d.Started, &d.Complete, &d.Settled, &d.KubeletRestarted, &d.KubeletBack)
		if d.Drain != nil {
			dr := *d.Drain
			wall(&dr.Drained, &dr.Uncordoned, &dr.ReplacementsReady)
			d.Drain = &dr
		}
	})
	return in
}

// wall drops the monotonic reading of each time.
func wall(ts ...*time.Time) {
	for _, t := range ts {
		*t = t.Round(0)
	}
}

// walls is a copy of s with each element's times as set reads them (set calls wall).
func walls[T any](s []T, set func(*T)) []T {
	s = slices.Clone(s)
	for i := range s {
		set(&s[i])
	}
	return s
}
