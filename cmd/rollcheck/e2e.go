package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/suiterun"
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
	if err := suiterun.ClearOutputs(art); err != nil {
		logf("ERROR: %v", err)
		return 1
	}
	step = time.Now()
	res, err := suiterun.Run(suiterun.Options{Ginkgo: f.Ginkgo, Artifacts: art, Getenv: os.Getenv, Signals: sigs, Logf: logf})
	code, interrupted = res.Code, res.Interrupted
	if err != nil {
		logf("ERROR: %v", err)
	}
	if code < 0 { // not started, or killed
		code = 1
	}
	logf("step suites: exit %d in %s", code, time.Since(step).Round(time.Second))
	if !interrupted {
		if err := suiterun.CheckSelection(art, os.Getenv); err != nil {
			logf("ERROR: %v", err)
			code = max(code, 1)
		}
	}
	if _, err := os.Stat(filepath.Join(art, "rows")); err == nil {
		if err := writeReport(art, stdout, stderr); err != nil {
			logf("report: %v", err)
			code = 1
		}
	}
	return code
}
