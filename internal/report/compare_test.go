package report

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
)

// compareRuns are a base and a new run: "worse" goes from 0 to 40 failures of 1100 (a
// significant regression), "same" from 3 to 4 (no significant change), "better" from 40 to 0
// over three runs each (a significant improvement, from flaky to pass), "rated" changes its rate (a mismatch),
// "gone" is only in base and "fresh" only in new.
func compareRuns() (base, next Run) {
	worse := statsConfig("worse", check.RolloutRestart)
	same := statsConfig("same", check.DeletePod)
	better := statsConfig("better", check.ScaleDown)
	rated := statsConfig("rated", check.RolloutRestart)
	rated2 := rated
	rated2.Rate = 200
	gone := statsConfig("gone", check.ForceDelete)
	fresh := statsConfig("fresh", check.ForceDelete)
	base = NewRun([]Row{
		statsRun("s", worse, 0, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", same, 0, 1100, [2]int{3, 0}, check.Fail),
		statsRun("s", better, 1, 1100, [2]int{10, 5}, check.Fail),
		statsRun("s", better, 2, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", better, 3, 1100, [2]int{20, 5}, check.Fail),
		statsRun("s", rated, 0, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", gone, 0, 1100, [2]int{0, 0}, check.Pass),
	})
	next = NewRun([]Row{
		statsRun("s", fresh, 0, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", worse, 0, 1100, [2]int{30, 10}, check.Fail),
		statsRun("s", same, 0, 1100, [2]int{2, 2}, check.Fail),
		statsRun("s", better, 1, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", better, 2, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", better, 3, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", rated2, 0, 2200, [2]int{0, 0}, check.Pass),
	})
	return base, next
}

func TestCompare(t *testing.T) {
	base, next := compareRuns()
	c, err := Compare(base, next, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 3 {
		t.Fatalf("compared %d rows, want 3: %+v", len(c.Rows), c.Rows)
	}
	worse, same, better := c.Rows[0], c.Rows[1], c.Rows[2]
	if worse.Key.Name != "worse" || same.Key.Name != "same" || better.Key.Name != "better" {
		t.Fatalf("rows %s, %s, %s: want the base's order", worse.Key, same.Key, better.Key)
	}
	// Exact values: Python's fractions over every table with the same margins.
	if !worse.Regression || worse.Improvement || !near(worse.P, 1.2677370252182972e-12) || !near(worse.Diff, 40.0/1100) {
		t.Errorf("worse = %+v, want a significant regression, p 1.27e-12", worse)
	}
	if same.Regression || same.Improvement || same.P != 1 {
		t.Errorf("same = %+v, want no significant change, p 1", same)
	}
	if want := stats.FisherExact(40, 3260, 0, 3300); better.Regression || !better.Improvement || better.P != want ||
		better.Base.Runs != 3 || better.Base.Failures != 40 {
		t.Errorf("better = %+v, want a significant improvement over 3 runs, p %v", better, want)
	}
	if c.Regressions() != 1 || c.Improvements() != 1 {
		t.Errorf("%d regressions, %d improvements; want 1 and 1", c.Regressions(), c.Improvements())
	}
	if len(c.Added) != 1 || c.Added[0].Key.Name != "fresh" || len(c.Removed) != 1 || c.Removed[0].Key.Name != "gone" {
		t.Errorf("added %+v, removed %+v; want fresh and gone", c.Added, c.Removed)
	}
	if len(c.Mismatched) != 1 || c.Mismatched[0].Key.Name != "rated" || strings.Join(c.Mismatched[0].Diffs, ";") != "rate: 100 → 200" {
		t.Errorf("mismatched %+v, want rated with its rate", c.Mismatched)
	}

	// An alpha below its p-value (1.3e-12) makes the regression not significant.
	if c, _ := Compare(base, next, 1e-13); c.Regressions() != 0 {
		t.Errorf("alpha 1e-13: %d regressions, want 0", c.Regressions())
	}
	for _, a := range []float64{0, 1, -0.1, 2} {
		if _, err := Compare(base, next, a); err == nil {
			t.Errorf("Compare with alpha %v: no error", a)
		}
	}
}

// near reports whether got is within 1e-9 of want, relatively.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

func TestCompareNoRowsInCommon(t *testing.T) {
	base, next := compareRuns()
	only := func(run Run, names ...string) Run {
		var rows []Row
		for _, r := range run.Rows {
			for _, n := range names {
				if r.Config.Name == n {
					rows = append(rows, r)
				}
			}
		}
		return NewRun(rows)
	}
	// Only a mismatch and rows on one side: nothing to compare.
	_, err := Compare(only(base, "rated", "gone"), only(next, "rated", "fresh"), DefaultAlpha)
	if !errors.Is(err, ErrNoCommonRows) {
		t.Fatalf("err = %v, want ErrNoCommonRows", err)
	}
	if want := "no rows in common (1 only in base, 1 only in new, 1 with another configuration)"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestConfigDiffs(t *testing.T) {
	a := statsConfig("x", check.RolloutRestart)
	if d := ConfigDiffs(a, a); d != nil {
		t.Errorf("ConfigDiffs of equal configs = %q", d)
	}
	b := a
	b.Why, b.Quiet = "another reason", 0 // neither changes what is measured per request
	if d := ConfigDiffs(a, b); d != nil {
		t.Errorf("ConfigDiffs ignoring why and quiet = %q", d)
	}
	b.PreStop, b.KeepAlive, b.Count, b.Path, b.Expect, b.Replicas = check.PreStop{None: true}, true, 3, "/slow", check.AtMost(0.01), 2
	b.ReadyDelay = 2 * time.Second
	want := []string{"count: 2 → 3", "keep-alive: false → true", "path: / → /slow"}
	if got := ConfigDiffs(a, b); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ConfigDiffs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The app's own configuration is what a comparison is for: listed, not refused.
	wantApp := []string{"preStop sleep:5s → none", "readyDelay 0s → 2s", "replicas 3 → 2", "expect 0 failures → ≤ 1.00%"}
	if got := AppChanges(a, b); strings.Join(got, "\n") != strings.Join(wantApp, "\n") {
		t.Errorf("AppChanges =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantApp, "\n"))
	}
	// A proxy made native, a stop signal set: the configuration a user benchmarks.
	c := b
	b.Sidecars = []check.Sidecar{{Name: "proxy", Front: true, PreStop: check.PreStop{None: true}}}
	c.Sidecars = []check.Sidecar{{Name: "proxy", Front: true, Native: true, PreStop: check.PreStop{None: true}}}
	c.StopSignal = "SIGQUIT"
	want2 := []string{"stopSignal — → SIGQUIT", "sidecars proxy(classic,front,preStop=none) → proxy(native,front,preStop=none)"}
	if got := AppChanges(b, c); strings.Join(got, "\n") != strings.Join(want2, "\n") {
		t.Errorf("AppChanges =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}
}

func TestComparisonMarkdown(t *testing.T) {
	base, next := compareRuns()
	c, err := Compare(base, next, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"## rollcheck compare\n",
		"| scenario | disruption | app change | base failures | new failures | Δ | p | termination p50 | disruption time p50 | verdict | change |\n",
		"| worse: preStop=sleep:5s sigterm=drain grace=30s keepalive=off [s] | rollout-restart×2 | — | 0 of 1100 (0% [0%, 0.272%]) | 40 of 1100 (3.636% [2.682%, 4.914%]) | +3.636 pp | 1.3e-12 | — | — | ✅ pass → ❌ fail | 🔺 significant regression |\n",
		"| same: preStop=sleep:5s sigterm=drain grace=30s keepalive=off [s] | delete-pod×2 | — | 3 of 1100 (0.273% [0.093%, 0.799%]) | 4 of 1100 (0.364% [0.141%, 0.931%]) | +0.091 pp | 1.00 | — | — | ❌ fail | no significant change |\n",
		"| 40 of 3300 (1.212% [0.891%, 1.646%], 3 runs) | 0 of 3300 (0% [0%, 0.091%], 3 runs) | -1.212 pp |",
		"| 〰️ flaky → ✅ pass | 🔻 significant improvement |\n",
		"significant when p < 0.05, per row, not corrected for the 3 rows compared",
		"\n### Added (only in new)\n\n- **fresh** (force-delete×2, suite s): 0 of 1100 (0% [0%, 0.272%]), ✅ pass\n",
		"\n### Removed (only in base)\n\n- **gone** (force-delete×2, suite s): 0 of 1100 (0% [0%, 0.272%]), ✅ pass\n",
		"\n### Measured differently (not compared)\n\n- **rated** (rollout-restart, suite s): rate: 100 → 200\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.HasSuffix(md, "\ncompare: 3 rows, 1 significant regressions, 1 significant improvements\n") {
		t.Errorf("Markdown does not end with the compare line:\n%s", md)
	}
}

func TestReadRunFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, _ := compareRuns()
	var buf bytes.Buffer
	if err := base.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := write("good.json", buf.String())
	if run, err := ReadRunFile(good); err != nil || len(run.Rows) != len(base.Rows) || len(run.Stats) != len(base.Stats) {
		t.Errorf("ReadRunFile(good) = %d rows, %d stats, %v", len(run.Rows), len(run.Stats), err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"text.json", "hello", "not a conformance.json"},
		{"row.json", `{"suite": "s", "config": {"name": "x"}}`, "not a conformance.json: no rows field"},
		{"empty.json", `{"rows": []}`, "no rows"},
		{"array.json", `[1, 2]`, "not a conformance.json"},
	} {
		_, err := ReadRunFile(write(tc.name, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadRunFile(%s) error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadRunFile(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadRunFile(missing) error %v, want not exist", err)
	}
}

// TestComparisonKubeProxy: two runs (two kube-proxy modes, say) show their pooled propagation
// and kube-proxy's programming latency side by side.
func TestComparisonKubeProxy(t *testing.T) {
	base, next := compareRuns()
	withKP := func(r Run, mode string, fast, slow int) Run {
		r.Versions.KubeProxyMode = mode
		r.Rows[0].Explanation = &check.Explanation{Propagation: check.PropagationSummary{
			KubeProxyBuckets: []check.HistogramBucket{{UpperBound: 0.5, Count: uint64(fast)}, {UpperBound: 2, Count: uint64(fast + slow)}, {Inf: true, Count: uint64(fast + slow)}}}}
		return r
	}
	base, next = withKP(base, "iptables", 10, 0), withKP(next, "nftables", 0, 10)
	c, err := Compare(base, next, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if c.BasePropagation.KubeProxy == nil || c.NewPropagation.KubeProxy == nil || c.BasePropagation.KubeProxy.N != 10 {
		t.Fatalf("pooled kube-proxy: %+v, %+v", c.BasePropagation.KubeProxy, c.NewPropagation.KubeProxy)
	}
	if !(c.BasePropagation.KubeProxy.P50 < c.NewPropagation.KubeProxy.P50) {
		t.Errorf("p50 base %v, new %v: want the slower histogram's higher", c.BasePropagation.KubeProxy.P50, c.NewPropagation.KubeProxy.P50)
	}
	var buf bytes.Buffer
	if err := c.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"kube-proxy iptables", "kube-proxy nftables", "| endpoint propagation, pooled | base | new |", "| kube-proxy programming (its own histogram) | "} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}
