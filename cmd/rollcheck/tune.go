package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/frontend"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/internal/tunefront"
	"github.com/rollcheck/rollcheck/spec"
	"github.com/rollcheck/rollcheck/tune"
)

const tuneAbout = `Finds the smallest preStop with which the app meets its threshold under --count repeated
disruptions, on the kind cluster (created or reused as rollcheck check does; never an existing
cluster: KUBECONFIG and a check file's cluster section are not used). Each probe is one
full run at one preStop value: first --min; if it fails, --min + resolution·2^k (0.5, 1, 2, 4, 8,
16 s, then --max) until one passes; then bisection between the last failing and the first passing
value down to --resolution. Probes may run at once (--parallel), but the answer rests on runs
alone only: the value found runs alone until its pod deletions, none failing, bound the chance
that one deletion fails below --bound at 95 % confidence (59 deletions for 5 %), or until one
fails, and then the next value up is tried; the value one step below must have failed alone
(it runs there alone if it has not), or the answer moves down to it. The report gives the bound
at the answer and one step below. A probe that is a harness fault or an error is run once more;
twice ends the tune.
Exit 0 found and confirmed, 1 not found up to --max or not confirmed, 2 bad input, a harness fault
or an error, 130 interrupted.`

// tuneFlags are rollcheck tune's flags: the shared ones, the app to tune (the sample app or a
// check file's variant), its disruption, and the search's range.
type tuneFlags struct {
	runFlags
	Sample, Variant, Disruption, Exec string
	Count                             int
	Min, Max, Resolution              time.Duration
	Bound                             boundFlag
}

// boundFlag is --bound: a probability, as 0.05 or 5%.
type boundFlag float64

func (b *boundFlag) String() string {
	return strconv.FormatFloat(100*float64(*b), 'f', -1, 64) + "%"
}

func (b *boundFlag) Set(s string) error {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("want a probability, as 0.05 or 5%%")
	}
	if pct {
		f /= 100
	}
	*b = boundFlag(f)
	return nil
}

func newTuneFlags(fs *flag.FlagSet) *tuneFlags {
	f := &tuneFlags{}
	f.register(fs, defaultTuneArtifacts(), "check the input, say what would be tuned, and stop (no Docker, no cluster)",
		fmt.Sprintf("`N` probes at once, 1 to %d; above 1 only when the probes may run beside each other: not with\n"+
			"load from the host or to a URL outside their namespace, a kubelet restart or a node drain\n"+
			"(default: as many as %s allows, or 1)", tune.MaxParallel, knobs.EnvProcs))
	fs.StringVar(&f.Sample, "sample", "", "tune the sample app (rollcheck agent app, an image of this executable), which on SIGTERM does\n"+
		"`MODE`: exit, drain or ignore; preStop is an httpGet to its own /prestop?sleep=<d>, so half\n"+
		"seconds are real; terminationGracePeriodSeconds 30; threshold: no failed request")
	fs.StringVar(&f.Variant, "variant", "", "with -f: the check file's variant to tune (`NAME`; needed when it lists several);\n"+
		"its expect is the threshold. preStop is the native sleep action, which takes whole\n"+
		"seconds (the resolution is raised to 1s), unless --exec")
	fs.StringVar(&f.Exec, "exec", "", "with -f: run `CMD` as the preStop, {} replaced by the seconds (1.5): the image needs a\n"+
		"sleep binary that takes fractions (coreutils or busybox sleep do); as in 'sleep {}'")
	fs.StringVar(&f.Disruption, "disruption", "", "the disruption `KIND` (default rollout-restart for --sample; needed when the check file lists several)")
	fs.IntVar(&f.Count, "count", 0, "disruptions per probe, 1 to 20 (default 5 for --sample, the check file's count for -f)")
	fs.DurationVar(&f.Min, "min", 0, "smallest preStop")
	fs.DurationVar(&f.Max, "max", tune.DefaultMax, "largest preStop")
	fs.DurationVar(&f.Resolution, "resolution", tune.DefaultResolution, "the search's resolution")
	f.Bound = boundFlag(tune.DefaultBound)
	fs.Var(&f.Bound, "bound", fmt.Sprintf("the answer's runs alone must show, at 95 %% confidence, that one pod deletion fails\n"+
		"with a probability below `P` (0.05 or 5%%; %g%% to %g%%): 5%% takes 59 deletions, none failing", 100*tune.MinBound, 100*tune.MaxBound))
	return f
}

// tuneArgs is rollcheck tune's input, checked: the shared flags and what tunefront.New built.
type tuneArgs struct {
	runFlags
	sample   scenario.Shutdown // the sample app's mode, or "" for a check file
	check    *spec.Check
	warnings []string // the check file's (spec.Check.Plans)
	base     check.Plan
	opts     tunefront.Settings
}

// runTuneCmd runs `rollcheck tune`; it returns the exit code.
func runTuneCmd(ctx context.Context, f *tuneFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck tune: "+format+"\n", a...)
		return exitBadInput
	}
	ta, err := f.args(args)
	if err != nil {
		return bad("%v", err)
	}
	for _, w := range ta.warnings {
		fmt.Fprintf(stderr, "rollcheck tune: warning: %s\n", w)
	}
	if ta.DryRun {
		fmt.Fprintln(stdout, ta.opts.Describe(ta.base, ta.sample, ta.Artifacts))
		return exitPass
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	opts.Keep = opts.Keep || ta.KeepCluster
	if ta.check != nil {
		if err := checkinput.Images(ctx, ta.check, stderr); err != nil {
			return bad("%v", err)
		}
	}
	if err := ownImagesPreflight(opts, checkinput.FromLoadPods(ta.base), ta.sample != ""); err != nil {
		return bad("%v", err)
	}
	opts.Logf = logLine(stderr, "cluster")
	for _, n := range ta.clusterNotes() {
		opts.Logf("%s", n)
	}
	return onCluster(ctx, opts, ta.Artifacts, "tune", stderr, func(cl *cluster.Cluster) int {
		return runTune(ctx, cl, ta, stdout, logLine(stderr, "tune"))
	})
}

// clusterNotes say what a tune, which runs on the kind cluster only, does not read: KUBECONFIG
// when it is set, the check file's cluster section when it has one.
func (ta *tuneArgs) clusterNotes() []string {
	var notes []string
	if n := kindNote("tune", ""); n != "" {
		notes = append(notes, n)
	}
	if ta.check != nil && ta.check.Cluster != nil {
		notes = append(notes, ta.File+"'s cluster section is not used: rollcheck tune runs on its own kind cluster only")
	}
	return notes
}

// args checks the flags and the operands, and builds the base Plan and the options: every
// problem of the input is found here, before any Docker or cluster work.
func (f *tuneFlags) args(operands []string) (*tuneArgs, error) {
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (rollcheck help tune)", operands)
	}
	in, err := tunefront.New(tunefront.Flags{Sample: f.Sample, File: f.File, Variant: f.Variant, Disruption: f.Disruption,
		Exec: f.Exec, Count: f.Count, Min: f.Min, Max: f.Max, Resolution: f.Resolution, Bound: float64(f.Bound)}, f.probesAtOnce)
	if err != nil {
		return nil, err
	}
	return &tuneArgs{runFlags: f.runFlags, sample: in.Sample, check: in.Check, warnings: in.Warnings, base: in.Base, opts: in.Settings}, nil
}

// probesAtOnce is how many probes run at once: --parallel when given (above 1 only when the
// base may run beside others: check.Plan.RunsAlone, tune.Parallelism), else as many as
// ROLLCHECK_PROCS allows for such a base, the rule check's rows follow, and 1 for any other.
func (f *tuneFlags) probesAtOnce(base check.Plan) (int, error) {
	return f.ParallelOf(tune.Parallelism(base), tune.MaxParallel, checkinput.AloneRefusal("each probe", base))
}

// defaultTuneArtifacts is $ARTIFACTS/tune, or _artifacts/tune: a directory of its own, so that
// the probes' rows never mix with a conformance run's.
func defaultTuneArtifacts() string { return filepath.Join(envOr("ARTIFACTS", "_artifacts"), "tune") }

// runTune runs the tune on the cluster, writes every probe's row as it ends and the reports at
// the end, prints the Markdown summary and decides the exit code.
func runTune(ctx context.Context, cl *cluster.Cluster, ta *tuneArgs, stdout io.Writer, logf func(string, ...any)) int {
	base := ta.base
	if ta.sample != "" {
		ref, err := cl.BuildAppImage(ctx)
		if err != nil {
			logf("%v", err)
			return exitCode(ctx, exitBadInput)
		}
		if base, err = tunefront.SampleBase(ta.sample, base.Disruption.Kind, base.Disruption.Count, ref); err != nil {
			logf("%v", err)
			return exitBadInput
		}
		logf("the sample app (%s on SIGTERM), preStop httpGet /prestop?sleep=<d>, terminationGracePeriodSeconds %d", ta.sample, tunefront.SampleGrace)
	}
	t, err := kindTarget(ctx, cl, checkinput.FromLoadPods(base))
	if err != nil {
		logf("%v", err)
		return exitCode(ctx, exitBadInput)
	}
	t.Logf = func(string, ...any) {} // the progress lines say what matters
	_ = rowfile.Clear(ta.Artifacts)
	o := ta.opts
	progress := func(p tune.Probe) {
		logf("%s", tunefront.ProbeLine(p))
		if p.Status != "" && p.Row != nil {
			if _, err := rowfile.Write(ta.Artifacts, *p.Row); err != nil {
				logf("write row: %v", err)
			}
		}
	}
	logf("tuning %s under %s×%d: preStop %s to %s", base.Variant.Name, base.Disruption.Kind, base.Disruption.Count, o.Min, o.Max)
	run := func(ctx context.Context, p *check.Resolved) (*check.Row, error) {
		return engine.Run(ctx, t, p, engine.WithArtifacts(ta.Artifacts), engine.WithProgress(frontend.Printer(logf)))
	}
	res, err := tune.Run(ctx, run, base, o.Options(progress)...)
	if res != nil {
		paths, werr := report.WriteTune(ta.Artifacts, res)
		if werr != nil {
			logf("%v", werr)
		}
		if werr := report.TuneMarkdown(stdout, res); werr != nil {
			logf("%v", werr)
		}
		logf("%s in %s; reports: %s", res.Status, res.Wall.Round(time.Second), strings.Join(paths, ", "))
	}
	if err != nil {
		logf("%v", err)
		return exitCode(ctx, exitBadInput)
	}
	if res.Status == tune.Found {
		return exitPass
	}
	return exitFail
}

// exitCode is exitSignal when ctx ended (Ctrl-C), code otherwise.
func exitCode(ctx context.Context, code int) int {
	if ctx.Err() != nil {
		return exitSignal
	}
	return code
}
