package rowfile

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteRowReadRowsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := syntheticRows()
	// Write them out of order: Read sorts by Started.
	for _, i := range []int{2, 0, 1} {
		path, err := Write(dir, rows[i])
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		want := filepath.Join(dir, "rows", rows[i].Suite+"--"+rows[i].Config.Name+"--"+string(rows[i].Config.Disruption)+".json")
		if path != want {
			t.Errorf("Write path = %s, want %s", path, want)
		}
	}
	// Files that are not rows are left alone.
	if err := os.WriteFile(filepath.Join(dir, "rows", "notes.txt"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(got) != len(rows) {
		t.Fatalf("Read: %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if g, w := mustJSON(t, got[i]), mustJSON(t, rows[i]); g != w {
			t.Errorf("row %d changed in the round trip:\n got %s\nwant %s", i, g, w)
		}
	}
	if got[1].Timeline == nil || len(got[1].Timeline.Events) == 0 || len(got[1].Buckets) == 0 {
		t.Errorf("row 1 lost its timeline or buckets")
	}
	if len(got[1].Disruptions) != 2 || got[1].Disruptions[0].Failures[loadgen.ClassReset] != 10 {
		t.Errorf("row 1 lost its disruptions: %+v", got[1].Disruptions)
	}
	if e := got[2].Config.Expect; e.MaxDisruptionSeconds == nil || *e.MaxDisruptionSeconds != 1 ||
		got[0].Config.Expect.MinSuccessRatioPerDisruption != 0.95 {
		t.Errorf("the outcomes' bounds did not survive: %+v, %+v", got[0].Config.Expect, e)
	}
	for i, want := range []check.Status{check.Pass, check.Pass, check.HarnessFault} {
		if got[i].Verdict.Status != want {
			t.Errorf("row %d verdict %s, want %s", i, got[i].Verdict.Status, want)
		}
	}

	// Writing the same row again replaces it.
	r := rows[0]
	r.Verdict.Reason = "again"
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err = Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Verdict.Reason != "again" {
		t.Errorf("rewriting a row: %d rows, first reason %q", len(got), got[0].Verdict.Reason)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(filepath.Join(dir, "rows"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestRowFileNameIsSafe(t *testing.T) {
	r := check.Row{Suite: "a/b c", Config: check.Applied{Name: "../x", Disruption: "delete-pod"}}
	if got, want := Name(r), "a_b_c--.._x--delete-pod.json"; got != want {
		t.Errorf("rowFileName = %q, want %q", got, want)
	}
	dir := t.TempDir()
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != filepath.Join(dir, "rows") {
		t.Errorf("Write wrote %s outside %s/rows", path, dir)
	}
}

func TestWriteRowNeedsNames(t *testing.T) {
	for _, r := range []check.Row{
		{Config: check.Applied{Name: "x", Disruption: check.DeletePod}},
		{Suite: "s", Config: check.Applied{Disruption: check.DeletePod}},
		{Suite: "s", Config: check.Applied{Name: "x"}},
	} {
		if _, err := Write(t.TempDir(), r); err == nil {
			t.Errorf("Write(%q, %q, %q): no error", r.Suite, r.Config.Name, r.Config.Disruption)
		}
	}
}

func TestReadRowsBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"broken.json", `{"suite": "x", "config": {`, "broken.json"},
		{"trailing.json", `{"suite": "x", "config": {"name": "y"}} {}`, "trailing.json"},
		{"empty-object.json", `{}`, "no suite or name"},
		{"wrong-type.json", `{"suite": 3}`, "wrong-type.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := Write(dir, syntheticRows()[0]); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "rows", tc.name)
			if err := os.WriteFile(bad, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(dir)
			if err == nil {
				t.Fatal("Read: no error")
			}
			if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read error %q: want it to name %s and say %q", err, bad, tc.want)
			}
		})
	}
}

func TestReadRowsMissingAndEmpty(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read without rows/: %v, want fs.ErrNotExist", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "rows"), 0o755); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(dir)
	if err != nil || len(rows) != 0 {
		t.Errorf("Read of an empty rows/: %d rows, %v", len(rows), err)
	}
}

// TestReadRowsTakesTheOldSettleKey reads rows an earlier rollcheck wrote, whose quiet time is
// under "settle" (a recorded run of internal/audit's testdata), and a row written now, under
// "quiet": both give check.Applied.Quiet, and writing an old row again uses the new key only.
func TestReadRowsTakesTheOldSettleKey(t *testing.T) {
	dir := filepath.Join("..", "audit", "testdata", "kind-run")
	raw, err := os.ReadFile(filepath.Join(dir, "rows", "rollout--naive--rollout-restart--cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"settle":3000000000`) || strings.Contains(string(raw), `"quiet"`) {
		t.Fatalf("the recorded row is not an old one (settle, no quiet)")
	}
	rows, err := Read(dir)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(rows) == 0 {
		t.Fatal("Read: no rows")
	}
	for _, r := range rows {
		if r.Config.Quiet != 3*time.Second {
			t.Errorf("%s: Quiet = %s, want the recorded settle, 3s", r.Config.Name, r.Config.Quiet)
		}
	}
	again := mustJSON(t, rows[0].Config)
	if !strings.Contains(again, `"quiet":3000000000`) || strings.Contains(again, `"settle"`) {
		t.Errorf("an old row written again: %s", again)
	}

}
