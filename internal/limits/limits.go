// Package limits holds the time bounds of a row that both the model (package check, which
// refuses a plan that could outlast the load) and the engine (which waits by them) use.
package limits

import "time"

// Disruption is how long one disruption may take to settle: twice the grace period (preStop,
// drain, SIGKILL for each pod a rollout replaces in turn) plus two minutes for scheduling and
// readiness, plus drain, the bound of a drain-node disruption's evictions (0 for the others).
func Disruption(graceSeconds int64, drain time.Duration) time.Duration {
	return time.Duration(2*graceSeconds)*time.Second + 2*time.Minute + drain
}

// Load is how long the load may have to run: the quiet time before and after (each with the
// request duration), one request timeout, a minute of slack and every disruption taking as
// long as it may. The load is stopped as soon as the last disruption settled; this only
// bounds it.
func Load(quiet, requestDuration, timeout time.Duration, count int, graceSeconds int64, drain time.Duration) time.Duration {
	return 2*(quiet+requestDuration) + timeout + time.Minute + time.Duration(count)*Disruption(graceSeconds, drain)
}
