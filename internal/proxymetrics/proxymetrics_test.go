package proxymetrics

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata are written after kube-proxy v1.34's /metrics, not captured from a
// cluster: the bucket layout of Metric is kube-proxy's own (k8s.io/kubernetes v1.34.3,
// pkg/proxy/metrics: 0.25 s, 0.5 s, 1 to 59 s by 1 s, 60 to 115 s by 5 s, 120 to 300 s by 30 s),
// series by ip_family, among other families of the kinds kube-proxy exposes (summary, counters,
// gauges, another histogram). Their counts:
//
//	ipv4:               le 0.25: 4, 0.5: 9, 1: 17, 2: 19, 3 to +Inf: 20; sum 11.42
//	dualstack IPv4:     le 0.25: 2, 0.5: 6, 1: 10, 2 to 60: 12, 65 to +Inf: 13; sum 68.51
//	dualstack IPv6:     le 0.25: 1, 0.5: 3, 1 to +Inf: 5; sum 2.04
//	fresh:              no Metric at all (kube-proxy has programmed no change yet)
const (
	fixtureIPv4      = "testdata/kube-proxy-v1.34-ipv4.metrics"
	fixtureDualStack = "testdata/kube-proxy-v1.34-dualstack.metrics"
	fixtureFresh     = "testdata/kube-proxy-v1.34-fresh.metrics"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseFile(t *testing.T, path string) Histogram {
	t.Helper()
	h, err := Parse(strings.NewReader(read(t, path)))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return h
}

// count returns the cumulative count of the bucket with bound le.
func count(t *testing.T, h Histogram, le float64) uint64 {
	t.Helper()
	for _, b := range h.Buckets {
		if b.UpperBound == le {
			return b.Count
		}
	}
	t.Fatalf("no bucket le=%g in %s", le, bounds(h.Buckets))
	return 0
}

func checkCounts(t *testing.T, h Histogram, count_ uint64, sum float64, want map[float64]uint64) {
	t.Helper()
	if h.Count != count_ || math.Abs(h.Sum-sum) > 1e-9 {
		t.Errorf("count %d sum %g, want %d and %g", h.Count, h.Sum, count_, sum)
	}
	for le, n := range want {
		if got := count(t, h, le); got != n {
			t.Errorf("bucket le=%g: %d, want %d", le, got, n)
		}
	}
}

func TestParseKubeProxyV134(t *testing.T) {
	h := parseFile(t, fixtureIPv4)
	if len(h.Buckets) != 81 || h.Buckets[0].UpperBound != 0.25 || h.Buckets[79].UpperBound != 300 || !math.IsInf(h.Buckets[80].UpperBound, 1) {
		t.Fatalf("buckets %s, want kube-proxy's 80 and +Inf, 0.25 to 300", bounds(h.Buckets))
	}
	checkCounts(t, h, 20, 11.42, map[float64]uint64{0.25: 4, 0.5: 9, 1: 17, 2: 19, 3: 20, 300: 20, math.Inf(1): 20})
	if h.Sources != nil {
		t.Errorf("Parse set Sources %v", h.Sources)
	}
}

func TestParseSumsIPFamilies(t *testing.T) {
	h := parseFile(t, fixtureDualStack)
	checkCounts(t, h, 18, 70.55, map[float64]uint64{0.25: 3, 0.5: 9, 1: 15, 2: 17, 60: 17, 65: 18, math.Inf(1): 18})
}

// Before kube-proxy has programmed any change it exposes no series of Metric, only its other
// metrics: that is no observation, not an error.
func TestParseBeforeAnyChange(t *testing.T) {
	h := parseFile(t, fixtureFresh)
	if h.Count != 0 || len(h.Buckets) != 0 {
		t.Fatalf("got %+v, want the zero Histogram", h)
	}
}

func TestParseRejects(t *testing.T) {
	const help = "# TYPE " + Metric + " histogram\n"
	cases := map[string]struct{ body, want string }{
		"not kube-proxy": {"# TYPE go_goroutines gauge\ngo_goroutines 48\n", "not kube-proxy's"},
		"not metrics":    {"<html>404 page not found</html>\n", "parse metrics"},
		"a gauge":        {"# TYPE " + Metric + " gauge\n" + Metric + " 3\n", "want a histogram"},
		"no +Inf":        {help + Metric + `_bucket{le="1"} 1` + "\n" + Metric + "_count 1\n", "no +Inf bucket"},
		"two layouts": {help +
			Metric + `_bucket{ip_family="IPv4",le="1"} 1` + "\n" + Metric + `_bucket{ip_family="IPv4",le="+Inf"} 1` + "\n" + Metric + `_count{ip_family="IPv4"} 1` + "\n" +
			Metric + `_bucket{ip_family="IPv6",le="2"} 1` + "\n" + Metric + `_bucket{ip_family="IPv6",le="+Inf"} 1` + "\n" + Metric + `_count{ip_family="IPv6"} 1` + "\n",
			`ip_family="IPv6"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// hist builds a Histogram on bounds 0.25, 0.5, 1, 2, +Inf from per-bucket (not cumulative)
// counts.
func hist(sum float64, perBucket ...uint64) Histogram {
	h := Histogram{Sum: sum}
	for i, le := range []float64{0.25, 0.5, 1, 2, math.Inf(1)} {
		if i < len(perBucket) {
			h.Count += perBucket[i]
		}
		h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: h.Count})
	}
	return h
}

func TestSub(t *testing.T) {
	earlier, later := hist(1.5, 2, 1), hist(6, 3, 4, 2)
	src := []Source{{Pod: "kube-proxy-a"}, {Pod: "kube-proxy-b", Restarts: 1}}
	earlier.Sources, later.Sources = src, src
	d, err := later.Sub(earlier)
	if err != nil {
		t.Fatal(err)
	}
	want := hist(4.5, 1, 3, 2)
	want.Sources = src
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Sub: %+v, want %+v", d, want)
	}
	if d, err := later.Sub(Histogram{Sources: src}); err != nil || !reflect.DeepEqual(d, later) {
		t.Fatalf("Sub of an empty reading: %+v, %v; want the later reading itself", d, err)
	}
	if d, err := later.Sub(later); err != nil || d.Count != 0 || d.Sum != 0 {
		t.Fatalf("Sub of itself: %+v, %v; want no observation", d, err)
	}

	restarted := hist(0.2, 1)
	restarted.Sources = src
	moved := later.copy()
	moved.Sources = []Source{{Pod: "kube-proxy-a"}, {Pod: "kube-proxy-b", Restarts: 2}}
	otherLayout := later.copy()
	otherLayout.Buckets[1].UpperBound = 0.4
	for name, c := range map[string]struct {
		later Histogram
		want  string
	}{
		"counts went down":  {restarted, "went down"},
		"a restart counted": {moved, "kube-proxy-b (2 restarts)"},
		"other buckets":     {otherLayout, "buckets differ"},
	} {
		if _, err := c.later.Sub(later); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
	if later.Buckets[0].Count != 3 || earlier.Buckets[1].Count != 3 {
		t.Fatal("Sub changed its operands")
	}
}

func TestQuantile(t *testing.T) {
	h := hist(0, 0, 4, 4, 2) // 0 in (0, 0.25], 4 in (0.25, 0.5], 4 in (0.5, 1], 2 in (1, 2]
	for _, c := range []struct{ q, want float64 }{
		{0, 0.25},       // the lower bound of the first non-empty bucket
		{0.2, 0.375},    // rank 2 of 4 in (0.25, 0.5]
		{0.5, 0.625},    // rank 1 of 4 in (0.5, 1]
		{0.8, 1},        // rank 8: the top of (0.5, 1]
		{0.9, 1.5},      // rank 1 of 2 in (1, 2]
		{1, 2},          // the top of the highest non-empty bucket
		{0.05, 0.28125}, // rank 0.5 of 4 in (0.25, 0.5]
	} {
		if got, ok := h.Quantile(c.q); !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%g) = %g, %v; want %g", c.q, got, ok, c.want)
		}
	}
	inf := hist(0, 1, 0, 0, 0, 9) // 9 of 10 above the highest finite bound
	if got, ok := inf.Quantile(0.5); !ok || got != 2 {
		t.Errorf("a rank in +Inf: %g, %v; want the highest finite bound 2", got, ok)
	}
	if got, ok := inf.Quantile(0.05); !ok || got != 0.125 {
		t.Errorf("a rank in the first bucket: %g, %v; want 0.125 (it starts at 0)", got, ok)
	}
	for name, c := range map[string]struct {
		h Histogram
		q float64
	}{
		"no observation": {hist(0), 0.5},
		"zero Histogram": {Histogram{}, 0.5},
		"q below 0":      {h, -0.1},
		"q above 1":      {h, 1.1},
		"q NaN":          {h, math.NaN()},
	} {
		if got, ok := c.h.Quantile(c.q); ok {
			t.Errorf("%s: Quantile(%g) = %g, true; want false", name, c.q, got)
		}
	}
}

func TestSummary(t *testing.T) {
	s := hist(5, 0, 4, 4, 2).Summary()
	want := Summary{Count: 10, P50: 625 * time.Millisecond, P99: 1950 * time.Millisecond, Max: 2 * time.Second, Mean: 500 * time.Millisecond}
	if s != want {
		t.Fatalf("Summary %+v, want %+v", s, want)
	}
	s = hist(12, 2, 0, 0, 0, 1).Summary()
	want = Summary{Count: 3, P50: 187500 * time.Microsecond, P99: 2 * time.Second, Max: 2 * time.Second, Overflow: 1, Mean: 4 * time.Second}
	if s != want {
		t.Fatalf("Summary with an observation above every bound %+v, want %+v", s, want)
	}
	if s = (Histogram{}).Summary(); s != (Summary{}) {
		t.Fatalf("Summary of nothing %+v, want zero", s)
	}
	b, err := json.Marshal(s)
	if err != nil || string(b) != `{"count":0,"p50":0,"p99":0,"max":0,"mean":0}` {
		t.Fatalf("JSON %s, %v", b, err)
	}
}
