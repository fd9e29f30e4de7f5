package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/tune"
)

// probe is a judged probe of 1,000 requests with failed of them, the worst disruption at worst,
// and 15 deletions, 3 of them failing when a request failed.
func probe(n int, preStop time.Duration, failed int, worst float64) tune.Probe {
	st, failing := check.Pass, 0
	if failed > 0 {
		st, failing = check.Fail, 3
	}
	return tune.Probe{N: n, PreStop: preStop, Variant: tune.Name("exit", preStop), Requests: 1000, Failed: failed,
		FailureRatio: float64(failed) / 1000, Disruptions: 5, WorstSuccessRatio: worst, Status: st, Reason: "synthetic",
		Deletions: 15, FailingDeletions: failing,
		// Each preStop second costs the pods that second, and a rollout of 3 pods three.
		Exit:           check.Summarize([]time.Duration{preStop + 100*time.Millisecond}),
		DisruptionTime: check.Summarize([]time.Duration{10*time.Second + 3*preStop})}
}

// syntheticTune is a tune of the exit app that passes from 3.5 s: the search (with a harness
// fault retried at 1 s) found 3 s, whose confirmation failed alone; 3.5 s was confirmed alone
// (four runs there, the first two shown).
func syntheticTune() *tune.Result {
	ms := time.Millisecond
	fault := tune.Probe{N: 3, PreStop: time.Second, Variant: "exit-prestop-1s", Status: check.HarnessFault,
		Reason: "the load stalled for 3s"}
	retry := probe(4, time.Second, 30, 0.9)
	retry.Retry = true
	confirmFail, confirmPass := probe(9, 3*time.Second, 1, 0.995), probe(10, 3500*ms, 0, 1)
	confirmFail.Confirm, confirmPass.Confirm = true, true
	confirmFail.Alone, confirmPass.Alone = true, true
	return &tune.Result{
		Suite: "tune", Base: "exit", Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 5},
		Expect: check.Zero(), GraceSeconds: 30, Max: 20 * time.Second, Resolution: 500 * ms,
		Status: tune.Found, Found: 3500 * ms, FoundOK: true, Parallel: 3, Bound: 0.05, Confidence: 0.95, DeletionsNeeded: 59,
		AtFound: &tune.Evidence{PreStop: 3500 * ms, Runs: 4, Clean: 4, Deletions: 60, Upper: tune.UpperBound(60, 0)},
		Below:   &tune.Evidence{PreStop: 3 * time.Second, Runs: 1, Deletions: 15, Failing: 3, FailedRuns: 1, Upper: tune.UpperBound(15, 3)},
		Probes: []tune.Probe{probe(1, 0, 120, 0.85), probe(2, 500*ms, 80, 0.88), fault, retry,
			probe(5, 2*time.Second, 5, 0.97), probe(6, 4*time.Second, 0, 1), probe(7, 3*time.Second, 0, 1)},
		Confirm: []tune.Probe{confirmFail, confirmPass},
		Note:    "the search found 3s; runs alone failed at 3s; 3.5s met the bound",
		Started: t0, Wall: 25*time.Minute + 12*time.Second,
		Recommendation: &check.Recommendation{PreStop: 4 * time.Second, GraceSeconds: 7, Routed: 2300 * ms,
			RoutedFrom: "data plane p99", RequestP99: 12 * ms, Fit: "short", Advice: "raise preStop to 4s"},
		Versions: check.Versions{Rollcheck: "dev", Kubernetes: "v1.34.3"},
	}
}

func TestTuneMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := TuneMarkdown(&buf, syntheticTune()); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	// The curve is the search's probes by preStop; the confirmation runs have a table of their own.
	curve := strings.Join([]string{
		"| # | preStop s | requests | failed | failure % | worst disruption % | termination p50 | disruption time p50 | deletions failed | verdict |",
		"|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
		"| 1 | 0 | 1000 | 120 | 12.000% | 85.00% | 100ms | 10s | 3 of 15 | ❌ fail |",
		"| 2 | 0.5 | 1000 | 80 | 8.000% | 88.00% | 600ms | 11.5s | 3 of 15 | ❌ fail |",
		"| 3 | 1 | — | — | — | — | — | — | — | ⚠️ harness-fault |",
		"| 4 (retry) | 1 | 1000 | 30 | 3.000% | 90.00% | 1.1s | 13s | 3 of 15 | ❌ fail |",
		"| 5 | 2 | 1000 | 5 | 0.500% | 97.00% | 2.1s | 16s | 3 of 15 | ❌ fail |",
		"| 7 | 3 | 1000 | 0 | 0% | 100.00% | 3.1s | 19s | 0 of 15 | ✅ pass |",
		"| 6 | 4 | 1000 | 0 | 0% | 100.00% | 4.1s | 22s | 0 of 15 | ✅ pass |",
	}, "\n")
	confirm := strings.Join([]string{
		"## Confirmation", "",
		"| # | preStop s | requests | failed | failure % | worst disruption % | termination p50 | disruption time p50 | deletions failed | verdict |",
		"|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
		"| 9 | 3 | 1000 | 1 | 0.100% | 99.50% | 3.1s | 19s | 3 of 15, alone | ❌ fail |",
		"| 10 | 3.5 | 1000 | 0 | 0% | 100.00% | 3.6s | 20.5s | 0 of 15, alone | ✅ pass |",
	}, "\n")
	for _, want := range []string{
		"# rollcheck tune: exit",
		"**Found: preStop 3.5 s, confirmed alone: 0 of 60 deletions failed, so a deletion fails with p ≤ 4.87 % (95 % confidence).**",
		"- bound: a deletion fails with p below 5 % at 95 % confidence: 59 deletions alone, none failing",
		"## Bound\n\n- at 3.5 s, the answer: 0 of 60 deletions failed in 4 runs alone: p ≤ 4.9 % (95 % confidence)\n" +
			"- at 3 s, one step below: 3 of 15 deletions failed in 1 run alone: p ≤ 44.0 % (95 % confidence)\n",
		"- disruption: rollout-restart×5", "- threshold: 0 failures", "- grace period: 30 s",
		"- search: 0 s to 20 s, resolution 0.5 s", "- probes: 7 search, 2 confirmation (alone), up to 3 at once", "- wall time: 25m12s",
		"Note: the search found 3s; runs alone failed at 3s; 3.5s met the bound.",
		curve, confirm,
		"- probe 3 (preStop 1 s): harness-fault: the load stalled for 3s",
		"- preStop ≥ 4 s, terminationGracePeriodSeconds ≥ 7",
		"- inputs: routed 2.3s (data plane p99), request p99 12ms",
		"- raise preStop to 4s",
		"rollcheck dev · Kubernetes v1.34.3",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks\n%s\n---\n%s", want, md)
		}
	}
}

func TestTuneMarkdownOtherEnds(t *testing.T) {
	for _, tc := range []struct {
		edit func(*tune.Result)
		want []string
		not  []string
	}{
		{func(r *tune.Result) {
			r.Status, r.Found, r.FoundOK, r.Confirm = tune.NotFound, 0, false, nil
		},
			[]string{"**Not found: no preStop from 0 s to 20 s met the threshold.**"}, []string{"## Recommendation", "## Confirmation"}},
		{func(r *tune.Result) {
			r.Status, r.Found, r.FoundOK = tune.Unconfirmed, 3*time.Second, false
		},
			[]string{"**Not confirmed: the search found preStop 3 s, but runs alone did not bound the chance that a deletion fails below 5 %.**"}, []string{"## Recommendation"}},
		{func(r *tune.Result) { r.Recommendation = nil }, []string{"The confirming run gave no recommendation."}, nil},
		{func(r *tune.Result) {
			*r = tune.Result{Base: "exit", Status: tune.Incomplete, Max: 20 * time.Second, Resolution: time.Second}
		}, []string{"**Incomplete:", "No probe ran."}, []string{"## Curve\n\n|"}},
	} {
		r := syntheticTune()
		tc.edit(r)
		var buf bytes.Buffer
		if err := TuneMarkdown(&buf, r); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s: lacks %q:\n%s", r.Status, w, buf.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(buf.String(), w) {
				t.Errorf("%s: has %q:\n%s", r.Status, w, buf.String())
			}
		}
	}
}

func TestTuneHTML(t *testing.T) {
	r := syntheticTune()
	var buf bytes.Buffer
	if err := TuneHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	wellFormed(t, page)
	// One point of each series per judged probe: 6 of the search (the harness fault is not a
	// point) and 2 confirmations.
	if got := strings.Count(page, `<circle class="failures"`); got != 8 {
		t.Errorf("%d failure points, want 8", got)
	}
	if got := strings.Count(page, `<rect class="worst"`); got != 8 {
		t.Errorf("%d worst-disruption points, want 8", got)
	}
	for _, want := range []string{
		">found 3.5 s</text>", "Found: preStop 3.5 s, confirmed alone: 0 of 60 deletions failed",
		"<td>4 (retry)</td><td>1</td><td>1000</td><td>30</td><td>3.000%</td><td>90.00%</td><td>1.1s</td><td>13s</td><td>3 of 15</td><td>❌ fail</td>",
		"<td>10</td><td>3.5</td><td>1000</td><td>0</td><td>0%</td><td>100.00%</td><td>3.6s</td><td>20.5s</td><td>0 of 15, alone</td><td>✅ pass</td>",
		"<h2>Bound</h2>", "<li>at 3 s, one step below: 3 of 15 deletions failed in 1 run alone: p ≤ 44.0 % (95 % confidence)</li>",
		"confirmation 10: preStop 3.5 s: 0 of 1000 failed; worst disruption 100.00%; disruption time p50 20.5s: pass",
		"preStop ≥ 4 s, terminationGracePeriodSeconds ≥ 7", ">4.5s</text>", ">80%</text>", ">90%</text>", ">100%</text>", ">200</text>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	r.Status, r.Found, r.FoundOK, r.Confirm = tune.NotFound, 0, false, nil
	buf.Reset()
	if err := TuneHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), ">found") || strings.Count(buf.String(), `<circle class="failures"`) != 6 {
		t.Errorf("a tune that found nothing has no found marker and one point per judged probe")
	}
	wellFormed(t, buf.String())
}

func TestNiceCeil(t *testing.T) {
	for n, want := range map[int]int{0: 2, 1: 2, 2: 2, 3: 5, 7: 10, 120: 200, 1000: 1000, 1001: 2000} {
		if got := niceCeil(n); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestWriteTune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tune")
	r := syntheticTune()
	r.Probes[0].Row = &check.Row{Suite: "tune"}
	paths, err := WriteTune(dir, r)
	if err != nil || len(paths) != 3 {
		t.Fatalf("paths %v, err %v", paths, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, TuneJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var back tune.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Found != r.Found || len(back.Probes) != 7 || len(back.Confirm) != 2 || back.Probes[0].Row != nil ||
		back.Recommendation == nil || back.Probes[3].Retry != true {
		t.Errorf("read back %+v", back)
	}
	if strings.Contains(string(b), `"buckets"`) {
		t.Errorf("tune.json holds a row")
	}
	for _, f := range []string{TuneMarkdownFile, TuneHTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
