package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/report"
)

// AgreementTitle is the title of the figures document's section of the audit's predictions.
const AgreementTitle = "Audit's predictions against the rows"

// writeFigures writes the figures document of the run in dir (its conformance.json) to file:
// the rows' figures and what they were measured on, regenerated from the rows, never edited;
// then rollcheck audit's prediction of each row's configuration, with the windows extracted
// from the run itself, beside what the row measured.
func writeFigures(dir, file string) error {
	src := filepath.Join(dir, report.JSONFile)
	run, err := report.ReadRunFile(src)
	if err != nil {
		return fmt.Errorf("report --figures: %w", err)
	}
	// The run's summaries and lifecycle findings are computed again from its rows, so that the
	// document follows the report's current rules.
	var buf bytes.Buffer
	if err := report.NewRun(run.Rows).WriteFigures(&buf, filepath.ToSlash(src), agreementSection(run.Rows, filepath.ToSlash(src))); err != nil {
		return err
	}
	if err := atomicfile.Write(file, buf.Bytes()); err != nil {
		return fmt.Errorf("report --figures: %w", err)
	}
	fmt.Fprintf(os.Stderr, "figures of %d rows: %s\n", len(run.Rows), file)
	return nil
}

// agreementSection audits the rows' configurations against the windows extracted from the rows
// (audit.Agreement); a run without an explanation says so instead.
func agreementSection(rows []report.Row, src string) report.Section {
	return report.Section{Title: AgreementTitle, Write: func(w io.Writer) error {
		f, err := audit.Extract(rows, src)
		if err != nil {
			_, err = fmt.Fprintf(w, "Not computed: %v.\n", err)
			return err
		}
		return audit.WriteAgreementMarkdown(w, audit.Agreement(rows, f), f)
	}}
}
