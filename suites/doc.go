// Package suites is rollcheck's built-in conformance matrix: one Ginkgo suite (go test -tags
// e2e ./suites, or make e2e) with a file per disruption, over the sample app in fixtures/app.
// The rows, and the reasoning behind each expected outcome, are in rows.go; every row runs
// on the same engine a user's check does (package engine, through package rctest).
//
// Labels select specs: smoke, conformance, the disruption (rollout-restart, delete-pod,
// force-delete, scale-down), the expectation (zero-failures, at-most, failures-expected) and
// negative-control.
//
// The suite needs a cluster, so its files carry the build tag e2e: plain go test ./... runs
// only the matrix's own unit tests (rows_test.go).
package suites
