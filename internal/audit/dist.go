package audit

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// dist is a window's empirical distribution: weighted points (a sample each, or a histogram
// bucket's observations at its middle). The zero dist holds nothing: only the p99 is known.
type dist struct {
	pts []point
}

type point struct {
	d time.Duration
	w float64
}

// samplesDist is the distribution of measured samples, each weighing the same.
func samplesDist(s []Duration) dist {
	var d dist
	for _, x := range s {
		d.pts = append(d.pts, point{x.D(), 1})
	}
	return d
}

// constDist is a window known as one value (an assumed or a configured length).
func constDist(x time.Duration) dist { return dist{pts: []point{{x, 1}}} }

// bucketsDist is the distribution of a cumulative histogram of n observations: each bucket's
// observations at its middle (the first bucket's from 0), those above the last bound at it.
func bucketsDist(bs []Bucket, n int) dist {
	var d dist
	lo, below := time.Duration(0), 0
	for _, b := range bs {
		if c := b.Count - below; c > 0 {
			d.pts = append(d.pts, point{lo + (b.LE.D()-lo)/2, float64(c)})
		}
		lo, below = b.LE.D(), b.Count
	}
	if c := n - below; c > 0 && len(bs) > 0 {
		d.pts = append(d.pts, point{lo, float64(c)})
	}
	return d
}

// known tells whether d holds a distribution.
func (d dist) known() bool { return len(d.pts) > 0 }

// plus is the distribution of the sum of a window of d and an independent one of o (a control
// plane's samples and kube-proxy's programming histogram).
func (d dist) plus(o dist) dist {
	if !d.known() || !o.known() {
		return dist{}
	}
	out := dist{pts: make([]point, 0, len(d.pts)*len(o.pts))}
	for _, a := range d.pts {
		for _, b := range o.pts {
			out.pts = append(out.pts, point{a.d + b.d, a.w * b.w})
		}
	}
	return out
}

// mean is the expected value of f(window) over d.
func (d dist) mean(f func(time.Duration) time.Duration) time.Duration {
	var sum, total float64
	for _, p := range d.pts {
		sum += p.w * float64(f(p.d))
		total += p.w
	}
	if total == 0 {
		return 0
	}
	return time.Duration(math.Round(sum / total))
}

// quantile is the q-quantile of d (the smallest point with at least q of the weight at or
// below it).
func (d dist) quantile(q float64) time.Duration {
	pts := slices.Clone(d.pts)
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.d, b.d) })
	var total float64
	for _, p := range pts {
		total += p.w
	}
	acc := 0.0
	for _, p := range pts {
		acc += p.w
		if acc >= q*total {
			return p.d
		}
	}
	return 0
}
