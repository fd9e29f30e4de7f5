// Package suites is rollcheck's built-in conformance matrix: one Ginkgo suite (go test -tags
// e2e ./suites, or make e2e) with a file per disruption, over the sample app in fixtures/app.
// The rows, and the reasoning behind each expected outcome, are in rows.go; every row runs
// on the same engine a user's check does (package engine, through package rctest).
//
// A row is data (Row): what runs, the labels it chooses, and what is asserted of it besides its
// Outcome; whether it runs alone is check.Plan.RunsAlone of its plan. Adding a row is one entry
// in one of the XxxEntries lists.
//
// Labels select specs: smoke, conformance, the labels computed from a row's data (its
// disruption: rollout-restart, delete-pod, force-delete, scale-down, scale-to-zero,
// kubelet-restart, drain-node; its
// expectation: zero-failures, at-most, failures-expected; where its load comes from: load-host,
// load-cluster) and those a row chooses (negative-control, slow, pid1, stop-signal,
// stop-signal-field, sidecar).
//
// The suite needs a cluster, so its files carry the build tag e2e: plain go test ./... runs
// only the matrix's own unit tests (rows_test.go).
package suites
