// Package sizing is rollcheck's one rule for the preStop sleep and the grace period a measured
// routed time calls for (check.Recommendation's formula): the engine applies it to every row's
// measurements, and rollcheck init to the routed time it assumes before anything was measured.
package sizing

import (
	"math"
	"time"
)

// Margins of the rule.
const (
	// PreStopMargin is added to the routed time: the preStop outlasts it by this much.
	PreStopMargin = time.Second
	// KillMinimum is the kubelet's minimum between SIGTERM and SIGKILL after a preStop hook; it
	// also leaves the app time to close its listener and exit once its last request is answered.
	KillMinimum = 2 * time.Second
)

// AssumedKindRouted is the routed time (deletion → the last new connection kube-proxy sends to
// the pod) that rollcheck init sizes its preStop from before any run has measured one: on
// rollcheck's kind cluster the control plane takes a deleted pod out of the EndpointSlices
// within a few hundred milliseconds, and kube-proxy's own programming histogram reads its p99
// in the bucket below 4 s, so a row there measures a routed time just under 4 s (a run's
// "Propagation and what to set" table gives the measured one). A cluster with a cloud load
// balancer in front has a longer path of its own; measure it there.
const AssumedKindRouted = 4 * time.Second

// PreStop is the preStop sleep that outlasts routed: routed + PreStopMargin, rounded up to the
// whole second (the native sleep action takes whole seconds).
func PreStop(routed time.Duration) time.Duration {
	return CeilSecond(routed + PreStopMargin)
}

// GraceSeconds is the terminationGracePeriodSeconds a preStop and the requests' p99 call for:
// preStop + request p99 + KillMinimum, rounded up to the whole second.
func GraceSeconds(preStop, requestP99 time.Duration) int64 {
	return int64(CeilSecond(preStop+requestP99+KillMinimum) / time.Second)
}

// CeilSecond rounds d up to the whole second.
func CeilSecond(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}
