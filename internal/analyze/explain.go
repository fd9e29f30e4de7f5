package analyze

import (
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// kubeProxyNumbers is the change of kube-proxy's programming histogram over a row, or why
// there is none.
type kubeProxyNumbers struct {
	durations *check.Durations
	buckets   []check.HistogramBucket
	err       string
}

// explain builds a row's check.Explanation from the load's ledger and DNS answers (Load.Resolve),
// the timeline, the attribution and kube-proxy's numbers.
func explain(reqs []loadgen.Request, dns []loadgen.DNSAnswer, tl timeline.Timeline, attr attribute.Result, kp KubeProxy, cfg check.Applied, identity bool, times *check.Times) *check.Explanation {
	ex := &check.Explanation{Phases: attr.Counts, Propagation: check.PropagationSummary{KubeProxy: kp.Durations, KubeProxyError: kp.Err, KubeProxyBuckets: kp.Buckets}}
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
		// A gRPC channel that does not balance itself is pinned too (cfg.PinsConnections): its
		// data plane is kept as what it is, how long the pod answered, and Route does not count
		// it as routing.
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
	ex.Recommendation = Recommend(ex, cfg, appDelay(attr.Lives), times, speaks(tl))
	if r := ex.Recommendation; r != nil {
		r.Unheard = unheard(attr.Lives, cfg)
		if n := PID1Note(r.Unheard, r.AppSpeaks, cfg.GraceSeconds); n != "" {
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

// Recommend applies the formula of check.Recommendation (Route, Settings) to an explanation's
// windows and the requests' p99, with its fit and advice for cfg; nil when no deleted pod was
// seen leaving the Service.
func Recommend(ex *check.Explanation, cfg check.Applied, own check.Durations, times *check.Times, speaks bool) *check.Recommendation {
	w, path := FromPropagation(ex.Propagation), PathOf(cfg)
	if !path.Resolve {
		// A DNS window the load pods measured with no proxy that resolves on the row's path
		// (Load.Resolve without a URL) is no window of its requests.
		w.DNS, w.DNSTTL = Window{}, 0
	}
	if !w.Measured() {
		return nil
	}
	r := &check.Recommendation{RequestP99: ex.RequestP99, AppDelay: own, AppSpeaks: speaks}
	rt := Route(w, path)
	r.Routed, r.RoutedFrom, r.TTLStoodIn = rt.Window, rt.From, rt.TTLStoodIn
	r.PreStop, r.GraceSeconds = Settings(r.Routed, r.RequestP99)
	r.Fit, r.Advice = Advise(r, ex, cfg, times)
	return r
}

// heldFor is how long the app's preStop certainly holds SIGTERM back after a deletion: its
// native sleep, cut at the grace period; nothing for a forced deletion (no hook runs) or a hook
// that may end early (exec, httpGet); nor across a kubelet restart, which may cut the hook.
func heldFor(c check.Applied) time.Duration {
	if d := c.Disruption.Info(); d.Forced || d.RestartsKubelet || c.PreStop.Sleep <= 0 {
		return 0
	}
	return min(c.PreStop.Sleep, time.Duration(c.GraceSeconds)*time.Second)
}
