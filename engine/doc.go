// Package engine runs rollcheck's checks: it takes a Target (any cluster, and the way load
// reaches it) and a check.Plan (an app's manifests as a check.Variant changes them, one disruption, one
// load, the expected check.Outcome) and returns a check.Row: every request's fate, the lifecycle
// timeline, each disruption's own success ratio and a check.Verdict.
//
// One engine, several front ends: the built-in conformance matrix (suites/), users' own
// Ginkgo suites (see package rctest) and the rollcheck CLI (rollcheck check) all call Run.
// The engine never asserts and never exits: it returns rows and wrapped errors, and the
// front ends decide what passes.
//
// The steps of Run, in order: the app's manifests are applied into a fresh namespace that
// rollcheck owns, with rollcheck's own Service (check.LoadServiceName) selecting the Deployment's
// pods; once that Service answers, constant-rate load (package loadgen/attack) and a watch of the
// pods, EndpointSlices and Events start; the disruption is repeated Count times, each
// until it settled (the rollout complete and no pod left terminating); the load runs its quiet
// time (Plan.Quiet), stops, and
// what was recorded is analysed (internal/analyze, a pure function of the recorded data, which
// rollcheck report --reanalyze replays) and judged against check.Variant.Expect. The namespace is deleted before Run returns,
// also when it fails or its context is cancelled.
package engine
