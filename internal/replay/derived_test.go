package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/attempt"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// The derived set: rows that are not passes, derived in the test from the recorded rows of
// testdata (see testdata/README.md, "Derived rows"). Each derived row's verdict is written here,
// not taken from the analysis, so that an analysis that would judge it otherwise fails
// TestReplayVerdictsDoNotFlip; the rest of what it records (summary, disruptions, explanation,
// times, attribution) is what the analysis gives of its derived ledger.
const (
	derivedSet = "derived"
	// attemptOf is the recorded zero-failure row that the derived set holds as a row run twice;
	// attemptFile is its first attempt's file (rowfile.AttemptName(check.Row, 1)).
	attemptOf   = "kind-e2e.tar.gz/pid1--pid1-shell--rollout-restart--cluster.json"
	attemptFile = "pid1--pid1-shell--rollout-restart--cluster.attempt1.json"
	// expectsZero is the recorded naive row judged under 0 failures, as the derived row
	// deletepod--naive-expects-zero.
	expectsZero = "kind-e2e.tar.gz/deletepod--naive--delete-pod--cluster.json"
	// blindReason is the verdict of a negative control that saw no failure.
	blindReason = "no request failed: the negative control did not see the disruption"
)

// neverRecorded are the families of negative controls of today's matrix (their mechanism,
// check.Outcome.Mechanism) that no recorded row shows, and so no derived one either: recording
// one is a run on a cluster, not something to make up here.
var neverRecorded = map[timeline.Phase]string{
	timeline.PhaseProxyNoUpstream: "proxy--nginx-static-prestop-5s (make e2e-proxy) was not recorded into testdata",
}

// recordedRow is a row of a recorded set, unpacked in dir, with its ledger; key is "set/row file".
type recordedRow struct {
	key    string
	dir    string
	row    check.Row
	ledger *loadgen.Result
}

// recordedRows are the rows of every recorded set, unpacked, in the sets' and rows' order.
func recordedRows(t *testing.T) []recordedRow {
	t.Helper()
	var out []recordedRow
	for _, set := range sets(t) {
		dir := unpack(t, set)
		rows, err := rowfile.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			ledger, err := readLedger(filepath.Join(dir, ledgerPath(row)))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, recordedRow{filepath.Base(set) + "/" + rowfile.Name(row), dir, row, ledger})
		}
	}
	return out
}

func findRecorded(t *testing.T, rows []recordedRow, key string) recordedRow {
	t.Helper()
	i := slices.IndexFunc(rows, func(r recordedRow) bool { return r.key == key })
	if i < 0 {
		t.Fatalf("no recorded row %s", key)
	}
	return rows[i]
}

// recount is ledger with its requests changed by edit (on a copy) and counted again as loadgen
// counts an attack (loadgen.Merge of it alone): totals, bursts, stalls and validity.
func recount(t *testing.T, ledger *loadgen.Result, edit func([]loadgen.Request) []loadgen.Request) *loadgen.Result {
	t.Helper()
	c := *ledger
	c.Requests = edit(slices.Clone(ledger.Requests))
	out, err := loadgen.Merge(ledger.Config, &c)
	if err != nil {
		t.Fatal(err)
	}
	out.Buckets = nil // as packed: the analysis does not read them
	return out
}

// answered is every failed request answered instead, as the app answers: a negative control's
// ledger with its failures removed.
func answered(reqs []loadgen.Request) []loadgen.Request {
	for i := range reqs {
		q := &reqs[i]
		if q.OK() {
			continue
		}
		q.Class, q.Error = loadgen.ClassOK, ""
		if q.Status != "" {
			q.Status = "OK"
		} else {
			q.Code = 200
		}
	}
	return reqs
}

// rerecord is row as the harness would have recorded it with ledger: the analysis's summary,
// disruptions, times, explanation and pod identity, and the verdict v; and its attribution.
func rerecord(row check.Row, ledger *loadgen.Result, v check.Verdict) (check.Row, analyze.Result) {
	in, _ := input(row, ledger)
	a := analyze.Row(in)
	row.Summary, row.Disruptions, row.Times, row.Explanation, row.PodIdentity = a.Summary, a.Disruptions, a.Times, a.Explanation, a.PodIdentity
	row.Verdict = v
	return row, a
}

// writeFixture writes row into the run directory dir as the engine does: its row file, and its
// ledger and attribution under raw/ named after it (check.Row.Artifacts says where).
func writeFixture(t *testing.T, dir string, row check.Row, ledger *loadgen.Result, attr any) check.Row {
	t.Helper()
	base := strings.TrimSuffix(rowfile.Name(row), ".json")
	row.Artifacts = map[string]string{"ledger": "raw/" + base + ".ledger.json", "attribution": "raw/" + base + ".attribution.json"}
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ledger.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	ab, err := json.Marshal(attr)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{row.Artifacts["ledger"]: []byte(b.String()), row.Artifacts["attribution"]: ab} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rowfile.Write(dir, row); err != nil {
		t.Fatal(err)
	}
	return row
}

// blind is the recorded negative control r with the failures removed from its ledger (every
// failed request answered): a row that did not see the disruption, which must fail.
func blind(t *testing.T, r recordedRow) (check.Row, *loadgen.Result, analyze.Result) {
	t.Helper()
	ledger := recount(t, r.ledger, answered)
	if !ledger.Valid || ledger.Totals.Failed != 0 {
		t.Fatalf("%s without its failures: %s", r.key, ledger)
	}
	row, a := rerecord(r.row, ledger, check.Verdict{Status: check.Fail, Reason: blindReason})
	row.Config.Why = fmt.Sprintf("derived from %s (internal/replay testdata README): its ledger with every failed request answered, a negative control that did not see the disruption; %s", r.key, row.Config.Why)
	return row, ledger, a
}

// harnessFault is the first attempt of the recorded zero-failure row r as a harness that
// judged any invalid load a harness fault (before check.Outcome.Fault) recorded it: its load
// lost the requests after the last rollout settled (the load ended early: the harness's
// fault) and 3 requests of the first rollout were reset by the app (the app's). Its row records
// no LoadFault: it was written before rows did.
func harnessFault(t *testing.T, r recordedRow) (check.Row, *loadgen.Result, analyze.Result) {
	t.Helper()
	if r.row.Config.Expect.Kind != check.ExpectZero || r.ledger.Totals.Failed != 0 || len(r.row.Disruptions) == 0 {
		t.Fatalf("%s: not a recorded zero-failure row", r.key)
	}
	first, last := r.row.Disruptions[0], r.row.Disruptions[len(r.row.Disruptions)-1]
	ledger := recount(t, r.ledger, func(reqs []loadgen.Request) []loadgen.Request {
		cut := 0
		for i := range reqs {
			q := &reqs[i]
			if q.Timestamp.After(first.Started.Add(2*time.Second)) && cut < 3 {
				q.Class, q.Code, q.Error, q.Pod = loadgen.ClassReset, 0, "read: connection reset by peer", ""
				cut++
			}
		}
		end := last.Settled.Add(500 * time.Millisecond)
		return slices.DeleteFunc(reqs, func(q loadgen.Request) bool { return q.Timestamp.After(end) })
	})
	if ledger.Valid || ledger.Totals.Failed != 3 || ledger.StallFailed != 0 {
		t.Fatalf("%s: the first attempt's ledger: %s (stall-failed %d)", r.key, ledger, ledger.StallFailed)
	}
	row, a := rerecord(r.row, ledger, check.Verdict{Status: check.HarnessFault, Reason: "invalid load run: " + ledger.InvalidReason})
	row.LoadFault = ""
	row.Config.Why = fmt.Sprintf("derived from %s (internal/replay testdata README): the first attempt of a row run twice, its load ended early and 3 requests reset by the app; %s", r.key, row.Config.Why)
	return row, ledger, a
}

// derive writes the derived set into a new run directory and returns it:
//   - every recorded negative control (check.ExpectFailures) with its failures removed: fail,
//     "did not see the disruption" (blind), one row at least of every family recorded;
//   - the recorded deletepod naive row judged under 0 failures, as deletepod--naive-expects-zero:
//     fail, and a row that today's matrix does not have;
//   - the recorded pid1-shell row run twice: its first attempt kept as internal/attempt.Keep
//     keeps it (harnessFault: recorded harness-fault, which the replay judges fail), and the
//     recorded row as the second attempt, marked by internal/attempt.Mark (Attempts 2, Retried).
func derive(t *testing.T) string {
	t.Helper()
	dir, rows := t.TempDir(), recordedRows(t)
	for _, r := range rows {
		if r.row.Config.Expect.Kind != check.ExpectFailures {
			continue
		}
		row, ledger, a := blind(t, r)
		writeFixture(t, dir, row, ledger, a.Attribution)
	}

	r := findRecorded(t, rows, expectsZero)
	row := r.row
	row.Config.Name += "-expects-zero"
	row.Config.Expect = check.Zero()
	row.Config.Why = fmt.Sprintf("derived from %s (internal/replay testdata README): its recorded ledger judged under 0 failures, which it breaks", r.key)
	row, a := rerecord(row, r.ledger, check.Verdict{Status: check.Fail, Reason: fmt.Sprintf("%d failed requests, expected none (derived)", r.ledger.Totals.Failed)})
	writeFixture(t, dir, row, r.ledger, a.Attribution)

	r = findRecorded(t, rows, attemptOf)
	first, ledger, a := harnessFault(t, r)
	first = writeFixture(t, dir, first, ledger, a.Attribution)
	if kept, err := attempt.Keep(dir, first); err != nil || kept != filepath.Join("rows", attemptFile) {
		t.Fatalf("keep the first attempt: %s, %v", kept, err)
	}
	second := r.row
	attempt.Mark(&second, first.Verdict.Reason)
	attr, err := os.ReadFile(filepath.Join(r.dir, "raw", strings.TrimSuffix(rowfile.Name(r.row), ".json")+".attribution.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFixture(t, dir, second, r.ledger, json.RawMessage(attr))
	return dir
}

// The derived set is what testdata/README.md says: the replay (Dir) reads every derived row and
// the kept first attempt with its renamed ledger, and finds no change but the first attempt's
// verdict, harness-fault → fail, judged with check.Outcome.Fault on the app's failures; the
// second attempt is marked as run again. A blind row of every family the recorded sets have is
// in it, and the families that today's matrix has and no recording shows are neverRecorded.
func TestReplayDerivedRows(t *testing.T) {
	dir := derive(t)
	rep, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = rep.Write(&b)
	families := map[timeline.Phase][]string{}
	rows, err := rowfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Config.Expect.Kind == check.ExpectFailures {
			families[row.Config.Expect.Mechanism()] = append(families[row.Config.Expect.Mechanism()], rowfile.Name(row))
		}
	}
	for _, r := range rep.Rows {
		switch {
		case r.File == attemptFile:
			if len(r.Changes) != 1 || !strings.HasPrefix(r.Changes[0], "verdict harness-fault → fail: 3 of ") ||
				!strings.Contains(r.Changes[0], "expected none; the app failed them whatever the harness did: invalid load run: ") {
				t.Errorf("%s: changes %q, want the verdict harness-fault → fail on the app's 3 failures", r.File, r.Changes)
			}
		case r.Skipped != "" || len(r.Kept) > 0 || len(r.Changes) > 0:
			t.Errorf("%s: %+v, want no change", r.File, r)
		}
	}
	if i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.File == attemptFile }); i < 0 {
		t.Errorf("the replay did not read the kept first attempt %s:\n%s", attemptFile, b.String())
	}
	attempts, err := rowfile.ReadAttempts(dir)
	if err != nil || len(attempts) != 1 || attempts[0].Artifacts["ledger"] != "raw/"+strings.TrimSuffix(attemptFile, ".json")+".ledger.json" {
		t.Errorf("the kept first attempt: %+v, %v", attempts, err)
	}
	i := slices.IndexFunc(rows, func(r check.Row) bool { return r.Attempts > 0 })
	if i < 0 || rows[i].Attempts != 2 || !strings.HasPrefix(rows[i].Retried, "invalid load run: ") || rows[i].Verdict.Status != check.Pass {
		t.Errorf("the second attempt: not marked run again after the first's harness fault")
	}

	recorded := map[timeline.Phase]bool{}
	for _, r := range recordedRows(t) {
		if o := r.row.Config.Expect; o.Kind == check.ExpectFailures {
			recorded[o.Mechanism()] = true
			if len(families[o.Mechanism()]) == 0 {
				t.Errorf("family %s (%s): no derived row", o.Mechanism(), r.key)
			}
		}
	}
	var have, never []string
	for ph, rows := range families {
		have = append(have, fmt.Sprintf("%s (%s)", ph, strings.Join(rows, ", ")))
	}
	for _, o := range todaysMatrix(t) {
		if ph := o.Mechanism(); o.Kind == check.ExpectFailures && !recorded[ph] && !slices.Contains(never, string(ph)) {
			never = append(never, string(ph))
			if neverRecorded[ph] == "" {
				t.Errorf("family %s: negative controls of today's matrix show it, no recorded row does: record one, or name it in neverRecorded", ph)
			}
		}
	}
	for ph := range neverRecorded {
		if recorded[ph] {
			t.Errorf("family %s: in neverRecorded, but a recorded row shows it", ph)
		}
	}
	slices.Sort(have)
	slices.Sort(never)
	t.Logf("derived negative controls by family:\n  %s\nfamilies of today's matrix never recorded: %s\n%s", strings.Join(have, "\n  "), strings.Join(never, ", "), b.String())
}
