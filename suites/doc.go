// Package suites is rollcheck's built-in conformance matrix run as one Ginkgo suite (go test
// -tags e2e ./suites, or make e2e), with a file per disruption, over the sample app in
// fixtures/app. It exports nothing: the rows, the reasoning behind each expected outcome and
// the bounds are data in internal/matrix (rows.go, bounds.go), and every row runs on the same
// engine a user's check does (package engine, through package rctest).
//
// Labels select specs: smoke, conformance, the labels computed from a row's data (its
// disruption: rollout-restart, delete-pod, force-delete, scale-down, scale-to-zero,
// kubelet-restart, drain-node; its expectation: zero-failures, at-most, failures-expected;
// where its load comes from: load-host, load-cluster) and those a row chooses
// (negative-control, slow, pid1, stop-signal, stop-signal-field, sidecar). The specs each make
// target selects are pinned by internal/matrix's TestTargetSelections.
//
// The suite needs a cluster, so its files carry the build tag e2e: plain go test ./... builds
// only this file here, and runs the matrix's own unit tests in internal/matrix.
package suites
