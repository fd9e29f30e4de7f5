package tunefront

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/tune"
)

// good is a check file with two variants (as-is, prestop-5s) under rollout-restart×3.
const good = "../../spec/testdata/good.yaml"

// oneAtOnce is New's probesAtOnce for a tune whose probes run one after another.
func oneAtOnce(check.Plan) (int, error) { return 1, nil }

// twoDisruptions is a check file like good with two disruptions, written next to a copy of its
// manifest; it returns the file's path.
func twoDisruptions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	web, err := os.ReadFile("../../spec/testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(b), "disruptions: [{kind: rollout-restart, count: 3}]",
		"disruptions: [{kind: rollout-restart, count: 3}, {kind: delete-pod, count: 2}]", 1)
	if two == string(b) {
		t.Fatal("good.yaml changed: update the test")
	}
	for name, b := range map[string][]byte{"web.yaml": web, "check.yaml": []byte(two)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "check.yaml")
}

func TestNewSample(t *testing.T) {
	in, err := New(Flags{Sample: "exit", Max: tune.DefaultMax, Resolution: tune.DefaultResolution}, oneAtOnce)
	if err != nil {
		t.Fatal(err)
	}
	b := in.Base
	if in.Sample != "exit" || in.Check != nil || b.Suite != "tune" || b.Variant.Name != "sample-exit" ||
		b.Disruption != (check.Disruption{Kind: check.RolloutRestart, Count: 5}) ||
		b.Variant.Expect.Kind != check.ExpectZero || b.App.OnSIGTERM != "exit" {
		t.Errorf("base %+v", b)
	}
	for _, o := range b.App.Objects {
		if d, ok := o.(*appsv1.Deployment); ok {
			if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != SampleGrace {
				t.Errorf("grace period %v, want %d", g, SampleGrace)
			}
		}
	}
	if got := in.Settings.PreStop(1500 * time.Millisecond); got.HTTPGet != "/prestop?sleep=1.5s" {
		t.Errorf("preStop 1.5s: %+v", got)
	}
	if got := in.Settings.PreStop(0); !got.None {
		t.Errorf("preStop 0: %+v, want none", got)
	}

	in, err = New(Flags{Sample: "drain", Disruption: "delete-pod", Count: 2, Max: 8 * time.Second}, oneAtOnce)
	if err != nil {
		t.Fatal(err)
	}
	if in.Base.Variant.Name != "sample-drain" || in.Base.Disruption != (check.Disruption{Kind: check.DeletePod, Count: 2}) {
		t.Errorf("base %+v", in.Base)
	}
	// The tune runs the sample app's image once built, under the same disruption.
	built, err := SampleBase(in.Sample, in.Base.Disruption.Kind, in.Base.Disruption.Count, "rollcheck/app:built")
	if err != nil || built.Disruption != in.Base.Disruption || !strings.Contains(strings.Join(built.App.Images, " "), "rollcheck/app:built") {
		t.Errorf("err %v, base %+v", err, built)
	}
}

func TestNewCheckFile(t *testing.T) {
	in, err := New(Flags{File: good, Variant: "prestop-5s", Exec: "/bin/sleep {}", Count: 4, Max: 10 * time.Second}, oneAtOnce)
	if err != nil {
		t.Fatal(err)
	}
	if b := in.Base; in.Check == nil || in.Sample != "" || b.Variant.Name != "prestop-5s" ||
		b.Disruption != (check.Disruption{Kind: check.RolloutRestart, Count: 4}) || b.Variant.Expect.Kind != check.ExpectZero || b.Repeat != 0 {
		t.Errorf("base %+v", b)
	}
	if got := in.Settings.PreStop(1500 * time.Millisecond); strings.Join(got.Exec, " ") != "/bin/sleep 1.5" {
		t.Errorf("preStop 1.5s: %+v", got)
	}
	if got := in.Settings.PreStop(0); !got.None {
		t.Errorf("preStop 0: %+v, want none", got)
	}

	// The native sleep action by default; a disruption the file does not list runs 3 times.
	in, err = New(Flags{File: twoDisruptions(t), Variant: "as-is", Disruption: "scale-down", Max: 10 * time.Second}, oneAtOnce)
	if err != nil {
		t.Fatal(err)
	}
	if in.Settings.PreStop != nil || in.Base.Disruption != (check.Disruption{Kind: check.ScaleDown}) ||
		in.Base.Variant.Expect.MinSuccessRatioPerDisruption != 0.99 {
		t.Errorf("input %+v", in)
	}
	in, err = New(Flags{File: twoDisruptions(t), Variant: "as-is", Disruption: "delete-pod", Max: 10 * time.Second}, oneAtOnce)
	if err != nil || in.Base.Disruption != (check.Disruption{Kind: check.DeletePod, Count: 2}) {
		t.Errorf("err %v, input %+v: want the file's delete-pod×2", err, in)
	}
}

// The errors name the flags; the probes' parallelism and tune's own check come last.
func TestNewErrors(t *testing.T) {
	refuse := func(check.Plan) (int, error) { return 0, errors.New("--parallel 2: refused") }
	for _, tc := range []struct {
		f    Flags
		at   func(check.Plan) (int, error)
		want string
	}{
		{Flags{}, oneAtOnce, "nothing to tune"},
		{Flags{Sample: "exit", File: good}, oneAtOnce, "use --sample or -f, not both"},
		{Flags{Sample: "exit", Count: 21}, oneAtOnce, "--count 21: want 1 to 20"},
		{Flags{Sample: "melt"}, oneAtOnce, `--sample "melt": want exit, drain or ignore`},
		{Flags{Sample: "exit", Exec: "sleep {}"}, oneAtOnce, "--variant and --exec are for -f"},
		{Flags{File: good}, oneAtOnce, "has 2 variants (as-is, prestop-5s): name the base with --variant"},
		{Flags{File: good, Variant: "nope"}, oneAtOnce, `--variant "nope": ../../spec/testdata/good.yaml has as-is, prestop-5s`},
		{Flags{File: good, Variant: "as-is", Exec: "sleep 1"}, oneAtOnce, `--exec "sleep 1": put {} where the seconds go`},
		{Flags{File: twoDisruptions(t), Variant: "as-is"}, oneAtOnce, "lists 2 disruptions (rollout-restart, delete-pod): name one with --disruption"},
		{Flags{Sample: "exit", Max: tune.DefaultMax}, refuse, "--parallel 2: refused"},
		{Flags{Sample: "exit", Min: 5 * time.Second, Max: 5 * time.Second}, oneAtOnce, "min 5s is not below max 5s"},
	} {
		if _, err := New(tc.f, tc.at); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
}

// The settings reach tune: each one set shows in what tune accepts, and progress is told of the
// probes.
func TestSettingsOptions(t *testing.T) {
	base, err := SampleBase("exit", "", 0, sampleImage)
	if err != nil {
		t.Fatal(err)
	}
	ok := Settings{Max: 2 * time.Second, Resolution: time.Second, PreStop: samplePreStop}
	for _, tc := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Bound = 0.9 }, "bound 0.9: want"},
		{func(s *Settings) { s.Parallel = tune.MaxParallel + 1 }, "parallel 9: want 1 to 8"},
		{func(s *Settings) { s.PreStop, s.Min = nil, 500*time.Millisecond }, "the native sleep action takes whole seconds"},
		{func(s *Settings) { s.Resolution = 50 * time.Millisecond }, "resolution 50ms: want a multiple of 100ms"},
	} {
		s := ok
		tc.edit(&s)
		if err := tune.Validate(base, s.Options(nil)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", s, err, tc.want)
		}
	}
	var seen []string
	failing := func(context.Context, *check.Resolved) (*check.Row, error) { return nil, errors.New("no cluster") }
	_, err = tune.Run(context.Background(), failing, base, ok.Options(func(p tune.Probe) { seen = append(seen, ProbeLine(p)) })...)
	if err == nil || len(seen) != 4 || seen[0] != "probe 1: preStop 0s: starts" || !strings.HasPrefix(seen[3], "retried probe 2: preStop 0s: error: ") {
		t.Errorf("err %v, progress %q: want two probes, the second a retry", err, seen)
	}
}

func TestProbeLine(t *testing.T) {
	p := tune.Probe{N: 3, PreStop: 2 * time.Second}
	if got := ProbeLine(p); got != "probe 3: preStop 2s: starts" {
		t.Errorf("start: %q", got)
	}
	p.Requests, p.Failed, p.WorstSuccessRatio, p.Status = 1523, 0, 1, check.Pass
	if got, want := ProbeLine(p), "probe 3: preStop 2s: 0 of 1,523 failed (worst disruption 100.00 %): pass"; got != want {
		t.Errorf("end: %q, want %q", got, want)
	}
	p.Confirm, p.PreStop, p.Failed, p.WorstSuccessRatio, p.Status = true, 1500*time.Millisecond, 12, 0.9725, check.Fail
	p.Deletions, p.FailingDeletions = 15, 3
	if got, want := ProbeLine(p), "confirmation probe 3: preStop 1.5s: 12 of 1,523 failed (worst disruption 97.25 %; 3 of 15 deletions failed): fail"; got != want {
		t.Errorf("confirmation: %q, want %q", got, want)
	}
	p.Confirm, p.Retry, p.Status, p.Reason = false, true, check.HarnessFault, "the load stalled"
	if got, want := ProbeLine(p), "retried probe 3: preStop 1.5s: harness-fault: the load stalled"; got != want {
		t.Errorf("harness fault: %q, want %q", got, want)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
