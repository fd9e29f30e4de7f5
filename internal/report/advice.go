package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/timeline"
)

// The advice a row carries is written here, with the rest of what a reader is told; the engine
// measures and computes the recommendation's numbers (check.Recommendation) and calls these.

// PID1Note names the cause of pods killed at the grace period's end without a word of SIGTERM:
// with the app's lines, the signal never reached it (its PID 1 did not pass it on); without
// them, that or an app that ignores SIGTERM.
func PID1Note(unheard int, speaks bool, grace int64) string {
	switch {
	case unheard == 0:
		return ""
	case speaks:
		return fmt.Sprintf("%d pod(s) were SIGKILLed at the grace period's end (%ds) without ever saying they got SIGTERM, though the app writes its lifecycle lines: the container's PID 1 did not pass SIGTERM on (a shell that runs the app as its child: use exec in the script, the exec form of ENTRYPOINT, or an init that forwards signals such as tini); every such pod takes the whole grace period to go", unheard, grace)
	default:
		return fmt.Sprintf("%d pod(s) were SIGKILLed at the grace period's end (%ds): the app ignores SIGTERM, or the container's PID 1 (a shell entrypoint) does not pass it on; without the app's lifecycle lines rollcheck cannot tell which", unheard, grace)
	}
}

// ownDelayNoted is the least app delay worth naming: below it the app closes its listener at
// SIGTERM, as far as anyone can tell.
const ownDelayNoted = 100 * time.Millisecond

// Advise is the prose of a row's recommendation: it compares the row's configuration with the recommendation and, for failures, names the
// smallest change the dominant phase calls for.
func Advise(r *check.Recommendation, ex *check.Explanation, cfg check.Applied, times *check.Times) (fit, advice string) {
	var parts []string
	pre, known := cfg.PreStop.Duration()
	// The app's own delay, when its lines tell it, counts as preStop: the smallest, since the
	// weakest pod is the one that drops requests.
	own := time.Duration(0)
	if r.AppDelay.N > 0 && r.AppDelay.Samples[0] >= ownDelayNoted {
		own = r.AppDelay.Samples[0]
	}
	if known {
		fit = "headroom"
		if pre+own < r.PreStop || cfg.GraceSeconds < r.GraceSeconds {
			fit = "short"
		}
		parts = append(parts, fmt.Sprintf("preStop %s vs %s recommended, grace %ds vs %ds", pre, r.PreStop, cfg.GraceSeconds, r.GraceSeconds))
		if own > 0 {
			parts = append(parts, fmt.Sprintf("the app itself kept accepting %s to %s after SIGTERM (its own lines, %d pods): preStop %s + %s = %s before it stops accepting, vs the %s routing needs; the app's delay does what a preStop sleep does",
				own.Round(10*time.Millisecond), r.AppDelay.Max.Round(10*time.Millisecond), r.AppDelay.N, pre, own.Round(10*time.Millisecond), (pre+own).Round(10*time.Millisecond), r.PreStop))
		}
	}
	dominant, n := timeline.Phase(""), 0
	for _, ph := range timeline.Phases {
		if c := ex.Phases[ph]; c > n {
			dominant, n = ph, c
		}
	}
	if cfg.Disruption == check.ForceDelete {
		parts = append(parts, "a forced delete gives preStop about 1 s and the container 2 s more whatever is set: no setting removes its failures, only the app draining fast")
	}
	switch dominant {
	case "":
		switch {
		case fit != "short":
		case !r.AppSpeaks && times != nil && times.Exit.N > 0 && times.Exit.P50 >= r.PreStop:
			// No lines: whether the app kept accepting or only drained slowly is not known.
			parts = append(parts, fmt.Sprintf("no failure in this run; its containers exited p50 %s after deletion (%d pods), longer than the %s routing needs: if the app keeps accepting that long after SIGTERM by itself (a shutdown delay), it does what a preStop sleep does, but without its lifecycle lines rollcheck cannot tell that from a slow drain, so it counts only the preStop",
				times.Exit.P50.Round(100*time.Millisecond), times.Exit.N, r.PreStop))
		default:
			parts = append(parts, "no failure in this run, but the measured propagation leaves no margin")
		}
	case timeline.PhasePropagation:
		parts = append(parts, fmt.Sprintf("most failures (%d) are propagation: set preStop sleep ≥ %s", n, r.PreStop))
	case timeline.PhaseSIGKILL:
		parts = append(parts, fmt.Sprintf("most failures (%d) were cut by SIGKILL: set terminationGracePeriodSeconds ≥ %d (preStop %s + requests up to %s + 2 s)", n, r.GraceSeconds, r.PreStop, ex.RequestP99.Round(time.Millisecond)))
	case timeline.PhaseInFlightCut:
		parts = append(parts, fmt.Sprintf("most failures (%d) were in flight when the app exited: drain on SIGTERM (finish in-flight requests, e.g. http.Server.Shutdown) instead of exiting", n))
	case timeline.PhaseSidecarExit:
		front, _ := cfg.FrontSidecar()
		parts = append(parts, fmt.Sprintf("most failures (%d) came after the sidecar %s in front of the app stopped first: give it a preStop sleep ≥ %s as the app's, or make it a native sidecar (an init container with restartPolicy Always), which the kubelet stops only after the app has exited", n, front.Name, r.PreStop))
	case timeline.PhaseProxyPropagation:
		if st := ex.Propagation.ProxyStale; st > 0 {
			parts = append(parts, fmt.Sprintf("most failures (%d) went through the proxy in front to pods that had stopped accepting, and it still sent to %d pods after they were gone: its list of pods is stale (a name resolved once, a cached DNS answer), which no preStop covers: make it re-resolve (a resolver with a short validity) or retry another upstream on a connection failure", n, st))
			break
		}
		parts = append(parts, fmt.Sprintf("most failures (%d) went through the proxy in front to pods that had stopped accepting: its own list of pods lags the deletion by up to %s (%s): set preStop sleep ≥ %s, or let the proxy retry another upstream on a connection failure", n, r.Routed.Round(time.Millisecond), r.RoutedFrom, r.PreStop))
	case timeline.PhaseProxyNoUpstream:
		parts = append(parts, fmt.Sprintf("most failures (%d) are the proxy's own answers with no upstream: it had no pod left to send to; keep pods in its list until replacements are in it (a longer preStop, maxUnavailable 0) or let it wait for one (a retry window)", n))
	case timeline.PhasePinnedConnection:
		parts = append(parts, fmt.Sprintf("most failures (%d) rode kept-alive connections to the terminating pod: drain on SIGTERM so that idle connections close and busy ones get Connection: close", n))
	case timeline.PhaseStartup:
		parts = append(parts, fmt.Sprintf("most failures (%d) hit a new pod before it could serve: its readiness probe says ready too early", n))
	case timeline.PhaseSteady:
		parts = append(parts, fmt.Sprintf("most failures (%d) came with no pod terminating or starting: the app or the harness is broken", n))
	default:
		parts = append(parts, fmt.Sprintf("most failures (%d) match no rule (unknown)", n))
	}
	return fit, strings.Join(parts, "; ")
}
