package engine

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Margins of the recommendation formula (see check.Recommendation).
const (
	preStopMargin  = time.Second
	killMinimum    = 2 * time.Second // the kubelet's minimum between SIGTERM and SIGKILL after preStop
	assumedProgLag = attribute.DefaultProgrammingLag
)

// kubeProxyNumbers is the change of kube-proxy's programming histogram over a row, or why
// there is none.
type kubeProxyNumbers struct {
	durations *check.Durations
	buckets   []check.HistogramBucket
	err       string
}

// explain builds a row's check.Explanation from the load's ledger, the timeline, the attribution and
// kube-proxy's numbers.
func explain(reqs []loadgen.Request, tl timeline.Timeline, attr attribute.Result, kp kubeProxyNumbers, cfg check.Applied, identity bool, times *check.Times) *check.Explanation {
	ex := &check.Explanation{Phases: attr.Counts, Propagation: check.PropagationSummary{KubeProxy: kp.durations, KubeProxyError: kp.err, KubeProxyBuckets: kp.buckets}}
	if len(ex.Phases) == 0 {
		ex.Phases = nil
	}
	var cp []time.Duration
	for _, p := range tl.Propagation {
		if d := p.Routed(); d >= 0 {
			cp = append(cp, d)
		}
	}
	ex.Propagation.ControlPlane = check.Summarize(cp)
	if identity && !cfg.KeepAlive {
		// With keep-alive a pod answers on connections pinned to it long after the Service
		// stopped routing new ones there: its last answer measures the pinning, not routing.
		ex.Propagation.DataPlane = check.Summarize(dataPlane(reqs, attr.Lives))
	}
	var lat []time.Duration
	for i := range reqs {
		if reqs[i].OK() {
			lat = append(lat, reqs[i].Latency)
		}
	}
	l := check.Summarize(lat)
	ex.RequestP99, ex.RequestMax = l.P99, l.Max // latencies are many: no samples kept
	ex.Recommendation = recommend(ex, cfg, appDelay(attr.Lives), times, speaks(tl))
	if r := ex.Recommendation; r != nil {
		r.Unheard = unheard(attr.Lives, cfg)
		if n := pid1Note(r.Unheard, r.AppSpeaks, cfg.GraceSeconds); n != "" {
			r.Advice = strings.TrimPrefix(r.Advice+"; "+n, "; ")
		}
	}
	return ex
}

// unheard counts the deleted pods that were SIGKILLed at the grace period's end (or later)
// and never said they got SIGTERM.
func unheard(lives []attribute.Life, cfg check.Applied) int {
	grace := time.Duration(cfg.GraceSeconds) * time.Second
	n := 0
	for _, l := range lives {
		if l.Deleting.IsZero() || l.Exit != attribute.ExitKilled || !l.SIGTERM.IsZero() || l.ExitBy.IsZero() {
			continue
		}
		if l.ExitBy.Sub(l.Deleting) >= grace-attribute.Tolerance {
			n++
		}
	}
	return n
}

// speaks tells whether the app wrote any lifecycle line during the row.
func speaks(tl timeline.Timeline) bool {
	for _, e := range tl.Events {
		if e.Kind == timeline.AppEvent {
			return true
		}
	}
	return false
}

// pid1Note names the cause of pods killed at the grace period's end without a word of SIGTERM:
// with the app's lines, the signal never reached it (its PID 1 did not pass it on); without
// them, that or an app that ignores SIGTERM.
func pid1Note(unheard int, speaks bool, grace int64) string {
	switch {
	case unheard == 0:
		return ""
	case speaks:
		return fmt.Sprintf("%d pod(s) were SIGKILLed at the grace period's end (%ds) without ever saying they got SIGTERM, though the app writes its lifecycle lines: the container's PID 1 did not pass SIGTERM on (a shell that runs the app as its child: use exec in the script, the exec form of ENTRYPOINT, or an init that forwards signals such as tini); every such pod takes the whole grace period to go", unheard, grace)
	default:
		return fmt.Sprintf("%d pod(s) were SIGKILLed at the grace period's end (%ds): the app ignores SIGTERM, or the container's PID 1 (a shell entrypoint) does not pass it on; without the app's lifecycle lines rollcheck cannot tell which", unheard, grace)
	}
}

// appDelay is, per deleted pod whose app said so (its "sigterm" and "listener_closed" lines),
// how long it kept accepting after SIGTERM by itself.
func appDelay(lives []attribute.Life) check.Durations {
	var out []time.Duration
	for _, l := range lives {
		if l.Deleting.IsZero() || l.SIGTERM.IsZero() || l.ListenerClosed.IsZero() || l.ListenerClosed.Before(l.SIGTERM) {
			continue
		}
		out = append(out, l.ListenerClosed.Sub(l.SIGTERM))
	}
	return check.Summarize(out)
}

// dataPlane measures, per deleted pod, deletion → the last request it answered, for the pods
// that still accepted connections after it (so that the data plane, not the pod, ended their
// traffic).
func dataPlane(reqs []loadgen.Request, lives []attribute.Life) []time.Duration {
	last := map[string]time.Time{}
	for i := range reqs {
		q := &reqs[i]
		if q.OK() && q.Pod != "" && q.Timestamp.After(last[q.Pod]) {
			last[q.Pod] = q.Timestamp
		}
	}
	var out []time.Duration
	for _, l := range lives {
		t, ok := last[l.Pod]
		if l.Deleting.IsZero() || !ok || !t.After(l.Deleting) {
			// No answer to a request sent after the deletion: nothing measured (its later
			// requests may have been cut, as slow requests are by SIGKILL).
			continue
		}
		// The pod must have kept accepting for a while after its last request.
		stop := l.ListenerClosed
		if stop.IsZero() {
			stop = l.ExitFrom
		}
		if stop.IsZero() {
			stop = l.Gone
		}
		if stop.IsZero() || !t.Add(attribute.Tolerance).Before(stop) {
			continue
		}
		out = append(out, t.Sub(l.Deleting))
	}
	return out
}

// recommend applies the formula of check.Recommendation; nil when no deleted pod was seen leaving
// the Service.
func recommend(ex *check.Explanation, cfg check.Applied, own check.Durations, times *check.Times, speaks bool) *check.Recommendation {
	p := ex.Propagation
	if p.ControlPlane.N == 0 && p.DataPlane.N == 0 {
		return nil
	}
	r := &check.Recommendation{RequestP99: ex.RequestP99, AppDelay: own, AppSpeaks: speaks}
	lag, lagFrom := assumedProgLag, fmt.Sprintf("an assumed %s of kube-proxy programming", assumedProgLag)
	if p.KubeProxy != nil && p.KubeProxy.N > 0 {
		lag, lagFrom = p.KubeProxy.P99, fmt.Sprintf("kube-proxy programming p99 %s", p.KubeProxy.P99.Round(time.Millisecond))
	}
	// The data plane, measured per pod, is the direct measure; kube-proxy's histogram counts
	// every endpoint change of the cluster (new pods, other namespaces), so it only stands in
	// when no pod kept serving after its deletion.
	switch {
	case p.DataPlane.N > 0:
		r.Routed = p.DataPlane.P99
		r.RoutedFrom = fmt.Sprintf("data plane p99 %s (last answer after deletion)", p.DataPlane.P99.Round(time.Millisecond))
	default:
		r.Routed = p.ControlPlane.P99 + lag
		r.RoutedFrom = fmt.Sprintf("control plane p99 %s + %s", p.ControlPlane.P99.Round(time.Millisecond), lagFrom)
	}
	r.PreStop = ceilSecond(r.Routed + preStopMargin)
	r.GraceSeconds = int64(ceilSecond(r.PreStop+r.RequestP99+killMinimum) / time.Second)
	r.Fit, r.Advice = advise(r, ex, cfg, times)
	return r
}

// ownDelayNoted is the least app delay worth naming: below it the app closes its listener at
// SIGTERM, as far as anyone can tell.
const ownDelayNoted = 100 * time.Millisecond

func ceilSecond(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

// advise compares the row's configuration with the recommendation and, for failures, names the
// smallest change the dominant phase calls for.
func advise(r *check.Recommendation, ex *check.Explanation, cfg check.Applied, times *check.Times) (fit, advice string) {
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
