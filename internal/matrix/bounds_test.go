//go:build !e2e

// Not in the e2e suite's binary: these tests need no cluster and run with go test ./suites,
// and inside a Ginkgo run their failure would fail the suite with none of their output shown.

package matrix

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/stats"
)

// goldenBound is a bound as the test holds it: its value, how many recorded runs it comes
// from, and whether it is provisional.
type goldenBound struct {
	bound       float64
	runs        int
	provisional bool
}

// goldenBounds are the bounds of every at-most row's configuration, as they are. A change of
// the recorded runs, of the rule or of a provisional bound that moves a bound fails
// TestBoundsGolden until this list says the new bound, so that the diff shows it move. The
// old bounds (twice the worst measured) are in the comments.
var goldenBounds = map[string]goldenBound{
	// New: judged zero-failure until make e2e-all's run at 6d984aa lost 32 of 2,370 (1.35 %); the
	// three runs before it lost none. Provisional: a proxy row, in no table of docs/matrix.md.
	"nginx-resolver: preStop=none sigterm=drain grace=30s keepalive=off load=cluster via=http://front/ rollout-restart×3": {0.03, 0, true},
	// Old: 12.5 %, then 9 % from all fourteen runs. Eleven runs, 0.2 % to 6.7 % (3.7 %, 3.4 %, 2.4 %,
	// 5.4 % and 1.9 % at 189affa, 79c3d80, 6713fda, d568eee and 191dadd, three rows at once);
	// 2.46 %, 1.87 % and 0.60 % in the clean-clone CI runs at c750b7f, d931559 and aa53930. The
	// runs beside other load (191dadd, c750b7f) are kept apart: twelve runs, 9.5 % (fewer runs,
	// a wider t). Ceiling 16 %.
	"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster delete-pod×3": {0.095, 12, false},
	// Old: 13 %. Six runs one row at a time, 0.44 % to 0.87 %, and 1.79 % and 2.19 % at 189affa
	// and 79c3d80 with three rows at once (the first failed the 1.5 % the six alone gave), 0.32 %
	// at 6713fda; 3.67 % (92 of 2,506) in CI at b252ea6, which failed the 3.5 % of the nine
	// before it; 3.42 % at d568eee, 1.28 % at 191dadd; 1.09 %, 1.01 % and 0.07 % in the clean-clone
	// CI runs at c750b7f, d931559 and aa53930. It went 3.5 → 5 % when b252ea6 failed it, with no
	// cause found: that run is kept as an unexplained failure and moves nothing, and the runs
	// beside other load are kept apart: twelve runs, 4.5 %. Ceiling 8 %.
	"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster force-delete×3": {0.045, 12, false},
	// Old: 1.5 %, then 0.5 %: fourteen runs, three failed any (5 of 2,519 at 6713fda, 2 of 2,776
	// and 4 of 2,876 in CI at c750b7f and aa53930, three rows at once), the rule's floor of one
	// step. CI at 6a9fce1 failed it with 25 of 4,713 (0.53 %), one lost race in one deletion: the
	// cause named, it is taken (the rule alone: 1 %), and a row whose runs mostly measured none
	// is bound at least by one lost race, a third of its 4 % ceiling: 1.5 %. Thirteen runs (the
	// two beside other load kept apart).
	"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off load=cluster force-delete×3": {0.015, 13, false},
	// Old: 3.5 %. Eight runs, 0.06 % to 0.53 % (0.12 % and 0.53 % at 189affa and 79c3d80, three
	// rows at once), 0.61 % at 6713fda, 0.21 % at d568eee, 1.27 % at 191dadd (beside four Go
	// builds), which failed the 1 % of the ten before it; 0.66 %, 0.32 % and 1.89 % in the
	// clean-clone CI runs at c750b7f, d931559 and aa53930. It went 1 → 2.5 % after 191dadd, which
	// ran beside four Go builds: kept apart now with c750b7f, twelve runs give 2.5 % all the same
	// (aa53930's 1.89 % on a quiet machine). Ceiling 11 %.
	"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster scale-down×3": {0.025, 12, false},
	// From the host no run was ever recorded: no bound (they had "twice the worst" of other
	// runs, provisional), and Matrix leaves them out there (wantUnboundedFromHost).
}

// boundedEntries are the at-most rows of the matrix: as declared (AllEntries) and with every load
// path Matrix gives them, by name.
func boundedEntries() map[string]Entry {
	out := map[string]Entry{}
	var rows []Entry
	for _, mode := range []knobs.MatrixLoad{knobs.LoadBoth, knobs.LoadHost, knobs.LoadCluster} {
		rows = append(rows, Matrix(AllEntries(), mode)...)
	}
	for _, r := range rows {
		if r.Scenario.Variant.Expect.Kind == check.ExpectAtMost {
			out[r.Name()] = r
		}
	}
	return out
}

// (a) Every at-most row's bound, declared and on every load path, is Bound of its name: the
// rule over its recorded runs, or its provisional bound.
func TestBoundsFromRule(t *testing.T) {
	rows := boundedEntries()
	if len(rows) == 0 {
		t.Fatal("no at-most row")
	}
	for name, r := range rows {
		want, err := Bound(name)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if got := r.Scenario.Variant.Expect.MaxRatio; got != want {
			t.Errorf("%s: bound %v, want Bound's %v", name, got, want)
		}
		if runs := ruleRuns(name); len(runs) >= MinRuns {
			rule, _ := PredictionBound(runs)
			if mostlyNone(runs) {
				rule = max(rule, stepUp(ceilings[name].LostRace()))
			}
			if rule != want {
				t.Errorf("%s: Bound %v is not the rule's %v over its %d runs", name, want, rule, len(runs))
			}
		}
	}
}

// (a) rows.go names no bound: no check.AtMost, no MaxRatio, no ExpectAtMost outcome of its
// own; an at-most row is declared with measured, which takes its bound from Bound.
func TestRowsNameNoBound(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "rows.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	measuredCalls := 0
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if n.Name == "AtMost" || n.Name == "MaxRatio" || n.Name == "ExpectAtMost" || n.Name == "MeasuredBound" {
				t.Errorf("rows.go uses %s: an at-most row's bound comes from its recorded runs (measured, Bound in bounds.go)", n.Name)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "measured" {
				measuredCalls++
			}
		}
		return true
	})
	// Every at-most row as declared is one call of measured.
	declared := 0
	for _, r := range AllEntries() {
		if r.Scenario.Variant.Expect.Kind == check.ExpectAtMost {
			declared++
		}
	}
	if measuredCalls != declared {
		t.Errorf("rows.go calls measured %d times for %d at-most rows", measuredCalls, declared)
	}
}

// (b) The bounds are as goldenBounds holds them, and it holds every bound there is: a bound
// moves only with its data, and the diff shows it move.
func TestBoundsGolden(t *testing.T) {
	names := slices.Sorted(maps.Keys(boundedEntries()))
	for _, name := range slices.Sorted(maps.Keys(goldenBounds)) {
		if !slices.Contains(names, name) {
			t.Errorf("goldenBounds holds %s, which is no at-most row of the matrix", name)
		}
	}
	for _, name := range names {
		g, ok := goldenBounds[name]
		if !ok {
			t.Errorf("%s: not in goldenBounds", name)
			continue
		}
		b, err := Bound(name)
		_, prov := provisional[name]
		if err != nil || b != g.bound || len(ruleRuns(name)) != g.runs || prov != g.provisional {
			t.Errorf("%s: bound %v (%v) from %d runs, provisional %v; goldenBounds says %v from %d, provisional %v: a bound moved with its data, write the new one in goldenBounds",
				name, b, err, len(ruleRuns(name)), prov, g.bound, g.runs, g.provisional)
		}
	}
	// The data are of rows that exist: a renamed row leaves its runs behind.
	for _, name := range slices.Concat(slices.Collect(maps.Keys(recorded)), slices.Collect(maps.Keys(provisional))) {
		if !slices.Contains(names, name) {
			t.Errorf("%s has recorded runs or a provisional bound but is no at-most row of the matrix (renamed? its runs measured another configuration)", name)
		}
	}
}

// wantProvisional are the configurations whose bound is provisional, each with fewer than
// MinRuns recorded runs; their reasons are in provisional.
var wantProvisional = []string{
	"nginx-resolver: preStop=none sigterm=drain grace=30s keepalive=off load=cluster via=http://front/ rollout-restart×3",
}

// (c) Every bounded configuration has at least MinRuns recorded runs, or is provisional, named
// in wantProvisional, with a reason; no provisional bound outlives its runs; every recorded run
// is well formed and recorded once.
func TestBoundsHaveRuns(t *testing.T) {
	var prov []string
	for name := range boundedEntries() {
		runs, p := ruleRuns(name), provisional[name]
		switch {
		case len(runs) >= MinRuns && p.Reason != "":
			t.Errorf("%s: %d recorded runs and a provisional bound: drop the provisional one", name, len(runs))
		case len(runs) >= MinRuns:
		case p.Reason == "" || p.Bound <= 0 || p.Bound >= 1:
			t.Errorf("%s: %d recorded runs (fewer than %d) and no provisional bound with a reason: %+v", name, len(runs), MinRuns, p)
		default:
			prov = append(prov, name)
			t.Logf("provisional (%d runs): %s: %.1f %%: %s", len(runs), name, 100*p.Bound, p.Reason)
		}
	}
	if slices.Sort(prov); !slices.Equal(prov, wantProvisional) {
		t.Errorf("provisional bounds %q, want %q", prov, wantProvisional)
	}
	hex, day := regexp.MustCompile(`^[0-9a-f]{7,40}$`), regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	for c, m := range matrixRuns {
		if !hex.MatchString(c) || !day.MatchString(m.Date) || (m.Table == "") == (m.CILog == "") || (m.Table != "" && !hex.MatchString(m.Table)) {
			t.Errorf("a malformed run of the matrix %s: %+v", c, m)
		}
	}
	for name, runs := range recorded {
		seen := map[string]bool{}
		for _, r := range runs {
			if _, ok := matrixRuns[r.Commit]; !ok || r.Requests <= 0 || r.Failed < 0 || r.Failed > r.Requests {
				t.Errorf("%s: a malformed run %+v, or not of a recorded run of the matrix", name, r)
			}
			if seen[r.Commit] {
				t.Errorf("%s: the run at %s recorded twice", name, r.Commit)
			}
			seen[r.Commit] = true
		}
	}
}

// runsOf makes runs of the given failures, each of requests requests.
func runsOf(requests int, failed ...int) []Run {
	out := make([]Run, len(failed))
	for i, f := range failed {
		out[i] = Run{Commit: "0000000", Requests: requests, Failed: f}
	}
	return out
}

func mustBound(t *testing.T, runs []Run) float64 {
	t.Helper()
	b, err := PredictionBound(runs)
	if err != nil {
		t.Fatalf("PredictionBound(%+v): %v", runs, err)
	}
	return b
}

// (d) The rule on constructed data: its refusals, its floor and ceiling, its steps, a value
// worked by hand, and that it moves the right way.
func TestPredictionBoundRule(t *testing.T) {
	for _, runs := range [][]Run{runsOf(1000, 1, 2, 3, 4), runsOf(0, 0, 0, 0, 0, 0), runsOf(100, 1, 2, 3, 4, 101), runsOf(100, 1, 2, 3, 4, -1)} {
		if b, err := PredictionBound(runs); err == nil {
			t.Errorf("PredictionBound(%+v) = %v, want an error", runs, b)
		}
	}
	// None failed: one step, the floor. All failed: 1, the ceiling.
	if b := mustBound(t, runsOf(1000, 0, 0, 0, 0, 0)); b != 0.005 {
		t.Errorf("no failures: %v, want 0.005", b)
	}
	if b := mustBound(t, runsOf(10, 10, 10, 10, 10, 9)); b != 1 {
		t.Errorf("all failed: %v, want 1", b)
	}
	// The same ratio every run: that ratio, on its step or the next one up.
	if b := mustBound(t, runsOf(1000, 10, 10, 10, 10, 10)); b != 0.01 {
		t.Errorf("1 %% every run: %v, want 0.01", b)
	}
	if b := mustBound(t, runsOf(1000, 11, 11, 11, 11, 11)); b != 0.015 {
		t.Errorf("1.1 %% every run: %v, want 0.015", b)
	}
	// By hand: ratios 1, 2, 3, 4, 5 %: mean 3 %, sd √2.5 = 1.5811 %, t(0.995, 4) = 4.6041:
	// 3 + 4.6041 × 1.5811 × √1.2 = 10.975 % → 11 %.
	if b := mustBound(t, runsOf(1000, 10, 20, 30, 40, 50)); b != 0.11 {
		t.Errorf("1 to 5 %%: %v, want 0.11", b)
	}
	base := runsOf(2000, 4, 9, 1, 0, 12, 5)
	b0 := mustBound(t, base)
	shift := slices.Clone(base)
	for i := range shift {
		shift[i].Failed += 10
	}
	if b := mustBound(t, shift); b < b0 {
		t.Errorf("every run 10 failures more: %v, below %v", b, b0)
	}
	worse := slices.Clone(base)
	worse[4].Failed = 40 // the worst run worse still
	if b := mustBound(t, worse); b <= b0 {
		t.Errorf("the worst run worse: %v, not above %v", b, b0)
	}
	spread := runsOf(2000, 0, 2, 30, 0, 10, 20) // the mean of base, far wider spread
	if b := mustBound(t, spread); b <= b0 {
		t.Errorf("wider spread at the same mean: %v, not above %v", b, b0)
	}
	if b := mustBound(t, append(slices.Clone(base), base...)); b > b0 {
		t.Errorf("the same runs twice over: %v, above %v (more runs, a narrower t)", b, b0)
	}
	// On random runs: on a step, within [one step, 1], above the mean; and, with up to 12 runs,
	// above every run (no run is further than sd·(n−1)/√n from the mean, Samuelson's
	// inequality, and t(0.995, n−1)·√(1+1/n) is more than that up to n = 12).
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := MinRuns + trial%8
		runs := make([]Run, n)
		var mean, worst float64
		for i := range runs {
			req := 500 + rng.IntN(3000)
			runs[i] = Run{Requests: req, Failed: rng.IntN(req/(1+rng.IntN(50)) + 1)}
			mean += runs[i].Ratio() / float64(n)
			worst = max(worst, runs[i].Ratio())
		}
		b := mustBound(t, runs)
		steps := b * BoundStepsPerUnit
		if math.Abs(steps-math.Round(steps)) > 1e-9 || b < 1.0/BoundStepsPerUnit || b > 1 || b < mean || b < worst {
			t.Fatalf("%+v: bound %v (mean %v, worst %v)", runs, b, mean, worst)
		}
	}
	if q := stats.StudentT(BoundQuantile, MinRuns-1); q < 4.6 || q > 4.61 {
		t.Errorf("t(%v, %d) = %v, want 4.604", BoundQuantile, MinRuns-1, q)
	}
}

// (e) A failing run moves a bound only with its cause found and named, a run beside other load
// moves none, and no bound passes its row's ceiling: every at-most row has one, with its reason,
// and every run recorded as failing did fail the bound it names.
func TestBoundsMoveOnlyForACause(t *testing.T) {
	const fd = "naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster force-delete×3"
	all, _ := PredictionBound(recorded[fd])
	if got, _ := Bound(fd); all != 0.05 || got != 0.045 {
		t.Errorf("%s: %v over every recorded run (the old rule), %v now; want 0.05 and 0.045: b252ea6 failed 3.5 %% with no cause found, and the runs beside Go builds are kept apart", fd, all, got)
	}
	for name, runs := range failedRuns {
		for commit, f := range runs {
			i := slices.IndexFunc(recorded[name], func(r Run) bool { return r.Commit == commit })
			if i < 0 || recorded[name][i].Ratio() <= f.Bound {
				t.Errorf("%s at %s: recorded as failing %v, but no such run failed it", name, commit, f.Bound)
			}
			taken := slices.ContainsFunc(ruleRuns(name), func(r Run) bool { return r.Commit == commit })
			if taken != (f.Cause != "") {
				t.Errorf("%s at %s: taken by the rule %v with cause %q", name, commit, taken, f.Cause)
			}
		}
	}
	for name := range boundedEntries() {
		for _, r := range ruleRuns(name) {
			if _, beside := besideLoad[r.Commit]; beside {
				t.Errorf("%s: the rule takes %s, which ran beside other load", name, r.Commit)
			}
		}
		c, ok := ceilings[name]
		if !ok || c.Reason == "" || c.Max <= 0 || c.Max >= 1 {
			t.Errorf("%s: no ceiling with a reason: %+v", name, c)
		}
	}
	for name := range ceilings {
		if _, ok := boundedEntries()[name]; !ok {
			t.Errorf("ceilings has %s, which is no at-most row of the matrix", name)
		}
	}
	// A row whose runs mostly measured none is bound at least by one lost race; a row whose runs
	// mostly failed some is the rule's alone. prestop-drain under a forced delete: the rule over
	// its runs gives 1 %, one lost race of its ceiling's three 1.5 %, and its run at 6a9fce1 (25
	// of 4,713, one lost race) failed the 0.5 % in force before.
	const pd = "prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off load=cluster force-delete×3"
	if rule, _ := PredictionBound(ruleRuns(pd)); rule != 0.01 || !mostlyNone(ruleRuns(pd)) {
		t.Errorf("%s: the rule alone %v, mostly none %v; want 0.01 and true", pd, rule, mostlyNone(ruleRuns(pd)))
	}
	if got, _ := Bound(pd); got != 0.015 {
		t.Errorf("%s: %v, want one lost race, 0.015", pd, got)
	}
	if mostlyNone(ruleRuns(fd)) {
		t.Errorf("%s: mostly none, but most of its runs failed some", fd)
	}
	for _, c := range []struct {
		runs []Run
		want bool
	}{
		{runsOf(1000, 0, 0, 0, 1, 2), true},
		{runsOf(1000, 0, 0, 1, 1, 2, 0), false}, // half: not most
		{runsOf(1000, 3, 0, 1, 1, 2), false},
	} {
		if got := mostlyNone(c.runs); got != c.want {
			t.Errorf("mostlyNone(%+v) = %v, want %v", c.runs, got, c.want)
		}
	}
	if got := (Ceiling{0.04, 3, "x"}).LostRace(); math.Abs(got-0.04/3) > 1e-12 {
		t.Errorf("LostRace of 4 %% over 3 disruptions: %v", got)
	}
	if stepUp(0.04/3) != 0.015 || stepUp(0.01) != 0.01 || stepUp(0) != 0.005 {
		t.Errorf("stepUp: %v %v %v", stepUp(0.04/3), stepUp(0.01), stepUp(0))
	}
	// A bound above its ceiling is refused, not run.
	saved := ceilings[fd]
	ceilings[fd] = Ceiling{0.04, 3, "a test's"}
	_, err := Bound(fd)
	ceilings[fd] = saved
	if err == nil || !strings.Contains(err.Error(), "above its ceiling 4.0 %") {
		t.Errorf("a bound over its ceiling: %v", err)
	}
}
