package stats

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

// TestWilsonNewcombe checks the Wilson interval against the values published in Newcombe,
// "Two-sided confidence intervals for the single proportion: comparison of seven methods",
// Statistics in Medicine 17 (1998), table II (method 3, Wilson score without continuity
// correction), to the 4 decimals printed there.
func TestWilsonNewcombe(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{1, 29, 0.0061, 0.1718},
	} {
		got := Wilson(c.k, c.n)
		if math.Abs(got.Lo-c.lo) > 5e-5 || math.Abs(got.Hi-c.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.4f, %.4f]", c.k, c.n, got.Lo, got.Hi, c.lo, c.hi)
		}
	}
}

// TestWilsonEdges checks k = 0 (the exact one-sided bound), k = n, n = 0 and clamping.
func TestWilsonEdges(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want Interval
	}{
		// 1 - 0.05^(1/n), computed independently (Python: 1-0.05**(1/n)).
		{0, 1100, Interval{0, 0.0027196879055249035}},
		{0, 20, Interval{0, 0.13910834066826516}},
		{0, 100000, Interval{0, 2.995687401941005e-05}},
		{0, 1, Interval{0, 0.95}},
		{0, 0, Interval{0, 1}},
		{3, 0, Interval{0, 1}},
		{-1, 20, Interval{0, 0.13910834066826516}},
	} {
		got := Wilson(c.k, c.n)
		if math.Abs(got.Lo-c.want.Lo) > 1e-12 || math.Abs(got.Hi-c.want.Hi) > 1e-12 {
			t.Errorf("Wilson(%d, %d) = %+v, want %+v", c.k, c.n, got, c.want)
		}
	}
	// All failed: the upper bound is 1; more failures than trials count as n.
	for _, n := range []int{1, 7, 1100} {
		all := Wilson(n, n)
		if all.Hi != 1 {
			t.Errorf("Wilson(%d, %d).Hi = %v, want 1", n, n, all.Hi)
		}
		if over := Wilson(n+5, n); over != all {
			t.Errorf("Wilson(%d, %d) = %+v, want it clamped to Wilson(%d, %d) = %+v", n+5, n, over, n, n, all)
		}
	}
	// Symmetry of the score interval: Wilson(k, n) mirrors Wilson(n-k, n) for 0 < k < n.
	a, b := Wilson(40, 1100), Wilson(1060, 1100)
	if math.Abs(a.Lo-(1-b.Hi)) > 1e-12 || math.Abs(a.Hi-(1-b.Lo)) > 1e-12 {
		t.Errorf("Wilson(40, 1100) = %+v does not mirror Wilson(1060, 1100) = %+v", a, b)
	}
}

// TestWilsonContainsRatio checks that the interval holds k/n and narrows as n grows.
func TestWilsonContainsRatio(t *testing.T) {
	prev := 1.0
	for _, n := range []int{10, 100, 1000, 10000, 100000} {
		k := n / 10
		iv := Wilson(k, n)
		p := float64(k) / float64(n)
		if !(iv.Lo < p && p < iv.Hi) {
			t.Errorf("Wilson(%d, %d) = %+v does not hold %v", k, n, iv, p)
		}
		if w := iv.Hi - iv.Lo; w >= prev {
			t.Errorf("Wilson(%d, %d) width %v, not narrower than %v", k, n, w, prev)
		} else {
			prev = w
		}
	}
}

// TestFisherExactKnown checks p-values known from the literature and from an exact
// computation with rational arithmetic (Python's fractions and math.comb, the same rule as
// fisherBrute below).
func TestFisherExactKnown(t *testing.T) {
	for _, c := range []struct {
		name       string
		a, b, c, d int
		want       float64
	}{
		// Fisher's lady tasting tea: p = 34/70.
		{"tea", 3, 1, 1, 3, 0.4857142857142857},
		// The example of Wikipedia's "Fisher's exact test" article: p ≈ 0.002759.
		{"wikipedia", 1, 9, 11, 3, 0.0027594561852200836},
		{"0/1100 vs 40/1100", 0, 1100, 40, 1060, 1.2677370252182972e-12},
		{"3/1100 vs 4/1100", 3, 1097, 4, 1096, 1},
		{"0/100000 vs 10/100000", 0, 100000, 10, 99990, 0.0019526855754392882},
		{"10/100000 vs 25/100000", 10, 99990, 25, 99975, 0.016664498864149436},
		{"no failures", 0, 5, 0, 5, 1},
		{"all failed", 5, 0, 7, 0, 1},
		{"empty base", 0, 0, 3, 10, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FisherExact(c.a, c.b, c.c, c.d)
			if !close(got, c.want, 1e-9) {
				t.Errorf("FisherExact(%d, %d, %d, %d) = %.17g, want %.17g", c.a, c.b, c.c, c.d, got, c.want)
			}
		})
	}
}

// TestFisherExactBrute compares FisherExact with an exact brute-force sum over every table
// with the same margins, in rational arithmetic, for many small tables and a few large ones.
func TestFisherExactBrute(t *testing.T) {
	var tables [][4]int
	for a := 0; a <= 6; a++ {
		for b := 0; b <= 6; b++ {
			for c := 0; c <= 6; c++ {
				for d := 0; d <= 6; d++ {
					tables = append(tables, [4]int{a, b, c, d})
				}
			}
		}
	}
	tables = append(tables,
		[4]int{2, 1098, 9, 1091},
		[4]int{17, 2183, 31, 2169},
		[4]int{0, 3300, 5, 3295},
		[4]int{120, 99880, 160, 99840},
		[4]int{5, 99995, 0, 100000},
	)
	for _, tb := range tables {
		got := FisherExact(tb[0], tb[1], tb[2], tb[3])
		want := fisherBrute(tb[0], tb[1], tb[2], tb[3])
		if !close(got, want, 1e-9) {
			t.Errorf("FisherExact%v = %.17g, brute force %.17g", tb, got, want)
		}
	}
}

// TestFisherExactSymmetry checks that swapping base and new, or failures and successes,
// leaves the p-value unchanged (to the precision of log-gamma at these sizes, about 1e-10).
func TestFisherExactSymmetry(t *testing.T) {
	for _, tb := range [][4]int{{3, 1, 1, 3}, {0, 1100, 40, 1060}, {10, 99990, 25, 99975}, {1, 9, 11, 3}} {
		a, b, c, d := tb[0], tb[1], tb[2], tb[3]
		p := FisherExact(a, b, c, d)
		for _, q := range []float64{FisherExact(c, d, a, b), FisherExact(b, a, d, c)} {
			if !close(p, q, 1e-9) {
				t.Errorf("FisherExact%v = %v, but %v with rows or columns swapped", tb, p, q)
			}
		}
	}
}

// fisherBrute is the two-sided Fisher p-value in exact rational arithmetic: the probability
// of every table with the margins of the observed one whose probability is at most the
// observed one's (times 1 + 1e-7).
func fisherBrute(a, b, c, d int) float64 {
	r1, r2, c1 := a+b, c+d, a+c
	n := r1 + r2
	if r1 == 0 || r2 == 0 || c1 == 0 || c1 == n {
		return 1
	}
	den := new(big.Int).Binomial(int64(n), int64(c1))
	prob := func(x int) *big.Rat {
		num := new(big.Int).Mul(new(big.Int).Binomial(int64(r1), int64(x)), new(big.Int).Binomial(int64(r2), int64(c1-x)))
		return new(big.Rat).SetFrac(num, den)
	}
	limit := new(big.Rat).Mul(prob(a), big.NewRat(10_000_001, 10_000_000))
	sum := new(big.Rat)
	for x := max(0, c1-r2); x <= min(r1, c1); x++ {
		if p := prob(x); p.Cmp(limit) <= 0 {
			sum.Add(sum, p)
		}
	}
	f, _ := sum.Float64()
	return f
}

// close reports whether got is within rel of want, relatively (absolutely near zero).
func close(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300)
}

// BenchmarkFisherExact100k is a table of 100 000 requests on each side.
func BenchmarkFisherExact100k(b *testing.B) {
	for b.Loop() {
		FisherExact(120, 99880, 160, 99840)
	}
}

func ExampleWilson() {
	iv := Wilson(40, 1100)
	fmt.Printf("40 of 1100 failed: %.2f%% [%.2f%%, %.2f%%]\n", 100*40/1100.0, 100*iv.Lo, 100*iv.Hi)
	iv = Wilson(0, 1100)
	fmt.Printf("none of 1100 failed: at most %.2f%%\n", 100*iv.Hi)
	// Output:
	// 40 of 1100 failed: 3.64% [2.68%, 4.91%]
	// none of 1100 failed: at most 0.27%
}

func ExampleFisherExact() {
	// Base: 3 of 1100 requests failed; new: 40 of 1100. (Exact rational arithmetic gives
	// 2.216e-09 too.)
	p := FisherExact(3, 1097, 40, 1060)
	fmt.Printf("p = %.2g\n", p)
	// Output:
	// p = 2.2e-09
}
