// Package suiterun runs rollcheck's Ginkgo conformance suites as make e2e does (rollcheck e2e):
// ginkgo as a child process, its command line from the knobs (ROLLCHECK_SUITES,
// ROLLCHECK_LABELS, ROLLCHECK_PROCS, ROLLCHECK_REPEAT, ROLLCHECK_GINKGO_FLAGS), SIGINT and
// SIGTERM passed on to it, a time limit, and its merged JSON report read back to tell whether
// the label filter selected any spec.
//
// It acquires no cluster and writes no report of its own: the caller holds the cluster the
// suites reuse, and decides what the outcome means (exit codes, messages).
package suiterun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// reportFile is the merged JSON report ginkgo writes into the artifacts directory (args).
const reportFile = "ginkgo-report.json"

// outputs are what a run of the suites writes into the artifacts directory, which a new run
// removes first (ClearOutputs): the rows, the examples' results and ginkgo's merged report.
var outputs = []string{"rows", "examples", reportFile}

// ClearOutputs removes what an earlier run of the suites left in the artifacts directory art
// (the rows, the examples' results, ginkgo's merged report), so that what is there after Run
// is this run's only.
func ClearOutputs(art string) error {
	for _, d := range outputs {
		if err := os.RemoveAll(filepath.Join(art, d)); err != nil {
			return err
		}
	}
	return nil
}

// timeout is ginkgo's --timeout: one pass of the matrix takes about 20 minutes; 60 minutes
// a pass (ROLLCHECK_REPEAT passes) leaves room for slow machines.
func timeout(getenv func(string) string) time.Duration {
	repeat, err := knobs.Repeat(getenv)
	if err != nil {
		repeat = 1 // the knobs were checked before; a bad one never gets here
	}
	return time.Duration(repeat) * time.Hour
}

// limitBeyondTimeout is how long Run lets ginkgo run past its own --timeout before it stops it.
const limitBeyondTimeout = 10 * time.Minute

// args is the ginkgo command line of make e2e, from the knobs (checked already), its reports
// written into the artifacts directory art.
func args(art string, getenv func(string) string) []string {
	args := []string{"-r", "--keep-going", "--tags=e2e", "--timeout=" + timeout(getenv).String(), "--poll-progress-after=120s"}
	if st, err := os.Stdout.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		args = append(args, "--no-color")
	}
	// Rows with load from the cluster run ROLLCHECK_PROCS at once; Serial specs (load from the
	// host, smoke, the examples) still run one at a time, on process 1, after the others.
	if procs, err := knobs.Procs(getenv); err == nil && procs > 1 {
		args = append(args, fmt.Sprintf("--procs=%d", procs))
	}
	// The default filter leaves out the slow rows (kubelet restarts: make e2e-slow) and the row
	// that needs a runtime which takes lifecycle.stopSignal (make e2e-stopsignal).
	l, _ := knobs.Get(getenv, knobs.EnvLabels)
	args = append(args, "--label-filter="+l)
	// A run must select a spec: a misspelt label would otherwise pass having run nothing. Ginkgo's
	// --fail-on-empty belongs to a suite (types.SuiteConfig.FailOnEmpty: each suite process fails
	// when the filter selects none of its specs), so with several directories it would fail a run
	// that selects rows in one (examples/check has none under ROLLCHECK_LABELS=rollout-restart):
	// ginkgo gets it for one directory only, and CheckSelection checks the run as a whole in the
	// merged report (readSelection).
	suites, _ := knobs.Get(getenv, knobs.EnvSuites)
	if len(strings.Fields(suites)) == 1 {
		args = append(args, "--fail-on-empty")
	}
	args = append(args, "--output-dir="+art, "--junit-report=junit.xml", "--json-report="+reportFile)
	args = append(args, strings.Fields(getenv(knobs.EnvGinkgoFlags))...)
	return append(args, strings.Fields(suites)...)
}

// Options are one run of the suites.
type Options struct {
	// Ginkgo is the ginkgo executable (a name looked up on PATH, or a path).
	Ginkgo string
	// Artifacts is the directory ginkgo writes its reports into (--output-dir), and the suites
	// their rows: absolute, since ginkgo runs each suite in its own directory.
	Artifacts string
	// Getenv reads the knobs (nil: os.Getenv); they were checked before.
	Getenv func(string) string
	// Signals are passed on to ginkgo, every one, for as long as it runs.
	Signals <-chan os.Signal
	// Logf gets the command line, the signals passed on and the time limit's steps (nil: they
	// are dropped).
	Logf func(format string, args ...any)
}

// Result is how a run of ginkgo ended.
type Result struct {
	// Code is ginkgo's exit code, or -1 when it has none: it was killed by a signal (Run logged
	// how), or never started (Run's error).
	Code int
	// Interrupted says whether a signal came (and was passed on) while ginkgo ran.
	Interrupted bool
}

// Run runs ginkgo on the suites with make e2e's command line, in a process group of its own (a
// Ctrl-C at the terminal reaches it only through the caller, once), its output on this
// process's stdout and stderr. It passes on every signal of o.Signals, and stops ginkgo when it
// runs past its own --timeout by limitBeyondTimeout (SIGTERM, then SIGKILL to its process
// group a minute later). The error says ginkgo could not be started; ginkgo's failures are in
// the Result.
func Run(o Options) (Result, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return runGinkgo(o.Ginkgo, args(o.Artifacts, o.Getenv), o.Signals, timeout(o.Getenv)+limitBeyondTimeout, o.Logf)
}

// runGinkgo is Run for a command line and a time limit.
func runGinkgo(ginkgo string, args []string, sigs <-chan os.Signal, limit time.Duration, logf func(string, ...any)) (Result, error) {
	logf("%s %s", ginkgo, strings.Join(args, " "))
	cmd := exec.Command(ginkgo, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Result{Code: -1}, fmt.Errorf("start ginkgo: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var r Result
	var kill <-chan time.Time
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return r, nil
			case errors.As(err, &ee) && ee.ExitCode() >= 0:
				r.Code = ee.ExitCode()
				return r, nil
			}
			logf("ginkgo: %v", err)
			r.Code = -1
			return r, nil
		case s := <-sigs:
			r.Interrupted = true
			logf("%v: passing it on to ginkgo, which cleans up", s)
			_ = cmd.Process.Signal(s)
		case <-timer.C:
			logf("ginkgo still runs after %s: stopping it", limit)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(time.Minute)
		case <-kill:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// CheckSelection reads ginkgo's merged report in the artifacts directory art after Run, and
// returns an error when the label filter (ROLLCHECK_LABELS) selected no spec of any suite of
// ROLLCHECK_SUITES (a misspelt label), naming the labels the suites have. It returns nil when
// some spec was selected, and when the report cannot tell (readSelection).
func CheckSelection(art string, getenv func(string) string) error {
	sel, ok := readSelection(filepath.Join(art, reportFile))
	if !ok || sel.specs > 0 {
		return nil
	}
	l, _ := knobs.Get(getenv, knobs.EnvLabels)
	dirs, _ := knobs.Get(getenv, knobs.EnvSuites)
	return fmt.Errorf("%s=%q selects no spec of %s=%q: a misspelt label? The suites' labels: %s",
		knobs.EnvLabels, l, knobs.EnvSuites, dirs, strings.Join(sel.labels, ", "))
}

// selection is what a run's label filter selected, by ginkgo's merged JSON report.
type selection struct {
	// specs is how many specs the filter selected over every Ginkgo suite (each suite's
	// PreRunStats.SpecsThatWillRun: counted before any ran, whatever happened next).
	specs int
	// labels are every label of the suites' specs, sorted: what the filter could have named.
	labels []string
}

// readSelection reads ginkgo's merged JSON report at path, and tells whether it says what the
// filter selected: it does not when it is missing or unreadable, holds no suite, or holds one
// whose tree was never built (a suite that did not compile or was skipped after another failed
// reports no spec, and ginkgo fails the run for it already). A plain go test package in
// ROLLCHECK_SUITES (examples/gotest) is in no report: the label filter does not reach it.
func readSelection(path string) (selection, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return selection{}, false
	}
	var reports []struct {
		SuiteSucceeded bool
		SuiteLabels    []string
		PreRunStats    types.PreRunStats
		SpecReports    []struct {
			ContainerHierarchyLabels [][]string
			LeafNodeLabels           []string
		}
	}
	if err := json.Unmarshal(b, &reports); err != nil || len(reports) == 0 {
		return selection{}, false
	}
	var sel selection
	for _, r := range reports {
		if r.PreRunStats.TotalSpecs == 0 && !r.SuiteSucceeded {
			return selection{}, false
		}
		sel.specs += r.PreRunStats.SpecsThatWillRun
		sel.labels = append(sel.labels, r.SuiteLabels...)
		for _, sp := range r.SpecReports {
			sel.labels = append(sel.labels, slices.Concat(append(sp.ContainerHierarchyLabels, sp.LeafNodeLabels)...)...)
		}
	}
	slices.Sort(sel.labels)
	sel.labels = slices.Compact(sel.labels)
	return sel, true
}
