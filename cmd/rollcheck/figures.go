package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/report"
)

// writeFigures writes the figures document of the run in dir (its conformance.json) to file:
// the rows' figures and what they were measured on, regenerated from the rows, never edited.
func writeFigures(dir, file string) error {
	src := filepath.Join(dir, report.JSONFile)
	run, err := report.ReadRunFile(src)
	if err != nil {
		return fmt.Errorf("report --figures: %w", err)
	}
	// The run's summaries and lifecycle findings are computed again from its rows, so that the
	// document follows the report's current rules.
	var buf bytes.Buffer
	if err := report.NewRun(run.Rows).WriteFigures(&buf, filepath.ToSlash(src)); err != nil {
		return err
	}
	if err := atomicfile.Write(file, buf.Bytes()); err != nil {
		return fmt.Errorf("report --figures: %w", err)
	}
	fmt.Fprintf(os.Stderr, "figures of %d rows: %s\n", len(run.Rows), file)
	return nil
}
