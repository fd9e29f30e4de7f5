package stats

import "math"

// StudentT returns the quantile of Student's t distribution with df degrees of freedom at
// probability p: the t with P(T <= t) = p (StudentT(0.995, 5) is 4.032). It inverts StudentTCDF
// by bisection to a relative precision of about 1e-12. p must be in (0, 1) and df positive;
// otherwise it returns NaN.
func StudentT(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p < 0.5 {
		return -StudentT(1-p, df)
	}
	if p == 0.5 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// StudentTCDF returns P(T <= t) for Student's t distribution with df degrees of freedom, from
// the regularized incomplete beta function: P(|T| > |t|) = I_x(df/2, 1/2) with x = df/(df+t²).
func StudentTCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	tail := incBeta(df/(df+t*t), df/2, 0.5) / 2 // P(T > |t|)
	if t < 0 {
		return tail
	}
	return 1 - tail
}

// incBeta is the regularized incomplete beta function I_x(a, b) for x in [0, 1], a, b > 0: the
// continued fraction (modified Lentz's method), on the side of x where it converges quickly,
// as in Numerical Recipes' betai.
func incBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF is the continued fraction of the incomplete beta function (modified Lentz's method).
func betaCF(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/nonzero(1-(a+b)*x/(a+1))
	h := d
	// next takes the next term num of the fraction and returns the factor it changes h by.
	next := func(num float64) float64 {
		d = 1 / nonzero(1+num*d)
		c = nonzero(1 + num/c)
		return d * c
	}
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		h *= next(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))              // the even term
		del := next(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))) // the odd term
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
