package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rollcheck/rollcheck/internal/report"
)

const compareAbout = `Compares two conformance.json files row by row (rows matched by suite, variant and disruption,
pooled over their repeated runs) and prints a Markdown summary fit for a PR comment. A row
regresses significantly when its failure ratio is higher in NEW and Fisher's exact test gives
p < alpha. Flags may come before, between or after the two files.
Exit 0 without a significant regression, 1 with one, 2 bad input (unreadable file, not a
conformance.json, no rows in common).`

// compareFlags are rollcheck compare's flags.
type compareFlags struct {
	Alpha float64
}

func newCompareFlags(fs *flag.FlagSet) *compareFlags {
	f := &compareFlags{}
	fs.Float64Var(&f.Alpha, "alpha", report.DefaultAlpha, "significance level, between 0 and 1")
	return f
}

// runCompare runs `rollcheck compare`; it returns the exit code.
func runCompare(_ context.Context, f *compareFlags, files []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck compare: "+format+"\n", a...)
		return exitBadInput
	}
	if len(files) != 2 {
		return bad("want two files, BASE and NEW; got %d (rollcheck help compare)", len(files))
	}
	if !(f.Alpha > 0 && f.Alpha < 1) {
		return bad("--alpha %v: want a level between 0 and 1", f.Alpha)
	}
	var runs [2]report.Run
	for i, f := range files {
		run, err := report.ReadRunFile(f)
		if err != nil {
			return bad("%v", err)
		}
		runs[i] = run
	}
	c, err := report.Compare(runs[0], runs[1], f.Alpha)
	if err != nil {
		return bad("%v", err)
	}
	if err := c.WriteMarkdown(stdout); err != nil {
		return bad("%v", err)
	}
	if c.Regressions() > 0 {
		return exitFail
	}
	return exitPass
}
