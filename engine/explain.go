package engine

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/sizing"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// The recommendation formula's margins are internal/sizing's (see check.Recommendation); the
// kube-proxy programming lag it assumes when none was measured:
const assumedProgLag = attribute.DefaultProgrammingLag

// kubeProxyNumbers is the change of kube-proxy's programming histogram over a row, or why
// there is none.
type kubeProxyNumbers struct {
	durations *check.Durations
	buckets   []check.HistogramBucket
	err       string
}

// explain builds a row's check.Explanation from the load's ledger and DNS answers (Load.Resolve),
// the timeline, the attribution and kube-proxy's numbers.
func explain(reqs []loadgen.Request, dns []loadgen.DNSAnswer, tl timeline.Timeline, attr attribute.Result, kp kubeProxyNumbers, cfg check.Applied, identity bool, times *check.Times) *check.Explanation {
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
	if cfg.LoadURL != "" {
		var w []time.Duration
		w, ex.Propagation.ProxyStale = proxyWindow(attr.Lives)
		ex.Propagation.Proxy = check.Summarize(w)
	}
	if len(dns) > 0 {
		ex.Propagation.DNS, ex.Propagation.DNSTTL = dnsWindow(dns, attr.Lives)
	}
	if g := cfg.GRPC; g != nil && g.Balancing == loadgen.BalancingRoundRobin {
		var w []time.Duration
		w, ex.Propagation.ClientStale, ex.Propagation.ClientNoAddress = clientWindow(attr, reqs)
		ex.Propagation.Client = check.Summarize(w)
	}
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
		if n := report.PID1Note(r.Unheard, r.AppSpeaks, cfg.GraceSeconds); n != "" {
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

// proxyWindow measures, per deleted pod, deletion → the last request the proxy in front sent to
// it (attribute.Life.LastSent), and counts the pods it still sent to after they were gone.
func proxyWindow(lives []attribute.Life) (w []time.Duration, stale int) {
	w, stale, _ = sendWindow(lives, time.Time{})
	return w, stale
}

// clientWindow is the window of a client that balances itself: proxyWindow's, and more. A
// pod's address stops drawing RPCs once the pod stops accepting, so a client that then held no
// live address at all (its RPCs stale-address with no peer) shows a window cut short by the
// pod's own end: for each pod it had sent to and that was deleted before such an RPC, the
// window lasts at least until the last one (noAddress counts them).
func clientWindow(attr attribute.Result, reqs []loadgen.Request) (w []time.Duration, stale, noAddress int) {
	bySeq := make(map[uint64]*loadgen.Request, len(attr.Failed))
	for i := range reqs {
		if !reqs[i].OK() {
			bySeq[reqs[i].Seq] = &reqs[i]
		}
	}
	var last time.Time
	for _, a := range attr.Failed {
		if q := bySeq[a.Seq]; q != nil && a.Phase == timeline.PhaseStaleAddress && a.Pod == "" && q.Peer == "" && q.Timestamp.After(last) {
			last = q.Timestamp
		}
	}
	return sendWindow(attr.Lives, last)
}

// sendWindow is, per deleted pod that something sent to after its deletion, deletion → the last
// request sent to it, or → until when that is later and the pod was deleted before it
// (extended counts those); stale counts the pods sent to after they were gone.
func sendWindow(lives []attribute.Life, until time.Time) (w []time.Duration, stale, extended int) {
	for _, l := range lives {
		if l.Deleting.IsZero() || l.LastSent.IsZero() || !l.LastSent.After(l.Deleting) {
			continue
		}
		d := l.LastSent.Sub(l.Deleting)
		if until.After(l.Deleting) && until.Sub(l.Deleting) > d {
			d = until.Sub(l.Deleting)
			extended++
		}
		w = append(w, d)
		if !l.Gone.IsZero() && l.LastSent.After(l.Gone.Add(attribute.Tolerance)) {
			stale++
		}
	}
	return w, stale, extended
}

// dnsWindow measures, per deleted pod with a known address, deletion → the first DNS answer
// after it that no longer lists the address, and gives the largest TTL answered.
func dnsWindow(answers []loadgen.DNSAnswer, lives []attribute.Life) (check.Durations, uint32) {
	var ttl uint32
	for _, a := range answers {
		ttl = max(ttl, a.TTL)
	}
	var w []time.Duration
	for _, l := range lives {
		if l.Deleting.IsZero() || l.IP == "" {
			continue
		}
		listed := false
		for _, a := range answers {
			if a.Time.Before(l.Deleting) {
				listed = a.Has(l.IP)
				continue
			}
			if listed && !a.Has(l.IP) {
				w = append(w, a.Time.Sub(l.Deleting))
				break
			}
			listed = listed || a.Has(l.IP)
		}
	}
	return check.Summarize(w), ttl
}

// recommend applies the formula of check.Recommendation; nil when no deleted pod was seen leaving
// the Service.
func recommend(ex *check.Explanation, cfg check.Applied, own check.Durations, times *check.Times, speaks bool) *check.Recommendation {
	p := ex.Propagation
	if p.ControlPlane.N == 0 && p.DataPlane.N == 0 && p.Proxy.N == 0 && p.Client.N == 0 && p.DNS.N == 0 {
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
	case p.Client.N > 0:
		// A client that balances itself sends to a pod until it resolves again: its window is
		// the one a preStop must outlast.
		r.Routed = p.Client.P99
		r.RoutedFrom = fmt.Sprintf("the client's window p99 %s (deletion → its last RPC to the pod's address)", p.Client.P99.Round(time.Millisecond))
		if p.ClientNoAddress > 0 {
			r.RoutedFrom = fmt.Sprintf("the client's window p99 %s (deletion → its last RPC to the pod's address, or, for %d pod(s), to its last RPC that found no live address: at least that long, since it had not resolved again by then)", p.Client.P99.Round(time.Millisecond), p.ClientNoAddress)
		}
	case p.Proxy.N > 0 && (cfg.UpstreamHeader != "" || cfg.Resolve == ""):
		// Through a proxy with its own list of pods, its window is the one a preStop must
		// outlast, not kube-proxy's: measured by request where it names its upstream.
		r.Routed, r.RoutedFrom = p.Proxy.P99, proxyWindowFrom(p.Proxy)
	case cfg.Resolve != "":
		// A proxy that finds the pods by DNS sends to their addresses, never through the
		// ClusterIP: kube-proxy's window is not its path. Naming no upstream, its window is
		// known only from answers, which stop when the pod stops accepting; DNS bounds it.
		r.Routed, r.RoutedFrom, r.TTLStoodIn = dnsRouted(p, cfg)
	case p.DataPlane.N > 0:
		r.Routed = p.DataPlane.P99
		r.RoutedFrom = fmt.Sprintf("data plane p99 %s (last answer after deletion)", p.DataPlane.P99.Round(time.Millisecond))
	default:
		r.Routed = p.ControlPlane.P99 + lag
		r.RoutedFrom = fmt.Sprintf("control plane p99 %s + %s", p.ControlPlane.P99.Round(time.Millisecond), lagFrom)
	}
	r.PreStop = sizing.PreStop(r.Routed)
	r.GraceSeconds = sizing.GraceSeconds(r.PreStop, r.RequestP99)
	r.Fit, r.Advice = report.Advise(r, ex, cfg, times)
	return r
}

// proxyWindowFrom says where a routed time from the proxy's window came from.
func proxyWindowFrom(w check.Durations) string {
	return fmt.Sprintf("the proxy's window p99 %s (deletion → its last request to the pod)", w.P99.Round(time.Millisecond))
}

// dnsRouted bounds how long a proxy that finds the pods by DNS (Load.Resolve) still sends to a
// deleted pod: until the cluster's DNS answers without the pod's address (the DNS window; the
// control plane stands in when it was not measured, since the cluster's DNS answers from the
// EndpointSlices), plus how long the proxy keeps an answer: its refresh (Load.ResolveRefresh),
// else, not known, the answers' TTL, which a proxy that honours it keeps an answer for. The
// proxy's window, where measured longer (from the pods' answers: a lower bound), wins. ttl
// reports that the TTL stood in for the refresh.
func dnsRouted(p check.PropagationSummary, cfg check.Applied) (routed time.Duration, from string, ttl bool) {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	routed, from = p.DNS.P99, fmt.Sprintf("DNS window p99 %s", ms(p.DNS.P99))
	if p.DNS.N == 0 {
		routed, from = p.ControlPlane.P99, fmt.Sprintf("control plane p99 %s (no DNS window measured: the cluster's DNS answers from the EndpointSlices)", ms(p.ControlPlane.P99))
	}
	switch every := cfg.ResolveRefresh; {
	case every == check.ResolveOnce:
		from += fmt.Sprintf(", but the proxy never resolves again (%s): after a rollout every address it holds is gone, and no preStop outlasts that", cmp.Or(cfg.ResolveSetting, "resolved once"))
	case every > 0:
		routed += every
		from += " + " + cmp.Or(cfg.ResolveSetting, fmt.Sprintf("the proxy's refresh %s", every))
	case p.DNS.N > 0 || p.DNSTTL > 0:
		routed += time.Duration(p.DNSTTL) * time.Second
		from += fmt.Sprintf(" + DNS TTL %ds (the proxy's own re-resolve interval is not known: the TTL bounds it for a proxy that honours it)", p.DNSTTL)
		ttl = true
	default:
		from += " (the proxy's own re-resolve interval is not known, nor the DNS TTL: not counted)"
	}
	if p.Proxy.N > 0 && p.Proxy.P99 > routed {
		return p.Proxy.P99, fmt.Sprintf("%s, longer than %s (%s)", proxyWindowFrom(p.Proxy), ms(routed), from), false
	}
	return routed, from, ttl
}

// heldFor is how long the app's preStop certainly holds SIGTERM back after a deletion: its
// native sleep, cut at the grace period; nothing for a forced deletion (no hook runs) or a hook
// that may end early (exec, httpGet); nor across a kubelet restart, which may cut the hook.
func heldFor(c check.Applied) time.Duration {
	if c.Disruption == check.ForceDelete || c.Disruption == check.KubeletRestart || c.PreStop.Sleep <= 0 {
		return 0
	}
	return min(c.PreStop.Sleep, time.Duration(c.GraceSeconds)*time.Second)
}
