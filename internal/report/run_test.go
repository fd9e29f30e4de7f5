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
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewRun(t *testing.T) {
	rows := syntheticRows()
	rows[0].Versions = Versions{} // the earliest row has no versions: take the next one's
	rows[1].Versions.Rollcheck = "v-second"
	in := []Row{rows[2], rows[1], rows[0]}
	before := time.Now()
	run := NewRun(in)
	if run.Generated.Before(before.Add(-time.Second)) {
		t.Errorf("Generated = %v, want about now", run.Generated)
	}
	if run.Versions.Rollcheck != "v-second" {
		t.Errorf("Versions = %+v, want those of the first row that has any", run.Versions)
	}
	for i, r := range run.Rows {
		if r.Config.Name != rows[i].Config.Name {
			t.Errorf("row %d is %s, want %s: rows sorted by Started", i, r.Config.Name, rows[i].Config.Name)
		}
	}
	if in[0].Config.Name != rows[2].Config.Name {
		t.Errorf("NewRun reordered its argument")
	}
	if empty := NewRun(nil); empty.Rows == nil || empty.Versions != (Versions{}) {
		t.Errorf("NewRun(nil) = %+v", empty)
	}
}

func TestSummarize(t *testing.T) {
	run := NewRun(syntheticRows())
	if got, want := Summarize(run), (Counts{Pass: 2, HarnessFault: 1}); got != want {
		t.Errorf("Summarize = %+v; want %+v", got, want)
	}
	// A row that needed a second attempt is counted as retried, whatever its verdict.
	run.Rows[1].Attempts, run.Rows[1].Retried = 2, "invalid load run: stalled"
	if got, want := Summarize(run), (Counts{Pass: 2, HarnessFault: 1, Retried: 1}); got != want || !strings.HasSuffix(got.String(), ", 1 retried") {
		t.Errorf("Summarize with a retried row = %+v (%s); want %+v", got, got, want)
	}
	run.Rows[1].Attempts, run.Rows[1].Retried = 0, ""
	run.Rows[0].Verdict.Status = check.Fail
	run.Rows = append(run.Rows, Row{}, Row{Verdict: check.Verdict{Status: "weird"}},
		Row{Verdict: check.Verdict{Status: check.Error, Reason: "deploy: timed out"}})
	// Rows never judged, or judged with an unknown status, are harness faults; rows that
	// could not run to the end are errors.
	c := Summarize(run)
	if want := (Counts{Pass: 1, Fail: 1, HarnessFault: 3, Error: 1}); c != want {
		t.Errorf("Summarize = %+v; want %+v", c, want)
	}
	if c.NotPassed() != 5 {
		t.Errorf("NotPassed = %d, want 5", c.NotPassed())
	}
	if got, want := c.String(), "6 rows: 1 pass, 1 fail, 3 harness-fault, 1 error"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := (Counts{}).String(), "0 rows: 0 pass, 0 fail, 0 harness-fault, 0 error"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	run := NewRun(syntheticRows())
	var buf bytes.Buffer
	if err := run.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\n  \"versions\": {") {
		t.Errorf("WriteJSON is not indented:\n%.300s", buf.String())
	}
	got, err := ReadRun(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, run); g != w {
		t.Errorf("run changed in the JSON round trip:\n got %.500s\nwant %.500s", g, w)
	}
	if _, err := ReadRun(strings.NewReader(`{"rows": 3}`)); err == nil {
		t.Error("ReadRun of bad JSON: no error")
	}
}

// conformance.json says its schema's version, written whatever the Run held; a file without
// one (written before it) is read, a later version is not.
func TestJSONSchemaVersion(t *testing.T) {
	var buf bytes.Buffer
	if err := (Run{Rows: []Row{}}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"schemaVersion\": 2,\n") {
		t.Errorf("WriteJSON does not start with schemaVersion 2:\n%.200s", buf.String())
	}
	if run := NewRun(nil); run.SchemaVersion != SchemaVersion {
		t.Errorf("NewRun: SchemaVersion %d, want %d", run.SchemaVersion, SchemaVersion)
	}
	if run, err := ReadRun(strings.NewReader(`{"rows": []}`)); err != nil || run.SchemaVersion != 0 {
		t.Errorf("ReadRun of a file without schemaVersion = %d, %v; want 0, no error", run.SchemaVersion, err)
	}
	// Version 1 held a row's quiet time under config.settle.
	run, err := ReadRun(strings.NewReader(`{"schemaVersion": 1, "rows": [{"suite": "s", "config": {"name": "n", "settle": 5000000000}}]}`))
	if err != nil || len(run.Rows) != 1 || run.Rows[0].Config.Quiet != 5*time.Second {
		t.Errorf("ReadRun of schemaVersion 1 = %+v, %v; want one row, quiet 5s", run.Rows, err)
	}
	_, err = ReadRun(strings.NewReader(`{"schemaVersion": 3, "rows": []}`))
	if want := "schemaVersion 3: this rollcheck reads up to 2"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadRun of schemaVersion 3: %v, want %q", err, want)
	}
}

func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	paths, err := WriteAll(dir, NewRun(syntheticRows()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{JSONFile, MarkdownFile, HTMLFile, JUnitFile}
	if len(paths) != len(want) {
		t.Fatalf("WriteAll paths = %v", paths)
	}
	for i, p := range paths {
		if p != filepath.Join(dir, want[i]) {
			t.Errorf("path %d = %s, want %s", i, p, filepath.Join(dir, want[i]))
		}
		if st, err := os.Stat(p); err != nil {
			t.Error(err)
		} else if st.Size() == 0 {
			t.Errorf("%s is empty", p)
		}
	}
}
