package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
)

// DefaultAlpha is the significance level compare uses unless told otherwise.
const DefaultAlpha = 0.05

// ErrNoCommonRows is returned by Compare when no row of the base run can be compared with a
// row of the new one.
var ErrNoCommonRows = errors.New("no rows in common")

// Comparison is a new run set against a base run, row by row, each row pooled over its
// repeated runs (Group).
type Comparison struct {
	Alpha float64 `json:"alpha"`
	// BaseVersions and NewVersions say what each run was measured with.
	BaseVersions Versions `json:"baseVersions"`
	NewVersions  Versions `json:"newVersions"`
	// BasePropagation and NewPropagation are each run's endpoint propagation pooled over its
	// rows, kube-proxy's own programming latency among it: with runs in two kube-proxy modes,
	// the data planes side by side.
	BasePropagation PooledPropagation `json:"basePropagation"`
	NewPropagation  PooledPropagation `json:"newPropagation"`
	// Rows are the rows of both runs with the same key and configuration, in the base's order.
	Rows []RowChange `json:"rows"`
	// Added are rows only in the new run, Removed rows only in the base, in their run's order.
	Added   []RowStats `json:"added,omitempty"`
	Removed []RowStats `json:"removed,omitempty"`
	// Mismatched are rows of both runs with the same key but another configuration: not
	// compared.
	Mismatched []Mismatch `json:"mismatched,omitempty"`
}

// RowChange is one row in the base and in the new run.
type RowChange struct {
	Key  RowKey   `json:"key"`
	Base RowStats `json:"base"`
	New  RowStats `json:"new"`
	// Diff is the new pooled failure ratio minus the base one.
	Diff float64 `json:"diff"`
	// P is the two-sided p-value of Fisher's exact test on the pooled failures and requests
	// (1 when either side sent no request).
	P float64 `json:"p"`
	// Regression: the new failure ratio is higher and P < alpha; Improvement: lower and P < alpha.
	Regression  bool `json:"regression,omitempty"`
	Improvement bool `json:"improvement,omitempty"`
	// AppChanges is how the app's configuration changed (AppChanges), empty when it did not.
	AppChanges []string `json:"appChanges,omitempty"`
}

// Mismatch is a row whose configuration differs between the runs.
type Mismatch struct {
	Key RowKey `json:"key"`
	// Diffs name each differing field with both values: "rate: 100 → 200".
	Diffs []string `json:"diffs"`
}

// Regressions counts the significant regressions.
func (c Comparison) Regressions() int {
	n := 0
	for _, r := range c.Rows {
		if r.Regression {
			n++
		}
	}
	return n
}

// Improvements counts the significant improvements.
func (c Comparison) Improvements() int {
	n := 0
	for _, r := range c.Rows {
		if r.Improvement {
			n++
		}
	}
	return n
}

// field is one named value of a row's configuration, in base and in new.
type field struct {
	name      string
	base, new any
}

// changed lists the fields whose values differ, as "name<sep>base → new".
func changed(sep string, fs ...field) []string {
	var ds []string
	for _, f := range fs {
		if fmt.Sprint(f.base) != fmt.Sprint(f.new) {
			ds = append(ds, fmt.Sprintf("%s%s%v → %v", f.name, sep, f.base, f.new))
		}
	}
	return ds
}

// ConfigDiffs lists the differences in how two rows were measured, which make their failure
// ratios incomparable: disruption count, rate, method, keep-alive, path and where the load came
// from (the quiet time changes how many requests are sent, not what happens to each). Empty
// when they match. What the app does differently (AppChanges) is what a comparison is for.
func ConfigDiffs(base, next check.Applied) []string {
	return changed(": ",
		field{"count", base.Count, next.Count}, field{"rate", base.Rate, next.Rate},
		field{"method", base.Method, next.Method}, field{"keep-alive", base.KeepAlive, next.KeepAlive},
		field{"path", base.Path, next.Path}, field{"load from", loadFrom(base), loadFrom(next)})
}

// loadFrom is where a row's load came from; rows written before it was a dimension came from
// the host.
func loadFrom(a check.Applied) check.LoadFrom {
	if a.LoadFrom == "" {
		return check.LoadFromHost
	}
	return a.LoadFrom
}

// AppChanges lists how the app's shutdown configuration differs between two rows: preStop,
// SIGTERM handling, grace period, request duration, warm-up before ready, replicas, a patch, the
// stop signal, the sidecars (classic → native, a preStop on the proxy), and the expectation.
// These are compared, not refused: benchmarking a new configuration against the old is the
// point.
func AppChanges(base, next check.Applied) []string {
	return changed(" ",
		field{"preStop", base.PreStop, next.PreStop}, field{"sigterm", base.OnSIGTERM, next.OnSIGTERM},
		field{"grace", fmt.Sprintf("%ds", base.GraceSeconds), fmt.Sprintf("%ds", next.GraceSeconds)},
		field{"req", base.RequestDuration, next.RequestDuration}, field{"readyDelay", base.ReadyDelay, next.ReadyDelay},
		field{"replicas", base.Replicas, next.Replicas},
		field{"patched", base.Patched, next.Patched}, field{"stopSignal", orDash(base.StopSignal), orDash(next.StopSignal)},
		field{"sidecars", sidecarsOf(base), sidecarsOf(next)}, field{"expect", base.Expect.String(), next.Expect.String()})
}

// sidecarsOf is a row's sidecars as applied, "—" without any.
func sidecarsOf(a check.Applied) string {
	var out []string
	for _, sc := range a.Sidecars {
		out = append(out, sc.String())
	}
	return orDash(strings.Join(out, " "))
}

// Compare groups the rows of each run over their repeats and matches them by key (suite,
// variant name, disruption). A matched pair with the same configuration (ConfigDiffs) is
// compared: pooled failure ratios, their difference, and Fisher's exact test on the pooled
// failures and requests; a change is significant when p < alpha. Pairs whose configuration
// differs are Mismatched; rows in only one run are Added or Removed. Compare returns
// ErrNoCommonRows when no pair could be compared, and an error for an alpha outside (0, 1).
//
// Requests within a run are not independent (failures come in bursts at each disruption),
// so the test treats a run's requests as more evidence than they are: a p-value near alpha
// is a reason to repeat the runs, not a verdict.
func Compare(base, next Run, alpha float64) (Comparison, error) {
	if !(alpha > 0 && alpha < 1) {
		return Comparison{}, fmt.Errorf("alpha %v: want a level between 0 and 1", alpha)
	}
	c := Comparison{Alpha: alpha, BaseVersions: base.Versions, NewVersions: next.Versions,
		BasePropagation: Pool(base.Rows), NewPropagation: Pool(next.Rows)}
	bs, ns := Group(base.Rows), Group(next.Rows)
	inNew := map[RowKey]RowStats{}
	for _, n := range ns {
		inNew[n.Key] = n
	}
	inBase := map[RowKey]bool{}
	for _, b := range bs {
		inBase[b.Key] = true
		n, ok := inNew[b.Key]
		if !ok {
			c.Removed = append(c.Removed, b)
			continue
		}
		if ds := ConfigDiffs(b.Config, n.Config); len(ds) > 0 {
			c.Mismatched = append(c.Mismatched, Mismatch{Key: b.Key, Diffs: ds})
			continue
		}
		c.Rows = append(c.Rows, change(b, n, alpha))
	}
	for _, n := range ns {
		if !inBase[n.Key] {
			c.Added = append(c.Added, n)
		}
	}
	if len(c.Rows) == 0 {
		return c, fmt.Errorf("%w (%d only in base, %d only in new, %d with another configuration)",
			ErrNoCommonRows, len(c.Removed), len(c.Added), len(c.Mismatched))
	}
	return c, nil
}

// change compares one row's pooled failures.
func change(b, n RowStats, alpha float64) RowChange {
	rc := RowChange{Key: b.Key, Base: b, New: n, Diff: n.FailureRatio - b.FailureRatio, P: 1,
		AppChanges: AppChanges(b.Config, n.Config)}
	if b.Requests > 0 && n.Requests > 0 {
		rc.P = stats.FisherExact(b.Failures, b.Requests-b.Failures, n.Failures, n.Requests-n.Failures)
	}
	if rc.P < alpha {
		rc.Regression = rc.Diff > 0
		rc.Improvement = rc.Diff < 0
	}
	return rc
}

// ReadRunFile reads a conformance.json written by WriteJSON; a file that is not one (no rows
// field, no rows) is an error.
func ReadRunFile(path string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	run, err := ReadRun(f)
	if err != nil {
		return Run{}, fmt.Errorf("%s: not a conformance.json: %w", path, err)
	}
	if run.Rows == nil {
		return Run{}, fmt.Errorf("%s: not a conformance.json: no rows field", path)
	}
	if len(run.Rows) == 0 {
		return Run{}, fmt.Errorf("%s: no rows", path)
	}
	return run, nil
}

// WriteMarkdown writes the comparison for a PR comment: what each run was measured with, a
// table of the compared rows (pooled failures base → new, difference, p-value, verdicts and
// whether the change is significant), the rows added, removed and not compared, and a last
// line "compare: N rows, R significant regressions, I significant improvements".
func (c Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	p("## rollcheck compare\n\n")
	p("Base: %s  \nNew: %s\n\n", mdEscape(strings.Join(versionsLine(c.BaseVersions), " · ")),
		mdEscape(strings.Join(versionsLine(c.NewVersions), " · ")))
	if c.BasePropagation.KubeProxy != nil || c.NewPropagation.KubeProxy != nil {
		p("%s", comparePropagationTable.markdownHeader())
		p("| control plane (deletion → endpoint not ready) | %s | %s |\n", durationsCell(c.BasePropagation.ControlPlane), durationsCell(c.NewPropagation.ControlPlane))
		p("| data plane (deletion → last request the pod answered) | %s | %s |\n", durationsCell(c.BasePropagation.DataPlane), durationsCell(c.NewPropagation.DataPlane))
		kp := func(d *check.Durations) string {
			if d == nil {
				return "not measured"
			}
			return durationsCell(*d)
		}
		p("| kube-proxy programming (its own histogram) | %s | %s |\n\n", kp(c.BasePropagation.KubeProxy), kp(c.NewPropagation.KubeProxy))
	}
	p("%s", compareTable.markdownHeader())
	for _, r := range c.Rows {
		cols := []string{
			r.Key.Name + ": " + r.New.Config.Shape(),
			r.Base.Config.DisruptionString(),
			orDash(strings.Join(r.AppChanges, ", ")),
			pooledCell(r.Base),
			pooledCell(r.New),
			fmt.Sprintf("%+.3f pp", 100*r.Diff),
			pCell(r),
			timeChange(r.Base.Exit, r.New.Exit),
			timeChange(r.Base.Disruption, r.New.Disruption),
			verdictChange(r.Base.Status, r.New.Status),
			changeCell(r),
		}
		if r.Key.Suite != "" {
			cols[0] += " [" + r.Key.Suite + "]"
		}
		for i := range cols {
			cols[i] = mdEscape(cols[i])
		}
		p("| %s |\n", strings.Join(cols, " | "))
	}
	p("\nFailures are pooled over each row's runs, with their 95 %% interval. p: Fisher's exact test, two-sided, "+
		"on the pooled failures and requests; a change is significant when p < %s, per row, not corrected for "+
		"the %d rows compared. Requests within a run are not independent (failures come in bursts at each "+
		"disruption), so a p-value near the threshold calls for repeated runs, not a verdict.\n",
		fmtAlpha(c.Alpha), len(c.Rows))

	list := func(title string, rs []RowStats) {
		if len(rs) == 0 {
			return
		}
		p("\n### %s\n\n", title)
		for _, s := range rs {
			p("- **%s** (%s, suite %s): %s, %s\n", mdEscape(s.Key.Name), mdEscape(s.Config.DisruptionString()),
				mdEscape(s.Key.Suite), mdEscape(pooledCell(s)), statsLabel(s.Status))
		}
	}
	list("Added (only in new)", c.Added)
	list("Removed (only in base)", c.Removed)
	if len(c.Mismatched) > 0 {
		p("\n### Measured differently (not compared)\n\n")
		for _, m := range c.Mismatched {
			p("- **%s** (%s, suite %s): %s\n", mdEscape(m.Key.Name), mdEscape(string(m.Key.Disruption)),
				mdEscape(m.Key.Suite), mdEscape(strings.Join(m.Diffs, "; ")))
		}
	}
	p("\ncompare: %d rows, %d significant regressions, %d significant improvements\n",
		len(c.Rows), c.Regressions(), c.Improvements())
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// pooledCell is "40 of 1100 (3.636% [2.682%, 4.914%])", with ", 3 runs" when repeated.
func pooledCell(s RowStats) string {
	if s.Requests == 0 {
		return "no requests"
	}
	runs := ""
	if s.Runs > 1 {
		runs = fmt.Sprintf(", %d runs", s.Runs)
	}
	return fmt.Sprintf("%d of %d (%s [%s, %s]%s)", s.Failures, s.Requests, pct(s.FailureRatio),
		pct(s.Interval.Lo), pct(s.Interval.Hi), runs)
}

// pCell is the p-value with two significant digits; "—" when a side sent no request.
func pCell(r RowChange) string {
	switch {
	case r.Base.Requests == 0 || r.New.Requests == 0:
		return "—"
	case r.P == 0:
		return "< 1e-300"
	case r.P >= 0.01:
		return fmt.Sprintf("%.2f", r.P)
	}
	return fmt.Sprintf("%.1e", r.P)
}

// verdictChange is "✅ pass" when the status is the same, "✅ pass → ❌ fail" otherwise.
func verdictChange(base, next check.Status) string {
	if base == next {
		return statsLabel(base)
	}
	return statsLabel(base) + " → " + statsLabel(next)
}

func changeCell(r RowChange) string {
	switch {
	case r.Regression:
		return "🔺 significant regression"
	case r.Improvement:
		return "🔻 significant improvement"
	}
	return "no significant change"
}

func fmtAlpha(a float64) string { return strconv.FormatFloat(a, 'g', -1, 64) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// timeChange is "5.1s → 10.2s (+5.1s)" for the p50 of a duration in base and new, "—" when
// neither measured it.
func timeChange(base, next check.Durations) string {
	cell := func(d check.Durations) string {
		if d.N == 0 {
			return "—"
		}
		return d.P50.Round(100 * time.Millisecond).String()
	}
	if base.N == 0 && next.N == 0 {
		return "—"
	}
	s := cell(base) + " → " + cell(next)
	if base.N > 0 && next.N > 0 {
		d := (next.P50 - base.P50).Round(100 * time.Millisecond)
		sign := "+"
		if d < 0 {
			sign = ""
		}
		s += " (" + sign + d.String() + ")"
	}
	return s
}
