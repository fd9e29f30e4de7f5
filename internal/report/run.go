package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/oldjson"
)

// Names of the files WriteAll writes.
const (
	JSONFile     = "conformance.json"
	MarkdownFile = "conformance.md"
	HTMLFile     = "timeline.html"
)

// NewRun gathers rows into a Run: the rows sorted by Started (stable, so rows that started
// at the same time keep their order), the Versions of the first row that has any, and
// Generated set to now. When a row repeats, Stats groups the rows over their runs.
func NewRun(rows []Row) Run {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b Row) int { return a.Started.Compare(b.Started) })
	run := Run{SchemaVersion: SchemaVersion, Generated: time.Now().UTC(), Rows: rows}
	for _, r := range rows {
		if r.Versions != (Versions{}) {
			run.Versions = r.Versions
			break
		}
	}
	if run.Rows == nil {
		run.Rows = []Row{}
	}
	if Repeated(rows) {
		run.Stats = Group(rows)
	}
	run.Lifecycle = Lifecycle(rows)
	run.Counts = Summarize(run)
	for _, r := range rows {
		if r.Explanation != nil {
			p := Pool(rows)
			run.Propagation = &p
			break
		}
	}
	return run
}

// Counts are the rows of a run by verdict status. When rows repeat, they count rows grouped
// over their runs (Group), and Runs is the number of runs.
type Counts struct {
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	HarnessFault int `json:"harnessFault"`
	Error        int `json:"error"`
	// Flaky counts repeated rows whose runs disagree; Runs is 0 when no row repeats.
	Flaky int `json:"flaky,omitempty"`
	Runs  int `json:"runs,omitempty"`
	// Retried counts the rows (runs, when rows repeat) that needed a second attempt after a
	// harness fault, whatever their verdict: a pass that needed one says the harness faltered.
	Retried int `json:"retried"`
}

// NotPassed is every row that did not pass.
func (c Counts) NotPassed() int { return c.Fail + c.HarnessFault + c.Error + c.Flaky }

// String is "N rows: P pass, F fail, H harness-fault, E error"; when rows repeat,
// "N rows (R runs): P pass, F fail, K flaky, H harness-fault, E error"; ", T retried" follows
// when a row needed a second attempt.
func (c Counts) String() string {
	retried := ""
	if c.Retried > 0 {
		retried = fmt.Sprintf(", %d retried", c.Retried)
	}
	if c.Runs > 0 || c.Flaky > 0 {
		return fmt.Sprintf("%d rows (%d runs): %d pass, %d fail, %d flaky, %d harness-fault, %d error%s",
			c.Pass+c.NotPassed(), c.Runs, c.Pass, c.Fail, c.Flaky, c.HarnessFault, c.Error, retried)
	}
	return fmt.Sprintf("%d rows: %d pass, %d fail, %d harness-fault, %d error%s",
		c.Pass+c.NotPassed(), c.Pass, c.Fail, c.HarnessFault, c.Error, retried)
}

// Summarize counts the rows of run by verdict. A row whose status is empty or unknown counts
// as a harness fault. When a row repeats, it counts each row once over its runs, by its
// combined status (RowStats.Status): a flaky row does not pass.
func Summarize(run Run) Counts {
	var c Counts
	for _, r := range run.Rows {
		if r.Attempts > 1 {
			c.Retried++
		}
	}
	if Repeated(run.Rows) {
		c.Runs = len(run.Rows)
		for _, s := range Group(run.Rows) {
			switch s.Status {
			case check.Pass:
				c.Pass++
			case check.Fail:
				c.Fail++
			case Flaky:
				c.Flaky++
			case check.Error:
				c.Error++
			default:
				c.HarnessFault++
			}
		}
		return c
	}
	for _, r := range run.Rows {
		switch status(r) {
		case check.Pass:
			c.Pass++
		case check.Fail:
			c.Fail++
		case check.Error:
			c.Error++
		default:
			c.HarnessFault++
		}
	}
	return c
}

// status returns the row's verdict status, HarnessFault when it is empty or unknown.
func status(r Row) check.Status {
	switch s := r.Verdict.Status; s {
	case check.Pass, check.Fail, check.HarnessFault, check.Error:
		return s
	}
	return check.HarnessFault
}

// reason returns the row's verdict reason, saying so when the row was never judged.
func reason(r Row) string {
	switch r.Verdict.Status {
	case check.Pass, check.Fail, check.HarnessFault, check.Error:
		return r.Verdict.Reason
	case "":
		return "no verdict recorded for this row"
	}
	return fmt.Sprintf("unknown verdict status %q: %s", r.Verdict.Status, r.Verdict.Reason)
}

// WriteJSON writes the whole run as indented JSON (conformance.json), with SchemaVersion.
func (run Run) WriteJSON(w io.Writer) error {
	run.SchemaVersion = SchemaVersion
	run.Counts = Summarize(run)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(run); err != nil {
		return fmt.Errorf("write run JSON: %w", err)
	}
	return nil
}

// ReadRun decodes a Run written by WriteJSON, of this SchemaVersion or before it (a file
// without one, written before the field existed, included); a later one is an error.
func ReadRun(r io.Reader) (Run, error) {
	var run Run
	b, err := io.ReadAll(r)
	if err == nil {
		b, err = oldjson.Run(b) // rows an earlier rollcheck wrote
	}
	if err == nil {
		err = json.Unmarshal(b, &run)
	}
	if err != nil {
		return Run{}, fmt.Errorf("read run JSON: %w", err)
	}
	if run.SchemaVersion > SchemaVersion {
		return Run{}, fmt.Errorf("read run JSON: schemaVersion %d: this rollcheck reads up to %d (a newer rollcheck wrote it)", run.SchemaVersion, SchemaVersion)
	}
	return run, nil
}

// WriteAll writes the run's JSON, Markdown and HTML reports to dir/conformance.json,
// dir/conformance.md and dir/timeline.html, creating dir if needed, and returns the paths
// written. It stops at the first error; files written before it are returned with it.
func WriteAll(dir string, run Run) (paths []string, err error) {
	return writeFiles(dir, []reportFile{
		{JSONFile, run.WriteJSON},
		{MarkdownFile, run.WriteMarkdown},
		{HTMLFile, run.WriteHTML},
		{JUnitFile, run.WriteJUnit},
	})
}

// reportFile is a file's name in the reports directory and what writes its content.
type reportFile struct {
	name  string
	write func(io.Writer) error
}

// writeFiles writes each file into dir, creating dir if needed, each atomically, and returns
// the paths written. It stops at the first error; files written before it are returned with it.
func writeFiles(dir string, files []reportFile) (paths []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write reports: %w", err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return paths, fmt.Errorf("write reports: %s: %w", f.name, err)
		}
		if err := atomicfile.Write(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("write reports: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
