// Package scenario defines one row of rollcheck's conformance table, a Scenario: the app's
// shutdown configuration (preStop hook, SIGTERM handling, grace period, request duration), the
// client's keep-alive, the disruption and the Outcome it is expected to produce. It validates a
// Scenario before any cluster work, renders its manifests, and judges a load result against
// the expected Outcome.
package scenario
