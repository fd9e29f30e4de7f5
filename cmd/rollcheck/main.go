// Command rollcheck checks an app's shutdown configuration under load (rollcheck check), finds
// the smallest preStop that meets a threshold (rollcheck tune), and manages the kind cluster the
// checks and the conformance suites run on; the scripts behind `make check`, `make cluster`,
// `make down` and `make e2e` call it.
//
//	rollcheck check -f CHECK.yaml | --manifest F --image REF --port N
//	rollcheck tune --sample exit|drain|ignore | -f CHECK.yaml [--variant NAME]
//	rollcheck compare BASE NEW
//	rollcheck e2e
//	rollcheck knobs [get NAME | table]
//	rollcheck cluster up|down|logs DIR|versions|default-image|node-image|load-image|proxy-images
//	rollcheck report [--figures FILE] DIR
//	rollcheck version (or --version)
//	rollcheck agent load|app ...  (internal: the programs of rollcheck's own images; not listed)
//
// The subcommands come from one table (commands). `rollcheck help` lists them; `rollcheck help
// CMD`, or `rollcheck CMD -h`, prints what CMD does, its exit codes and every flag it has,
// generated from its flag set. Exit 2 is bad input throughout: an unknown command or flag, a
// wrong operand, a check that cannot be judged.
//
// Configuration comes from the ROLLCHECK_* environment variables (internal/knobs).
// kind runs in-process (its Go API): no kind binary is needed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/replay"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

func main() {
	// The agent programs (the images' pods run them) come first, without rollcheck's signal
	// handling: they handle SIGTERM as their own programs do (the sample app may ignore it, or
	// leave it deadly and stop on SIGQUIT).
	if prog := asProgram(os.Args[0]); prog != nil {
		os.Exit(prog(os.Args[1:], os.Stdout, os.Stderr))
	}
	if prog, args := agentProgram(os.Args[1:]); prog != nil {
		os.Exit(prog(args, os.Stdout, os.Stderr))
	}
	// This executable is rollcheck: its own images may be made of it (internal/selfimage).
	selfimage.MarkRollcheck()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	if len(args) > 0 {
		if c := find(commands, args[0]); c != nil && c.ownSignals {
			stop()
		}
	}
	code := dispatch(ctx, commands, "rollcheck", args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func runVersion(_ context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return badArgs(stderr, "version", args)
	}
	fmt.Fprintln(stdout, "rollcheck", engine.Version())
	return exitPass
}

func runKnobs(_ context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
	return knobsCmd(args, stdout, stderr)
}

// reportFlags are rollcheck report's flags.
type reportFlags struct {
	figures   string
	reanalyze bool
}

func newReportFlags(fs *flag.FlagSet) *reportFlags {
	f := &reportFlags{}
	fs.StringVar(&f.figures, "figures", "", "write the run's figures document to `FILE` (from DIR/conformance.json) instead of merging rows")
	fs.BoolVar(&f.reanalyze, "reanalyze", false, "judge DIR's rows again from their recorded data (rows and raw ledgers, no cluster) and print what changed, instead of merging rows")
	return f
}

func runReport(_ context.Context, f *reportFlags, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "rollcheck report: want one directory, got %d arguments (rollcheck help report)\n", len(args))
		return exitBadInput
	}
	if f.reanalyze {
		return reanalyze(args[0], stdout, stderr)
	}
	if f.figures != "" {
		if err := writeFigures(args[0], f.figures); err != nil {
			fmt.Fprintln(stderr, "rollcheck report:", err)
			return exitFail
		}
		return exitPass
	}
	if err := writeReport(args[0], stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "rollcheck report:", err)
		return exitFail
	}
	return exitPass
}

// reanalyze replays the rows of dir with the current analysis and prints what changed: exit 0
// when nothing did, 1 when something did, 2 for a directory it cannot read.
func reanalyze(dir string, stdout, stderr io.Writer) int {
	rep, err := replay.Dir(dir)
	if err != nil {
		fmt.Fprintln(stderr, "rollcheck report --reanalyze:", err)
		return exitBadInput
	}
	if err := rep.Write(stdout); err != nil {
		fmt.Fprintln(stderr, "rollcheck report --reanalyze:", err)
		return exitFail
	}
	if changed, _, _ := rep.Count(); changed > 0 {
		return exitFail
	}
	return exitPass
}

// badArgs says that a command which takes no operands got some; it returns exitBadInput.
func badArgs(stderr io.Writer, cmd string, args []string) int {
	fmt.Fprintf(stderr, "rollcheck %s: unexpected arguments %q (rollcheck help %s)\n", cmd, args, cmd)
	return exitBadInput
}

// writeReport merges the rows the suites wrote into the run's reports and prints the table.
func writeReport(dir string, stdout, stderr io.Writer) error {
	rows, err := rowfile.Read(dir)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("report: no rows in %s/rows", dir)
	}
	run := report.NewRun(rows)
	paths, err := report.WriteAll(dir, run)
	if err != nil {
		return err
	}
	if err := run.WriteMarkdown(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "reports: %v\n", paths)
	c := report.Summarize(run)
	fmt.Fprintf(stdout, "\nconformance: %s\n", c)
	// The plain closing line CI reads.
	fmt.Fprintf(stdout, "conformance: %d passed, %d failed\n", c.Pass, c.NotPassed())
	if c.NotPassed() > 0 {
		return fmt.Errorf("%d row(s) failed, %d flaky, %d harness fault(s), %d error(s)", c.Fail, c.Flaky, c.HarnessFault, c.Error)
	}
	return nil
}
