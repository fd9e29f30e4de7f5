package analyze

import (
	"fmt"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/timeline"
)

// The advice a row carries: the prose of its recommendation (Recommend computes the numbers and
// calls Advise) and the note on pods that never heard SIGTERM.

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

// cond is s when ok, else "".
func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// capitalFirst is s with its first letter a capital ("the client's window" → "The client's window").
func capitalFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ownDelayNoted is the least app delay worth naming: below it the app closes its listener at
// SIGTERM, as far as anyone can tell.
const ownDelayNoted = 100 * time.Millisecond

// Advise is the prose of a row's recommendation: it compares the row's configuration with the recommendation and, for failures, names the
// smallest change the dominant phase calls for.
func Advise(r *check.Recommendation, ex *check.Explanation, cfg check.Applied, times *check.Times) (fit, advice string) {
	return advise(r, Routed{}, ex, cfg, times)
}

// advise is Advise with the routed time's lower bounds (Route: rt.Cut, rt.AtLeast) known: a
// sender's window that the pods' own end cut is said as the lower bound it is, and a routed
// time that is only such a bound does not judge the row's preStop (fit "").
func advise(r *check.Recommendation, rt Routed, ex *check.Explanation, cfg check.Applied, times *check.Times) (fit, advice string) {
	var parts []string
	pre, known := cfg.PreStop.Duration()
	// The app's own delay, when its lines tell it, counts as preStop: the smallest, since the
	// weakest pod is the one that drops requests.
	own := time.Duration(0)
	if r.AppDelay.N > 0 && r.AppDelay.Samples[0] >= ownDelayNoted {
		own = r.AppDelay.Samples[0]
	}
	fit = Fit(pre, known, own, cfg.GraceSeconds, r.PreStop, r.GraceSeconds)
	switch {
	case rt.AtLeast:
		// Only a lower bound, which the pods' own serving (this row's preStop) set: a row
		// that passed with it is not short on its strength, nor one that failed for another
		// reason.
		fit = ""
		parts = append(parts, fmt.Sprintf("%s ≥ %s (%d pod(s)): the pod answered until it exited, so this is a lower bound of %s, set by the pods' own preStop, not a measure of it; nothing this row measured bounds it, so the %s, %ds it gives count the lower bound as the window and do not judge the row's own preStop%s: "+
			"a row that failed with a shorter preStop measures the window, or what bounds the sender does (its re-resolve interval, the DNS TTL)",
			capitalFirst(rt.Whose), ms(rt.Cut.P99), rt.Cut.N, rt.Whose, r.PreStop, r.GraceSeconds, cond(known, fmt.Sprintf(" (%s, grace %ds)", pre, cfg.GraceSeconds))))
	case known:
		parts = append(parts, fmt.Sprintf("preStop %s vs %s recommended, grace %ds vs %ds", pre, r.PreStop, cfg.GraceSeconds, r.GraceSeconds))
		if rt.Cut.Measured() {
			parts = append(parts, fmt.Sprintf("for %d pod(s) %s is ≥ %s: the pod answered until it exited, so this is a lower bound of %s, set by the preStop itself, and not counted; the recommendation comes from what bounds it: %s",
				rt.Cut.N, rt.Whose, ms(rt.Cut.P99), rt.Whose, rt.Bound))
		}
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
	if cfg.Disruption.Info().Forced {
		parts = append(parts, "a forced delete gives preStop about 1 s and the container 2 s more whatever is set: no setting removes its failures, only the app draining fast")
	}
	switch dominant {
	case "":
		switch {
		case fit != "short":
		case r.TTLStoodIn:
			// The TTL is a bound for a proxy that honours it; a row that passed below it says
			// this proxy resolves again sooner.
			parts = append(parts, fmt.Sprintf("no failure in this run: the %s recommended counts the DNS TTL for the proxy's own re-resolve interval, which is not known; one that resolves again sooner needs less, as this row's preStop %s without a failure suggests: give the interval (load.resolveRefresh) for a bound of its own",
				r.PreStop, pre))
		case !r.AppSpeaks && times != nil && times.Exit.N > 0 && times.Exit.P50 >= r.PreStop:
			// No lines: whether the app kept accepting or only drained slowly is not known.
			parts = append(parts, fmt.Sprintf("no failure in this run; its containers exited p50 %s after deletion (%d pods), longer than the %s routing needs: if the app keeps accepting that long after SIGTERM by itself (a shutdown delay), it does what a preStop sleep does, but without its lifecycle lines rollcheck cannot tell that from a slow drain, so it counts only the preStop",
				times.Exit.P50.Round(100*time.Millisecond), times.Exit.N, r.PreStop))
		default:
			parts = append(parts, "no failure in this run, but the measured propagation leaves no margin")
		}
	case timeline.PhasePropagation:
		if known && pre+own >= r.PreStop {
			// More of the same would change nothing: say what the limit was instead.
			parts = append(parts, fmt.Sprintf("most failures (%d) are propagation, but the app's preStop %s already meets the %s recommended: it was not the limit; %s", n, pre, r.PreStop, propagationLimit(r, ex, cfg, times, pre)))
		} else {
			parts = append(parts, fmt.Sprintf("most failures (%d) are propagation: set preStop sleep ≥ %s", n, r.PreStop))
		}
	case timeline.PhaseSIGKILL:
		if cfg.GraceSeconds >= r.GraceSeconds {
			parts = append(parts, fmt.Sprintf("most failures (%d) were cut by SIGKILL, though the grace period %ds already meets the %ds recommended (preStop %s + requests up to %s + 2 s): the pods did not exit within it, so the app does not stop on SIGTERM (or never hears it), or it drains for longer than its requests' p99 (the longest took %s)", n, cfg.GraceSeconds, r.GraceSeconds, r.PreStop, ex.RequestP99.Round(time.Millisecond), ex.RequestMax.Round(time.Millisecond)))
		} else {
			parts = append(parts, fmt.Sprintf("most failures (%d) were cut by SIGKILL: set terminationGracePeriodSeconds ≥ %d (preStop %s + requests up to %s + 2 s)", n, r.GraceSeconds, r.PreStop, ex.RequestP99.Round(time.Millisecond)))
		}
	case timeline.PhaseInFlightCut:
		drain := "e.g. http.Server.Shutdown"
		if cfg.GRPC != nil {
			drain = "gRPC: GracefulStop with a deadline, then Stop"
		}
		parts = append(parts, fmt.Sprintf("most failures (%d) were in flight when the app exited: drain on SIGTERM (finish in-flight requests, %s) instead of exiting", n, drain))
	case timeline.PhaseSidecarExit:
		parts = append(parts, sidecarAdvice(n, r, cfg))
	case timeline.PhaseProxyPropagation:
		parts = append(parts, proxyAdvice(n, r, ex, cfg))
	case timeline.PhaseProxyNoUpstream:
		parts = append(parts, fmt.Sprintf("most failures (%d) are the proxy's own answers with no upstream: it had no pod left to send to; keep pods in its list until replacements are in it (a longer preStop, maxUnavailable 0) or let it wait for one (a retry window)", n))
	case timeline.PhaseNoLocalEndpoint:
		parts = append(parts, noLocalEndpointAdvice(n))
	case timeline.PhaseNoEndpoint:
		parts = append(parts, noEndpointAdvice(n, cfg))
	case timeline.PhaseGoAway:
		parts = append(parts, fmt.Sprintf("most failures (%d) were refused by the server's GOAWAY and not sent again: the server must let the streams it took finish after GOAWAY (Go: http.Server.Shutdown, which x/net's h2c handler does not reach; gRPC: GracefulStop with a deadline, then Stop), "+
			"and a client resends a refused request only when it may (Go: Request.GetBody; gRPC: a retry policy)", n))
		if cfg.GRPC != nil {
			parts = append(parts, "health checks a terminating pod answered NOT_SERVING count as goaway: its health service says so from SIGTERM, before the client has seen GOAWAY, while a method of the app's own is still served through a graceful stop; load the app with such a method to measure what its clients get")
		}
	case timeline.PhaseConnectionAge:
		parts = append(parts, fmt.Sprintf("most failures (%d) were cut when the server closed a connection for its age (gRPC: MaxConnectionAge sends GOAWAY, MaxConnectionAgeGrace later closes the connection with the RPCs still on it), disruption or not: set MaxConnectionAgeGrace above the longest RPC (the longest here took %s), or leave MaxConnectionAge unset; no pod setting changes it", n, ex.RequestMax.Round(time.Millisecond)))
	case timeline.PhaseStaleAddress:
		parts = append(parts, fmt.Sprintf("most failures (%d) went to pod addresses the client still held after the pods stopped accepting, or found no ready address it knew (stale-address): a client that balances by DNS keeps its addresses until it resolves again (grpc-go: at least 30 s apart). "+
			"Keep deleted pods serving that long: preStop sleep ≥ %s (%s) with terminationGracePeriodSeconds ≥ %d. WaitForReady makes such RPCs wait for a ready connection instead, as long as their deadline allows (a deadline shorter than the window still fails them, DEADLINE_EXCEEDED); a retry policy spends its attempts within a second and does not cover it", n, r.PreStop, r.RoutedFrom, r.GraceSeconds))
	case timeline.PhasePinnedConnection:
		if cfg.GRPC != nil || cfg.Protocol.HTTP2() {
			parts = append(parts, fmt.Sprintf("most failures (%d) rode the HTTP/2 connection pinned to the terminating pod until it closed under them: the server closed it without a GOAWAY that lets the client move on and the streams it took finish. "+
				"Drain on SIGTERM with GOAWAY (Go: http.Server.Shutdown, which reaches only connections the server itself serves, not those x/net's h2c handler took over: serve h2c with http.Server.Protocols; gRPC: GracefulStop with a deadline, then Stop)", n))
			break
		}
		parts = append(parts, fmt.Sprintf("most failures (%d) rode kept-alive connections to the terminating pod: drain on SIGTERM so that idle connections close and busy ones get Connection: close", n))
	case timeline.PhaseStartup:
		parts = append(parts, fmt.Sprintf("most failures (%d) hit a new pod before it could serve: its readiness probe says ready too early", n))
	case timeline.PhaseSteady:
		if cfg.GRPC != nil || cfg.Protocol.HTTP2() {
			parts = append(parts, fmt.Sprintf("most failures (%d) came with no pod terminating or starting: a server that closes its connections by itself cuts the streams in flight when it does (gRPC: MaxConnectionAge with a MaxConnectionAgeGrace shorter than the longest RPC, from a server that gives no max_age reason with its GOAWAY; set the grace above it), or the app or the harness is broken", n))
			break
		}
		parts = append(parts, fmt.Sprintf("most failures (%d) came with no pod terminating or starting: the app or the harness is broken", n))
	default:
		parts = append(parts, fmt.Sprintf("most failures (%d) match no rule (unknown)", n))
	}
	return fit, strings.Join(parts, "; ")
}

// noLocalEndpointAdvice is the advice when most failures came while the node the traffic entered
// had no endpoint of its own (externalTrafficPolicy Local): kube-proxy there drops external
// traffic, though pods elsewhere were ready; no preStop or budget changes that while something
// still sends to the node.
func noLocalEndpointAdvice(n int) string {
	return fmt.Sprintf("most failures (%d) came while the node the traffic entered had no local endpoint (no-local-endpoint): with externalTrafficPolicy Local, kube-proxy sends external traffic only to pods on that node and drops it when there are none, though pods on other nodes were ready; "+
		"a load balancer in front must health-check the Service's healthCheckNodePort (type LoadBalancer allocates it; kube-proxy answers 503 there once the node has no ready local endpoint, while its terminating pods still serve) and stop sending to the node before its last pod stops serving: a preStop longer than the health check's interval × unhealthy threshold gives it that time; "+
		"or use externalTrafficPolicy Cluster, which forwards to pods on other nodes (and loses the client's source address)", n)
}

// noEndpointAdvice is the advice when most failures came while the Service had no endpoint left:
// a drain's (drainAdvice), or the only replica's, which stopped serving before its replacement
// was ready: kube-proxy sends to a terminating pod that still serves when no endpoint is ready,
// so a preStop with readiness still passing bridges the replacement's start.
func noEndpointAdvice(n int, cfg check.Applied) string {
	switch d := cfg.Disruption.Info(); {
	case d.Evicts:
		return drainAdvice(n, cfg)
	case d.Takes == check.TakesAll:
		return fmt.Sprintf("most failures (%d) came after the app was scaled to zero and its last pod stopped serving, until a new one was ready (no-endpoint): "+
			"no pod setting shortens that; a preStop with readiness still passing only moves it later (kube-proxy sends to terminating pods that still serve while none is ready). "+
			"Keep at least one replica while traffic comes, or put something in front that holds requests until a pod is ready (a scale-from-zero proxy)", n)
	}
	return fmt.Sprintf("most failures (%d) came while no pod was ready or serving (no-endpoint): the pod stopped serving before its replacement was ready; "+
		"keep it serving through a preStop longer than the replacement takes to be ready, with its readiness probe still passing (kube-proxy sends to a terminating pod that still serves when no endpoint is ready), "+
		"or run at least 2 replicas", n)
}

// drainAdvice is the advice when most failures came while a drain had evicted every replica and
// none was ready again: no preStop or SIGTERM handling shortens that outage; a budget that makes
// each eviction wait for a ready replacement, and replicas on more than one node, remove it.
func drainAdvice(n int, cfg check.Applied) string {
	s := fmt.Sprintf("most failures (%d) came while the drain had evicted every replica and none was ready again (no-endpoint): no preStop or SIGTERM handling shortens that; ", n)
	spread := "spread the replicas over nodes (topologySpreadConstraints or a preferred pod anti-affinity on kubernetes.io/hostname), so that one drain never holds them all"
	switch {
	case cfg.Replicas < 2:
		return s + "with one replica every eviction is an outage, and a budget that forbids it (minAvailable: 1) blocks every drain instead: run at least 2 replicas, " + spread + ", with a PodDisruptionBudget of maxUnavailable: 1"
	case cfg.PDB != nil:
		return s + fmt.Sprintf("the PodDisruptionBudget (%s) let the eviction API take them all at once: make it maxUnavailable: 1 (or minAvailable: %d), so that each eviction waits until a replacement is ready elsewhere, and %s", cfg.PDB, cfg.Replicas-1, spread)
	}
	return s + fmt.Sprintf("add a PodDisruptionBudget of the app's pods with maxUnavailable: 1 (or minAvailable: %d), so that each eviction waits until a replacement is ready elsewhere, and %s", cfg.Replicas-1, spread)
}

// sidecarAdvice is the advice when most failures came after the sidecar in front stopped first:
// the fix is the sidecar's, never the app's preStop, which does not hold it (the kubelet runs
// each container's preStop on its own); a sidecar that already has what would be recommended is
// told why that was not enough.
func sidecarAdvice(n int, r *check.Recommendation, cfg check.Applied) string {
	front, _ := cfg.FrontSidecar()
	pre, known := front.PreStop.Duration()
	switch {
	case front.Native:
		return fmt.Sprintf("most failures (%d) came after the native sidecar %s in front of the app stopped before it: not by the kubelet's order, which stops a native sidecar only after the app has exited, so it exited on its own (its container status says how); no preStop changes that", n, front.Name)
	case known && pre >= r.PreStop:
		return fmt.Sprintf("most failures (%d) came after the classic sidecar %s in front of the app stopped first, though its own preStop (%s) already meets the %s recommended: it did not hold it (a hook that fails ends at once; a forced delete gives it about 1 s) or it stopped on its own; make it a native sidecar (an init container with restartPolicy Always), which the kubelet stops only after the app has exited", n, front.Name, front.PreStop, r.PreStop)
	}
	return fmt.Sprintf("most failures (%d) came after the classic sidecar %s (preStop %s) in front of the app stopped first: the app's preStop does not hold it (the kubelet runs each container's preStop on its own, then stops it): give it a preStop sleep ≥ %s as the app's, or make it a native sidecar (an init container with restartPolicy Always), which the kubelet stops only after the app has exited", n, front.Name, front.PreStop, r.PreStop)
}

// propagationLimit says what, rather than the app's preStop pre (which met the recommendation),
// let requests reach pods that no longer accepted: a classic sidecar in front with a shorter
// preStop of its own, a forced delete, a preStop that did not run its length, or routing that
// outlasted it; without the app's lines, that it cannot tell.
func propagationLimit(r *check.Recommendation, ex *check.Explanation, cfg check.Applied, times *check.Times, pre time.Duration) string {
	if front, ok := cfg.FrontSidecar(); ok && !front.Native {
		if fp, known := front.PreStop.Duration(); !known || fp < r.PreStop {
			return fmt.Sprintf("the classic sidecar %s in front of it (preStop %s) owns the port and is stopped when its own preStop ends, whatever the app's: give it a preStop sleep ≥ %s, or make it a native sidecar (an init container with restartPolicy Always)", front.Name, front.PreStop, r.PreStop)
		}
	}
	if cfg.Disruption.Info().Forced {
		return "a forced delete cut the preStop short (see above)"
	}
	if times != nil && times.SIGTERM.N > 0 && times.SIGTERM.P50+ownDelayNoted < pre {
		return fmt.Sprintf("the app got SIGTERM p50 %s after the deletion (%d pods, its lines), before its %s preStop could end: the hook did not run its length (a hook that fails ends at once)", times.SIGTERM.P50.Round(10*time.Millisecond), times.SIGTERM.N, pre)
	}
	if !r.AppSpeaks {
		return "the app writes no lifecycle lines, so propagation counts from the deletion, while its preStop may still have held it: what refused those requests is not told (a sidecar, or a hook that ended at once); each request's reason is in raw/*.attribution.json"
	}
	p := ex.Propagation
	routed := fmt.Sprintf("control plane max %s", p.ControlPlane.Max.Round(time.Millisecond))
	if p.DataPlane.N > 0 && !cfg.PinsConnections() {
		routed = fmt.Sprintf("data plane max %s", p.DataPlane.Max.Round(time.Millisecond))
	}
	return fmt.Sprintf("routing outlasted it in some pods (%s after the deletion, against the %s the recommendation counts: %s); each request's reason is in raw/*.attribution.json", routed, r.Routed.Round(time.Millisecond), r.RoutedFrom)
}

// proxyAdvice is the advice of a row whose failures are mostly proxy-propagation: the proxy in
// front still sent to pods that had stopped accepting. A stale list (it sent to pods after they
// were gone) is no preStop's to fix; a preStop the row already has that covers the proxy's
// window as the recommendation counts it (measured, or bounded by DNS) is said not to have been
// the limit.
func proxyAdvice(n int, r *check.Recommendation, ex *check.Explanation, cfg check.Applied) string {
	if st := ex.Propagation.ProxyStale; st > 0 {
		return fmt.Sprintf("most failures (%d) went through the proxy in front to pods that had stopped accepting, and it still sent to %d pods after they were gone: its list of pods is stale (a name resolved once, a DNS answer kept for its TTL or a refresh period), which no preStop covers: make it re-resolve often (a resolver with a short validity, a short refresh) or retry another upstream on a connection failure", n, st)
	}
	if pre, ok := cfg.PreStop.Duration(); ok && pre >= r.PreStop {
		return fmt.Sprintf("most failures (%d) went through the proxy in front to pods that had stopped accepting, although the preStop %s already outlasts the proxy's window as counted (%s): the pods stopped accepting before their preStop ended (the app's own exit, a forced delete), or in some pods the proxy's list lagged longer than counted; let the proxy retry another upstream on a connection failure", n, pre, r.RoutedFrom)
	}
	return fmt.Sprintf("most failures (%d) went through the proxy in front to pods that had stopped accepting: its own list of pods kept them after their deletion (%s): set preStop sleep ≥ %s, or let the proxy retry another upstream on a connection failure", n, r.RoutedFrom, r.PreStop)
}
