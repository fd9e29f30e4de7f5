// Package tunefront is what rollcheck tune's front end does that needs neither its flag set nor
// a cluster: the input checked and built (New: the base Plan of the sample app or of a check
// file's variant, the preStop each probe gets, the search's settings as tune's options), the
// --dry-run description (Settings.Describe) and a probe's progress line (ProbeLine). Its errors
// name the flags, as the command prints them.
package tunefront

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/spec"
	"github.com/rollcheck/rollcheck/tune"
)

// SampleGrace is the sample app's terminationGracePeriodSeconds while tuning.
const SampleGrace = 30

// sampleImage stands for the sample app's image until it is built: the input is checked first
// (SampleBase, with the built one, follows).
const sampleImage = "rollcheck/app:tune"

// Flags are rollcheck tune's flags that say what is tuned and how: the sample app (Sample, its
// SIGTERM mode) or a check file (File) and its Variant, the Disruption and its Count (0: the
// default), Exec (-f's --exec), and the search's range, resolution and bound (0: tune's
// default).
type Flags struct {
	Sample, File, Variant, Disruption, Exec string
	Count                                   int
	Min, Max, Resolution                    time.Duration
	Bound                                   float64
}

// Input is rollcheck tune's input, checked.
type Input struct {
	Sample   scenario.Shutdown // the sample app's mode, or "" for a check file
	Check    *spec.Check       // the check file, nil for the sample app
	Warnings []string          // the check file's (spec.Check.Plans), as tune runs it
	Base     check.Plan
	Settings Settings
}

// Settings are the search's flags, which Options turns into tune's options.
type Settings struct {
	Min, Max, Resolution time.Duration
	PreStop              func(time.Duration) check.PreStop // nil: tune's default, the native sleep
	Parallel             int                               // probes at once
	Bound                float64                           // 0: tune.DefaultBound
}

// Options are the settings as tune's options, with progress, when not nil, told of each probe.
func (o Settings) Options(progress func(tune.Probe)) []tune.Option {
	opts := []tune.Option{tune.WithRange(o.Min, o.Max), tune.WithResolution(o.Resolution)}
	if o.PreStop != nil {
		opts = append(opts, tune.WithPreStop(o.PreStop))
	}
	if progress != nil {
		opts = append(opts, tune.WithProgress(progress))
	}
	if o.Parallel > 1 {
		opts = append(opts, tune.WithParallel(o.Parallel))
	}
	if o.Bound != 0 {
		opts = append(opts, tune.WithBound(o.Bound))
	}
	return opts
}

// New checks the flags and builds the input: the base Plan (the sample app's with a stand-in
// image, or the check file's), the preStop builder and the settings, with as
// many probes at once as probesAtOnce says for the base (the command's --parallel rule); the
// tune is then validated (tune.Validate). Every problem of the input is found here, before any
// Docker or cluster work, and the first one found is the error.
func New(f Flags, probesAtOnce func(base check.Plan) (int, error)) (*Input, error) {
	switch {
	case f.Sample != "" && f.File != "":
		return nil, errors.New("use --sample or -f, not both")
	case f.Sample == "" && f.File == "":
		return nil, errors.New("nothing to tune: give --sample exit|drain|ignore or -f CHECK.yaml (rollcheck help tune)")
	case f.Count < 0 || f.Count > 20:
		return nil, fmt.Errorf("--count %d: want 1 to 20", f.Count)
	}
	in := &Input{Settings: Settings{Min: f.Min, Max: f.Max, Resolution: f.Resolution, Bound: f.Bound}}
	kind := check.DisruptionKind(f.Disruption)
	var err error
	if f.Sample != "" {
		if f.Variant != "" || f.Exec != "" {
			return nil, errors.New("--variant and --exec are for -f; --sample tunes the sample app with an httpGet preStop")
		}
		in.Sample = scenario.Shutdown(f.Sample)
		in.Base, err = SampleBase(in.Sample, kind, f.Count, sampleImage)
		in.Settings.PreStop = samplePreStop
	} else {
		in.Check, in.Base, in.Warnings, err = checkBase(f.File, f.Variant, kind, f.Count)
		if err == nil && f.Exec != "" {
			in.Settings.PreStop, err = execPreStop(f.Exec)
		}
	}
	if err != nil {
		return nil, err
	}
	if in.Settings.Parallel, err = probesAtOnce(in.Base); err != nil {
		return nil, err
	}
	if err := tune.Validate(in.Base, in.Settings.Options(nil)...); err != nil {
		return nil, err
	}
	return in, nil
}

// Describe says what a tune of base with these settings would do, the sample app's in mode
// sample ("" for a check file's base) and with the artifacts in artifacts, for --dry-run:
// "would tune sample-exit under rollout-restart×5: preStop 0s to 20s by 500ms as httpGet ...;
// threshold 0 failures; ...".
func (o Settings) Describe(base check.Plan, sample scenario.Shutdown, artifacts string) string {
	hook := "the native sleep action (whole seconds: a finer resolution is raised to 1s)"
	switch p := o.PreStop; {
	case sample != "":
		hook = fmt.Sprintf("httpGet /prestop?sleep=<d> on the sample app (%s on SIGTERM), grace period %ds", sample, SampleGrace)
	case p != nil:
		hook = "exec " + strings.Join(p(1500*time.Millisecond).Exec, " ") + " (for 1.5s)"
	}
	threshold := base.Variant.Expect.String()
	if threshold == "" {
		threshold = check.Zero().String()
	}
	bound := cmp.Or(o.Bound, tune.DefaultBound)
	return fmt.Sprintf("would tune %s under %s×%d: preStop %s to %s by %s as %s; threshold %s; answer bound: a deletion fails with p < %g %% at 95 %% (%d deletions alone, none failing); %d probe(s) at once; artifacts in %s",
		base.Variant.Name, base.Disruption.Kind, base.WithDefaults().Disruption.Count, o.Min, o.Max, o.Resolution, hook,
		threshold, 100*bound, tune.DeletionsNeeded(bound), o.Parallel, artifacts)
}

// SampleBase is the sample app in shutdown mode m, running image, without preStop, with a
// SampleGrace grace period and no failure allowed, under kind×count (defaults
// rollout-restart×5): the base Plan New builds for --sample, with a stand-in image, and the one
// a tune runs once the sample app's image is built.
func SampleBase(m scenario.Shutdown, kind check.DisruptionKind, count int, image string) (check.Plan, error) {
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
	grace := int64(SampleGrace)
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

// ProbeLine is a probe's progress line: "probe 3: preStop 2s: starts" when it starts,
// "probe 3: preStop 2s: 0 of 1,523 failed (worst disruption 100.00 %; 0 of 15 deletions
// failed): pass" when it ends.
func ProbeLine(p tune.Probe) string {
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
