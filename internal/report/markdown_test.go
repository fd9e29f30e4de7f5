package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func markdown(t *testing.T, run Run) string {
	t.Helper()
	var buf bytes.Buffer
	if err := run.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// tableRows returns the Markdown table's body rows, split into cells on unescaped pipes.
func tableRows(t *testing.T, md string) [][]string {
	t.Helper()
	var rows [][]string
	in := false // the conformance table: the first table of the page
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| scenario |") {
			in = true
			continue
		}
		if !strings.HasPrefix(line, "| ") {
			if in && !strings.HasPrefix(line, "|---") {
				break
			}
			continue
		}
		line = strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |")
		var cells []string
		var cur strings.Builder
		for i := 0; i < len(line); i++ {
			switch {
			case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
				cur.WriteByte('|')
				i++
			case strings.HasPrefix(line[i:], " | "):
				cells = append(cells, cur.String())
				cur.Reset()
				i += 2
			default:
				cur.WriteByte(line[i])
			}
		}
		rows = append(rows, append(cells, cur.String()))
	}
	return rows
}

func TestWriteMarkdown(t *testing.T) {
	run := NewRun(syntheticRows())
	md := markdown(t, run)
	t.Logf("\n%s", md)

	for _, want := range []string{
		"rollcheck v0.1.0-test · Kubernetes v1.34.0 · kind v0.30.0 · node image kindest/node:v1.34.0 (upstream) · Go go1.25.7 · vegeta v12.12.0",
		"| scenario | disruption | requests | failures by class | failures by phase | failure % | termination (deletion → exit) | disruption time | worst disruption | disruption s | bursts | expected | verdict |",
		"|---|---|--:|---|---|--:|---|---|--:|--:|--:|---|---|\n",
		"3 rows: 2 pass, 0 fail, 1 harness-fault, 0 error\n",
		"† transparent retry",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	rows := tableRows(t, md)
	if len(rows) != 3 {
		t.Fatalf("table has %d rows, want 3", len(rows))
	}
	want := [][]string{
		{"prestop-sleep-drain: preStop=sleep:5s sigterm=drain grace=30s keepalive=off", "rollout-restart×2",
			"2000", "—", "—", "0%", "—", "—", "100% (all 2)", "0", "0", "0 failures, ≥ 95% per disruption", "✅ pass"},
		// Disruption 1 holds 40 of the 56 failures in its 410 requests (buckets 4.0 s to 8.0 s).
		{"naive-exit: preStop=none sigterm=exit grace=30s keepalive=on †", "delete-pod×2",
			"2000", "eof 2, http_503 4, refused 44, reset 6", "n/a", "2.800%", "p50 1.2s · max 30.5s (1 of 2 killed)", "p50 9s · max 11s", "90.24% (#1)", "4", "2", "failures (refused|reset)", "✅ pass"},
		{"exit-at-most: preStop=exec:/app sleep 2s sigterm=exit grace=10s req=100ms keepalive=off", "rollout-restart×1",
			"1500", "timeout 3", "n/a", "0.200%", "—", "—", "99.27% (#1)", "1", "1", "≤ 0.10%", "⚠️ harness-fault"},
	}
	for i := range want {
		if len(rows[i]) != len(want[i]) {
			t.Errorf("row %d has %d cells, want %d: %q", i, len(rows[i]), len(want[i]), rows[i])
			continue
		}
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Errorf("row %d %s = %q, want %q", i, conformanceTable.Columns[j].Header, rows[i][j], want[i][j])
			}
		}
	}
	// The pipe of "failures (refused|reset)" is escaped in the table.
	if !strings.Contains(md, `failures (refused\|reset)`) {
		t.Errorf("pipe not escaped")
	}
	// The harness fault's reason is listed; passing rows' reasons are not.
	if !strings.Contains(md, "- ⚠️ harness-fault **exit-at-most** (rollout-restart×1, suite rollout, keep-alive off): invalid load run: achieved rate 91.30/s") {
		t.Errorf("harness fault reason missing")
	}
	if strings.Contains(md, "0 of 2000 requests failed") {
		t.Errorf("a passing row's reason is listed")
	}
}

func TestWriteMarkdownFailAndEscapes(t *testing.T) {
	rows := syntheticRows()[:2]
	rows[0].Suite = "odd|suite"
	rows[0].Verdict = check.Verdict{Status: check.Fail, Reason: "3 of 2000 failed | expected none\nsecond line"}
	rows[1].Verdict = check.Verdict{}
	// The load ran without keep-alive though the scenario asked for it: say what was measured.
	rows[1].Summary.KeepAlive, rows[1].Summary.TransparentRetry = false, false
	md := markdown(t, NewRun(rows))
	t.Logf("\n%s", md)
	for _, want := range []string{
		"❌ fail",
		`- ❌ fail **prestop-sleep-drain** (rollout-restart×2, suite odd\|suite, keep-alive off): 3 of 2000 failed \| expected none second line`,
		"- ⚠️ harness-fault **naive-exit** (delete-pod×2, suite delete, keep-alive off): no verdict recorded for this row",
		"keepalive=on (measured keep-alive off)",
		"2 rows: 0 pass, 1 fail, 1 harness-fault, 0 error",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "†") {
		t.Errorf("transparent retry noted though no row had it")
	}
	for _, r := range tableRows(t, md) {
		if len(r) != len(conformanceTable.Columns) {
			t.Errorf("row with %d cells, want %d: %q", len(r), len(conformanceTable.Columns), r)
		}
	}
}

func TestWriteMarkdownEmptyAndUnknownVersions(t *testing.T) {
	md := markdown(t, NewRun(nil))
	for _, want := range []string{"rollcheck unknown · Kubernetes unknown", "No rows.", "0 rows: 0 pass, 0 fail, 0 harness-fault, 0 error"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestFailuresCell(t *testing.T) {
	for _, tc := range []struct {
		in   map[loadgen.Class]int
		want string
	}{
		{nil, "—"},
		{map[loadgen.Class]int{loadgen.ClassReset: 0}, "—"},
		{map[loadgen.Class]int{loadgen.ClassReset: 3, loadgen.ClassEOF: 8}, "eof 8, reset 3"},
	} {
		if got := failuresCell(tc.in); got != tc.want {
			t.Errorf("failuresCell(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWorstCell(t *testing.T) {
	d := func(n, requests, failed int) check.DisruptionResult {
		r := check.DisruptionResult{Kind: check.DeletePod, N: n, Requests: requests, Failed: failed}
		if requests > 0 {
			r.SuccessRatio = float64(requests-failed) / float64(requests)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		in   []check.DisruptionResult
		want string
	}{
		{"none recorded", nil, "—"},
		{"all clean", []check.DisruptionResult{d(1, 400, 0), d(2, 410, 0), d(3, 390, 0)}, "100% (all 3)"},
		{"the worst is named", []check.DisruptionResult{d(1, 400, 2), d(2, 400, 10), d(3, 400, 1)}, "97.50% (#2)"},
		{"first among equals", []check.DisruptionResult{d(1, 400, 0), d(2, 400, 4), d(3, 400, 4)}, "99.00% (#2)"},
		// A disruption that saw no request has ratio 0: it is the worst, and says why.
		{"no requests", []check.DisruptionResult{d(1, 400, 40), d(2, 0, 0)}, "no requests (#2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := worstCell(tc.in); got != tc.want {
				t.Errorf("worstCell = %q, want %q", got, tc.want)
			}
		})
	}
}

// A row whose app named no pod is marked, and the note says what is missing.
func TestWriteMarkdownNoPodIdentity(t *testing.T) {
	rows := syntheticRows()
	rows[0].PodIdentity = false
	var buf bytes.Buffer
	if err := NewRun(rows).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if strings.Count(md, " ‡ |") != 1 || !strings.Contains(md, "‡ no pod identity") {
		t.Errorf("want one row marked ‡ and the note:\n%s", md)
	}
}

// Explained rows show their failures by phase, and the run its propagation, pooled and per row,
// with the recommendation. The run's data plane leaves out a keep-alive row's, which its own
// line still shows: over a pinned connection the pod's last answer is no routing measure.
func TestWriteMarkdownExplained(t *testing.T) {
	rows := syntheticRows()[:2]
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	rows[1].Explanation = &check.Explanation{
		Phases: map[timeline.Phase]int{timeline.PhasePropagation: 50, timeline.PhaseUnknown: 6},
		Propagation: check.PropagationSummary{
			ControlPlane:     check.Summarize([]time.Duration{ms(100), ms(300)}),
			DataPlane:        check.Summarize([]time.Duration{ms(4800)}), // keep-alive: not pooled
			KubeProxy:        &check.Durations{N: 4, P50: ms(250), P99: ms(900), Max: time.Second},
			KubeProxyBuckets: []check.HistogramBucket{{UpperBound: 0.25, Count: 2}, {UpperBound: 1, Count: 4}, {Inf: true, Count: 4}},
		},
		Recommendation: &check.Recommendation{PreStop: 3 * time.Second, GraceSeconds: 5, Routed: ms(1200),
			RoutedFrom: "control plane p99 300ms + kube-proxy programming p99 900ms", Fit: "short",
			Advice: "most failures (50) are propagation: set preStop sleep ≥ 3s"},
	}
	rows[0].Explanation = &check.Explanation{Propagation: check.PropagationSummary{
		ControlPlane: check.Summarize([]time.Duration{ms(200)}), DataPlane: check.Summarize([]time.Duration{ms(1100), ms(1300)}),
		KubeProxyBuckets: []check.HistogramBucket{{UpperBound: 0.25, Count: 1}, {UpperBound: 1, Count: 3}, {Inf: true, Count: 3}},
	}}
	run := NewRun(rows)
	if p := run.Propagation; p == nil || p.ControlPlane.N != 3 || p.DataPlane.N != 2 || p.KubeProxy == nil || p.KubeProxy.N != 7 {
		t.Errorf("run propagation %+v", p)
	}
	md := markdown(t, run)
	t.Logf("\n%s", md)
	for _, want := range []string{
		"| propagation 50, unknown 6 |",
		"Over the whole run: control plane (deletion → endpoint not ready) p50 200ms · p99 300ms · max 300ms (n 3); data plane (deletion → the pod's last answer, pods that kept serving, not over pinned connections) p50 1.1s · p99 1.3s · max 1.3s (n 2); kube-proxy programming (kubeproxy_network_programming_duration_seconds) p50",
		"(n 7).",
		"The data plane's p99 is 1s after the control plane's.",
		"| p50 100ms · p99 300ms · max 300ms (n 2) | p50 4.8s · p99 4.8s · max 4.8s (n 1) |",
		"| ≥ 3s · ≥ 5s (routed 1.2s: control plane p99 300ms + kube-proxy programming p99 900ms; requests p99 0s) | short | most failures (50) are propagation: set preStop sleep ≥ 3s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// A row that needed a second attempt (internal/attempt) says so in its verdict cell, in the
// figures document's table, in JUnit and in JSON; a row that ran once does not.
func TestRetriedRowMarked(t *testing.T) {
	rows := syntheticRows()
	rows[0].Attempts, rows[0].Retried = 2, "invalid load run: achieved rate 61.00/s"
	run := NewRun(rows)
	const want = "✅ pass (retried: invalid load run: achieved rate 61.00/s)"

	table := tableRows(t, markdown(t, run))
	if got := table[0][len(table[0])-1]; got != want {
		t.Errorf("retried row's verdict = %q, want %q", got, want)
	}
	if got := table[1][len(table[1])-1]; got != "✅ pass" {
		t.Errorf("a row that ran once = %q, want no retry mark", got)
	}

	var fig bytes.Buffer
	if err := run.WriteFigures(&fig, "conformance.json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fig.String(), "| "+want+" |") {
		t.Errorf("the figures document's table does not mark the retry:\n%s", fig.String())
	}

	var junit bytes.Buffer
	if err := run.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "attempt 2 of the row (retried: invalid load run: achieved rate 61.00/s)") {
		t.Errorf("JUnit does not mark the retry:\n%s", junit.String())
	}

	var js bytes.Buffer
	if err := run.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"attempts": 2,`) || !strings.Contains(js.String(), `"retried": "invalid load run: achieved rate 61.00/s"`) ||
		strings.Count(js.String(), `"attempts"`) != 1 {
		t.Errorf("JSON does not record the retry on that row alone")
	}
}
