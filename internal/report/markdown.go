package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// WriteMarkdown writes the conformance table for humans and PR comments: the versions the
// run was measured with, one line per Row, the reason of every row that did not pass,
// and a count line "N rows: P pass, F fail, H harness-fault". When a row repeats, a Repeats
// section gives each row's statistics over its runs, and the count line counts rows by their
// combined status (a flaky row does not pass).
func (run Run) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }

	p("# rollcheck conformance\n\n")
	p("%s\n\n", mdEscape(strings.Join(versionsLine(run.Versions), " · ")))
	if !run.Generated.IsZero() {
		p("Generated %s.\n\n", run.Generated.UTC().Format(time.RFC3339))
	}

	writeTable(p, run.Rows)
	if Repeated(run.Rows) {
		writeRepeats(p, Group(run.Rows))
	}

	writePropagation(p, run.Rows)
	writeProxy(p, run.Rows)
	writeDrains(p, run.Rows)
	if len(run.Lifecycle) > 0 {
		writeLifecycle(p, run.Lifecycle)
	}

	first := true
	for _, r := range run.Rows {
		st := status(r)
		if st == check.Pass {
			continue
		}
		if first {
			p("\n## Not passing\n\n")
			first = false
		}
		c := rowCells(r)
		if r.Repeat > 0 {
			c.Client += fmt.Sprintf(", run %d", r.Repeat)
		}
		p("- %s%s **%s** (%s, suite %s, %s): %s\n", verdictLabel(st), mdEscape(retriedNote(r)), mdEscape(r.Config.Name),
			mdEscape(c.Disruption), mdEscape(r.Suite), mdEscape(c.Client), mdEscape(reason(r)))
	}

	p("\n%s\n", Summarize(run))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write markdown report: %w", err)
	}
	return nil
}

// writeTable writes the conformance table, one line per row, and the notes its marks refer to:
// transparent retry (†) and no pod identity (‡).
func writeTable(p func(string, ...any), rows []Row) {
	anyRetry, anyAnonymous := false, false
	p("%s", conformanceTable.markdownHeader())
	for _, r := range rows {
		c := rowCells(r)
		sc := c.Scenario
		if c.Retry {
			sc += " †"
			anyRetry = true
		}
		if !r.PodIdentity && r.Summary.OK > 0 {
			sc += " ‡"
			anyAnonymous = true
		}
		cols := []string{sc, c.Disruption, c.Requests, c.Failures, c.Phases, c.FailurePct, c.Termination, c.DisruptTime, c.Worst, c.DisruptS, c.Bursts, c.Expected, c.Verdict}
		for i := range cols {
			cols[i] = mdEscape(cols[i])
		}
		p("| %s |\n", strings.Join(cols, " | "))
	}
	if len(rows) == 0 {
		p("\nNo rows.\n")
	}
	if anyRetry {
		p("\n† %s\n", retryNote)
	}
	if anyAnonymous {
		p("\n‡ %s\n", anonymousNote)
	}
}

// mdEscape makes s safe in a Markdown table cell or list item: pipes are escaped and line
// breaks become spaces.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
