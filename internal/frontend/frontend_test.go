package frontend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// standIn makes engineRun return, for each call, the next of statuses as the row's verdict (an
// error with check.Error), writes it in dir/rows as engine.Run does (dir empty: not written), and
// restores it after the test; two rows at once in one
// Target.RowNamespace fail t. It returns the Targets it was given.
func standIn(t *testing.T, dir string, statuses ...check.Status) func() []engine.Target {
	t.Helper()
	var (
		mu      sync.Mutex
		n       int
		targets []engine.Target
		busy    = map[string]bool{}
	)
	engineRun = func(_ context.Context, tgt engine.Target, res *check.Resolved, _ ...engine.Option) (*check.Row, error) {
		mu.Lock()
		s := statuses[n%len(statuses)]
		n++
		targets = append(targets, tgt)
		if ns := tgt.RowNamespace; ns != "" {
			if busy[ns] {
				t.Errorf("two rows at once in %s", ns)
			}
			busy[ns] = true
			defer func() { mu.Lock(); busy[ns] = false; mu.Unlock() }()
		}
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		p := res.Plan()
		row := &check.Row{Suite: p.Suite, Started: time.Now(), Config: res.Applied(), Verdict: check.Verdict{Status: s, Reason: string(s)}}
		if dir != "" { // as engine.Run does WithArtifacts
			if _, err := rowfile.Write(dir, *row); err != nil {
				t.Error(err)
			}
		}
		if s == check.Error {
			return row, errors.New("deploy: no")
		}
		return row, nil
	}
	t.Cleanup(func() { engineRun = engine.Run })
	return func() []engine.Target { mu.Lock(); defer mu.Unlock(); return targets }
}

// Attempt writes the row however it ended: a harness fault runs once more and both attempts
// are on disk, the last marked; an error row is written and its error returned.
func TestAttemptWritesEveryRow(t *testing.T) {
	res := checktest.Resolve(t, checktest.WebPlan())[0]
	dir := t.TempDir()
	standIn(t, dir, check.HarnessFault, check.Pass)
	told := 0
	row, err := Attempt(context.Background(), engine.Target{}, res, dir, func(*check.Row) { told++ })
	if err != nil || row.Verdict.Status != check.Pass || row.Attempts != 2 || told != 1 {
		t.Fatalf("row %+v, err %v, told %d; want a pass on attempt 2, told once", row.Verdict, err, told)
	}
	rows, err := rowfile.Read(dir)
	if err != nil || len(rows) != 1 || rows[0].Attempts != 2 {
		t.Errorf("rows on disk %+v (%v), want the second attempt", rows, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rows", rowfile.AttemptName(*row, 1))); err != nil {
		t.Errorf("the first attempt is not kept: %v", err)
	}

	dir = t.TempDir()
	standIn(t, dir, check.Error)
	row, err = Attempt(context.Background(), engine.Target{}, res, dir, nil)
	if err == nil || row == nil || row.Verdict.Status != check.Error {
		t.Fatalf("row %+v, err %v; want an error row and its error", row, err)
	}
	if rows, err := rowfile.Read(dir); err != nil || len(rows) != 1 || rows[0].Verdict.Status != check.Error {
		t.Errorf("rows on disk %+v (%v), want the error row", rows, err)
	}
}

// Rows runs each row in one of the user's namespaces, never two at once in one, writes the
// reports, and a run is judged by its worst row.
func TestRowsInRowNamespaces(t *testing.T) {
	p := checktest.WebPlan()
	p.Load = check.Load{From: check.LoadFromCluster} // rows that may run beside others
	var plans []*check.Resolved
	for range 6 {
		plans = append(plans, checktest.Resolve(t, p)[0])
	}
	dir := t.TempDir()
	targets := standIn(t, dir, check.Pass, check.Pass, check.Fail)
	run := Rows(context.Background(), engine.Target{}, plans, Options{Parallel: 3, RowNamespaces: []string{"team-a", "team-b"}, Artifacts: dir})
	if len(run.Rows) != 6 {
		t.Fatalf("%d rows, want 6", len(run.Rows))
	}
	for _, tgt := range targets() {
		if tgt.RowNamespace != "team-a" && tgt.RowNamespace != "team-b" {
			t.Errorf("a row ran in %q", tgt.RowNamespace)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, report.JSONFile)); err != nil {
		t.Errorf("no report: %v", err)
	}
	if got := Judge(context.Background(), run, len(plans)); got != Fail {
		t.Errorf("Judge %s, want fail", got)
	}
}

// Judge: interrupted first, then a row without a verdict on the app (a harness fault, an error,
// a row that never ran), then a failure; a pass only when every planned row passed.
func TestJudge(t *testing.T) {
	row := func(s check.Status) report.Row {
		return report.Row{Suite: "s", Config: check.Applied{Name: string(s), Disruption: check.RolloutRestart}, Verdict: check.Verdict{Status: s}}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx     context.Context
		rows    []report.Row
		planned int
		want    Outcome
	}{
		{context.Background(), []report.Row{row(check.Pass), row(check.Pass)}, 2, Pass},
		{context.Background(), []report.Row{row(check.Pass)}, 2, Inconclusive},
		{context.Background(), []report.Row{row(check.Pass), row(check.Fail)}, 2, Fail},
		{context.Background(), []report.Row{row(check.Fail), row(check.HarnessFault)}, 2, Inconclusive},
		{context.Background(), []report.Row{row(check.Fail), row(check.Error)}, 2, Inconclusive},
		{cancelled, []report.Row{row(check.Pass), row(check.Pass)}, 2, Interrupted},
	} {
		if got := Judge(tc.ctx, report.NewRun(tc.rows), tc.planned); got != tc.want {
			t.Errorf("Judge(%v of %d): %s, want %s", tc.rows, tc.planned, got, tc.want)
		}
	}
}

// Printer logs a step's ProgressLine, indented under its row, one line per step.
func TestPrinter(t *testing.T) {
	var lines []string
	p := engine.Progress{Variant: "as-is", Step: engine.StepDisruption, N: 1, Count: 3}
	Printer(func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) })(p)
	if want := "  " + ProgressLine(p); len(lines) != 1 || lines[0] != want {
		t.Errorf("Printer logged %q, want %q", lines, want)
	}
}
