package stats

import (
	"math"
	"testing"
)

// TestStudentTTable checks the quantiles against a printed table of Student's t (the upper
// 0.005, 0.025 and 0.05 points, as every statistics textbook prints them, to 3 decimals) and
// the normal quantile it tends to.
func TestStudentTTable(t *testing.T) {
	for _, c := range []struct {
		p, df, want float64
	}{
		{0.995, 1, 63.657}, {0.995, 2, 9.925}, {0.995, 3, 5.841}, {0.995, 4, 4.604}, {0.995, 5, 4.032},
		{0.995, 6, 3.707}, {0.995, 9, 3.250}, {0.995, 10, 3.169}, {0.995, 19, 2.861}, {0.995, 29, 2.756},
		{0.995, 120, 2.617}, {0.975, 5, 2.571}, {0.975, 30, 2.042}, {0.95, 5, 2.015}, {0.95, 1, 6.314},
		{0.995, 1e9, 2.576}, {0.975, 1e9, 1.960},
	} {
		if got := StudentT(c.p, c.df); math.Abs(got-c.want) > 0.0006 {
			t.Errorf("StudentT(%v, %v) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
}

// TestStudentTShape checks symmetry, the median, the round trip through the CDF, monotony and
// the refused arguments.
func TestStudentTShape(t *testing.T) {
	if got := StudentT(0.5, 7); got != 0 {
		t.Errorf("StudentT(0.5, 7) = %v, want 0", got)
	}
	for _, df := range []float64{1, 2.5, 5, 40} {
		prev := math.Inf(-1)
		for _, p := range []float64{0.001, 0.01, 0.2, 0.6, 0.9, 0.995, 0.9999} {
			q := StudentT(p, df)
			if math.Abs(StudentT(1-p, df)+q) > 1e-9*math.Max(1, math.Abs(q)) {
				t.Errorf("StudentT(%v, %v) = %v is not -StudentT(%v)", p, df, q, 1-p)
			}
			if back := StudentTCDF(q, df); math.Abs(back-p) > 1e-9 {
				t.Errorf("StudentTCDF(StudentT(%v, %v)) = %v", p, df, back)
			}
			if q <= prev {
				t.Errorf("StudentT(·, %v) not increasing at p %v: %v after %v", df, p, q, prev)
			}
			prev = q
		}
	}
	for _, c := range [][2]float64{{0, 5}, {1, 5}, {0.9, 0}, {-0.1, 3}, {math.NaN(), 3}} {
		if got := StudentT(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("StudentT(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
	// More degrees of freedom, a thinner tail: the quantile falls towards the normal's.
	if !(StudentT(0.995, 4) > StudentT(0.995, 5) && StudentT(0.995, 5) > StudentT(0.995, 30)) {
		t.Error("StudentT(0.995, df) does not fall with df")
	}
}
