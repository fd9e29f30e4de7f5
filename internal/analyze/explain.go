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
	// A window that the pod's own serving life ended is censored (cutByItsEnd): the proxy's and
	// the client's summaries keep it, as what the sender did, and the recommendation counts it
	// as a lower bound only (cut, Censor); the data plane leaves it out.
	held := heldFor(cfg)
	var cut sendersCut
	if cfg.LoadURL != "" {
		var w []time.Duration
		w, cut.Proxy, ex.Propagation.ProxyStale = proxyWindow(attr.Lives, held)
		ex.Propagation.Proxy = check.Summarize(w)
	}
	if len(dns) > 0 {
		ex.Propagation.DNS, ex.Propagation.DNSTTL = dnsWindow(dns, attr.Lives)
	}
	if g := cfg.GRPC; g != nil && g.Balancing == loadgen.BalancingRoundRobin {
		var w []time.Duration
		w, cut.Client, ex.Propagation.ClientStale, ex.Propagation.ClientNoAddress = clientWindow(attr, reqs, held)
		ex.Propagation.Client = check.Summarize(w)
	}
	if identity && !cfg.KeepAlive {
		// With keep-alive a pod answers on connections pinned to it long after the Service
		// stopped routing new ones there: its last answer measures the pinning, not routing.
		// A gRPC channel that does not balance itself is pinned too (cfg.PinsConnections): its
		// data plane is kept as what it is, how long the pod answered, and Route does not count
		// it as routing.
		ex.Propagation.DataPlane = check.Summarize(dataPlane(reqs, attr.Lives, held))
	}
	var lat []time.Duration
	for i := range reqs {
		if reqs[i].OK() {
			lat = append(lat, reqs[i].Latency)
		}
	}
	l := check.Summarize(lat)
	ex.RequestP99, ex.RequestMax = l.P99, l.Max // latencies are many: no samples kept
	ex.Recommendation = recommend(ex, cut, cfg, appDelay(attr.Lives), times, speaks(tl))
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
// traffic): a pod that answered until it stopped serving (cutByItsEnd) is left out.
func dataPlane(reqs []loadgen.Request, lives []attribute.Life, held time.Duration) []time.Duration {
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
		if servedUntil(&l, held).IsZero() || cutByItsEnd(&l, t, t, held) {
			continue
		}
		out = append(out, t.Sub(l.Deleting))
	}
	return out
}

// servedUntil is when a deleted pod stopped serving, as far as the row tells: its listener
// closed (its own line); else the earliest of its SIGTERM (its line), its preStop's end (the
// deletion + the sleep that certainly held SIGTERM back, held: heldFor) and the start of its
// exit window; else its removal. Zero when none is known.
func servedUntil(l *attribute.Life, held time.Duration) time.Time {
	if !l.ListenerClosed.IsZero() {
		return l.ListenerClosed
	}
	var preStopEnd time.Time
	if held > 0 && !l.Deleting.IsZero() {
		preStopEnd = l.Deleting.Add(held)
	}
	var first time.Time
	for _, t := range []time.Time{l.SIGTERM, preStopEnd, l.ExitFrom} {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if first.IsZero() {
		return l.Gone
	}
	return first
}

// cutByItsEnd tells whether a deleted pod's window, which a sender's last request to it at end
// closes, was cut by the pod's own end (censored) rather than ended by the sender: the pod
// answered it (its last answer, answered) at or after it stopped serving (servedUntil, within
// attribute.Tolerance), and nothing was sent to it after that answer. The sender would have
// gone on using the pod: its window is a lower bound, as long as the pod served (its preStop),
// not the routing window. This is the one test of censoring, for the data plane (which leaves
// such a pod out), a proxy's window and a client's (which count it as a lower bound only).
func cutByItsEnd(l *attribute.Life, end, answered time.Time, held time.Duration) bool {
	stop := servedUntil(l, held)
	return !stop.IsZero() && !answered.IsZero() && !answered.Before(stop.Add(-attribute.Tolerance)) && !end.After(answered.Add(attribute.Tolerance))
}

// proxyWindow measures, per deleted pod, deletion → the last request the proxy in front sent to
// it (attribute.Life.LastSent), the pods whose window their own end cut apart (cut: lower
// bounds), and counts the pods it still sent to after they were gone.
func proxyWindow(lives []attribute.Life, held time.Duration) (w, cut []time.Duration, stale int) {
	w, cut, stale, _ = sendWindow(lives, time.Time{}, held)
	return w, cut, stale
}

// clientWindow is the window of a client that balances itself: proxyWindow's, and more. A
// pod's address stops drawing RPCs once the pod stops accepting, so a client that then held no
// live address at all (its RPCs stale-address with no peer) shows a window cut short by the
// pod's own end: for each pod it had sent to and that was deleted before such an RPC, the
// window lasts at least until the last one (noAddress counts them). A pod it sent to until the
// pod stopped serving, with no such RPC after, is cut (a lower bound).
func clientWindow(attr attribute.Result, reqs []loadgen.Request, held time.Duration) (w, cut []time.Duration, stale, noAddress int) {
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
	return sendWindow(attr.Lives, last, held)
}

// sendWindow is, per deleted pod that something sent to after its deletion, deletion → the last
// request sent to it, or → until when that is later and the pod was deleted before it
// (extended counts those); w holds every pod's, and cut, of them, those the pod's own end cut
// (cutByItsEnd, from its last answer, attribute.Life.LastAnswered); stale counts the pods sent
// to after they were gone.
func sendWindow(lives []attribute.Life, until time.Time, held time.Duration) (w, cut []time.Duration, stale, extended int) {
	for _, l := range lives {
		if l.Deleting.IsZero() || l.LastSent.IsZero() || !l.LastSent.After(l.Deleting) {
			continue
		}
		d := l.LastSent.Sub(l.Deleting)
		if until.After(l.Deleting) && until.Sub(l.Deleting) > d {
			d = until.Sub(l.Deleting)
			extended++
		} else if cutByItsEnd(&l, l.LastSent, l.LastAnswered, held) {
			cut = append(cut, d)
		}
		w = append(w, d)
		if !l.Gone.IsZero() && l.LastSent.After(l.Gone.Add(attribute.Tolerance)) {
			stale++
		}
	}
	return w, cut, stale, extended
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

// sendersCut are, of a row's proxy and client windows (check.PropagationSummary's Proxy and
// Client), those the pods' own end cut (sendWindow): lower bounds.
type sendersCut struct{ Proxy, Client []time.Duration }

// Recommend applies the formula of check.Recommendation (Route, Settings) to an explanation's
// windows and the requests' p99, with its fit and advice for cfg; nil when no deleted pod was
// seen leaving the Service. The explanation alone does not tell which proxy or client windows
// the pods' own end cut: each counts as measured (the row's analysis tells them, explain).
func Recommend(ex *check.Explanation, cfg check.Applied, own check.Durations, times *check.Times, speaks bool) *check.Recommendation {
	return recommend(ex, sendersCut{}, cfg, own, times, speaks)
}

// recommend is Recommend with the windows the pods' own end cut known (Censor): lower bounds.
func recommend(ex *check.Explanation, cut sendersCut, cfg check.Applied, own check.Durations, times *check.Times, speaks bool) *check.Recommendation {
	w, path := FromPropagation(ex.Propagation), PathOf(cfg)
	w.Proxy, w.ProxyCut = Censor(ex.Propagation.Proxy, cut.Proxy)
	w.Client, w.ClientCut = Censor(ex.Propagation.Client, cut.Client)
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
	r.Fit, r.Advice = advise(r, rt, ex, cfg, times)
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
