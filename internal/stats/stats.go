package stats

import (
	"math"
)

// Z95 is the standard normal quantile for a two-sided 95 % interval.
const Z95 = 1.959964

// Interval is a confidence interval for a ratio, Lo <= Hi, both within [0, 1].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Wilson returns the 95 % interval for the failure ratio k/n: the Wilson score interval
// (z = Z95) when k > 0. When k = 0 the Wilson upper bound is too optimistic for small n, so the
// interval is [0, 1 - 0.05^(1/n)] instead: the exact (Clopper-Pearson) one-sided 95 % upper
// bound, close to the "rule of three" 3/n. With n = 0 nothing is known: [0, 1]. k is clamped
// to [0, n].
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = min(max(k, 0), n)
	nf := float64(n)
	if k == 0 {
		return Interval{0, 1 - math.Pow(0.05, 1/nf)}
	}
	p := float64(k) / nf
	z2 := Z95 * Z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := Z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi := max(center-half, 0), min(center+half, 1)
	if k == n {
		hi = 1
	}
	return Interval{lo, hi}
}

// FisherExact returns the two-sided p-value of Fisher's exact test for the 2x2 table
//
//	         failed  succeeded
//	base     a       b
//	new      c       d
//
// : the sum of the probabilities, under the hypergeometric distribution with the table's
// margins, of every table no more probable than the one observed (with a relative tolerance of
// 1e-7, as R's fisher.test uses, so that ties rounded differently still count). The
// probabilities are computed from log-factorials (math.Lgamma), so that tables of hundreds of
// thousands of requests work (to a relative precision of about 1e-9 at that size); the work is
// linear in the smaller margin. Negative counts are
// taken as 0. A table with an empty row or column gives 1.
func FisherExact(a, b, c, d int) float64 {
	a, b, c, d = max(a, 0), max(b, 0), max(c, 0), max(d, 0)
	r1, r2 := a+b, c+d // row totals: base, new
	c1 := a + c        // column total: failures
	n := r1 + r2
	if r1 == 0 || r2 == 0 || c1 == 0 || c1 == n {
		return 1
	}
	lo, hi := max(0, c1-r2), min(r1, c1)
	// log P(X = x) for X the base failures, up to the constant -log C(n, c1), which cancels
	// when the probabilities are normalised below.
	logp := func(x int) float64 { return logChoose(r1, x) + logChoose(r2, c1-x) }
	lobs := logp(a)
	// Sum relative to the most probable table, so that no term underflows to nothing while the
	// observed one matters.
	lmax := math.Inf(-1)
	for x := lo; x <= hi; x++ {
		lmax = max(lmax, logp(x))
	}
	const tol = 1e-7
	var total, tail float64
	for x := lo; x <= hi; x++ {
		l := logp(x)
		w := math.Exp(l - lmax)
		total += w
		if l <= lobs+math.Log1p(tol) {
			tail += w
		}
	}
	return min(tail/total, 1)
}

// ClopperPearsonUpper is the exact (Clopper-Pearson) one-sided upper bound, at confidence, on
// the probability of an event seen k times in n independent trials: the p at which k or fewer
// events have probability 1 − confidence. With k = 0 it is 1 − (1−confidence)^(1/n); it is 1 with
// no trial, or when every trial saw the event.
func ClopperPearsonUpper(k, n int, confidence float64) float64 {
	alpha := 1 - confidence
	switch {
	case n <= 0 || k >= n:
		return 1
	case k <= 0:
		return 1 - math.Pow(alpha, 1/float64(n))
	}
	// BinomialCDF falls as p grows: bisect for BinomialCDF(k, n, p) = alpha.
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if BinomialCDF(k, n, mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// BinomialCDF is P(X ≤ k) for X ~ Binomial(n, p), 0 < p < 1.
func BinomialCDF(k, n int, p float64) float64 {
	lp, lq := math.Log(p), math.Log1p(-p)
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) + float64(i)*lp + float64(n-i)*lq)
	}
	return min(sum, 1)
}

// logChoose is log C(n, k) from log-gamma.
func logChoose(n, k int) float64 {
	return lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}
