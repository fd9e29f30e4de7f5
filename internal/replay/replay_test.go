package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// recorded is a recorded row of testdata's kind-e2e set and its ledger: delete-pod, naive, with
// failures in propagation and in-flight-cut.
func recorded(t *testing.T) (check.Row, *loadgen.Result) {
	t.Helper()
	dir := unpack(t, filepath.Join("testdata", "kind-e2e.tar.gz"))
	rows, err := rowfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r check.Row) bool { return rowfile.Name(r) == "deletepod--naive--delete-pod--cluster.json" })
	if i < 0 {
		t.Fatal("no deletepod--naive row in kind-e2e")
	}
	ledger, err := readLedger(filepath.Join(dir, ledgerPath(rows[i])))
	if err != nil {
		t.Fatal(err)
	}
	return rows[i], ledger
}

// A replay says each change against the record in a line: the verdict's status, the row's and
// a disruption's phase counts, the recommendation.
func TestReplaySaysWhatChanged(t *testing.T) {
	row, ledger := recorded(t)
	if got := Replay(row, ledger); len(got.Changes) > 0 || len(got.Kept) > 0 || got.Skipped != "" {
		t.Fatalf("the row as recorded: %+v", got)
	}
	ex := *row.Explanation
	ex.Phases = map[timeline.Phase]int{timeline.PhasePropagation: ex.Phases[timeline.PhasePropagation] + 2, timeline.PhaseSIGKILL: 1}
	rec := *ex.Recommendation
	rec.PreStop += 1e9
	ex.Recommendation = &rec
	row.Explanation = &ex
	row.Disruptions = slices.Clone(row.Disruptions)
	row.Disruptions[0].Failed++
	row.Verdict.Status = check.Fail
	got := Replay(row, ledger)
	want := []string{"verdict fail → pass: ", "phases: sigkill 1 → 0, in-flight-cut 0 → 4, propagation 72 → 70", "disruption 1: failed ", "recommendation: preStop 6s, grace 8s → preStop 5s, grace 8s"}
	if len(got.Changes) != len(want) {
		t.Fatalf("changes %q, want %d", got.Changes, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got.Changes[i], w) {
			t.Errorf("change %d = %q, want it to start with %q", i, got.Changes[i], w)
		}
	}
}

// A harness fault of the run itself (the load stalled) is not in the recorded data of a row
// written before rows recorded LoadFault: the replay judges it with the recorded reason and says
// so; one the data show (fewer disruptions than asked) is judged again.
func TestReplayKeepsTheRunsOwnFaults(t *testing.T) {
	row, ledger := recorded(t)
	row.Verdict = check.Verdict{Status: check.HarnessFault, Reason: "the load generator sent nothing for 4s"}
	got := Replay(row, ledger)
	if len(got.Changes) > 0 || len(got.Kept) != 1 || !strings.Contains(got.Kept[0], "the run's own fault, from the recorded verdict (the load generator sent nothing") {
		t.Errorf("a stalled load: %+v", got)
	}
	row.Config.Count++
	row.Verdict.Reason = fmt.Sprintf("%d of %d disruptions ran", len(row.Disruptions), row.Config.Count)
	got = Replay(row, ledger)
	if len(got.Kept) != 0 || len(got.Changes) != 0 {
		t.Errorf("fewer disruptions than asked, recorded as a fault: %+v", got)
	}
}

// What the row did not record is said, and taken as none: the entry node of an
// externalTrafficPolicy Local row whose nodes were not read, kube-proxy's numbers of a row with
// no explanation; a row with no timeline is not replayed.
func TestReplaySaysWhatItCouldNotDerive(t *testing.T) {
	row, ledger := recorded(t)
	row.Config.ExternalTrafficPolicy, row.Nodes = "Local", nil
	if _, kept := input(row, ledger); len(kept) != 1 || !strings.Contains(kept[0], "the node the load entered at") {
		t.Errorf("Local without nodes: %q", kept)
	}
	row.Explanation = nil
	if got := Replay(row, ledger); len(got.Kept) != 2 || !strings.Contains(got.Kept[0], "kube-proxy's programming numbers") {
		t.Errorf("no explanation: %q", got.Kept)
	}
	row.Timeline = nil
	if got := Replay(row, ledger); got.Skipped == "" {
		t.Errorf("no timeline: %+v", got)
	}
}

// A row without a ledger is not replayed, and said; a ledger that does not decode, or a
// directory without rows, is an error.
func TestDir(t *testing.T) {
	row, _ := recorded(t)
	dir := t.TempDir()
	row.Artifacts = nil
	if _, err := rowfile.Write(dir, row); err != nil {
		t.Fatal(err)
	}
	rep, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	if want := "deletepod--naive--delete-pod--cluster.json: not replayed: no ledger (raw/deletepod--naive--delete-pod--cluster.ledger.json): the row kept no raw files\n" + dir + ": 0 rows replayed: 0 changed, 0 no change; 1 not replayed\n"; b.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "deletepod--naive--delete-pod--cluster.ledger.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(dir); err == nil || !strings.Contains(err.Error(), "decoding load result JSON") {
		t.Errorf("a broken ledger: %v", err)
	}
	if _, err := Dir(t.TempDir()); err == nil {
		t.Error("a directory without rows: no error")
	}
}
