package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/report"
)

// `rollcheck report DIR --figures FILE` writes the document from DIR's conformance.json; a
// directory without one is a one-line error and writes nothing.
func TestReportFigures(t *testing.T) {
	dir := t.TempDir()
	row := report.Row{Suite: "conformance", Started: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), Duration: time.Minute,
		Config:   check.Applied{Name: "prestop-sleep", PreStop: check.NativeSleep(5 * time.Second), Disruption: check.RolloutRestart, Count: 1, Expect: check.Zero()},
		Verdict:  check.Verdict{Status: check.Pass},
		Versions: check.Versions{Rollcheck: "dev-0123456789ab", Host: "4 cores, 7.7 GiB, Debian GNU/Linux 12 (bookworm) amd64, kernel 6.1.0"}}
	if _, err := report.WriteAll(dir, report.NewRun([]report.Row{row})); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "matrix.md")
	var stdout, stderr strings.Builder
	if code := dispatch(t.Context(), commands, "rollcheck", []string{"report", dir, "--figures", out}, &stdout, &stderr); code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// A row without an explanation: no windows to audit against, said in the section.
	for _, want := range []string{"do not edit; regenerate", "| machine | 4 cores, 7.7 GiB", "| rollcheck (commit) | dev-0123456789ab |", "| prestop-sleep",
		"## " + AgreementTitle + "\n\nNot computed: extract windows: no row has an explanation"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, b)
		}
	}
	empty := t.TempDir()
	stderr.Reset()
	code := dispatch(t.Context(), commands, "rollcheck", []string{"report", "--figures", filepath.Join(empty, "m.md"), empty}, &stdout, &stderr)
	if msg := stderr.String(); code != exitFail || !strings.Contains(msg, "conformance.json") || strings.Count(msg, "\n") != 1 {
		t.Errorf("no conformance.json: exit %d, %q, want exit 1 and one line naming it", code, msg)
	}
	if _, err := os.Stat(filepath.Join(empty, "m.md")); !os.IsNotExist(err) {
		t.Errorf("a document was written without a run: %v", err)
	}
}
