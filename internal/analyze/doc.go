// Package analyze is the pure analysis of what rollcheck measured: for now the recommendation's
// formula (the routed window by the path requests take → preStop and grace period, and whether
// a configuration fits them), shared by the engine's explanation of a row and by rollcheck
// audit, which scores workloads against a cluster's measured windows. It reads no cluster.
package analyze
