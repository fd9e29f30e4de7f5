// Package frontend is how rollcheck's front ends run rows, one way for all: the CLI's
// `rollcheck check` (on kind and on an existing cluster) and rctest's suites. A row runs by the
// one retry policy (internal/attempt) and is written to the artifacts directory however it ended
// (Attempt); rows run up to a number at once, a row that must run alone alone (Schedule); a run's
// rows are written into the reports and judged into one Outcome, which a front end maps to its
// exit code or its spec's failure (Rows, Judge).
package frontend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/attempt"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// engineRun is engine.Run (tests: a stand-in).
var engineRun = engine.Run

// Attempt runs res on t (engine.Run with opts and the raw files in artifacts) by the front ends'
// one policy: a row the harness could not judge runs once more, both attempts kept
// (attempt.Run; retrying, when not nil, is told before the second), and the last attempt's row
// is written to artifacts/rows, also when the run ended in an error. It returns the row (nil only
// when the engine returned none) and the engine's error, with a failure to keep or write a row
// joined to it. engine.Run writes each attempt's row; Attempt writes it again only when the
// policy changed it.
func Attempt(ctx context.Context, t engine.Target, res *check.Resolved, artifacts string, retrying func(first *check.Row), opts ...engine.Option) (*check.Row, error) {
	opts = append([]engine.Option{engine.WithArtifacts(artifacts)}, opts...)
	var written check.Verdict // the last attempt's verdict as engine.Run wrote it
	row, err := attempt.Run(ctx, artifacts, func(ctx context.Context) (*check.Row, error) {
		r, err := engineRun(ctx, t, res, opts...)
		if r != nil {
			written = r.Verdict
		}
		return r, err
	}, retrying)
	// engine.Run wrote the row; written again only when the policy changed it (a retry marked,
	// a harness fault settled into the app's failure).
	if row != nil && (row.Attempts > 1 || row.Verdict != written) {
		if _, werr := rowfile.Write(artifacts, *row); werr != nil {
			err = errors.Join(err, fmt.Errorf("write row: %w", werr))
		}
	}
	return row, err
}

// Schedule calls run for each plan, taken in their order: up to parallel at once of the plans
// that may run beside others, and a plan that must run alone (check.Plan.RunsAlone) alone. Once
// ctx ends it starts no more; it returns when every run it started has returned.
func Schedule[P interface{ RunsAlone() string }](ctx context.Context, plans []P, parallel int, run func(i int, p P)) {
	var (
		wg    sync.WaitGroup
		slot  = make(chan struct{}, max(1, parallel))
		alone sync.RWMutex // a plan that must run alone holds it alone; the others share it
	)
	for i, p := range plans {
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		// Taken here, not in the goroutine, so that a plan that runs alone waits for the plans
		// before it and holds back those after it; the runs under way end soon after ctx does.
		lock, unlock := alone.RLock, alone.RUnlock
		if p.RunsAlone() != "" {
			lock, unlock = alone.Lock, alone.Unlock
		}
		lock()
		if ctx.Err() != nil {
			unlock()
			break
		}
		wg.Add(1)
		go func() {
			defer func() { unlock(); <-slot; wg.Done() }()
			run(i, p)
		}()
	}
	wg.Wait()
}

// Options configure Rows.
type Options struct {
	// Parallel is how many rows run at once (Schedule); below 1, one.
	Parallel int
	// RowNamespaces, when not empty, are namespaces of the user's the rows run in
	// (engine.Target.RowNamespace), one row at a time in each: a row waits for a free one.
	RowNamespaces []string
	// Artifacts is the directory of the rows, their raw files and the reports.
	Artifacts string
	// Logf is told each row's start, its retry and what went wrong; nil: nothing.
	Logf func(format string, args ...any)
	// Progress is each row's engine.WithProgress; nil: none.
	Progress func(engine.Progress)
}

// Rows runs every plan on t (Schedule, Attempt) after clearing the rows an earlier run left in
// o.Artifacts, writes the reports there (report.WriteAll) and returns the run, its rows by their
// start. The rows that ran are all there, also when ctx ended before every plan ran (Judge tells).
func Rows(ctx context.Context, t engine.Target, plans []*check.Resolved, o Options) report.Run {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	t.Logf = func(string, ...any) {} // the progress says what matters
	_ = rowfile.Clear(o.Artifacts)
	var opts []engine.Option
	if o.Progress != nil {
		opts = append(opts, engine.WithProgress(o.Progress))
	}
	var (
		mu   sync.Mutex
		rows []check.Row
	)
	// Rows in namespaces of the user's: one row at a time in each, taken from free ones.
	free := make(chan string, len(o.RowNamespaces))
	for _, ns := range o.RowNamespaces {
		free <- ns
	}
	Schedule(ctx, plans, o.Parallel, func(i int, res *check.Resolved) {
		p := res.Plan()
		t := t
		if len(o.RowNamespaces) > 0 {
			t.RowNamespace = <-free
			defer func() { free <- t.RowNamespace }()
		}
		where := ""
		if t.RowNamespace != "" {
			where = " in " + t.RowNamespace
		}
		logf("row %d/%d: %s under %s×%d%s", i+1, len(plans), p.Variant.Name, p.Disruption.Kind, p.Disruption.Count, where)
		row, err := Attempt(ctx, t, res, o.Artifacts, func(first *check.Row) {
			logf("row %d/%d: harness fault, not a verdict on the app: %s; running it once more", i+1, len(plans), first.Verdict.Reason)
		}, opts...)
		if row != nil {
			mu.Lock()
			rows = append(rows, *row)
			mu.Unlock()
		}
		if err != nil {
			logf("%v", err)
		}
	})
	run := report.NewRun(rows) // by their start
	if _, err := report.WriteAll(o.Artifacts, run); err != nil {
		logf("%v", err)
	}
	return run
}

// Outcome is what a run of rows means for its front end, in the order Judge weighs them.
type Outcome int

const (
	// Pass: every planned row ran and passed.
	Pass Outcome = iota
	// Fail: a row failed (or was flaky), and every row has a verdict on the app.
	Fail
	// Inconclusive: a row was a harness fault or an error, or did not run: no verdict on the
	// app can be given for it, pass or fail.
	Inconclusive
	// Interrupted: the run was stopped (ctx ended).
	Interrupted
)

// String is "pass", "fail", "inconclusive" or "interrupted".
func (o Outcome) String() string {
	switch o {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Inconclusive:
		return "inconclusive"
	case Interrupted:
		return "interrupted"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Judge is the run's Outcome, of planned rows: an interrupted run is Interrupted whatever its
// rows say; a row without a verdict on the app (a harness fault, an error, a row that did not
// run) makes the run Inconclusive before any failure makes it Fail, so that no pass is reported
// for a row that was never judged.
func Judge(ctx context.Context, run report.Run, planned int) Outcome {
	counts := report.Summarize(run)
	switch {
	case ctx.Err() != nil:
		return Interrupted
	case counts.HarnessFault+counts.Error > 0 || len(run.Rows) < planned:
		return Inconclusive
	case counts.Fail+counts.Flaky > 0:
		return Fail
	}
	return Pass
}

// Printer logs each step of a row (ProgressLine) through logf, indented under its row: the
// progress the CLI's commands show.
func Printer(logf func(string, ...any)) func(engine.Progress) {
	return func(p engine.Progress) { logf("  %s", ProgressLine(p)) }
}

// ProgressLine is the line a front end shows for one step of a row: a disruption's start and
// end with the requests and failures so far, the load's count while the disruptions run, the
// namespace torn down, and any other step with what it says.
func ProgressLine(p engine.Progress) string {
	switch p.Step {
	case engine.StepDisruption:
		return fmt.Sprintf("%s: disruption %d/%d starts; %d requests, %d failed so far", p.Variant, p.N, p.Count, p.Load.Sent, p.Load.Failed)
	case engine.StepSettled:
		pod := "" // the deleted pod, for delete-pod and force-delete
		if p.Detail != "" {
			pod = " (pod " + p.Detail + ")"
		}
		return fmt.Sprintf("%s: disruption %d/%d settled%s; %d requests, %d failed so far", p.Variant, p.N, p.Count, pod, p.Load.Sent, p.Load.Failed)
	case engine.StepLoadTicker:
		return fmt.Sprintf("%s: %d requests, %d failed so far", p.Variant, p.Load.Sent, p.Load.Failed)
	case engine.StepTeardown:
		return fmt.Sprintf("%s: teardown of namespace %s", p.Variant, p.Detail)
	}
	return fmt.Sprintf("%s: %s %s", p.Variant, p.Step, p.Detail)
}
