package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rollcheck/rollcheck/internal/report"
)

const compareUsage = `usage: rollcheck compare [--alpha 0.05] BASE NEW
Compares two conformance.json files row by row (rows matched by suite, variant and disruption,
pooled over their repeated runs) and prints a Markdown summary fit for a PR comment. A row
regresses significantly when its failure ratio is higher in NEW and Fisher's exact test gives
p < alpha. Exits 0 without a significant regression, 1 with one, 2 on bad input (unreadable
file, not a conformance.json, no rows in common).`

// compare runs `rollcheck compare`; it returns the exit code.
func compare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	alpha := fs.Float64("alpha", report.DefaultAlpha, "significance level")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck compare: "+format+"\n", a...)
		return exitBadInput
	}
	// Flags may come before, between or after the two files.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(stdout, compareUsage)
				return exitPass
			}
			return bad("%v (rollcheck compare -h)", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 2 {
		return bad("want two files, BASE and NEW; got %d (rollcheck compare -h)", len(files))
	}
	if !(*alpha > 0 && *alpha < 1) {
		return bad("--alpha %v: want a level between 0 and 1", *alpha)
	}
	var runs [2]report.Run
	for i, f := range files {
		run, err := report.ReadRunFile(f)
		if err != nil {
			return bad("%v", err)
		}
		runs[i] = run
	}
	c, err := report.Compare(runs[0], runs[1], *alpha)
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
