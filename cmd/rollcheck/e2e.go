package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rollcheck/rollcheck/internal/cluster"
)

// exitInterrupted is the exit code of a run stopped by SIGINT or SIGTERM (128 + SIGINT).
const exitInterrupted = 130

// knobs checks every knob (cluster.Knobs) and prints one line per problem; exit 2 if any.
func knobs(stderr io.Writer, prefix string) int {
	errs := cluster.CheckKnobs(os.Getenv, false)
	for _, err := range errs {
		fmt.Fprintf(stderr, "%s [%s] ERROR: %v\n", time.Now().UTC().Format("15:04:05"), prefix, err)
	}
	if len(errs) > 0 {
		return exitBadInput
	}
	return exitPass
}

// artifactsDir is $ARTIFACTS, else _artifacts in the working directory.
func artifactsDir() string {
	if a := os.Getenv("ARTIFACTS"); a != "" {
		return a
	}
	return "_artifacts"
}

// e2e is make e2e after the Docker engine, the tools and the node image: every knob checked,
// the cluster acquired by the policy (cluster.DefaultSetup), the Ginkgo suites run as a child
// process (SIGINT and SIGTERM passed on, a time limit), the report written, the cluster released
// (cluster.DefaultTeardown: logs exported when anything failed, namespaces waited for, deleted if
// this run created it and ROLLCHECK_KEEP_CLUSTER is not set). It returns the exit code.
func e2e(args []string, stderr io.Writer) (code int) {
	logf := logLine(stderr, "e2e")
	fs := flag.NewFlagSet("e2e", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ginkgo := fs.String("ginkgo", "ginkgo", "the ginkgo binary")
	artifacts := fs.String("artifacts", artifactsDir(), "directory for rows, reports and logs")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: rollcheck e2e [--ginkgo PATH] [--artifacts DIR]")
		return exitBadInput
	}
	if code := knobs(stderr, "e2e"); code != exitPass {
		return code
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		logf("ERROR: %v", err)
		return exitBadInput
	}
	opts.Logf = logLine(stderr, "cluster")
	art, err := filepath.Abs(*artifacts)
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
	for _, d := range []string{"rows", "examples"} {
		if err := os.RemoveAll(filepath.Join(art, d)); err != nil {
			logf("ERROR: %v", err)
			return 1
		}
	}
	step = time.Now()
	code, interrupted = runGinkgo(*ginkgo, ginkgoArgs(art), sigs, suiteTimeout()+10*time.Minute, logf)
	logf("step suites: exit %d in %s", code, time.Since(step).Round(time.Second))
	if _, err := os.Stat(filepath.Join(art, "rows")); err == nil {
		if err := writeReport(art); err != nil {
			logf("report: %v", err)
			code = 1
		}
	}
	return code
}

// suiteTimeout is ginkgo's --timeout: one pass of the matrix takes about 20 minutes; 60 minutes
// a pass (ROLLCHECK_REPEAT passes) leaves room for slow machines.
func suiteTimeout() time.Duration {
	repeat, err := cluster.Repeat(os.Getenv)
	if err != nil {
		repeat = 1 // the knobs were checked before; a bad one never gets here
	}
	return time.Duration(repeat) * time.Hour
}

// DefaultLabels is make e2e's label filter when ROLLCHECK_LABELS is empty: everything but the
// slow rows (kubelet restarts: make e2e-slow) and the row that needs a runtime which takes
// lifecycle.stopSignal (the offline node image's containerd does not).
const DefaultLabels = "!slow && !stop-signal-field"

// ginkgoArgs is the ginkgo command line of make e2e, from the knobs (checked already).
func ginkgoArgs(art string) []string {
	args := []string{"-r", "--keep-going", "--tags=e2e", "--timeout=" + suiteTimeout().String(), "--poll-progress-after=120s"}
	if st, err := os.Stdout.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		args = append(args, "--no-color")
	}
	// Rows with load from the cluster run ROLLCHECK_PROCS at once; Serial specs (load from the
	// host, smoke, the examples) still run one at a time, on process 1, after the others.
	if procs, err := cluster.Procs(os.Getenv); err == nil && procs > 1 {
		args = append(args, fmt.Sprintf("--procs=%d", procs))
	}
	l := os.Getenv(cluster.EnvLabels)
	if l == "" {
		l = DefaultLabels
	}
	args = append(args, "--label-filter="+l)
	args = append(args, "--output-dir="+art, "--junit-report=junit.xml", "--json-report=ginkgo-report.json")
	args = append(args, strings.Fields(os.Getenv(cluster.EnvGinkgoFlags))...)
	suites := strings.Fields(os.Getenv(cluster.EnvSuites))
	if len(suites) == 0 {
		// The built-in matrix, then a user's Ginkgo suite and a user's plain go test (a module
		// of its own: ginkgo builds it in its directory and runs it as go test would), all on
		// the cluster acquired above. Ginkgo runs the directories in this order.
		suites = []string{"suites", "examples/check", "examples/gotest"}
	}
	return append(args, suites...)
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
