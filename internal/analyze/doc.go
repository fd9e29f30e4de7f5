// Package analyze is the pure analysis of what rollcheck measured: from a row's recorded data
// only (its applied configuration, the load's ledger, the lifecycle timeline, the disruptions
// as they ran, kube-proxy's programming numbers and the DNS answers), Row attributes every
// failed request to a phase of one pod's termination (internal/attribute's rules), counts each
// disruption's requests, times the terminations, measures the propagation windows and
// recommends a preStop and grace period (the formula: the routed window by the path requests
// take, shared with rollcheck audit and rollcheck init) with the advice's prose; Verdict judges
// the result against the expected Outcome. It reads no cluster and imports no client-go: the
// engine calls it on what it drove and observed, and internal/replay on recorded rows.
package analyze
