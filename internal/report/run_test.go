package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
	if p, f, h := Summarize(run); p != 2 || f != 0 || h != 1 {
		t.Errorf("Summarize = %d, %d, %d; want 2, 0, 1", p, f, h)
	}
	run.Rows[0].Verdict.Status = Fail
	run.Rows = append(run.Rows, Row{}, Row{Verdict: Verdict{Status: "weird"}})
	// Rows never judged, or judged with an unknown status, are harness faults.
	if p, f, h := Summarize(run); p != 1 || f != 1 || h != 3 {
		t.Errorf("Summarize = %d, %d, %d; want 1, 1, 3", p, f, h)
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

func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	paths, err := WriteAll(dir, NewRun(syntheticRows()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"conformance.json", "conformance.md", "timeline.html"}
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
