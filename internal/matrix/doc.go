// Package matrix holds the rows of rollcheck's built-in conformance matrix as data, for the
// Ginkgo suite in suites/ to run: each row's scenario, the labels it chooses, what is asserted
// of it besides its Outcome (rows.go, with the reasoning behind each expected outcome), the
// bounds of rows measured as races (bounds.go) and the mechanisms' shares (shares.go). Whether
// a row runs alone is check.Plan.RunsAlone of its plan; adding a row is one entry in one of the
// XxxEntries lists.
//
// Its unit tests validate every row, pin the row names (pinned_test.go) and the specs each make
// target selects (testdata/targets.txt, TestTargetSelections), with no cluster.
package matrix
