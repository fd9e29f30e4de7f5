package audit

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/timeline"
)

// skewed is a windows file whose data plane's p99 is 7× its mean: 99 pods routed to for 100ms,
// one for 7.693s (p99 7.693s... the 100th sample; mean 0.176s).
func skewed(withSamples bool) *WindowsFile {
	var s []Duration
	for range 99 {
		s = append(s, Duration(100*time.Millisecond))
	}
	s = append(s, Duration(7693*time.Millisecond))
	m := &Measure{N: len(s), P99: Duration(7693 * time.Millisecond)}
	if withSamples {
		m.Samples = s
	}
	return &WindowsFile{SchemaVersion: WindowsSchemaVersion, Measured: Provenance{Source: "a test"},
		Windows: Measures{DataPlane: m, Request: &Measure{N: 1, P99: Duration(50 * time.Millisecond)}}}
}

func propagationOf(t *testing.T, r Result) Finding {
	t.Helper()
	for _, fd := range r.Findings {
		if fd.Mechanism == timeline.PhasePropagation && fd.Per == PerRollout {
			return fd
		}
	}
	t.Fatalf("no propagation finding: %+v", r.Findings)
	return Finding{}
}

func workloadOf(t *testing.T, yaml string) *Workload {
	t.Helper()
	inv := &Inventory{}
	if err := inv.Add([]byte(yaml)); err != nil {
		t.Fatal(err)
	}
	inv.Join()
	return inv.Workloads[0]
}

// The expected count is taken over the measured windows, not at their p99: with a data plane
// whose p99 is 7× its mean, a Deployment without a preStop expects rate × mean × pods (here 100
// × 0.176 × 3 = 53), not rate × p99 × pods (2,308, the old prediction, kept as the upper bound);
// a file of p99s alone gives the bound as its expected count, and says so. An app that keeps
// serving after SIGTERM on its own past the routed window loses none, and the finding says why;
// without that known, the exposed finding says what it assumes.
func TestExpectedCount(t *testing.T) {
	mean := (99*0.1 + 7.693) / 100
	for _, c := range []struct {
		name             string
		f                *WindowsFile
		yaml             string
		o                Options
		status           string
		expected, upper  float64
		note, why, notIn string
	}{
		{"p99 7× the mean: the mean's count", skewed(true), deploy("replicas: 3", ""), Options{Rate: 100},
			Exposed, 100 * mean * 3, 100 * 7.693 * 3, "assumes the app stops accepting at SIGTERM", "", ""},
		{"p99s only: the bound, said", skewed(false), deploy("replicas: 3", ""), Options{Rate: 100},
			Exposed, 100 * 7.693 * 3, 100 * 7.693 * 3, "holds the window's p99 only", "", ""},
		// A 1 s preStop: only the one long window is exposed, by 6.693s: 100 × 6.693 / 100 × 3.
		{"preStop 1s: the tail only", skewed(true), deploy("replicas: 3", "lifecycle: {preStop: {sleep: {seconds: 1}}}"), Options{Rate: 100},
			Exposed, 100 * 6.693 / 100 * 3, 100 * 6.693 * 3, "", "", ""},
		// Caddy's shutdown_delay 10s: serving past every window (7.693s): nothing lost.
		{"app delay past the window: covered", skewed(true), deploy("replicas: 3", ""), Options{Rate: 100, AppDelay: map[string]AppDelay{"a": {Delay: Duration(10 * time.Second), From: "given (--app-delay)"}}},
			Covered, 0, 0, "", "keeps accepting 10s after SIGTERM on its own (given (--app-delay))", ""},
		// A 1 s delay for every workload: as a 1 s preStop, said in the finding.
		{"app delay 1s: the tail only", skewed(true), deploy("replicas: 3", ""), Options{Rate: 100, AppDelay: map[string]AppDelay{"": {Delay: Duration(time.Second), From: "given"}}},
			Exposed, 100 * 6.693 / 100 * 3, 100 * 6.693 * 3, "", "the app's own 1s after SIGTERM (given) counted", "assumes"},
		// Another workload's delay is not this one's.
		{"app delay of another workload", skewed(true), deploy("replicas: 3", ""), Options{Rate: 100, AppDelay: map[string]AppDelay{"b": {Delay: Duration(10 * time.Second)}}},
			Exposed, 100 * mean * 3, 100 * 7.693 * 3, "assumes", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ScoreOne(workloadOf(t, c.yaml), c.f, c.o)
			fd := propagationOf(t, r)
			if fd.Status != c.status || math.Abs(fd.Predicted-c.expected) > 0.5 || math.Abs(fd.Upper-c.upper) > 0.5 {
				t.Errorf("%s expected %.1f upper %.1f; want %s %.1f, %.1f (%s)", fd.Status, fd.Predicted, fd.Upper, c.status, c.expected, c.upper, fd.Why)
			}
			if math.Abs(r.PredictedPerRollout-c.expected) > 0.5 || math.Abs(r.UpperPerRollout-c.upper) > 0.5 {
				t.Errorf("per rollout %.1f (upper %.1f)", r.PredictedPerRollout, r.UpperPerRollout)
			}
			if !strings.Contains(fd.Note, c.note) || !strings.Contains(fd.Why, c.why) || c.notIn != "" && strings.Contains(fd.Note, c.notIn) {
				t.Errorf("note %q, why %q: want %q and %q, not %q", fd.Note, fd.Why, c.note, c.why, c.notIn)
			}
		})
	}
	// The expected count is near the mean's, far from the p99's: what the old prediction, the
	// p99's alone, fails.
	fd := propagationOf(t, ScoreOne(workloadOf(t, deploy("replicas: 3", "")), skewed(true), Options{Rate: 100}))
	if fd.Predicted > 2*100*mean*3 {
		t.Errorf("expected %.0f: the p99's count (%.0f), not the mean's (%.0f)", fd.Predicted, 100*7.693*3, 100*mean*3)
	}
}

// The control plane's samples and kube-proxy's histogram add up: the expected routed window is
// the mean of their sum, far below control plane p99 + programming p99.
func TestExpectedControlPlanePlusKubeProxy(t *testing.T) {
	f := &WindowsFile{SchemaVersion: WindowsSchemaVersion, Measured: Provenance{Source: "a test"}, Windows: Measures{
		ControlPlane: &Measure{N: 2, P99: Duration(200 * time.Millisecond), Samples: []Duration{Duration(0), Duration(200 * time.Millisecond)}},
		// 8 of 10 programmed within 1 s (at 0.5s), 2 within 3 s (at 2s): mean 0.8s, p99 3s.
		KubeProxy: &Measure{N: 10, P99: Duration(3 * time.Second), Buckets: []Bucket{{LE: Duration(time.Second), Count: 8}, {LE: Duration(3 * time.Second), Count: 10}}},
	}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	fd := propagationOf(t, ScoreOne(workloadOf(t, deploy("replicas: 1", "")), f, Options{Rate: 100}))
	// mean = 0.1 (control plane) + 0.8 (kube-proxy) = 0.9s: 90; upper 100 × 3.2.
	if math.Abs(fd.Predicted-90) > 0.5 || math.Abs(fd.Upper-320) > 0.5 {
		t.Errorf("expected %.1f upper %.1f, want 90 and 320", fd.Predicted, fd.Upper)
	}
	f.Windows.KubeProxy.Buckets = []Bucket{{LE: Duration(time.Second), Count: 11}}
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "buckets[0]") {
		t.Errorf("a bucket above n: %v", err)
	}
	f.Windows.KubeProxy.Buckets = nil
	f.Windows.ControlPlane.Samples = f.Windows.ControlPlane.Samples[:1]
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "controlPlane.samples: 1, want n (2)") {
		t.Errorf("samples short of n: %v", err)
	}
}

// syntheticRow is a rollout of the sample app's naive configuration (no preStop, 3 replicas, 90
// req/s: 30 per pod) that measured data-plane windows dp and lost failed requests, its pods
// exiting exit after the deletion.
func syntheticRow(t *testing.T, name string, start time.Time, dp []time.Duration, failed int, exit time.Duration) check.Row {
	t.Helper()
	rows, err := rowfile.Read("testdata/kind-run")
	if err != nil {
		t.Fatal(err)
	}
	var cfg check.Applied
	for _, r := range rows {
		if r.Config.Name == "naive" && r.Config.Disruption == check.RolloutRestart && r.Config.LoadFrom == check.LoadFromCluster {
			cfg = r.Config
		}
	}
	cfg.Name, cfg.Count, cfg.Rate = name, 1, 90
	return check.Row{Suite: "rollout", Started: start, Duration: time.Minute, Config: cfg,
		Explanation: &check.Explanation{Phases: map[timeline.Phase]int{timeline.PhasePropagation: failed}, RequestP99: 10 * time.Millisecond, RequestMax: 20 * time.Millisecond,
			Propagation: check.PropagationSummary{ControlPlane: check.Summarize([]time.Duration{50 * time.Millisecond}), DataPlane: check.Summarize(dp)}},
		Times: &check.Times{Terminations: []check.Termination{{Exit: exit, How: check.EndedOwn}, {Exit: exit + 10*time.Millisecond, How: check.EndedOwn}}},
	}
}

// Out of sample: each row is predicted from the windows of the others (CrossAgreement) or of
// another run (AgreementBetween), never from its own; the ratio and the share within 2× are
// per row, and a row not predicted counts as a miss in the strict figures. An app that ran on
// after SIGTERM in the windows' run is predicted, in the other, to keep serving.
func TestOutOfSample(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// Two rows whose windows are 0.2s and one whose windows are 2s: in sample, the 2s row
	// would predict itself; out of sample it is predicted from the others' 0.2s.
	rows := []check.Row{
		syntheticRow(t, "a", t0, []time.Duration{ms(200), ms(200)}, 18, ms(20)),
		syntheticRow(t, "b", t0.Add(time.Minute), []time.Duration{ms(200), ms(200)}, 18, ms(20)),
		syntheticRow(t, "c", t0.Add(2*time.Minute), []time.Duration{ms(2000), ms(2000)}, 180, ms(20)),
	}
	got, err := CrossAgreement(rows, 3, "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		// a: windows of b (0.2s) and c (2s), mean 1.1s: 30 × 1.1 × 3 = 99 against 18.
		"rollout/a rollout-restart×1": 99,
		"rollout/b rollout-restart×1": 99,
		// c: windows of a and b, 0.2s: 30 × 0.2 × 3 = 18 against 180.
		"rollout/c rollout-restart×1": 18,
	}
	for _, r := range got {
		if math.Abs(r.PredictedFailures-want[r.Row]) > 0.5 || r.Ratio != r.PredictedFailures/float64(r.Failed) || r.Within2x {
			t.Errorf("%s: expected %.1f (ratio %.2f, within 2× %v), want %.0f, not within 2×", r.Row, r.PredictedFailures, r.Ratio, r.Within2x, want[r.Row])
		}
	}
	if _, err := CrossAgreement(rows, 1, "synthetic"); err == nil {
		t.Error("1 fold: no error")
	}

	// Between two runs: the windows' run (0.2s) predicts the other's rows within 2×; a row
	// not predicted (a forced delete) is a miss in the strict figures.
	other := []check.Row{syntheticRow(t, "a", t0.Add(time.Hour), []time.Duration{ms(250)}, 20, ms(20)), syntheticRow(t, "f", t0.Add(time.Hour), nil, 5, ms(20))}
	other[1].Config.Disruption = check.ForceDelete
	table, f, err := AgreementBetween(rows[:2], other, "run 1")
	if err != nil {
		t.Fatal(err)
	}
	if InSample(f, other) || !InSample(f, rows) {
		t.Errorf("in sample: run 2 %v, run 1 %v", InSample(f, other), InSample(f, rows))
	}
	s := Summary(table)
	if s.Rows != 2 || s.Predicted != 1 || s.Agree != 1 || s.Within2x != 1 || s.Within2xPercent() != 100 || s.StrictWithin2xPercent() != 50 || s.StrictPercent() != 50 {
		t.Errorf("summary %+v", s)
	}
	var b strings.Builder
	if err := WriteAgreementTable(&b, table, "another run's windows"); err != nil || !strings.Contains(b.String(), "counts: 1 of 1 within 2× (100 %)") ||
		!strings.Contains(b.String(), "Counting the 1 rows not predicted as misses: verdicts 1 of 2 (50 %), counts 1 of 2 (50 %)") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}

	// The app of configuration "a" ran 5 s past SIGTERM (no preStop) in the windows' run: in
	// the other run it is predicted to keep serving, and to lose none.
	delayed := slicesClone(rows[:2])
	delayed[0].Times = &check.Times{Terminations: []check.Termination{{Exit: 5 * time.Second, How: check.EndedOwn}, {Exit: 5100 * time.Millisecond, ExitUncertainty: time.Second, How: check.EndedOwn}}}
	if d, ok := MeasuredAppDelay(delayed[0]); !ok || d != 4080*time.Millisecond {
		t.Errorf("measured app delay %s %v, want 4.08s (the least: 5.1s − 1s uncertain − 20ms the longest request)", d, ok)
	}
	if d, ok := MeasuredAppDelay(rows[0]); ok {
		t.Errorf("an app that exits at SIGTERM: delay %s", d)
	}
	table, _, err = AgreementBetween(delayed, other[:1], "run 1")
	if err != nil {
		t.Fatal(err)
	}
	if r := table[0]; r.AppDelay == nil || r.PredictedFailures != 0 || r.Predicted != Passes {
		t.Errorf("app delay measured in the windows' run: %+v", r)
	}
}

func slicesClone(r []check.Row) []check.Row { return append([]check.Row(nil), r...) }

// Out of sample on recorded runs: the kind run's windows predict the e2e run's rows (another
// run of the same cluster, an hour later), and the e2e run's the kind run's. At least 80 % of
// the predicted rows' expected counts are within 2× of the measured, in both directions, and
// so is at least 80 % of the kind run's rows, predicted across 5 folds of itself.
func TestOutOfSampleRecordedRuns(t *testing.T) {
	kind, err := rowfile.Read("testdata/kind-run")
	if err != nil {
		t.Fatal(err)
	}
	e2e, err := rowfile.Read("testdata/e2e-run")
	if err != nil {
		t.Fatal(err)
	}
	check80 := func(name string, table []AgreementRow) {
		s := Summary(table)
		t.Logf("%s: verdicts %d of %d (%.0f %%), counts within 2× %d of %d (%.0f %%); not predicted as misses: %.0f %%, %.0f %% of %d",
			name, s.Agree, s.Predicted, s.Percent(), s.Within2x, s.Predicted, s.Within2xPercent(), s.StrictPercent(), s.StrictWithin2xPercent(), s.Rows)
		if s.Predicted < 5 || s.Within2xPercent() < 80 || s.Percent() < 85 {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for _, c := range []struct {
		name         string
		windows, got []check.Row
	}{{"kind → e2e", kind, e2e}, {"e2e → kind", e2e, kind}} {
		table, f, err := AgreementBetween(c.windows, c.got, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if InSample(f, c.got) {
			t.Errorf("%s: in sample", c.name)
		}
		check80(c.name, table)
	}
	table, err := CrossAgreement(kind, 5, "kind-run")
	if err != nil {
		t.Fatal(err)
	}
	check80("kind, 5 folds", table)
}
