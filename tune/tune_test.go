package tune

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/loadgen"
)

const sec = time.Second

// execSleep is a preStop builder with no whole-second limit, so the 0.5 s default resolution
// stays.
func execSleep(d time.Duration) check.PreStop {
	return check.PreStop{Exec: []string{"sleep", d.String()}}
}

// preStopOf is the preStop a probe's plan asks for, read back from either builder.
func preStopOf(t testing.TB, p check.Plan) time.Duration {
	t.Helper()
	ps := p.Variant.PreStop
	switch {
	case ps == nil:
		t.Fatalf("probe %s has no preStop", p.Variant.Name)
	case ps.None:
		return 0
	case ps.Sleep != 0:
		return ps.Sleep
	}
	d, err := time.ParseDuration(ps.Exec[1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fakeRow is what Run would return for p: 1,000 requests, failed of them, in p's disruptions,
// each deleting fakeReplicas pods (failed > 0: the first disruption lost them all), judged
// against p's threshold.
func fakeRow(p check.Plan, failed int) *check.Row {
	p = p.WithDefaults()
	sum := loadgen.Summary{Requests: 1000, OK: 1000 - failed, Failed: failed, FailureRatio: float64(failed) / 1000, Valid: true}
	var ds []check.DisruptionResult
	var terms []check.Termination
	for i := range p.Disruption.Count {
		d := check.DisruptionResult{Kind: p.Disruption.Kind, N: i + 1, Started: t0.Add(time.Duration(i) * time.Minute), Requests: 200, SuccessRatio: 1}
		if i == 0 {
			d.Failed, d.SuccessRatio = failed, float64(200-failed)/200
		}
		ds = append(ds, d)
		for j := range fakeReplicas {
			terms = append(terms, check.Termination{Pod: fmt.Sprintf("web-%d-%d", i, j), Deleting: d.Started.Add(time.Duration(j+1) * time.Second)})
		}
	}
	return &check.Row{Suite: p.Suite, Repeat: p.Repeat, Summary: sum, Disruptions: ds, Verdict: p.Variant.Expect.Judge(sum, ds...),
		Times: check.NewTimes(terms, ds), Config: check.Applied{Name: p.Variant.Name, Disruption: p.Disruption.Kind, PreStop: *p.Variant.PreStop}}
}

// fakeReplicas is how many pods each disruption of a fakeRow deletes: with 5 disruptions, 15
// deletions a run, 4 runs alone (60) for the default bound.
const fakeReplicas = 3

// t0 is the fake rows' clock.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// threshold is a runner whose probes pass from preStop at on (never when on < 0), failing
// less the closer they get; it records the values it ran.
func threshold(t *testing.T, on time.Duration, ran *[]time.Duration) func(context.Context, *check.Resolved) (*check.Row, error) {
	return func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		d := preStopOf(t, p)
		*ran = append(*ran, d)
		failed := 0
		if on < 0 || d < on {
			failed = 1 + int((20*sec-d)/(500*time.Millisecond))
		}
		return fakeRow(p, failed), nil
	}
}

func secsOf(ps []Probe) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.PreStop.Seconds()
	}
	return out
}

func tunePlan(testing.TB) check.Plan {
	p := checktest.WebPlan()
	p.Disruption.Count = 5
	p.Variant.TerminationGracePeriodSeconds = ptr.To[int64](30)
	return p
}

func TestTuneThresholds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		on      time.Duration
		probes  []float64
		confirm []float64
		status  Status
		found   time.Duration
	}{
		// The search's run alone at the value found counts 15 deletions: 3 confirmation runs
		// bring them to 60, past the 59 the default bound needs.
		{"at 0", 0, []float64{0}, []float64{0, 0, 0}, Found, 0},
		{"at 0.5s", 500 * time.Millisecond, []float64{0, 0.5}, []float64{0.5, 0.5, 0.5}, Found, 500 * time.Millisecond},
		// Exponential 0, 0.5, 1, 2, 4 (passes), then bisection 3, 3.5.
		{"at 3.5s", 3500 * time.Millisecond, []float64{0, 0.5, 1, 2, 4, 3, 3.5}, []float64{3.5, 3.5, 3.5}, Found, 3500 * time.Millisecond},
		{"at 20s", 20 * sec, []float64{0, 0.5, 1, 2, 4, 8, 16, 20, 18, 19, 19.5}, []float64{20, 20, 20}, Found, 20 * sec},
		{"never", -1, []float64{0, 0.5, 1, 2, 4, 8, 16, 20}, nil, NotFound, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []time.Duration
			res, err := Run(context.Background(), threshold(t, tc.on, &ran), tunePlan(t), WithPreStop(execSleep))
			if err != nil {
				t.Fatal(err)
			}
			if got := secsOf(res.Probes); !slices.Equal(got, tc.probes) {
				t.Errorf("probes %v, want %v", got, tc.probes)
			}
			if got := secsOf(res.Confirm); !slices.Equal(got, tc.confirm) {
				t.Errorf("confirmations %v, want %v", got, tc.confirm)
			}
			if res.Status != tc.status || res.Found != tc.found || res.FoundOK != (tc.status == Found) {
				t.Errorf("status %s, found %s (ok %v); want %s, %s", res.Status, res.Found, res.FoundOK, tc.status, tc.found)
			}
			if len(ran) != len(tc.probes)+len(tc.confirm) {
				t.Errorf("%d runs, want %d", len(ran), len(tc.probes)+len(tc.confirm))
			}
			if res.Resolution != 500*time.Millisecond || res.Max != 20*sec || res.Note != "" {
				t.Errorf("resolution %s, max %s, note %q", res.Resolution, res.Max, res.Note)
			}
			// The bound at the answer: 4 runs alone, 60 deletions, none failing; one resolution
			// below: the search's run there, whose first disruption lost requests.
			want := &Evidence{PreStop: tc.found, Runs: 4, Clean: 4, Deletions: 60, Upper: UpperBound(60, 0)}
			if tc.status != Found {
				want = nil
			}
			if got := res.AtFound; (got == nil) != (want == nil) || (got != nil && *got != *want) {
				t.Errorf("at the answer %+v, want %+v", got, want)
			}
			below := res.Below
			switch {
			case tc.status != Found || tc.found == 0:
				if below != nil {
					t.Errorf("below %+v, want none", below)
				}
			case below == nil || below.PreStop != tc.found-500*time.Millisecond || below.Runs != 1 || below.Failing != 3 || below.Deletions != 15:
				t.Errorf("below %+v", below)
			}
			// Every probe is numbered in order and has a file of its own.
			files := map[string]bool{}
			for i, p := range append(res.Probes, res.Confirm...) {
				if p.N != i+1 || p.File == "" || files[p.File] || p.Row == nil {
					t.Errorf("probe %d: n %d, file %q (seen: %v)", i+1, p.N, p.File, files[p.File])
				}
				files[p.File] = true
			}
		})
	}
}

func TestTuneProbeNamesAndPlans(t *testing.T) {
	var plans []check.Plan
	run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		plans = append(plans, p)
		return fakeRow(p, 0), nil
	}
	res, err := Run(context.Background(), run, tunePlan(t), WithRange(1500*time.Millisecond, 0), WithPreStop(execSleep))
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 4 || plans[0].Variant.Name != "web-drain-prestop-1p5s" || plans[0].Repeat != 1 || plans[3].Repeat != 4 {
		t.Fatalf("plans %+v", plans)
	}
	if _, err := plans[0].Validate(); err != nil {
		t.Errorf("probe plan: %v", err)
	}
	if res.Disruption.Count != 5 || res.Expect.Kind != check.ExpectZero || res.GraceSeconds != 30 || res.Base != "web-drain" {
		t.Errorf("result %+v", res)
	}
}

func TestTuneName(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "a-prestop-0s", 500 * time.Millisecond: "a-prestop-0p5s", 2 * sec: "a-prestop-2s", 19500 * time.Millisecond: "a-prestop-19p5s",
	} {
		if got := Name("a", d); got != want {
			t.Errorf("Name(a, %s) = %q, want %q", d, got, want)
		}
	}
	// Cut to fit 40 characters, and not left ending in a dash.
	long := strings.Repeat("x", 25) + "-" + strings.Repeat("y", 14)
	if got, want := Name(long, 19500*time.Millisecond), strings.Repeat("x", 25)+"-prestop-19p5s"; got != want || !regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`).MatchString(got) {
		t.Errorf("Name(long) = %q, want %q", got, want)
	}
}

func TestTuneConfirmation(t *testing.T) {
	// The first run at 3.5 s passes, its confirmation fails; 4 s passes.
	runs := map[time.Duration]int{}
	run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		d := preStopOf(t, p)
		runs[d]++
		failed := 0
		if d < 3500*time.Millisecond || (d == 3500*time.Millisecond && runs[d] > 1) {
			failed = 3
		}
		row := fakeRow(p, failed)
		if failed == 0 {
			row.Explanation = &check.Explanation{Recommendation: &check.Recommendation{PreStop: 4 * sec, GraceSeconds: 9}}
		}
		return row, nil
	}
	res, err := Run(context.Background(), run, tunePlan(t), WithPreStop(execSleep))
	if err != nil {
		t.Fatal(err)
	}
	// 3.5 s fails alone; 4 s has the search's run alone, and 3 more.
	if got := secsOf(res.Confirm); !slices.Equal(got, []float64{3.5, 4, 4, 4}) {
		t.Fatalf("confirmations %v", got)
	}
	if res.Status != Found || res.Found != 4*sec || !res.FoundOK || !strings.Contains(res.Note, "runs alone failed at 3.5s; 4s met the bound") {
		t.Errorf("status %s, found %s, note %q", res.Status, res.Found, res.Note)
	}
	if res.Recommendation == nil || res.Recommendation.GraceSeconds != 9 {
		t.Errorf("recommendation %+v, want the confirming row's", res.Recommendation)
	}
	if res.Confirm[0].Status != check.Fail || res.Confirm[1].Status != check.Pass {
		t.Errorf("confirm statuses %s, %s", res.Confirm[0].Status, res.Confirm[1].Status)
	}
}

func TestTuneConfirmationNeverPasses(t *testing.T) {
	// Only the search's runs pass: confirmation fails at 3.5, 4 and 4.5 s, and the result says so.
	searching := true
	run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		d := preStopOf(t, p)
		failed := 0
		if d < 3500*time.Millisecond || !searching {
			failed = 1
		}
		if d == 3500*time.Millisecond {
			searching = false
		}
		return fakeRow(p, failed), nil
	}
	res, err := Run(context.Background(), run, tunePlan(t), WithPreStop(execSleep))
	if err != nil {
		t.Fatal(err)
	}
	if got := secsOf(res.Confirm); !slices.Equal(got, []float64{3.5, 4, 4.5}) {
		t.Fatalf("confirmations %v", got)
	}
	if res.Status != Unconfirmed || res.FoundOK || res.Found != 3500*time.Millisecond || res.Recommendation != nil ||
		!strings.Contains(res.Note, "no value met the bound (runs alone failed at 3.5s, 4s, 4.5s)") {
		t.Errorf("status %s, found %s (ok %v), note %q", res.Status, res.Found, res.FoundOK, res.Note)
	}
}

func TestTuneNilExplanation(t *testing.T) {
	var ran []time.Duration
	res, err := Run(context.Background(), threshold(t, 2*sec, &ran), tunePlan(t), WithPreStop(execSleep))
	if err != nil || res.Status != Found || res.Recommendation != nil {
		t.Fatalf("err %v, status %s, recommendation %v", err, res.Status, res.Recommendation)
	}
}

// faulty is a runner that fails at preStop at (a harness fault, then an error row as Run
// returns it) the first times runs there, and otherwise passes from 2 s.
func faulty(t *testing.T, at time.Duration, times int) func(context.Context, *check.Resolved) (*check.Row, error) {
	n := 0
	return func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		d := preStopOf(t, p)
		if d == at && n < times {
			n++
			row := fakeRow(p, 0)
			if n == 1 {
				row.Verdict = check.Verdict{Status: check.HarnessFault, Reason: "the load stalled for 3s"}
				return row, nil
			}
			row.Verdict = check.Verdict{Status: check.Error, Reason: "deploy: timed out"}
			return row, errors.New("row x: deploy: timed out")
		}
		return fakeRow(p, map[bool]int{true: 2, false: 0}[d < 2*sec]), nil
	}
}

func TestTuneHarnessFaultRetriedOnce(t *testing.T) {
	res, err := Run(context.Background(), faulty(t, sec, 1), tunePlan(t), WithPreStop(execSleep))
	if err != nil {
		t.Fatal(err)
	}
	// 0, 0.5, 1 (harness fault), 1 again, 2 (passes), 1.5.
	if got := secsOf(res.Probes); !slices.Equal(got, []float64{0, 0.5, 1, 1, 2, 1.5}) {
		t.Fatalf("probes %v", got)
	}
	if p := res.Probes[2]; p.Status != check.HarnessFault || p.Retry || !res.Probes[3].Retry || res.Probes[3].Status != check.Fail {
		t.Errorf("probes 3 and 4: %+v, %+v", p, res.Probes[3])
	}
	if res.Status != Found || res.Found != 2*sec {
		t.Errorf("status %s, found %s", res.Status, res.Found)
	}
	if c := res.Curve(); len(c) != 8 || c[1].PreStop != 500*time.Millisecond || c[2].PreStop != sec || !c[2].Retry {
		t.Errorf("curve %v: want the judged probes by preStop", secsOf(c))
	}
}

func TestTuneHarnessFaultTwiceIsAnError(t *testing.T) {
	res, err := Run(context.Background(), faulty(t, sec, 2), tunePlan(t), WithPreStop(execSleep))
	if err == nil || !strings.Contains(err.Error(), "probe 4, preStop 1s: error twice") {
		t.Fatalf("error %v", err)
	}
	if res == nil || res.Status != Incomplete || len(res.Probes) != 4 || res.Probes[3].Status != check.Error || res.FoundOK {
		t.Fatalf("result %+v", res)
	}
}

func TestTuneCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	run := func(ctx context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		if n++; n == 3 {
			cancel()
			row := fakeRow(p, 0)
			row.Verdict = check.Verdict{Status: check.Error, Reason: "interrupted"}
			return row, fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return fakeRow(p, 5), nil
	}
	res, err := Run(ctx, run, tunePlan(t), WithPreStop(execSleep))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if res == nil || len(res.Probes) != 3 || res.Status != Incomplete || res.Wall <= 0 || res.Started.IsZero() {
		t.Fatalf("result %+v", res)
	}
	// Cancelled before it starts: no run.
	res, err = Run(ctx, run, tunePlan(t), WithPreStop(execSleep))
	if !errors.Is(err, context.Canceled) || len(res.Probes) != 0 || n != 3 {
		t.Errorf("err %v, probes %d, runs %d", err, len(res.Probes), n)
	}
}

func TestTuneNativeSleep(t *testing.T) {
	var plans []check.Plan
	run := func(_ context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		plans = append(plans, p)
		failed := 0
		if p.Variant.PreStop.Sleep < 3500*time.Millisecond {
			failed = 1
		}
		return fakeRow(p, failed), nil
	}
	res, err := Run(context.Background(), run, tunePlan(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Resolution != sec || !strings.Contains(res.Note, "resolution 500ms raised to 1s: the native sleep action takes whole seconds") {
		t.Errorf("resolution %s, note %q", res.Resolution, res.Note)
	}
	if got := secsOf(res.Probes); !slices.Equal(got, []float64{0, 1, 2, 4, 3}) {
		t.Errorf("probes %v", got)
	}
	if res.Found != 4*sec || !res.FoundOK {
		t.Errorf("found %s (ok %v)", res.Found, res.FoundOK)
	}
	if ps := plans[0].Variant.PreStop; !ps.None {
		t.Errorf("preStop 0: %+v, want none", ps)
	}
	for _, p := range plans[1:] {
		if _, err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Variant.Name, err)
		}
	}
}

func TestTuneProgress(t *testing.T) {
	var seen []string
	var ran []time.Duration
	progress := WithProgress(func(p Probe) {
		seen = append(seen, fmt.Sprintf("%d %s %v %q", p.N, p.PreStop, p.Confirm, p.Status))
	})
	if _, err := Run(context.Background(), threshold(t, 0, &ran), tunePlan(t), WithPreStop(execSleep), WithRange(0, 2*sec), progress); err != nil {
		t.Fatal(err)
	}
	want := []string{`1 0s false ""`, `1 0s false "pass"`, `2 0s true ""`, `2 0s true "pass"`,
		`3 0s true ""`, `3 0s true "pass"`, `4 0s true ""`, `4 0s true "pass"`}
	if !slices.Equal(seen, want) {
		t.Errorf("progress %q, want %q", seen, want)
	}
}

func TestTuneOptionsCheck(t *testing.T) {
	p := tunePlan(t)
	for _, tc := range []struct {
		o    []Option
		edit func(*check.Plan)
		want string
	}{
		{[]Option{WithRange(5*sec, 5*sec)}, nil, "min 5s is not below max 5s"},
		{[]Option{WithRange(0, 11*time.Minute), WithPreStop(execSleep)}, nil, "max 11m0s: want at most 10m0s"},
		{[]Option{WithResolution(50 * time.Millisecond), WithPreStop(execSleep)}, nil, "resolution 50ms: want a multiple of 100ms"},
		{[]Option{WithResolution(-sec), WithPreStop(execSleep)}, nil, "resolution -1s: want more than 0"},
		{[]Option{WithRange(-sec, 0)}, nil, "min -1s: want 0 or more"},
		{[]Option{WithRange(500*time.Millisecond, 0)}, nil, "the native sleep action takes whole seconds"},
		{[]Option{}, func(p *check.Plan) { p.Variant.Expect = check.Failures() }, "a negative control has no preStop to tune"},
		{[]Option{}, func(p *check.Plan) { p.Disruption.Count = 30 }, "preStop 0s: web-drain-prestop-0s: disruption count 30"},
		{[]Option{WithRange(0, 6*time.Minute)}, nil, "preStop sleep 5m59s: want whole seconds from 1s to 5m"},
	} {
		q := p
		if tc.edit != nil {
			tc.edit(&q)
		}
		err := Validate(q, tc.o...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line with %q", tc.o, err, tc.want)
		}
	}
	zero := p
	zero.Variant.Expect = check.Outcome{}
	if err := Validate(zero); err != nil {
		t.Errorf("a zero threshold means check.Zero(): %v", err)
	}
	var ran []time.Duration
	// The API server refuses a native sleep not shorter than the grace period: so does tune,
	// before any run; an exec sleep may go past it, with a note.
	if _, err := Run(context.Background(), threshold(t, 0, &ran), zero, WithRange(0, 40*sec)); err == nil ||
		!strings.Contains(err.Error(), "must be shorter than terminationGracePeriodSeconds (30s)") || len(ran) != 0 {
		t.Errorf("native sleep past the grace period: %v after %d runs", err, len(ran))
	}
	res, err := Run(context.Background(), threshold(t, 0, &ran), zero, WithRange(0, 40*sec), WithPreStop(execSleep))
	if err != nil || res.Expect.Kind != check.ExpectZero || !strings.Contains(res.Note, "values above the grace period (30s)") {
		t.Fatalf("err %v, result %+v", err, res)
	}
}
