package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// `rollcheck report --reanalyze DIR` judges DIR's rows again from their files: exit 0 when
// nothing changed, 1 when something did (each change said), 2 for a directory without rows.
func TestReportReanalyze(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ledger := &loadgen.Result{Started: t0, Ended: t0.Add(time.Second), EndReason: loadgen.EndStopped, Valid: true, SuccessRatio: 1, AchievedRate: 10}
	for i := range 10 {
		ledger.Requests = append(ledger.Requests, loadgen.Request{Seq: uint64(i), Timestamp: t0.Add(time.Duration(i) * 100 * time.Millisecond), Latency: time.Millisecond, Code: 200, Class: loadgen.ClassOK})
	}
	ledger.Totals = loadgen.Totals{Requests: 10, OK: 10}
	tl := timeline.Timeline{Started: t0, Ended: t0.Add(time.Second)}
	row := check.Row{Suite: "t", Started: t0, Timeline: &tl, Artifacts: map[string]string{"ledger": "raw/x.ledger.json"},
		Config: check.Applied{Name: "x", Disruption: check.RolloutRestart, Expect: check.Zero(), GraceSeconds: 30}}
	a := analyze.Row(analyze.Input{Config: row.Config, Load: ledger, Timeline: tl})
	row.Summary, row.Explanation, row.Times, row.Verdict = a.Summary, a.Explanation, a.Times, analyze.Verdict(row.Config, a)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "raw", "x.ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run := func(want int, r check.Row) string {
		t.Helper()
		if _, err := rowfile.Write(dir, r); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		if code := dispatch(t.Context(), commands, "rollcheck", []string{"report", "--reanalyze", dir}, &stdout, &stderr); code != want {
			t.Fatalf("exit %d, want %d: %s%s", code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := run(exitPass, row); out != dir+": 1 rows replayed: 0 changed, 1 no change\n" {
		t.Errorf("as recorded: %q", out)
	}
	changed := row
	changed.Verdict.Status = check.Fail
	if out := run(exitFail, changed); !strings.Contains(out, "t--x--rollout-restart.json: changed\n  verdict fail → pass") {
		t.Errorf("a changed verdict: %q", out)
	}
	var stdout, stderr strings.Builder
	if code := dispatch(t.Context(), commands, "rollcheck", []string{"report", "--reanalyze", t.TempDir()}, &stdout, &stderr); code != exitBadInput || !strings.Contains(stderr.String(), "read rows") {
		t.Errorf("no rows: exit %d, %q", code, stderr.String())
	}
}
