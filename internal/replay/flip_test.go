package replay

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/matrix"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
)

// matrixSuites are the suites of the conformance matrix by the name a row records (check.Row's
// Suite), as suites' e2e tables declare them (table(title, suite, rows) in suites/*_test.go).
var matrixSuites = []struct {
	suite   string
	entries func() []matrix.Entry
}{
	{"rollout", matrix.RolloutEntries}, {"deletepod", matrix.DeletePodEntries}, {"forcedelete", matrix.ForceDeleteEntries},
	{"scaledown", matrix.ScaleDownEntries}, {"pid1", matrix.PID1Entries}, {"stopsignal", matrix.StopSignalEntries},
	{"sidecar", matrix.SidecarEntries}, {"kubeletrestart", matrix.KubeletRestartEntries}, {"proxy", matrix.ProxyEntries},
	{"drainnode", matrix.DrainEntries}, {"etp", matrix.ETPEntries}, {"terminating", matrix.TerminatingEntries},
	{"http2", matrix.HTTP2Entries}, {"grpc", matrix.GRPCEntries},
}

// todaysMatrix is today's expectation of every row of the matrix, both load paths, by the file
// name its row gets (check.Row.FileName, no repeat).
func todaysMatrix(t *testing.T) map[string]check.Outcome {
	t.Helper()
	m, n := map[string]check.Outcome{}, 0
	for _, s := range matrixSuites {
		entries := s.entries()
		n += len(entries)
		for _, e := range matrix.Matrix(entries, knobs.LoadBoth) {
			p, err := e.Scenario.Plan(s.suite, "rollcheck/app:name")
			if err != nil {
				t.Fatalf("%s: %s: %v", s.suite, e.Scenario.Variant.Name, err)
			}
			a := p.Applied()
			name := rowfile.Name(check.Row{Suite: s.suite, Config: a})
			if _, dup := m[name]; dup {
				t.Fatalf("two rows of the matrix are %s", name)
			}
			m[name] = a.Expect
		}
	}
	if all := len(matrix.AllEntries()); n != all {
		t.Fatalf("matrixSuites names %d entries, the matrix has %d: a suite is missing here", n, all)
	}
	return m
}

// matrixName is the name row has in todaysMatrix: its file name, without its repeat.
func matrixName(row check.Row) string {
	row.Repeat = 0
	return rowfile.Name(row)
}

// judged is one fixture row judged by the replay under the expectation it records and under
// today's expectation of the same row of the matrix.
type judged struct {
	// file is "set/row file" (an attempt's file for a kept first attempt).
	file string
	// was is the verdict the row records; want the status the replay must give under both
	// expectations: was's, or the one rejudged declares.
	was  check.Verdict
	want check.Status
	// recorded is the expectation the row records, today the matrix's now; inMatrix false when
	// the matrix has no such row any more.
	recorded, today check.Outcome
	inMatrix        bool
	// underRecorded and underToday are the verdicts the replay gives under each.
	underRecorded, underToday check.Verdict
}

// rejudged are the fixture rows whose verdict the replay must give otherwise than recorded, by
// "set/row file": the status it must give, and why.
var rejudged = map[string]struct {
	want check.Status
	why  string
}{
	derivedSet + "/" + attemptFile: {check.Fail, "the first attempt recorded harness-fault (an invalid load run, as the harness said before check.Outcome.Fault); " +
		"3 of its failed requests are the app's and the row expects none, so a replay judges it fail, whatever the harness did"},
}

// judge judges row (file in set) and its ledger under the expectation it records and under
// today's (nil: no row of that name in the matrix).
func judge(set, file string, row check.Row, ledger *loadgen.Result, today map[string]check.Outcome) judged {
	j := judged{file: set + "/" + file, was: row.Verdict, want: row.Verdict.Status, recorded: row.Config.Expect}
	if r, ok := rejudged[j.file]; ok {
		j.want = r.want
	}
	j.underRecorded = Replay(row, ledger).Verdict
	j.today, j.inMatrix = today[matrixName(row)]
	if j.inMatrix {
		row.Config.Expect = j.today
		j.underToday = Replay(row, ledger).Verdict
	}
	return j
}

// flipped says how j's verdict flips: the replay's under either expectation is not the one it
// must give (want). It names the row, both expectations and both verdicts; "" when nothing flips.
func (j judged) flipped() string {
	if j.underRecorded.Status == j.want && (!j.inMatrix || j.underToday.Status == j.want) {
		return ""
	}
	today, underToday := "none (no such row in today's matrix)", "not judged"
	if j.inMatrix {
		today, underToday = fmt.Sprintf("%q", j.today), fmt.Sprintf("%s (%s)", j.underToday.Status, j.underToday.Reason)
	}
	return fmt.Sprintf("%s: verdict flips: recorded %s (%s), must be %s; under the recorded expectation %q: %s (%s); under today's expectation %s: %s",
		j.file, j.was.Status, j.was.Reason, j.want, j.recorded, j.underRecorded.Status, j.underRecorded.Reason, today, underToday)
}

// judgeDir judges every row of the run in dir, and every first attempt it kept, as Dir replays
// them, under both expectations; set names dir.
func judgeDir(t *testing.T, set, dir string, today map[string]check.Outcome) []judged {
	t.Helper()
	rows, err := rowfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := rowfile.ReadAttempts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []judged
	for i, row := range append(rows, attempts...) {
		file := rowfile.Name(row)
		if i >= len(rows) {
			file = rowfile.AttemptName(row, 1)
		}
		ledger, err := readLedger(filepath.Join(dir, ledgerPath(row)))
		if err != nil {
			t.Fatalf("%s/%s: %v", set, file, err)
		}
		out = append(out, judge(set, file, row, ledger, today))
	}
	return out
}

// gone are the fixture rows that today's matrix no longer has, by "set/row file", and why: they
// are judged under the expectation they record only. A row that leaves the matrix must be named
// here, and one named here must have left it.
var gone = map[string]string{
	derivedSet + "/deletepod--naive-expects-zero--delete-pod--cluster.json": "derived: deletepod naive's recorded ledger judged under 0 failures, which no row of the matrix asks of it",
}

// Every fixture row, recorded or derived from the recorded ones (derive), keeps its verdict under
// the expectation it records and under today's expectation of its row in the matrix: a change of
// the analysis or of the matrix that would turn a recorded fail into a pass (or a pass into a
// fail) fails here, naming the row, both expectations and both verdicts. The rows the matrix no
// longer has are listed (gone) and judged under their recorded expectation.
func TestReplayVerdictsDoNotFlip(t *testing.T) {
	today := todaysMatrix(t)
	var all []judged
	for _, set := range sets(t) {
		all = append(all, judgeDir(t, filepath.Base(set), unpack(t, set), today)...)
	}
	all = append(all, judgeDir(t, derivedSet, derive(t), today)...)
	statuses := map[check.Status]int{}
	var notInMatrix []string
	for _, j := range all {
		if f := j.flipped(); f != "" {
			t.Error(f)
		}
		statuses[j.want]++
		if !j.inMatrix {
			notInMatrix = append(notInMatrix, j.file)
			if gone[j.file] == "" {
				t.Errorf("%s: not in today's matrix, judged under its recorded expectation %q only: name it in gone, with why", j.file, j.recorded)
			}
		}
	}
	for file := range gone {
		if !slices.Contains(notInMatrix, file) {
			t.Errorf("%s: in gone but not a fixture row missing from today's matrix", file)
		}
	}
	for file := range rejudged {
		if !slices.ContainsFunc(all, func(j judged) bool { return j.file == file }) {
			t.Errorf("%s: in rejudged but not a fixture row", file)
		}
	}
	t.Logf("%d fixture rows: %d pass, %d fail, %d harness-fault; not in today's matrix (judged under their recorded expectation only): %s",
		len(all), statuses[check.Pass], statuses[check.Fail], statuses[check.HarnessFault], strings.Join(notInMatrix, ", "))
	if statuses[check.Fail] == 0 {
		t.Error("no fixture row must fail: a fail turned into a pass would go unseen")
	}
}

// The checker of TestReplayVerdictsDoNotFlip (judge, flipped) fails on a fixture flipped on
// purpose, naming the row, both expectations and both verdicts: a recorded fail that the replay
// would judge a pass (a derived blind negative control given its failures back), a recorded pass
// that it would judge a fail (the failures removed from the ledger), a recorded fail put back
// under the expectation it breaks no longer, and a recorded pass that today's matrix, asking
// more of the row, would fail.
func TestReplayCatchesAFlippedVerdict(t *testing.T) {
	today, rows := todaysMatrix(t), recordedRows(t)
	naive := findRecorded(t, rows, "kind-e2e.tar.gz/rollout--naive--rollout-restart.json")
	blindRow, _, _ := blind(t, naive)
	zeroFrom := findRecorded(t, rows, expectsZero)
	expectsZeroRow := zeroFrom.row
	expectsZeroRow.Config.Name += "-expects-zero"
	expectsZeroRow.Config.Expect = check.Zero()
	expectsZeroRow.Verdict = check.Verdict{Status: check.Fail, Reason: "derived"}
	backUnderAtMost := expectsZeroRow
	backUnderAtMost.Config.Expect = zeroFrom.row.Config.Expect
	stricter := map[string]check.Outcome{}
	for k, v := range today {
		stricter[k] = v
	}
	stricter[matrixName(zeroFrom.row)] = check.Outcome{Kind: check.ExpectAtMost, MaxRatio: 0.05}

	for _, c := range []struct {
		what   string
		row    check.Row
		ledger *loadgen.Result
		today  map[string]check.Outcome
		// says are what the report must hold besides the row's file: the expectations and
		// the verdicts.
		says []string
	}{
		{"a recorded fail judged a pass: a blind negative control given its failures back", blindRow, naive.ledger, today,
			[]string{"recorded fail (" + blindReason + "), must be fail", `under the recorded expectation "failures (eof|reset|timeout) by propagation": pass (97 of 1780`, `under today's expectation "failures (eof|reset|timeout) by propagation": pass (97 of 1780`}},
		{"a recorded pass judged a fail: its failures removed from the ledger", naive.row, recount(t, naive.ledger, answered), today,
			[]string{"recorded pass (97 of 1780", `under the recorded expectation "failures (eof|reset|timeout) by propagation": fail (` + blindReason, `under today's expectation "failures (eof|reset|timeout) by propagation": fail (` + blindReason}},
		{"a recorded fail put back under the expectation it was recorded with", backUnderAtMost, zeroFrom.ledger, today,
			[]string{"recorded fail (derived), must be fail", `under the recorded expectation "≤ 10.00%": pass (74 of 1379`, "under today's expectation none (no such row in today's matrix): not judged"}},
		{"a recorded pass that today's matrix, asking at most 5% of the row, would fail", zeroFrom.row, zeroFrom.ledger, stricter,
			[]string{"recorded pass (74 of 1379", `under the recorded expectation "≤ 10.00%": pass (74 of 1379`, `under today's expectation "≤ 5.00%": fail (74 of 1379 requests failed (5.366%), expected at most 5.00%`}},
	} {
		file := rowfile.Name(c.row)
		got := judge("flipped-on-purpose", file, c.row, c.ledger, c.today).flipped()
		t.Logf("%s:\n  %s", c.what, got)
		if !strings.HasPrefix(got, "flipped-on-purpose/"+file+": verdict flips: ") {
			t.Errorf("%s: the checker reports %q, want the row %s named", c.what, got, file)
		}
		for _, s := range c.says {
			if !strings.Contains(got, s) {
				t.Errorf("%s: the report does not say %q", c.what, s)
			}
		}
	}
	// Unflipped, the same rows pass the checker.
	if got := judge("recorded", rowfile.Name(naive.row), naive.row, naive.ledger, today).flipped(); got != "" {
		t.Errorf("the recorded row itself: %s", got)
	}
	if got := judge("recorded", rowfile.Name(zeroFrom.row), zeroFrom.row, zeroFrom.ledger, today).flipped(); got != "" {
		t.Errorf("the recorded row itself: %s", got)
	}
}
