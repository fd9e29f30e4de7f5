package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
	"github.com/rollcheck/rollcheck/loadgen"
)

// statsConfig is a row configuration for the statistics tests.
func statsConfig(name string, d check.DisruptionKind) check.Applied {
	return check.Applied{
		Name: name, App: "app", PreStop: check.PreStop{Sleep: 5 * time.Second}, OnSIGTERM: "drain", GraceSeconds: 30, Replicas: 3,
		Path: "/", Rate: 100, Method: "GET", Disruption: d, Count: 2, Quiet: 3 * time.Second,
		Expect: check.Zero(),
	}
}

// run is one run of a row: requests, failures in each of its two disruptions (the rest of
// the requests succeed), its repeat number and its verdict.
func statsRun(suite string, c check.Applied, repeat, requests int, failed [2]int, st check.Status) Row {
	r := Row{Suite: suite, Config: c, Repeat: repeat, Started: t0.Add(time.Duration(repeat) * time.Minute),
		Verdict: check.Verdict{Status: st, Reason: "synthetic"}}
	r.Summary = loadgen.Summary{Requests: requests, Failed: failed[0] + failed[1], Valid: true,
		Failures: map[loadgen.Class]int{loadgen.ClassEOF: failed[0] + failed[1]}}
	r.Summary.OK = requests - r.Summary.Failed
	r.Summary.FailureRatio = float64(r.Summary.Failed) / float64(requests)
	for i, f := range failed {
		n := 400
		r.Disruptions = append(r.Disruptions, check.DisruptionResult{Kind: c.Disruption, N: i + 1,
			Requests: n, Failed: f, SuccessRatio: float64(n-f) / float64(n)})
	}
	return r
}

func TestGroup(t *testing.T) {
	a := statsConfig("a", check.RolloutRestart)
	b := statsConfig("b", check.DeletePod)
	aScale := statsConfig("a", check.ScaleDown) // same name, another disruption: another row
	rows := []Row{
		statsRun("s", a, 1, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", b, 1, 1000, [2]int{2, 1}, check.Fail),
		statsRun("s", a, 2, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", aScale, 1, 900, [2]int{0, 0}, check.Pass),
		statsRun("other", a, 1, 1100, [2]int{0, 0}, check.Pass), // same row, another suite
		statsRun("s", a, 3, 1100, [2]int{1, 2}, check.Fail),
		statsRun("s", b, 2, 1000, [2]int{0, 4}, check.Fail),
	}
	got := Group(rows)
	keys := make([]string, len(got))
	for i, s := range got {
		keys[i] = s.Key.String()
	}
	want := []string{"a (rollout-restart, suite s)", "b (delete-pod, suite s)", "a (scale-down, suite s)", "a (rollout-restart, suite other)"}
	if !slices.Equal(keys, want) {
		t.Fatalf("Group keys = %q, want %q (first-seen order)", keys, want)
	}

	s := got[0]
	if s.Runs != 3 || !slices.Equal(s.Repeats, []int{1, 2, 3}) ||
		!slices.Equal(s.FailuresPerRun, []int{0, 0, 3}) || !slices.Equal(s.RequestsPerRun, []int{1100, 1100, 1100}) {
		t.Errorf("row a: runs %d, repeats %v, failures %v, requests %v", s.Runs, s.Repeats, s.FailuresPerRun, s.RequestsPerRun)
	}
	if s.Failures != 3 || s.Requests != 3300 || s.FailureRatio != 3.0/3300 {
		t.Errorf("row a pooled: %d of %d (%v), want 3 of 3300", s.Failures, s.Requests, s.FailureRatio)
	}
	if s.Interval != stats.Wilson(3, 3300) {
		t.Errorf("row a interval %+v, want Wilson(3, 3300) = %+v", s.Interval, stats.Wilson(3, 3300))
	}
	if s.Worst == nil || s.WorstRun != 3 || s.Worst.N != 2 || s.Worst.SuccessRatio != 398.0/400 {
		t.Errorf("row a worst = %+v in run %d, want disruption 2 of run 3 (398/400)", s.Worst, s.WorstRun)
	}
	if s.Passed != 2 || s.Status != Flaky {
		t.Errorf("row a: %d passed, status %s; want 2 passed, flaky", s.Passed, s.Status)
	}
	if !slices.Equal(s.Statuses, []check.Status{check.Pass, check.Pass, check.Fail}) {
		t.Errorf("row a statuses = %v", s.Statuses)
	}

	b2 := got[1]
	if b2.Status != check.Fail || b2.Passed != 0 || !slices.Equal(b2.FailuresPerRun, []int{3, 4}) || b2.WorstRun != 2 {
		t.Errorf("row b = %+v, want fail, 0 passed, failures 3, 4, worst in run 2", b2)
	}
	if one := got[3]; one.Runs != 1 || one.Status != check.Pass || one.Worst == nil || one.Worst.Failed != 0 {
		t.Errorf("row a in suite other = %+v, want one passing run", one)
	}
	if Group(nil) != nil {
		t.Error("Group(nil) is not nil")
	}

	// A row without requests or disruptions: ratio 0 (no NaN in the JSON), interval [0, 1].
	empty := Group([]Row{{Suite: "s", Config: a, Verdict: check.Verdict{Status: check.Error}}})
	if e := empty[0]; e.FailureRatio != 0 || e.Interval != (stats.Interval{Lo: 0, Hi: 1}) || e.Worst != nil || e.Status != check.Error {
		t.Errorf("Group of a row with no requests = %+v", e)
	}
}

func TestCombine(t *testing.T) {
	P, F, H, E := check.Pass, check.Fail, check.HarnessFault, check.Error
	for _, c := range []struct {
		in   []check.Status
		want check.Status
	}{
		{[]check.Status{P}, P},
		{[]check.Status{P, P, P}, P},
		{[]check.Status{F, F}, F},
		{[]check.Status{P, F, P}, Flaky},
		{[]check.Status{F, P}, Flaky},
		{[]check.Status{P, H, P}, H},
		{[]check.Status{P, F, H}, H},
		{[]check.Status{P, "", P}, H}, // an unjudged run is a harness fault
		{[]check.Status{H, E, P}, E},
		{[]check.Status{E}, E},
		{nil, H},
	} {
		if got := combine(c.in); got != c.want {
			t.Errorf("combine(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// repeatedRun is a run of three rows: one run three times and flaky, one three times and
// passing, one once and failing (its Repeat 0 sorts it first: it started first).
func repeatedRun() Run {
	a := statsConfig("flaky-row", check.RolloutRestart)
	b := statsConfig("steady-row", check.DeletePod)
	c := statsConfig("once-row", check.ScaleDown)
	return NewRun([]Row{
		statsRun("s", a, 1, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", b, 1, 1000, [2]int{0, 0}, check.Pass),
		statsRun("s", a, 2, 1100, [2]int{0, 0}, check.Pass),
		statsRun("s", b, 2, 1000, [2]int{0, 0}, check.Pass),
		statsRun("s", a, 3, 1100, [2]int{1, 2}, check.Fail),
		statsRun("s", b, 3, 1000, [2]int{0, 0}, check.Pass),
		statsRun("s", c, 0, 900, [2]int{5, 0}, check.Fail),
	})
}

func TestSummarizeRepeats(t *testing.T) {
	run := repeatedRun()
	c := Summarize(run)
	if want := (Counts{Pass: 1, Fail: 1, Flaky: 1, Runs: 7}); c != want {
		t.Errorf("Summarize = %+v, want %+v", c, want)
	}
	if c.NotPassed() != 2 {
		t.Errorf("NotPassed = %d, want 2: a flaky row does not pass", c.NotPassed())
	}
	if got, want := c.String(), "3 rows (7 runs): 1 pass, 1 fail, 1 flaky, 0 harness-fault, 0 error"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	// Every run of the flaky row but one passed: the row still does not pass.
	rows := slices.DeleteFunc(slices.Clone(run.Rows), func(r Row) bool { return r.Config.Name == "once-row" })
	if got := Summarize(Run{Rows: rows}); got.Pass != 1 || got.Flaky != 1 || got.NotPassed() != 1 {
		t.Errorf("Summarize of the flaky and steady rows = %+v", got)
	}
}

func TestNewRunStats(t *testing.T) {
	run := repeatedRun()
	if len(run.Stats) != 3 || run.Stats[1].Key.Name != "flaky-row" || run.Stats[1].Status != Flaky {
		t.Fatalf("NewRun Stats = %+v, want the three grouped rows", run.Stats)
	}
	var buf bytes.Buffer
	if err := run.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"stats": [`) || !strings.Contains(buf.String(), `"status": "flaky"`) {
		t.Errorf("JSON without the stats:\n%.400s", buf.String())
	}
	got, err := ReadRun(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got.Stats), mustJSON(t, run.Stats); g != w {
		t.Errorf("stats changed in the JSON round trip:\n got %.400s\nwant %.400s", g, w)
	}

	// No row repeats: no stats, and the JSON is as before.
	once := NewRun(syntheticRows())
	if once.Stats != nil {
		t.Errorf("NewRun without repeats: Stats = %+v, want nil", once.Stats)
	}
	buf.Reset()
	if err := once.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"stats"`) {
		t.Error("JSON of a run without repeats has a stats field")
	}
	if math.IsNaN(run.Stats[0].FailureRatio) {
		t.Error("NaN failure ratio")
	}
}

func TestWriteMarkdownRepeats(t *testing.T) {
	var buf bytes.Buffer
	if err := repeatedRun().WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"\n## Repeats\n",
		"| scenario | disruption | runs | failures per run | pooled failure % [95% interval] of requests | worst disruption | passed | status |\n",
		"| flaky-row: preStop=sleep:5s sigterm=drain grace=30s keepalive=off | rollout-restart×2 | 3 | 0, 0, 3 | 0.091% [0.031%, 0.267%] of 3300 | 99.50% (run 3, #2) | 2/3 | 〰️ flaky |\n",
		"| steady-row: preStop=sleep:5s sigterm=drain grace=30s keepalive=off | delete-pod×2 | 3 | 0, 0, 0 | 0% [0%, 0.100%] of 3000 | 100% | 3/3 | ✅ pass |\n",
		"| once-row: preStop=sleep:5s sigterm=drain grace=30s keepalive=off | scale-down×2 | 1 | 5 | 0.556% [0.238%, 1.294%] of 900 | 98.75% (run 1, #1) | 0/1 | ❌ fail |\n",
		"- ❌ fail **flaky-row** (rollout-restart×2, suite s, keep-alive off, run 3): synthetic\n",
		"\n3 rows (7 runs): 1 pass, 1 fail, 1 flaky, 0 harness-fault, 0 error\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "## Repeats") > strings.Index(md, "## Not passing") {
		t.Error("the Repeats section comes after the Not passing one")
	}

	buf.Reset()
	if err := NewRun(syntheticRows()).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Repeats") || strings.Contains(buf.String(), "flaky") {
		t.Errorf("Markdown of a run without repeats mentions repeats:\n%s", buf.String())
	}
}
