package attempt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// row is a row as the engine returns it, with raw files written under its name.
func row(t *testing.T, dir string, status check.Status, reason string) *check.Row {
	t.Helper()
	r := &check.Row{Suite: "s", Config: check.Applied{Name: "v", Disruption: check.RolloutRestart},
		Verdict: check.Verdict{Status: status, Reason: reason}}
	ledger := filepath.Join("raw", "s--v--rollout-restart.ledger.json")
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ledger), []byte(reason), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Artifacts = map[string]string{"ledger": ledger}
	return r
}

// A harness fault runs the row once more; both attempts are kept, the second records why.
func TestRunRetriesAHarnessFaultOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []check.Status
		runs     int
		attempts int
	}{
		{"pass", []check.Status{check.Pass}, 1, 0},
		{"fail", []check.Status{check.Fail}, 1, 0},
		{"error", []check.Status{check.Error}, 1, 0},
		{"fault then pass", []check.Status{check.HarnessFault, check.Pass}, 2, 2},
		{"fault twice", []check.Status{check.HarnessFault, check.HarnessFault, check.Pass}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runs, retrying := 0, 0
			got, err := Run(context.Background(), dir, func(context.Context) (*check.Row, error) {
				runs++
				return row(t, dir, tc.statuses[runs-1], "attempt "+string(rune('0'+runs))), nil
			}, func(*check.Row) { retrying++ })
			if err != nil {
				t.Fatal(err)
			}
			if runs != tc.runs || retrying != tc.runs-1 || got.Attempts != tc.attempts || got.Verdict.Status != tc.statuses[runs-1] {
				t.Fatalf("runs %d, told %d, attempts %d, status %s; want %d runs, attempts %d", runs, retrying, got.Attempts, got.Verdict.Status, tc.runs, tc.attempts)
			}
			if tc.runs == 1 {
				if got.Retried != "" {
					t.Errorf("Retried = %q on a row run once", got.Retried)
				}
				return
			}
			if got.Retried != "attempt 1" {
				t.Errorf("Retried = %q, want the first attempt's reason", got.Retried)
			}
			// The first attempt is kept beside the row, its raw files renamed.
			kept := filepath.Join(dir, "rows", rowfile.AttemptName(*got, 1))
			b, err := os.ReadFile(kept)
			if err != nil {
				t.Fatalf("first attempt not kept: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "raw", "s--v--rollout-restart.attempt1.ledger.json")); err != nil || string(b) != "attempt 1" {
				t.Errorf("first attempt's ledger = %q, %v", b, err)
			}
			if want := "raw/s--v--rollout-restart.attempt1.ledger.json"; !strings.Contains(string(b), want) {
				t.Errorf("kept row does not name its renamed ledger %s:\n%s", want, b)
			}
			// The reports read the row once: the last attempt.
			if _, err := rowfile.Write(dir, *got); err != nil {
				t.Fatal(err)
			}
			rows, err := rowfile.Read(dir)
			if err != nil || len(rows) != 1 || rows[0].Attempts != 2 {
				t.Errorf("rowfile.Read = %d rows (%v), want the one row of 2 attempts", len(rows), err)
			}
		})
	}
}

// No retry once the context ended, and a run's error is returned as it is.
func TestRunNoRetry(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := 0
	got, err := Run(ctx, t.TempDir(), func(context.Context) (*check.Row, error) {
		runs++
		return &check.Row{Verdict: check.Verdict{Status: check.HarnessFault}}, nil
	}, nil)
	if err != nil || runs != 1 || got.Attempts != 0 {
		t.Errorf("cancelled: runs %d, attempts %d, err %v; want one run", runs, got.Attempts, err)
	}
	boom := errors.New("boom")
	if _, err := Run(context.Background(), "", func(context.Context) (*check.Row, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}
