// Package report turns the rows of a conformance run into the artifacts people and machines
// read: a JSON document, a Markdown conformance table for humans and PR comments, and a
// self-contained HTML page with one load timeline per row.
//
// Each row is a JSON file under <artifacts>/rows/ (engine.Run writes it; internal/rowfile
// reads and writes them). Once every suite is done, rowfile.Read, [NewRun] and [WriteAll]
// gather those files into conformance.json, conformance.md and timeline.html.
//
// A row's verdict status is taken as it was judged (see check.Outcome.Judge); a row with
// no status, or one this package does not know, is reported and counted as a harness fault,
// since the harness failed to judge it.
//
// Beside the tables it writes what is read from the rows: the comparison of two runs
// ([Comparison], Fisher's exact test per row), the figures document of a run (docs/matrix.md is
// one) and the lifecycle claims the rows measured. The advice a row carries is internal/analyze's.
//
// The HTML page has no scripts and no external assets: every chart is an inline SVG drawn
// on the server side with html/template, so the file can be archived, attached to a CI run
// or opened offline as it is.
package report
