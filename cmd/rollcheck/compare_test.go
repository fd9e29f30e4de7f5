package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/loadgen"
)

// compareRow is one run of the row name: failed of 1100 requests, judged by Expect Zero.
func compareRow(name string, rate, repeat, failed int) check.Row {
	c := check.Applied{Name: name, App: "app", PreStop: check.PreStop{Sleep: 5 * time.Second}, OnSIGTERM: "drain", GraceSeconds: 30,
		Replicas: 3, Path: "/", Rate: rate, Method: "GET", Disruption: check.RolloutRestart, Count: 2,
		Quiet: 3 * time.Second, Expect: check.Zero()}
	s := loadgen.Summary{Requests: 1100, Failed: failed, OK: 1100 - failed, Valid: true,
		FailureRatio: float64(failed) / 1100, Failures: map[loadgen.Class]int{}}
	if failed > 0 {
		s.Failures[loadgen.ClassEOF] = failed
	}
	return check.Row{Suite: "rollout", Config: c, Repeat: repeat, Summary: s, Verdict: c.Expect.Judge(s),
		Started: time.Date(2026, 3, 14, 9, 0, repeat, 0, time.UTC)}
}

// writeRun writes rows as a conformance.json in dir/name and returns its path.
func writeRun(t *testing.T, dir, name string, rows ...check.Row) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.NewRun(rows).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func compareCLI(args ...string) (int, string, string) {
	return rollcheck(append([]string{"compare"}, args...)...)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestCompareRegressionExits1(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, "base.json", compareRow("a", 100, 0, 0))
	next := writeRun(t, dir, "new.json", compareRow("a", 100, 0, 40))
	code, out, stderr := compareCLI(base, next)
	if code != exitFail {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	if want := "compare: 1 rows, 1 significant regressions, 0 significant improvements"; lastLine(out) != want {
		t.Errorf("last line %q, want %q", lastLine(out), want)
	}
	if !strings.Contains(out, "| ✅ pass → ❌ fail | 🔺 significant regression |") || stderr != "" {
		t.Errorf("stdout:\n%s\nstderr: %s", out, stderr)
	}
	// The same files, the other way round: an improvement, exit 0.
	code, out, _ = compareCLI(next, base)
	if code != exitPass || lastLine(out) != "compare: 1 rows, 0 significant regressions, 1 significant improvements" {
		t.Errorf("reversed: exit %d, last line %q", code, lastLine(out))
	}
	// --alpha below the p-value (1.3e-12), before, between or after the files.
	for _, args := range [][]string{{"--alpha", "1e-13", base, next}, {base, "--alpha=1e-13", next}, {base, next, "-alpha", "1e-13"}} {
		if code, out, stderr := compareCLI(args...); code != exitPass || !strings.Contains(out, "no significant change") {
			t.Errorf("compare %q: exit %d, want 0\n%s%s", args, code, out, stderr)
		}
	}
}

func TestCompareNoSignificantChangeExits0(t *testing.T) {
	dir := t.TempDir()
	// Repeated runs: 1+1+1 of 3300 against 2+1+1 of 3300, and a row added and removed.
	base := writeRun(t, dir, "base.json",
		compareRow("a", 100, 1, 1), compareRow("a", 100, 2, 1), compareRow("a", 100, 3, 1), compareRow("gone", 100, 0, 0))
	next := writeRun(t, dir, "new.json",
		compareRow("a", 100, 1, 2), compareRow("a", 100, 2, 1), compareRow("a", 100, 3, 1), compareRow("fresh", 100, 0, 0))
	code, out, stderr := compareCLI(base, next)
	if code != exitPass {
		t.Fatalf("exit %d, want 0; stderr %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"| 3 of 3300 (0.091% [0.031%, 0.267%], 3 runs) | 4 of 3300 (0.121% [0.047%, 0.311%], 3 runs) | +0.030 pp | 1.00 | — | — | ❌ fail | no significant change |",
		"### Added (only in new)\n\n- **fresh** (rollout-restart×2, suite rollout): 0 of 1100",
		"### Removed (only in base)\n\n- **gone** (rollout-restart×2, suite rollout): 0 of 1100",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if want := "compare: 1 rows, 0 significant regressions, 0 significant improvements"; lastLine(out) != want {
		t.Errorf("last line %q, want %q", lastLine(out), want)
	}
}

func TestCompareMismatchReported(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, "base.json", compareRow("a", 100, 0, 0), compareRow("b", 100, 0, 0))
	next := writeRun(t, dir, "new.json", compareRow("a", 100, 0, 0), compareRow("b", 200, 0, 90))
	code, out, stderr := compareCLI(base, next)
	if code != exitPass {
		t.Fatalf("exit %d, want 0 (a mismatched row is not compared); stderr %s", code, stderr)
	}
	if !strings.Contains(out, "### Measured differently (not compared)\n\n- **b** (rollout-restart, suite rollout): rate: 100 → 200\n") {
		t.Errorf("mismatch not reported:\n%s", out)
	}
	if lastLine(out) != "compare: 1 rows, 0 significant regressions, 0 significant improvements" {
		t.Errorf("last line %q", lastLine(out))
	}
}

func TestCompareBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good.json", compareRow("a", 100, 0, 0))
	other := writeRun(t, dir, "other.json", compareRow("z", 100, 0, 0))
	rateOnly := writeRun(t, dir, "rate.json", compareRow("a", 200, 0, 0))
	text := filepath.Join(dir, "text.json")
	row := filepath.Join(dir, "row.json")
	for p, body := range map[string]string{text: "not json", row: `{"suite": "rollout", "config": {"name": "a"}}`} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want two files, BASE and NEW; got 0"},
		{[]string{good}, "want two files"},
		{[]string{good, good, good}, "want two files"},
		{[]string{good, filepath.Join(dir, "missing.json")}, "no such file or directory"},
		{[]string{text, good}, "text.json: not a conformance.json"},
		{[]string{good, row}, "row.json: not a conformance.json: no rows field"},
		{[]string{good, other}, "no rows in common (1 only in base, 1 only in new, 0 with another configuration)"},
		{[]string{good, rateOnly}, "no rows in common (0 only in base, 0 only in new, 1 with another configuration)"},
		{[]string{"--alpha", "0", good, good}, "--alpha 0: want a level between 0 and 1"},
		{[]string{"--alpha", "x", good, good}, "invalid value"},
		{[]string{"--bogus", good, good}, "flag provided but not defined"},
	} {
		code, out, stderr := compareCLI(tc.args...)
		if code != exitBadInput {
			t.Errorf("compare %q: exit %d, want 2", tc.args, code)
		}
		if !strings.HasPrefix(stderr, "rollcheck compare: ") || !strings.Contains(stderr, tc.want) ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("compare %q: stderr %q, want one line with %q", tc.args, stderr, tc.want)
		}
		if out != "" {
			t.Errorf("compare %q: stdout %q, want nothing", tc.args, out)
		}
	}
}

func TestCompareHelp(t *testing.T) {
	code, out, _ := compareCLI("-h")
	if code != exitPass || !strings.HasPrefix(out, "usage: rollcheck compare [flags] BASE NEW") || !strings.Contains(out, "\n  --alpha ") {
		t.Errorf("compare -h: exit %d, stdout %q", code, out)
	}
}

// Benchmarking a new configuration of the app against the old one: the same row, preStop
// none → sleep 5 s, is compared (not refused) and its change is named.
func TestCompareAppConfigurationChange(t *testing.T) {
	dir := t.TempDir()
	old := compareRow("as-is", 100, 0, 80)
	old.Config.PreStop = check.PreStop{None: true}
	base := writeRun(t, dir, "base.json", old)
	next := writeRun(t, dir, "new.json", compareRow("as-is", 100, 0, 0))
	code, out, stderr := compareCLI(base, next)
	if code != exitPass {
		t.Fatalf("exit %d, want 0 (an improvement); stderr %s", code, stderr)
	}
	if !strings.Contains(out, "| preStop none → sleep:5s |") || !strings.Contains(out, "significant improvement") {
		t.Errorf("the preStop change is not compared:\n%s", out)
	}
	code, out, _ = compareCLI(next, base)
	if code != exitFail || !strings.Contains(out, "| preStop sleep:5s → none |") {
		t.Errorf("exit %d, want 1 for the regression:\n%s", code, out)
	}
}
