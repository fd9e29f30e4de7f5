package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// exitInterrupted is the exit code of a run stopped by SIGINT or SIGTERM (128 + SIGINT).
const exitInterrupted = 130

// artifactsDir is $ARTIFACTS, else _artifacts in the working directory.
func artifactsDir() string {
	if a := os.Getenv("ARTIFACTS"); a != "" {
		return a
	}
	return "_artifacts"
}

const e2eAbout = `The conformance suites, as make e2e runs them after the Docker engine, the tools and the node
image: every knob checked, the cluster acquired (created or reused), the Ginkgo suites of
ROLLCHECK_SUITES run as a child process (SIGINT and SIGTERM passed on; a time limit), the report
written into the artifacts, the cluster released (deleted if this run created it and
ROLLCHECK_KEEP_CLUSTER is not set).
A run whose label filter (ROLLCHECK_LABELS) selects no spec of any suite fails (a misspelt label).
Exit: ginkgo's; 1 the report or the cluster failed, or no spec selected; 2 a bad knob; 130 interrupted.`

// e2eFlags are rollcheck e2e's flags.
type e2eFlags struct {
	Ginkgo, Artifacts string
}

func newE2EFlags(fs *flag.FlagSet) *e2eFlags {
	f := &e2eFlags{}
	fs.StringVar(&f.Ginkgo, "ginkgo", "ginkgo", "the ginkgo binary")
	fs.StringVar(&f.Artifacts, "artifacts", artifactsDir(), "`DIR` for rows, reports and logs")
	return f
}

// runE2E is make e2e after the Docker engine, the tools and the node image: every knob checked,
// the cluster acquired by the policy (cluster.DefaultSetup), the Ginkgo suites run as a child
// process (SIGINT and SIGTERM passed on, a time limit), the report written, the cluster released
// (cluster.DefaultTeardown: logs exported when anything failed, namespaces waited for, deleted if
// this run created it and ROLLCHECK_KEEP_CLUSTER is not set). It returns the exit code.
func runE2E(_ context.Context, f *e2eFlags, args []string, stdout, stderr io.Writer) (code int) {
	logf := logLine(stderr, "e2e")
	if len(args) > 0 {
		return badArgs(stderr, "e2e", args)
	}
	if code := checkKnobs(stderr, "e2e"); code != exitPass {
		return code
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		logf("ERROR: %v", err)
		return exitBadInput
	}
	opts.Logf = logLine(stderr, "cluster")
	art, err := filepath.Abs(f.Artifacts)
	if err == nil {
		err = os.MkdirAll(art, 0o755)
	}
	if err != nil {
		logf("ERROR: artifacts: %v", err)
		return exitBadInput
	}

	// A signal stops the set-up (ctx) or is passed on to ginkgo; either way the release runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var setupInterrupted atomic.Bool
	stopSetup := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			setupInterrupted.Store(true)
			cancel()
		case <-stopSetup:
		}
	}()
	interrupted := false

	start := time.Now()
	r := &cluster.Run{Options: opts, LogsDir: filepath.Join(art, "cluster-logs")}
	defer func() {
		if interrupted {
			code = exitInterrupted
		}
		r.Failed = r.Failed || code != exitPass
		if err := r.Teardown(context.Background(), cluster.DefaultTeardown...); err != nil {
			logf("cleanup: %v", err)
			code = max(code, 1)
		}
		logf("total %s, exit %d; artifacts in %s", time.Since(start).Round(time.Second), code, art)
	}()
	step := time.Now()
	err = r.Setup(ctx, cluster.DefaultSetup...)
	close(stopSetup)
	interrupted = setupInterrupted.Load()
	if err != nil || interrupted {
		logf("step cluster-up: FAILED in %s: %v", time.Since(step).Round(time.Second), err)
		return 1
	}
	logf("step cluster-up: done in %s (%s)", time.Since(step).Round(time.Second), map[bool]string{true: "created", false: "reused"}[r.Cluster.Created])

	// The suites reuse the cluster acquired above and leave it to this run.
	for _, d := range []string{"rows", "examples", ginkgoReport} {
		if err := os.RemoveAll(filepath.Join(art, d)); err != nil {
			logf("ERROR: %v", err)
			return 1
		}
	}
	step = time.Now()
	code, interrupted = runGinkgo(f.Ginkgo, ginkgoArgs(art), sigs, suiteTimeout()+10*time.Minute, logf)
	logf("step suites: exit %d in %s", code, time.Since(step).Round(time.Second))
	if sel, ok := readSelection(filepath.Join(art, ginkgoReport)); ok && sel.specs == 0 && !interrupted {
		l, _ := knobs.Get(os.Getenv, knobs.EnvLabels)
		dirs, _ := knobs.Get(os.Getenv, knobs.EnvSuites)
		logf("ERROR: %s=%q selects no spec of %s=%q: a misspelt label? The suites' labels: %s",
			knobs.EnvLabels, l, knobs.EnvSuites, dirs, strings.Join(sel.labels, ", "))
		code = max(code, 1)
	}
	if _, err := os.Stat(filepath.Join(art, "rows")); err == nil {
		if err := writeReport(art, stdout, stderr); err != nil {
			logf("report: %v", err)
			code = 1
		}
	}
	return code
}

// suiteTimeout is ginkgo's --timeout: one pass of the matrix takes about 20 minutes; 60 minutes
// a pass (ROLLCHECK_REPEAT passes) leaves room for slow machines.
func suiteTimeout() time.Duration {
	repeat, err := knobs.Repeat(os.Getenv)
	if err != nil {
		repeat = 1 // the knobs were checked before; a bad one never gets here
	}
	return time.Duration(repeat) * time.Hour
}

// ginkgoReport is the merged JSON report ginkgo writes into the artifacts (ginkgoArgs).
const ginkgoReport = "ginkgo-report.json"

// ginkgoArgs is the ginkgo command line of make e2e, from the knobs (checked already).
func ginkgoArgs(art string) []string {
	args := []string{"-r", "--keep-going", "--tags=e2e", "--timeout=" + suiteTimeout().String(), "--poll-progress-after=120s"}
	if st, err := os.Stdout.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		args = append(args, "--no-color")
	}
	// Rows with load from the cluster run ROLLCHECK_PROCS at once; Serial specs (load from the
	// host, smoke, the examples) still run one at a time, on process 1, after the others.
	if procs, err := knobs.Procs(os.Getenv); err == nil && procs > 1 {
		args = append(args, fmt.Sprintf("--procs=%d", procs))
	}
	// The default filter leaves out the slow rows (kubelet restarts: make e2e-slow) and the row
	// that needs a runtime which takes lifecycle.stopSignal (make e2e-stopsignal).
	l, _ := knobs.Get(os.Getenv, knobs.EnvLabels)
	args = append(args, "--label-filter="+l)
	// A run must select a spec: a misspelt label would otherwise pass having run nothing. Ginkgo's
	// --fail-on-empty belongs to a suite (types.SuiteConfig.FailOnEmpty: each suite process fails
	// when the filter selects none of its specs), so with several directories it would fail a run
	// that selects rows in one (examples/check has none under ROLLCHECK_LABELS=rollout-restart):
	// ginkgo gets it for one directory only, and runE2E checks the run as a whole in the merged
	// report (readSelection).
	suites, _ := knobs.Get(os.Getenv, knobs.EnvSuites)
	if len(strings.Fields(suites)) == 1 {
		args = append(args, "--fail-on-empty")
	}
	args = append(args, "--output-dir="+art, "--junit-report=junit.xml", "--json-report="+ginkgoReport)
	args = append(args, strings.Fields(os.Getenv(knobs.EnvGinkgoFlags))...)
	return append(args, strings.Fields(suites)...)
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

// runGinkgo runs ginkgo in a process group of its own (a Ctrl-C at the terminal reaches it only
// through this process, once), passes on every SIGINT and SIGTERM, and stops it after limit
// (SIGTERM, SIGKILL a minute later). It returns ginkgo's exit code and whether a signal came.
func runGinkgo(ginkgo string, args []string, sigs <-chan os.Signal, limit time.Duration, logf func(string, ...any)) (int, bool) {
	logf("%s %s", ginkgo, strings.Join(args, " "))
	cmd := exec.Command(ginkgo, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf("ERROR: start ginkgo: %v", err)
		return 1, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	interrupted := false
	var kill <-chan time.Time
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return 0, interrupted
			case errors.As(err, &ee) && ee.ExitCode() >= 0:
				return ee.ExitCode(), interrupted
			}
			logf("ginkgo: %v", err)
			return 1, interrupted
		case s := <-sigs:
			interrupted = true
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
