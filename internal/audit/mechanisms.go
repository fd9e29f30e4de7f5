package audit

import (
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/timeline"
)

// scoring is what every mechanism of one workload's score reads (ScoreOne fills it once): the
// workload, the windows, the routed window of its path and that window's distribution, the
// request p99, the recommendation, and what the pod holds for sure.
type scoring struct {
	w     *Workload
	f     *WindowsFile
	front *Container // the container the Service's port reaches (never nil in a mechanism)

	rt      analyze.Routed // the routed window of the workload's path
	rtDist  dist           // its distribution over the measured windows (unknown: p99 only)
	p99     time.Duration  // the request p99 the grace period must leave
	p99From string
	pre     time.Duration // the recommended preStop
	grace   int64         // the recommended grace period, in seconds

	held       time.Duration // how long the front keeps accepting after the deletion for sure (its preStop)
	known      bool          // the front's preStop has a length the manifests tell
	accepts    time.Duration // held, plus the app's own delay after SIGTERM where known (up to SIGKILL)
	at         time.Duration // SIGKILL: max(grace period, held + 2 s) after the deletion
	delay      AppDelay
	delayKnown bool
	app        time.Duration // what the app container holds (its preStop), for sidecars
	appKnown   bool
}

// A Mechanism is one entry of audit's prediction table, in the shape of the attribution's rules
// (internal/attribute.Rules): the phase its failures would be attributed to, the disruption its
// prediction is per, where it applies, and its rule, which gives the workload's findings of it
// (none where it does not apply). A new phase is one entry here, beside its attribution rule,
// and a case of TestEveryMechanismScores.
type Mechanism struct {
	// Name names the entry (a phase can have several: a rollout's and a drain's no-endpoint).
	Name string
	// Phases are the phases its findings are in: the first its own, the others what it becomes
	// (a propagation through a classic sidecar in front is the sidecar's exit).
	Phases []timeline.Phase
	// Per is the disruption its prediction is per: PerRollout or PerDrain.
	Per string
	// Applies says where it applies.
	Applies string
	score   func(s *scoring) []Finding
}

// Mechanisms is audit's prediction table, in the order each workload's findings are listed.
var Mechanisms = []Mechanism{
	{"propagation", []timeline.Phase{timeline.PhasePropagation, timeline.PhaseSidecarExit}, PerRollout,
		"every workload: requests routed to a pod after its front container stopped accepting", propagation},
	{"in-flight-cut", []timeline.Phase{timeline.PhaseInFlightCut}, PerRollout,
		"every workload: requests in flight when the app exits on SIGTERM", inFlightCut},
	{"sigkill", []timeline.Phase{timeline.PhaseSIGKILL}, PerRollout,
		"every workload: requests still running when the kubelet kills at the grace period's end", sigkill},
	{"no-endpoint-rollout", []timeline.Phase{timeline.PhaseNoEndpoint}, PerRollout,
		"a strategy that takes every pod before a replacement is ready", rolloutGap},
	{"no-endpoint-drain", []timeline.Phase{timeline.PhaseNoEndpoint}, PerDrain,
		"a workload with replicas: whether a node drain may evict every pod at once", drainGap},
	{"no-local-endpoint", []timeline.Phase{timeline.PhaseNoLocalEndpoint}, PerDrain,
		"a Service with externalTrafficPolicy Local", localTraffic},
	{"stale-address", []timeline.Phase{timeline.PhaseStaleAddress}, PerRollout,
		"a headless Service: clients that resolve it hold a deleted pod's address", staleAddress},
	{"sidecar-exit", []timeline.Phase{timeline.PhaseSidecarExit}, PerRollout,
		"a classic sidecar behind the app that stops before it", classicSidecars},
}

// mean is the mean of exposed(window) over the measured windows of d, and how it was taken;
// exposed(p99) when the file kept no distribution of that window.
func mean(d dist, p99 time.Duration, exposed func(time.Duration) time.Duration) (Duration, string) {
	if !d.known() {
		return Duration(exposed(p99)), "the windows file holds the window's p99 only: the expected count is the upper bound"
	}
	return Duration(d.mean(exposed)), ""
}

// propagation: requests routed to the pod after its front container stopped accepting.
// exposed = routed − held (the front's preStop sleep, at most the grace period).
func propagation(s *scoring) []Finding {
	w, front, rt, pre := s.w, s.front, s.rt, s.pre
	prop := Finding{Mechanism: timeline.PhasePropagation, Per: PerRollout, Window: rt.From}
	if front.Sidecar == "classic" && (!s.appKnown || s.app > s.held) {
		// A classic sidecar in front that stops before the app: the attribution calls it so.
		prop.Mechanism = timeline.PhaseSidecarExit
	}
	switch {
	case !s.known:
		prop.Status, prop.Exposed = Unknown, Duration(rt.Window)
		prop.Why = fmt.Sprintf("the preStop of %s (%s) has no length the manifests tell: it may end before the routed window %s does", w.Front, front.PreStop, ms(rt.Window))
		prop.Fix = fmt.Sprintf("a native sleep preStop on %s ≥ %s", w.Front, pre)
		if front.Sidecar == "native" {
			prop.Why = fmt.Sprintf("%s, a native sidecar, stops after the app %s, whose preStop (%s) has no length the manifests tell: it may end before the routed window %s does", w.Front, w.App, w.container(w.App).PreStop, ms(rt.Window))
			prop.Fix = fmt.Sprintf("a native sleep preStop on %s or %s ≥ %s", w.App, w.Front, pre)
		}
	case s.accepts < rt.Window:
		prop.Status, prop.Exposed = Exposed, Duration(rt.Window-s.accepts)
		var note string
		prop.meanSet = true
		prop.ExposedMean, note = mean(s.rtDist, rt.Window, func(x time.Duration) time.Duration { return max(0, x-s.accepts) })
		prop.Why = fmt.Sprintf("%s stops accepting %s after the deletion (%s) while requests are routed to it for %s at the p99", w.Front, ms(s.accepts), holdWords(front, s.held), ms(rt.Window))
		prop.Fix = fmt.Sprintf("preStop sleep on %s ≥ %s", w.Front, pre)
		if prop.Mechanism == timeline.PhaseSidecarExit {
			prop.Why += fmt.Sprintf(", and before the app (%s holds %s)", w.App, s.app)
			prop.Fix += " (or make it a native sidecar: it then stops after the app)"
		}
		if s.delayKnown {
			prop.Why += fmt.Sprintf(", its preStop and the app's own %s after SIGTERM (%s) counted", s.delay.Delay, s.delay.From)
		} else if prop.Mechanism == timeline.PhasePropagation {
			prop.Note = NoteAppDelay
		}
		prop.Note = joinNotes(prop.Note, note)
	case s.delayKnown && s.held < rt.Window:
		prop.Status = Covered
		prop.Why = fmt.Sprintf("the app keeps accepting %s after SIGTERM on its own (%s): %s keeps accepting %s after the deletion, past the routed window %s", s.delay.Delay, s.delay.From, w.Front, ms(s.accepts), ms(rt.Window))
	default:
		prop.Status = Covered
		prop.Why = fmt.Sprintf("%s keeps accepting %s after the deletion, past the routed window %s", w.Front, s.held, ms(rt.Window))
	}
	return []Finding{prop}
}

// inFlightCut: requests in flight when the app exits on SIGTERM. Whether it drains is not in the
// manifests; a preStop that outlasts the routed window by the requests' p99 leaves none in
// flight. Exposed at worst: the requests' p99.
func inFlightCut(s *scoring) []Finding {
	rt, p99 := s.rt, s.p99
	cut := Finding{Mechanism: timeline.PhaseInFlightCut, Per: PerRollout, Window: fmt.Sprintf("%s; request p99 %s, %s", rt.From, ms(p99), s.p99From)}
	if s.known && s.held >= rt.Window+p99 {
		cut.Status = Covered
		cut.Why = fmt.Sprintf("the preStop (%s) outlasts the routed window %s by the request p99 %s: nothing is in flight at SIGTERM", s.held, ms(rt.Window), ms(p99))
	} else {
		cut.Status, cut.Exposed = Unknown, Duration(p99)
		cut.Why = "whether the app finishes its in-flight requests on SIGTERM is not in the manifests"
		cut.Fix = fmt.Sprintf("drain on SIGTERM (Go: http.Server.Shutdown; gRPC: GracefulStop), or a preStop sleep ≥ %s (routed window + request p99)", ceil(rt.Window+p99))
	}
	return []Finding{cut}
}

// sigkill: the kubelet kills at the grace period's end, and at least 2 s after a preStop (one cut
// at the grace period's end included): kill = max(grace, held + 2 s). A request accepted by then
// is cut when it needs longer: the front accepts until min(routed, held), so exposed =
// min(routed, held) + request p99 − kill, between 0 and the request p99. The recommendation's
// grace (preStop + request p99 + 2 s) leaves none whatever the routing.
func sigkill(s *scoring) []Finding {
	w, rt, p99, at, accepts := s.w, s.rt, s.p99, s.at, s.accepts
	kill := Finding{Mechanism: timeline.PhaseSIGKILL, Per: PerRollout, Window: fmt.Sprintf("%s; request p99 %s, %s", rt.From, ms(p99), s.p99From)}
	set, _ := w.hookLength(w.Front)
	wantGrace := max(s.grace, int64(ceil(set+p99+analyze.KillMinimum)/time.Second))
	cutAt := func(routed time.Duration) time.Duration { return min(max(0, min(routed, accepts)+p99-at), p99) }
	switch cut := min(rt.Window, accepts) + p99 - at; {
	case !s.known:
		kill.Status, kill.Exposed = Unknown, Duration(p99)
		kill.Why = fmt.Sprintf("grace %ds must hold the preStop of %s (%s, of unknown length) + request p99 %s + 2 s", w.GraceSeconds, w.Front, s.front.PreStop, ms(p99))
		kill.Fix = "terminationGracePeriodSeconds ≥ the hook's length + request p99 + 2 s"
	case cut > 0:
		kill.Status, kill.Exposed = Exposed, Duration(min(cut, p99))
		kill.meanSet = true
		kill.ExposedMean, kill.Note = mean(s.rtDist, rt.Window, cutAt)
		kill.Why = fmt.Sprintf("SIGKILL %s after the deletion (grace %ds, preStop %s) cuts requests accepted up to %s after it that take the request p99 %s", ms(at), w.GraceSeconds, s.held, ms(min(rt.Window, accepts)), ms(p99))
		kill.Fix = fmt.Sprintf("terminationGracePeriodSeconds ≥ %d", wantGrace)
	case w.GraceSeconds < wantGrace:
		kill.Status = Covered
		kill.Why = fmt.Sprintf("grace %ds is below preStop + request p99 + 2 s (%ds), but the last request accepted (%s after the deletion) ends before SIGKILL at %s", w.GraceSeconds, wantGrace, ms(min(rt.Window, accepts)), ms(at))
		kill.Fix = fmt.Sprintf("terminationGracePeriodSeconds ≥ %d, for the margin", wantGrace)
	default:
		kill.Status = Covered
		kill.Why = fmt.Sprintf("grace %ds ≥ preStop %s + request p99 %s + 2 s", w.GraceSeconds, set, ms(p99))
	}
	return []Finding{kill}
}

// rolloutGap: every pod gone before a replacement is ready. exposed ≥ the replacement's time to
// ready: its readiness probe's initialDelaySeconds + periodSeconds (1 s without a probe), a
// lower bound (scheduling, pulling and starting not counted).
func rolloutGap(s *scoring) []Finding {
	w := s.w
	if w.Replicas <= 0 || w.Strategy.MaxUnavailable < w.Replicas || w.Strategy.MaxSurge != 0 {
		return nil
	}
	return []Finding{{Mechanism: timeline.PhaseNoEndpoint, Per: PerRollout, Status: Exposed, Exposed: Duration(w.readyAtLeast()), Window: "the replacement's readiness probe (a lower bound)",
		Why: fmt.Sprintf("the %s strategy takes every pod (%d) before a replacement is ready", w.Strategy.Type, w.Replicas),
		Fix: rolloutFix(w)}}
}

// drainGap: a drain evicts gracefully: an evicted pod keeps serving through its preStop, and
// while no pod is ready kube-proxy sends to the terminating pods that still pass their readiness
// probe (KEP-1669, Kubernetes 1.28+), so a replacement ready within the preStop leaves no gap:
// exposed = ready − held.
func drainGap(s *scoring) []Finding {
	w, ready := s.w, s.w.readyAtLeast()
	drain := Finding{Mechanism: timeline.PhaseNoEndpoint, Per: PerDrain, Window: "the replacement's readiness probe (a lower bound), less the preStop the evicted pods serve through"}
	switch {
	case w.Replicas == 0:
		return nil
	case w.PDB != nil && w.PDB.Allows == 0:
		// The eviction API refuses every eviction: nothing is evicted, the drain blocks.
		drain.Status = Blocked
		drain.Why = fmt.Sprintf("PodDisruptionBudget %s lets none of the %d pods go: a drain evicts nothing and blocks (until its timeout, or someone deletes the pod), so no request fails but the node does not drain", w.PDB.Name, w.Replicas)
		drain.Fix = "replicas ≥ 2, with a budget that lets one go (maxUnavailable 1)"
	case w.Replicas == 1 || (w.PDB == nil || w.PDB.Allows >= w.Replicas) && !w.Spread:
		drain.Why = fmt.Sprintf("a node drain may evict every pod at once: %s", drainWhy(w))
		drain.Fix = "replicas ≥ 2 with a PodDisruptionBudget (maxUnavailable 1) and a topology spread over kubernetes.io/hostname"
		switch {
		case !s.known:
			drain.Status, drain.Exposed = Unknown, Duration(ready)
			drain.Why += fmt.Sprintf("; the evicted pods serve through their preStop (%s, of unknown length) if their replacements are ready by then", s.front.PreStop)
		case s.held >= ready:
			drain.Status = Covered
			drain.Why += fmt.Sprintf("; the evicted pods serve through their preStop (%s) while no pod is ready (kube-proxy sends to serving terminating pods), past the replacement's readiness %s (a lower bound: scheduling, pulling and starting not counted)", s.held, ready)
		default:
			drain.Status, drain.Exposed = Exposed, Duration(ready-s.held)
		}
	default:
		drain.Status = Covered
		drain.Why = "a drain leaves a pod serving: " + drainWhy(w)
	}
	return []Finding{drain}
}

// localTraffic: traffic from outside entering a drained node, with externalTrafficPolicy Local,
// goes only to that node's pods; once they stop serving the node drops it until the load
// balancer's health check (healthCheckNodePort) takes the node out, which is the load
// balancer's, not in the manifests. One finding, for the first such Service.
func localTraffic(s *scoring) []Finding {
	for _, svc := range s.w.Services {
		if !svc.LocalTraffic {
			continue
		}
		return []Finding{{Mechanism: timeline.PhaseNoLocalEndpoint, Per: PerDrain, Status: Unknown, Window: "the load balancer's health check of the node (not measured)",
			Why: fmt.Sprintf("Service %s has externalTrafficPolicy Local: traffic from outside entering a drained node goes only to its pods, and once they stop serving (after their preStop) is dropped until the load balancer's health check takes the node out, whose timing is not in the manifests", svc.Name),
			Fix: "externalTrafficPolicy Cluster, or a load balancer whose health check of healthCheckNodePort takes a node out within the preStop"}}
	}
	return nil
}

// staleAddress: clients that resolve a headless Service (a balancing gRPC client, a proxy that
// resolves by DNS) hold a pod's address after its deletion.
func staleAddress(s *scoring) []Finding {
	w := s.w
	hs := w.Headless()
	if hs == "" {
		return nil
	}
	dnsWin := s.f.Windows
	dnsWin.Proxy = nil
	path := analyze.Path{Resolve: true}
	if !w.GRPC() || dnsWin.Client == nil {
		dnsWin.Client, dnsWin.ClientNoAddress = nil, 0
	}
	st, stDist := route(dnsWin, path)
	fd := Finding{Mechanism: timeline.PhaseStaleAddress, Per: PerRollout, Window: st.From}
	who := "a client or proxy that resolves it"
	if w.GRPC() {
		who = "a gRPC client that balances over its addresses (round_robin)"
	}
	switch {
	case !s.known:
		fd.Status, fd.Exposed = Unknown, Duration(st.Window)
		fd.Why = fmt.Sprintf("the headless Service %s: %s holds a deleted pod's address for %s; the preStop's length is not known", hs, who, ms(st.Window))
		fd.Fix = fmt.Sprintf("a native sleep preStop ≥ %s", ceil(st.Window+analyze.PreStopMargin))
	case s.accepts < st.Window:
		fd.Status, fd.Exposed = Exposed, Duration(st.Window-s.accepts)
		fd.meanSet = true
		fd.ExposedMean, fd.Note = mean(stDist, st.Window, func(x time.Duration) time.Duration { return max(0, x-s.accepts) })
		fd.Why = fmt.Sprintf("the headless Service %s: %s holds a deleted pod's address for %s at the p99, longer than the pod keeps accepting (%s)", hs, who, ms(st.Window), ms(s.accepts))
		fd.Fix = fmt.Sprintf("preStop sleep ≥ %s, and a client that resolves again sooner (its refresh) or retries UNAVAILABLE", ceil(st.Window+analyze.PreStopMargin))
	default:
		fd.Status = Covered
		fd.Why = fmt.Sprintf("the headless Service %s: the pod keeps accepting (%s) past the %s its clients hold its address", hs, ms(s.accepts), ms(st.Window))
	}
	return []Finding{fd}
}

// classicSidecars: classic sidecars behind the app that stop before it: what the app needs of
// them (an outbound proxy, a token agent) is not in the manifests.
func classicSidecars(s *scoring) []Finding {
	w := s.w
	var out []Finding
	for _, c := range w.Containers {
		if c.Sidecar != "classic" || c.Name == w.Front {
			continue
		}
		h, ok := w.held(c.Name)
		if ok && s.appKnown && h >= s.app {
			continue
		}
		out = append(out, Finding{Mechanism: timeline.PhaseSidecarExit, Per: PerRollout, Status: Unknown, Window: "the app's preStop",
			Why: fmt.Sprintf("the classic sidecar %s (preStop %s) gets SIGTERM before the app %s is done (preStop %s): whether the app needs it until then is not in the manifests", c.Name, c.PreStop, w.App, w.container(w.App).PreStop),
			Fix: fmt.Sprintf("a preStop sleep on %s at least the app's, or make it a native sidecar (an init container with restartPolicy Always)", c.Name)})
	}
	return out
}
