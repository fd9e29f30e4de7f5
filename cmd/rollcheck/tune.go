package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/internal/scenario"
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

// tuneArgs is rollcheck tune's input, checked.
type tuneArgs struct {
	runFlags
	sample     scenario.Shutdown // the sample app's mode, or "" for a check file
	check      *spec.Check
	warnings   []string // the check file's (spec.Check.Plans)
	base       check.Plan
	opts       tuneSettings
	disruption check.DisruptionKind
}

// tuneSettings are the search's flags, as tune.Options take them.
type tuneSettings struct {
	Min, Max, Resolution time.Duration
	PreStop              func(time.Duration) check.PreStop
	Parallel             int     // probes at once (--parallel, or the default: see tuneFlags.args)
	Bound                float64 // --bound; 0: tune.DefaultBound
}

// options are the settings as tune's options, with progress reported to f.
func (o tuneSettings) options(f func(tune.Probe)) []tune.Option {
	opts := []tune.Option{tune.WithRange(o.Min, o.Max), tune.WithResolution(o.Resolution)}
	if o.PreStop != nil {
		opts = append(opts, tune.WithPreStop(o.PreStop))
	}
	if f != nil {
		opts = append(opts, tune.WithProgress(f))
	}
	if o.Parallel > 1 {
		opts = append(opts, tune.WithParallel(o.Parallel))
	}
	if o.Bound != 0 {
		opts = append(opts, tune.WithBound(o.Bound))
	}
	return opts
}

// sampleImage stands for the sample app's image until it is built: the input is checked first.
const sampleImage = "rollcheck/app:tune"

// sampleGrace is the sample app's terminationGracePeriodSeconds while tuning.
const sampleGrace = 30

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
		fmt.Fprintln(stdout, ta.describe())
		return exitPass
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	opts.Keep = opts.Keep || ta.KeepCluster
	if ta.check != nil {
		if err := checkImages(ctx, ta.check, stderr); err != nil {
			return bad("%v", err)
		}
	}
	if err := ownImagesPreflight(opts, fromLoadPods(ta.base), ta.sample != ""); err != nil {
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
	switch {
	case len(operands) > 0:
		return nil, fmt.Errorf("unexpected arguments %q (rollcheck help tune)", operands)
	case f.Sample != "" && f.File != "":
		return nil, errors.New("use --sample or -f, not both")
	case f.Sample == "" && f.File == "":
		return nil, errors.New("nothing to tune: give --sample exit|drain|ignore or -f CHECK.yaml (rollcheck help tune)")
	case f.Count < 0 || f.Count > 20:
		return nil, fmt.Errorf("--count %d: want 1 to 20", f.Count)
	}
	ta := &tuneArgs{runFlags: f.runFlags, disruption: check.DisruptionKind(f.Disruption),
		opts: tuneSettings{Min: f.Min, Max: f.Max, Resolution: f.Resolution, Parallel: f.Parallel, Bound: float64(f.Bound)}}
	var err error
	if f.Sample != "" {
		if f.Variant != "" || f.Exec != "" {
			return nil, errors.New("--variant and --exec are for -f; --sample tunes the sample app with an httpGet preStop")
		}
		ta.sample = scenario.Shutdown(f.Sample)
		ta.base, err = sampleBase(ta.sample, ta.disruption, f.Count, sampleImage)
		ta.opts.PreStop = samplePreStop
	} else {
		ta.check, ta.base, ta.warnings, err = checkBase(f.File, f.Variant, ta.disruption, f.Count)
		if err == nil && f.Exec != "" {
			ta.opts.PreStop, err = execPreStop(f.Exec)
		}
	}
	if err != nil {
		return nil, err
	}
	if ta.opts.Parallel, err = f.probesAtOnce(ta.base); err != nil {
		return nil, err
	}
	if err := tune.Validate(ta.base, ta.opts.options(nil)...); err != nil {
		return nil, err
	}
	return ta, nil
}

// probesAtOnce is how many probes run at once: --parallel when given (above 1 only when the
// base may run beside others: check.Plan.RunsAlone, tune.Parallelism), else as many as
// ROLLCHECK_PROCS allows for such a base, the rule check's rows follow, and 1 for any other.
func (f *tuneFlags) probesAtOnce(base check.Plan) (int, error) {
	return f.parallel(tune.Parallelism(base), tune.MaxParallel, aloneRefusal("each probe", base))
}

// describe says what would be tuned, for --dry-run: "would tune sample-exit under
// rollout-restart×5: preStop 0s to 20s by 500ms as httpGet ...; threshold 0 failures; ...".
func (ta *tuneArgs) describe() string {
	o, b := ta.opts, ta.base
	hook := "the native sleep action (whole seconds: a finer resolution is raised to 1s)"
	switch p := o.PreStop; {
	case ta.sample != "":
		hook = "httpGet /prestop?sleep=<d> on the sample app (" + string(ta.sample) + " on SIGTERM), grace period 30s"
	case p != nil:
		hook = "exec " + strings.Join(p(1500*time.Millisecond).Exec, " ") + " (for 1.5s)"
	}
	threshold := b.Variant.Expect.String()
	if threshold == "" {
		threshold = check.Zero().String()
	}
	bound := cmp.Or(o.Bound, tune.DefaultBound)
	return fmt.Sprintf("would tune %s under %s×%d: preStop %s to %s by %s as %s; threshold %s; answer bound: a deletion fails with p < %g %% at 95 %% (%d deletions alone, none failing); %d probe(s) at once; artifacts in %s",
		b.Variant.Name, b.Disruption.Kind, b.WithDefaults().Disruption.Count, o.Min, o.Max, o.Resolution, hook,
		threshold, 100*bound, tune.DeletionsNeeded(bound), o.Parallel, ta.Artifacts)
}

// defaultTuneArtifacts is $ARTIFACTS/tune, or _artifacts/tune: a directory of its own, so that
// the probes' rows never mix with a conformance run's.
func defaultTuneArtifacts() string { return filepath.Join(envOr("ARTIFACTS", "_artifacts"), "tune") }

// sampleBase is the sample app in shutdown mode m, without preStop, with a 30 s grace period and
// no failure allowed, under kind×count (defaults rollout-restart×5).
func sampleBase(m scenario.Shutdown, kind check.DisruptionKind, count int, image string) (check.Plan, error) {
	switch m {
	case scenario.ShutdownExit, scenario.ShutdownDrain, scenario.ShutdownIgnore:
	default:
		return check.Plan{}, fmt.Errorf("--sample %q: want exit, drain or ignore", m)
	}
	if kind == "" {
		kind = check.RolloutRestart
	}
	if count == 0 {
		count = 5
	}
	grace := int64(sampleGrace)
	s := scenario.Scenario{App: scenario.Sample{OnSIGTERM: m},
		Variant: check.Variant{Name: "sample-" + string(m), TerminationGracePeriodSeconds: &grace,
			Why: "tune: the smallest preStop with which the sample app loses no request", Expect: check.Zero()},
		Disruption: check.Disruption{Kind: kind, Count: count}}
	return s.Plan("tune", image)
}

// samplePreStop is the sample app's own preStop endpoint, which sleeps for any Go duration.
func samplePreStop(d time.Duration) check.PreStop {
	if d == 0 {
		return check.PreStop{None: true}
	}
	return check.PreStop{HTTPGet: "/prestop?sleep=" + d.String()}
}

// execPreStop is the --exec builder: the command with {} replaced by the seconds ("1.5").
func execPreStop(cmd string) (func(time.Duration) check.PreStop, error) {
	fields := strings.Fields(cmd)
	if !slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(f, "{}") }) {
		return nil, fmt.Errorf("--exec %q: put {} where the seconds go, as in 'sleep {}'", cmd)
	}
	return func(d time.Duration) check.PreStop {
		if d == 0 {
			return check.PreStop{None: true}
		}
		s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
		argv := make([]string, len(fields))
		for i, f := range fields {
			argv[i] = strings.ReplaceAll(f, "{}", s)
		}
		return check.PreStop{Exec: argv}
	}, nil
}

// checkBase is the check file's Plan of the variant named (or its only one) under the
// disruption named (or its only one; one it does not list runs DefaultCount times), with
// count disruptions when count is not 0, and the check file's warnings.
func checkBase(file, variant string, kind check.DisruptionKind, count int) (*spec.Check, check.Plan, []string, error) {
	c, err := spec.Load(file)
	if err != nil {
		return nil, check.Plan{}, nil, err
	}
	plans, _, err := c.Plans()
	if err != nil {
		return nil, check.Plan{}, nil, fmt.Errorf("%s: %v", c.Name(), err)
	}
	// The warnings as tune runs the file: on its own kind cluster, the cluster section unused.
	onKind := *c
	onKind.Cluster = nil
	_, warnings, _ := onKind.Plans()
	var names []string
	for _, v := range c.Variants {
		names = append(names, v.Name)
	}
	switch {
	case variant == "" && len(names) > 1:
		return nil, check.Plan{}, nil, fmt.Errorf("%s has %d variants (%s): name the base with --variant", file, len(names), strings.Join(names, ", "))
	case variant == "":
		variant = names[0]
	case !slices.Contains(names, variant):
		return nil, check.Plan{}, nil, fmt.Errorf("--variant %q: %s has %s", variant, file, strings.Join(names, ", "))
	}
	var kinds []string
	for _, d := range c.Disruptions {
		kinds = append(kinds, string(d.Kind))
	}
	if kind == "" && len(kinds) > 1 {
		return nil, check.Plan{}, nil, fmt.Errorf("%s lists %d disruptions (%s): name one with --disruption", file, len(kinds), strings.Join(kinds, ", "))
	}
	var base check.Plan
	for _, r := range plans {
		if p := r.Plan(); p.Variant.Name == variant {
			base = p
			if kind == "" || p.Disruption.Kind == kind {
				break
			}
		}
	}
	if kind != "" && base.Disruption.Kind != kind {
		base.Disruption = check.Disruption{Kind: kind}
	}
	if count > 0 {
		base.Disruption.Count = count
	}
	base.Repeat = 0
	if base.InPlace() {
		return nil, check.Plan{}, nil, fmt.Errorf("%s checks an app where it already runs (app.namespace %s): tune changes its preStop for every probe, and runs on rollcheck's kind cluster only; use rollcheck check --in-place with the preStops to compare", file, base.App.Namespace)
	}
	return c, base, warnings, nil
}

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
		if base, err = sampleBase(ta.sample, base.Disruption.Kind, base.Disruption.Count, ref); err != nil {
			logf("%v", err)
			return exitBadInput
		}
		logf("the sample app (%s on SIGTERM), preStop httpGet /prestop?sleep=<d>, terminationGracePeriodSeconds %d", ta.sample, sampleGrace)
	}
	t, err := kindTarget(ctx, cl, fromLoadPods(base))
	if err != nil {
		logf("%v", err)
		return exitCode(ctx, exitBadInput)
	}
	t.Logf = func(string, ...any) {} // the progress lines say what matters
	_ = rowfile.Clear(ta.Artifacts)
	o := ta.opts
	progress := func(p tune.Probe) {
		logf("%s", probeLine(p))
		if p.Status != "" && p.Row != nil {
			if _, err := rowfile.Write(ta.Artifacts, *p.Row); err != nil {
				logf("write row: %v", err)
			}
		}
	}
	logf("tuning %s under %s×%d: preStop %s to %s", base.Variant.Name, base.Disruption.Kind, base.Disruption.Count, o.Min, o.Max)
	run := func(ctx context.Context, p *check.Resolved) (*check.Row, error) {
		return engine.Run(ctx, t, p, engine.WithArtifacts(ta.Artifacts), engine.WithProgress(progressPrinter(logf)))
	}
	res, err := tune.Run(ctx, run, base, o.options(progress)...)
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

// probeLine is a probe's progress line: "probe 3: preStop 2s: starts" when it starts,
// "probe 3: preStop 2s: 0 of 1,523 failed (worst disruption 100.00 %; 0 of 15 deletions
// failed): pass" when it ends.
func probeLine(p tune.Probe) string {
	s := fmt.Sprintf("probe %d: preStop %s: ", p.N, p.PreStop)
	switch {
	case p.Confirm:
		s = "confirmation " + s
	case p.Retry:
		s = "retried " + s
	}
	switch {
	case p.Status == "":
		return s + "starts"
	case !p.Judged():
		return s + string(p.Status) + ": " + p.Reason
	}
	deletions := ""
	if p.Deletions > 0 {
		deletions = fmt.Sprintf("; %d of %d deletions failed", p.FailingDeletions, p.Deletions)
	}
	return fmt.Sprintf("%s%s of %s failed (worst disruption %.2f %%%s): %s", s, thousands(p.Failed), thousands(p.Requests),
		100*p.WorstSuccessRatio, deletions, p.Status)
}

// thousands formats n with commas between groups of three digits: 1,523.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
