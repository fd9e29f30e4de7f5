// Package replay judges recorded rows again with the current analysis, without a cluster
// (rollcheck report --reanalyze): it reads a run's rows (DIR/rows/*.json) and each row's ledger
// (DIR/raw/<row>.ledger.json), runs internal/analyze on them and says, row by row, what the
// analysis gives now against what was recorded: the verdict's status, the phase counts (the
// row's and each disruption's) and the recommendation. A rule changed is replayed on recorded
// runs before any cluster runs it.
package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Row is one recorded row judged again.
type Row struct {
	// File is the row's file name under DIR/rows.
	File string
	// Skipped says why the row was not analysed again (it recorded no ledger, no timeline);
	// empty when it was.
	Skipped string
	// Kept says what could not be derived again from what the row recorded, and was taken as
	// recorded instead.
	Kept []string
	// Changes say what the analysis gives now against what was recorded, one line each; none
	// when nothing changed.
	Changes []string
	// Verdict is the verdict the replay gives now, the one Changes compares with the recorded
	// one (a recorded error kept, a recorded harness fault judged with its reason); zero when
	// Skipped.
	Verdict check.Verdict
}

// Report is a replayed run: its rows in the order they ran.
type Report struct {
	Dir  string
	Rows []Row
}

// Count is how many rows changed, did not change, and were not replayed.
func (r Report) Count() (changed, unchanged, skipped int) {
	for _, row := range r.Rows {
		switch {
		case row.Skipped != "":
			skipped++
		case len(row.Changes) > 0:
			changed++
		default:
			unchanged++
		}
	}
	return changed, unchanged, skipped
}

// Dir replays every row of the run in dir, and every first attempt kept of a row that was run
// again (check.ReadAttempts), so that a retried row's first verdict is judged again too. A directory without rows, a row that does not
// decode and a ledger that does not are errors; a row that kept no ledger is Skipped.
func Dir(dir string) (Report, error) {
	rows, err := rowfile.Read(dir)
	if err != nil {
		return Report{}, fmt.Errorf("replay %s: %w", dir, err)
	}
	if len(rows) == 0 {
		return Report{}, fmt.Errorf("replay %s: no rows in %s", dir, filepath.Join(dir, "rows"))
	}
	attempts, err := rowfile.ReadAttempts(dir)
	if err != nil {
		return Report{}, fmt.Errorf("replay %s: %w", dir, err)
	}
	out := Report{Dir: dir}
	for i, row := range append(rows, attempts...) {
		file := rowfile.Name(row)
		if i >= len(rows) {
			file = rowfile.AttemptName(row, 1) // attempt.Max is 2: a kept attempt is the first
		}
		name := ledgerPath(row)
		ledger, err := readLedger(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out.Rows = append(out.Rows, Row{File: file, Skipped: fmt.Sprintf("no ledger (%s): the row kept no raw files", name)})
			continue
		case err != nil:
			return Report{}, fmt.Errorf("replay %s: row %s: %w", dir, file, err)
		}
		r := Replay(row, ledger)
		r.File = file
		out.Rows = append(out.Rows, r)
	}
	return out, nil
}

// ledgerPath is where a row's ledger is, relative to the run's directory: where the row says
// (Artifacts), else where the engine writes it.
func ledgerPath(row check.Row) string {
	if p := row.Artifacts["ledger"]; p != "" {
		return filepath.FromSlash(p)
	}
	return filepath.Join("raw", strings.TrimSuffix(rowfile.Name(row), ".json")+".ledger.json")
}

func readLedger(path string) (*loadgen.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer f.Close()
	res, err := loadgen.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", path, err)
	}
	return res, nil
}

// Replay analyses one recorded row again from its ledger and says what changed.
func Replay(row check.Row, ledger *loadgen.Result) Row {
	out := Row{File: rowfile.Name(row)}
	if row.Timeline == nil {
		out.Skipped = "no timeline recorded (the row did not run its load)"
		return out
	}
	in, kept := input(row, ledger)
	out.Kept = kept
	a := analyze.Row(in)
	now, was := analyze.Verdict(row.Config, a), row.Verdict
	switch {
	case was.Status == check.HarnessFault && row.LoadFault == "" && now.Status != check.Fail && now != was:
		// A fault of the run itself that a row written before LoadFault did not record: judged
		// with its recorded reason, so that failures the app caused still fail.
		out.Kept = append(out.Kept, fmt.Sprintf("the run's own fault, from the recorded verdict (%s)", was.Reason))
		now = row.Config.Expect.Fault(a.Summary, was.Reason)
	case was.Status == check.Error && now != was:
		// An error of the run (a disruption or the cluster failing) is not in the data the
		// analysis reads.
		out.Kept = append(out.Kept, fmt.Sprintf("the verdict, an error of the run itself that its data do not show (%s: %s)", was.Status, was.Reason))
		now = was
	}
	if now.Status != was.Status {
		out.Changes = append(out.Changes, fmt.Sprintf("verdict %s → %s: %s", was.Status, now.Status, now.Reason))
	}
	var wasPhases map[timeline.Phase]int
	if row.Explanation != nil {
		wasPhases = row.Explanation.Phases
	}
	if d := phaseDiff(wasPhases, a.Explanation.Phases); d != "" {
		out.Changes = append(out.Changes, "phases: "+d)
	}
	for i, w := range row.Disruptions {
		n := a.Disruptions[i]
		var s []string
		if w.Requests != n.Requests || w.Failed != n.Failed {
			s = append(s, fmt.Sprintf("failed %d/%d → %d/%d", w.Failed, w.Requests, n.Failed, n.Requests))
		}
		if d := phaseDiff(w.Phases, n.Phases); d != "" {
			s = append(s, "phases "+d)
		}
		if len(s) > 0 {
			out.Changes = append(out.Changes, fmt.Sprintf("disruption %d: %s", w.N, strings.Join(s, "; ")))
		}
	}
	var wasRec *check.Recommendation
	if row.Explanation != nil {
		wasRec = row.Explanation.Recommendation
	}
	if w, n := recommendation(wasRec), recommendation(a.Explanation.Recommendation); w != n {
		out.Changes = append(out.Changes, fmt.Sprintf("recommendation: %s → %s", w, n))
	}
	out.Verdict = now
	return out
}

// input is the analysis's input from what row recorded and its ledger, and what of it the row
// did not record (taken as none). row.Timeline is not nil.
func input(row check.Row, ledger *loadgen.Result) (analyze.Input, []string) {
	var kept []string
	in := analyze.Input{Config: row.Config, Load: ledger, Timeline: row.Timeline.Upgraded(), Disruptions: row.Disruptions,
		StopSignalReported: row.StopSignalReported, Runtime: row.Versions.Runtime, Fault: row.LoadFault}
	if ex := row.Explanation; ex != nil {
		p := ex.Propagation
		in.KubeProxy = analyze.KubeProxy{Durations: p.KubeProxy, Buckets: p.KubeProxyBuckets, Err: p.KubeProxyError}
	} else {
		kept = append(kept, "kube-proxy's programming numbers (the row recorded no explanation): none counted")
	}
	if row.Config.LocalOnly() {
		if row.Nodes != nil && row.Nodes.Entry != "" {
			in.EntryNode = row.Nodes.Entry
		} else {
			kept = append(kept, "the node the load entered at (the row's nodes were not read): the no-local-endpoint rule had no node")
		}
	}
	return in, kept
}

// recommendation is a recommendation's numbers in words: "preStop 5s, grace 8s", or "none".
func recommendation(r *check.Recommendation) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("preStop %s, grace %ds", r.PreStop, r.GraceSeconds)
}

// phaseDiff says the phases whose counts differ, in the order of timeline.Phases (then any
// other by name): "propagation 70 → 68, in-flight-cut 4 → 6"; "" when none does.
func phaseDiff(was, now map[timeline.Phase]int) string {
	keys := slices.Collect(maps.Keys(was))
	for k := range now {
		if _, ok := was[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b timeline.Phase) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(string(a), string(b)))
	})
	var s []string
	for _, k := range keys {
		if was[k] != now[k] {
			s = append(s, fmt.Sprintf("%s %d → %d", k, was[k], now[k]))
		}
	}
	return strings.Join(s, ", ")
}

func order(p timeline.Phase) int {
	if i := slices.Index(timeline.Phases, p); i >= 0 {
		return i
	}
	return len(timeline.Phases)
}

// Write prints the report: a line per row that changed, was not replayed or kept something as
// recorded, then the count of rows with no change.
func (r Report) Write(w io.Writer) error {
	var b strings.Builder
	for _, row := range r.Rows {
		switch {
		case row.Skipped != "":
			fmt.Fprintf(&b, "%s: not replayed: %s\n", row.File, row.Skipped)
			continue
		case len(row.Changes) > 0:
			fmt.Fprintf(&b, "%s: changed\n", row.File)
			for _, c := range row.Changes {
				fmt.Fprintf(&b, "  %s\n", c)
			}
		case len(row.Kept) > 0:
			fmt.Fprintf(&b, "%s: no change\n", row.File)
		}
		for _, k := range row.Kept {
			fmt.Fprintf(&b, "  not derived again, taken as recorded: %s\n", k)
		}
	}
	changed, unchanged, skipped := r.Count()
	fmt.Fprintf(&b, "%s: %d rows replayed: %d changed, %d no change", r.Dir, changed+unchanged, changed, unchanged)
	if skipped > 0 {
		fmt.Fprintf(&b, "; %d not replayed", skipped)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
