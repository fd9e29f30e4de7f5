package analyze

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func TestExplainRecommendation(t *testing.T) {
	base := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// Three pods deleted; their endpoints left the slices 100, 200 and 300 ms later. web-1 kept
	// serving through a 5 s preStop and answered its last request 1.2 s after its deletion;
	// web-2 exited at once (no data-plane measure); web-3 answered nothing after it.
	tl := timeline.Timeline{Propagation: []timeline.Propagation{
		{Pod: "web-1", DeletingAt: at(0), ToUnready: 100 * time.Millisecond, ToRemoved: -1},
		{Pod: "web-2", DeletingAt: at(10000), ToUnready: 200 * time.Millisecond, ToRemoved: -1},
		{Pod: "web-3", DeletingAt: at(20000), ToUnready: -1, ToRemoved: 300 * time.Millisecond},
	}, Events: []timeline.Event{
		{Time: at(5000), Kind: timeline.AppEvent, Pod: "web-1", App: &timeline.AppLine{Event: timeline.LineListenerClosed}},
		{Time: at(10002), Kind: timeline.AppEvent, Pod: "web-2", App: &timeline.AppLine{Event: timeline.LineExiting}},
	}}
	reqs := []loadgen.Request{
		{Seq: 1, Timestamp: at(1200), Latency: 30 * time.Millisecond, Class: loadgen.ClassOK, Pod: "web-1"},
		{Seq: 2, Timestamp: at(10001), Latency: 10 * time.Millisecond, Class: loadgen.ClassOK, Pod: "web-2"},
		{Seq: 3, Timestamp: at(10300), Latency: time.Millisecond, Class: loadgen.ClassEOF},
		{Seq: 4, Timestamp: at(15000), Latency: 900 * time.Millisecond, Class: loadgen.ClassOK, Pod: "web-3"},
	}
	attr := attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl})
	kp := &check.Durations{N: 12, P50: 250 * time.Millisecond, P99: 900 * time.Millisecond, Max: time.Second}
	cfg := check.Applied{PreStop: check.PreStop{None: true}, GraceSeconds: 30, Disruption: check.RolloutRestart}
	ex := explain(reqs, nil, tl, attr, KubeProxy{Durations: kp}, cfg, true, nil)
	if ex.Phases[timeline.PhasePropagation] != 1 {
		t.Errorf("phases %v, want the EOF in propagation", ex.Phases)
	}
	p := ex.Propagation
	if p.ControlPlane.N != 3 || p.ControlPlane.P50 != 200*time.Millisecond || p.ControlPlane.Max != 300*time.Millisecond {
		t.Errorf("control plane %+v", p.ControlPlane)
	}
	if p.DataPlane.N != 1 || p.DataPlane.P99 != 1200*time.Millisecond {
		t.Errorf("data plane %+v, want web-1 alone at 1.2 s", p.DataPlane)
	}
	r := ex.Recommendation
	if r == nil {
		t.Fatal("no recommendation")
	}
	// routed = max(1.2 s, 300 ms + 900 ms) = 1.2 s; preStop = ceil(2.2 s) = 3 s;
	// grace = ceil(3 s + request p99 900 ms + 2 s) = 6 s.
	if r.Routed != 1200*time.Millisecond || r.PreStop != 3*time.Second || r.GraceSeconds != 6 || r.RequestP99 != 900*time.Millisecond {
		t.Errorf("recommendation %+v", r)
	}
	if r.Fit != "short" || !strings.Contains(r.Advice, "most failures (1) are propagation: set preStop sleep ≥ 3s") {
		t.Errorf("fit %q advice %q", r.Fit, r.Advice)
	}
	// The textbook row, without pod identity: routed = 300 ms + 900 ms, preStop ceil(2.2 s) =
	// 3 s, grace ceil(3 s + 0 + 2 s) = 5 s; its 5 s and 30 s have headroom.
	cfg.PreStop = check.PreStop{Sleep: 5 * time.Second}
	if r := explain(nil, nil, tl, attribute.Result{}, KubeProxy{Durations: kp}, cfg, false, nil).Recommendation; r == nil || r.Fit != "headroom" || r.PreStop != 3*time.Second || r.GraceSeconds != 5 {
		t.Errorf("textbook row: %+v", r)
	}
	// Keep-alive: pinned connections outlive routing, so there is no data-plane measure and
	// the control plane plus kube-proxy stands in.
	cfg.KeepAlive = true
	if ex := explain(reqs, nil, tl, attr, KubeProxy{Durations: kp}, cfg, true, nil); ex.Propagation.DataPlane.N != 0 ||
		ex.Recommendation == nil || !strings.HasPrefix(ex.Recommendation.RoutedFrom, "control plane p99 300ms + kube-proxy programming p99 900ms") {
		t.Errorf("keep-alive: %+v %+v", ex.Propagation.DataPlane, ex.Recommendation)
	}
	cfg.KeepAlive = false
	// No deletion seen: no recommendation.
	if ex := explain(reqs, nil, timeline.Timeline{}, attribute.Result{}, KubeProxy{Err: "no kube-proxy"}, cfg, true, nil); ex.Recommendation != nil || ex.Propagation.KubeProxyError != "no kube-proxy" {
		t.Errorf("no deletion: %+v", ex)
	}
}

// An app that keeps accepting after SIGTERM by itself (a shutdown delay) is credited with it
// when its lines say so; without lines the advice says what it measured and what it cannot tell.
func TestAdviceCreditsTheAppsOwnDelay(t *testing.T) {
	base := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// Two pods deleted, routed out 400 ms later; each got SIGTERM at once and closed its
	// listener 5 s (web-1) and 4 s (web-2) after it, answering until then.
	var events []timeline.Event
	var props []timeline.Propagation
	var reqs []loadgen.Request
	for i, d := range []int{5000, 4000} {
		pod, t0 := fmt.Sprintf("web-%d", i+1), 10000*i
		props = append(props, timeline.Propagation{Pod: pod, DeletingAt: at(t0), ToUnready: 400 * time.Millisecond, ToRemoved: -1})
		events = append(events,
			timeline.Event{Time: at(t0), Kind: timeline.PodDeleting, Pod: pod},
			timeline.Event{Time: at(t0 + 5), Kind: timeline.AppEvent, Pod: pod, App: &timeline.AppLine{Event: timeline.LineSIGTERM, Fields: map[string]string{"mode": "drain"}}},
			timeline.Event{Time: at(t0 + 5 + d), Kind: timeline.AppEvent, Pod: pod, App: &timeline.AppLine{Event: timeline.LineListenerClosed}})
		reqs = append(reqs, loadgen.Request{Seq: uint64(i), Timestamp: at(t0 + 300), Latency: 5 * time.Millisecond, Class: loadgen.ClassOK, Pod: pod})
	}
	tl := timeline.Timeline{Propagation: props, Events: events}
	attr := attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl})
	cfg := check.Applied{PreStop: check.PreStop{None: true}, OnSIGTERM: "drain+5s", GraceSeconds: 30, Disruption: check.RolloutRestart}
	r := explain(reqs, nil, tl, attr, KubeProxy{}, cfg, true, nil).Recommendation
	if r == nil || r.AppDelay.N != 2 || r.AppDelay.Samples[0] != 4*time.Second {
		t.Fatalf("recommendation %+v, want the app's delays 4 s and 5 s", r)
	}
	if r.Fit != "headroom" || !strings.Contains(r.Advice, "the app itself kept accepting 4s to 5s after SIGTERM (its own lines, 2 pods)") {
		t.Errorf("with lines: fit %q, advice %q", r.Fit, r.Advice)
	}
	// The same app writing no lines: its exits, 5.5 s after deletion, are all there is.
	var quiet []timeline.Event
	for _, e := range events {
		if e.Kind != timeline.AppEvent {
			quiet = append(quiet, e)
		}
	}
	tl.Events = quiet
	attr = attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl})
	times := check.NewTimes([]check.Termination{{Pod: "web-1", Exit: 5500 * time.Millisecond}, {Pod: "web-2", Exit: 4500 * time.Millisecond}}, nil)
	r = explain(reqs, nil, tl, attr, KubeProxy{}, cfg, true, times).Recommendation
	if r == nil || r.AppDelay.N != 0 || r.Fit != "short" || !strings.Contains(r.Advice, "rollcheck cannot tell that from a slow drain") {
		t.Errorf("without lines: %+v", r)
	}
}

// Unheard counts only a pod SIGKILLed at the grace period's end that never said it got SIGTERM
// (TestPID1Note: what the note then says).
func TestUnheard(t *testing.T) {
	base := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	cfg := check.Applied{GraceSeconds: 10}
	lives := []attribute.Life{
		{Pod: "deaf", Deleting: base, End: attribute.End{Exit: attribute.ExitKilled, ExitFrom: base.Add(10 * time.Second), ExitBy: base.Add(10500 * time.Millisecond)}},
		{Pod: "heard", Deleting: base, End: attribute.End{SIGTERM: base.Add(2 * time.Second), Exit: attribute.ExitKilled, ExitBy: base.Add(10 * time.Second)}},
		{Pod: "early", Deleting: base, End: attribute.End{Exit: attribute.ExitKilled, ExitBy: base.Add(3 * time.Second)}},
	}
	if n := unheard(lives, cfg); n != 1 {
		t.Errorf("unheard = %d, want 1 (deaf)", n)
	}
}

func TestDNSWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	answers := []loadgen.DNSAnswer{
		{Time: ms(-5000), Addrs: []string{"10.244.0.5", "10.244.0.6"}, TTL: 30},
		{Time: ms(750), Addrs: []string{"10.244.0.6"}, TTL: 30},
		{Time: ms(4000), Addrs: []string{"10.244.0.6", "10.244.0.9"}, TTL: 5},
	}
	lives := []attribute.Life{
		{Pod: "a", IP: "10.244.0.5", Deleting: t0},
		{Pod: "b", IP: "10.244.0.6"},               // not deleted
		{Pod: "c", IP: "10.244.0.7", Deleting: t0}, // never in the answers: nothing to measure
	}
	w, ttl := dnsWindow(answers, lives)
	if w.N != 1 || w.Max != 750*time.Millisecond || ttl != 30 {
		t.Fatalf("window %+v ttl %d: want one pod, 750ms, TTL 30", w, ttl)
	}
}

// A round_robin client's window for a pod it sent to is its last RPC to the pod's address, or,
// if it later held no live address at all (stale-address with no peer), that last such RPC:
// only for pods deleted before it.
func TestClientWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	lives := []attribute.Life{
		{Pod: "a", Deleting: at(0), LastSent: at(5), Gone: at(6)},
		{Pod: "b", Deleting: at(1), LastSent: at(5.5), Gone: at(7)},
		{Pod: "late", Deleting: at(25), LastSent: at(30), Gone: at(31)},
		{Pod: "never-sent", Deleting: at(0)},
	}
	reqs := []loadgen.Request{
		{Seq: 1, Timestamp: at(10), Class: loadgen.GRPCClass(14)},
		{Seq: 2, Timestamp: at(20), Class: loadgen.GRPCClass(14)},
		{Seq: 3, Timestamp: at(22), Class: loadgen.GRPCClass(14), Peer: "10.244.0.5:8080"}, // had an address: not "none"
		{Seq: 4, Timestamp: at(23), Class: loadgen.GRPCClass(14)},                          // another phase
	}
	attr := attribute.Result{Lives: lives, Failed: []attribute.Attribution{
		{Seq: 1, Phase: timeline.PhaseStaleAddress}, {Seq: 2, Phase: timeline.PhaseStaleAddress},
		{Seq: 3, Phase: timeline.PhaseStaleAddress, Pod: "a"}, {Seq: 4, Phase: timeline.PhaseInFlightCut},
	}}
	w, cut, stale, none := clientWindow(attr, reqs, 0)
	want := []time.Duration{20 * time.Second, 19 * time.Second, 5 * time.Second}
	if !slices.Equal(w, want) || none != 2 || stale != 0 || len(cut) != 0 {
		t.Errorf("clientWindow = %v, stale %d, extended %d; want %v, 0, 2", w, stale, none, want)
	}
	attr.Failed = attr.Failed[2:]
	if w, _, _, none := clientWindow(attr, reqs, 0); none != 0 || w[0] != 5*time.Second {
		t.Errorf("with no RPC that found no address: %v, extended %d; want the last RPCs alone", w, none)
	}
}

// Only a native sleep holds SIGTERM back for sure, cut at the grace period, and not when the
// deletion is forced (no hook runs) or a kubelet restart may cut the hook.
func TestHeldFor(t *testing.T) {
	sleep := func(s int) check.PreStop { return check.PreStop{Sleep: time.Duration(s) * time.Second} }
	for _, c := range []struct {
		cfg  check.Applied
		want time.Duration
	}{
		{check.Applied{PreStop: sleep(5), GraceSeconds: 30, Disruption: check.RolloutRestart}, 5 * time.Second},
		{check.Applied{PreStop: sleep(10), GraceSeconds: 4, Disruption: check.DeletePod}, 4 * time.Second},
		{check.Applied{PreStop: sleep(5), GraceSeconds: 30, Disruption: check.ForceDelete}, 0},
		{check.Applied{PreStop: sleep(5), GraceSeconds: 30, Disruption: check.KubeletRestart}, 0},
		{check.Applied{PreStop: check.PreStop{Exec: []string{"sleep", "5"}}, GraceSeconds: 30, Disruption: check.RolloutRestart}, 0},
		{check.Applied{PreStop: check.PreStop{None: true}, GraceSeconds: 30, Disruption: check.DrainNode}, 0},
	} {
		if got := heldFor(c.cfg); got != c.want {
			t.Errorf("%+v: held %s, want %s", c.cfg, got, c.want)
		}
	}
}

// The recommendation comes from the path the requests took: kube-proxy's window only through a
// ClusterIP or NodePort; through a proxy that names its upstream, its measured window; through
// one that finds the pods by DNS and names none, the DNS window plus the proxy's own refresh
// (its TTL when not known), never kube-proxy's programming window.
func TestRecommendationByPath(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	d := func(p99 time.Duration) check.Durations {
		return check.Durations{N: 3, P50: p99 / 2, P99: p99, Max: p99}
	}
	kp := &check.Durations{N: 40, P50: time.Second, P99: ms(5550), Max: 6 * time.Second}
	cp, dns := d(ms(80)), d(ms(370))
	direct := check.Applied{PreStop: check.PreStop{Sleep: 5 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart}
	through := direct
	through.LoadURL, through.LoadFrom = "http://front/", check.LoadFromCluster
	named := through
	named.UpstreamHeader = "X-Upstream"
	byDNS := func(c check.Applied, every time.Duration, words string) check.Applied {
		c.Resolve, c.ResolveRefresh, c.ResolveSetting = "web-headless", every, words
		return c
	}
	for _, tc := range []struct {
		name        string
		cfg         check.Applied
		p           check.PropagationSummary
		routed      time.Duration
		from        string // RoutedFrom's beginning
		preStop     time.Duration
		fit         string
		noKubeProxy bool
	}{
		{name: "the load Service: kube-proxy's window", cfg: direct, p: check.PropagationSummary{ControlPlane: cp, KubeProxy: kp},
			routed: ms(5630), from: "control plane p99 80ms + kube-proxy programming p99 5.55s", preStop: 7 * time.Second, fit: "short"},
		{name: "a proxy to a ClusterIP, no window measured: kube-proxy's", cfg: named, p: check.PropagationSummary{ControlPlane: cp, KubeProxy: kp},
			routed: ms(5630), from: "control plane p99 80ms + kube-proxy programming p99 5.55s", preStop: 7 * time.Second, fit: "short"},
		{name: "a proxy that names no upstream nor resolves (an ingress controller): its window from the answers", cfg: through,
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, Proxy: d(ms(1900))},
			routed: ms(1900), from: "the proxy's window p99 1.9s (deletion → its last request to the pod)", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, upstream named: the measured proxy window first", cfg: byDNS(named, time.Second, "nginx resolver valid=1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, Proxy: d(ms(1800)), DNS: dns, DNSTTL: 30},
			routed: ms(1800), from: "the proxy's window p99 1.8s (deletion → its last request to the pod)", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, upstream named but no window measured: the DNS bound", cfg: byDNS(named, time.Second, "HAProxy timeout resolve 1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, DNS: dns, DNSTTL: 30},
			routed: ms(1370), from: "DNS window p99 370ms + HAProxy timeout resolve 1s", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, no upstream, refresh known", cfg: byDNS(through, time.Second, "nginx resolver valid=1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, DNS: dns, DNSTTL: 30},
			routed: ms(1370), from: "DNS window p99 370ms + nginx resolver valid=1s", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, no upstream, refresh known without words", cfg: byDNS(through, 2*time.Second, ""),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, DNS: dns, DNSTTL: 30},
			routed: ms(2370), from: "DNS window p99 370ms + the proxy's refresh 2s", preStop: 4 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, no upstream, a short window from the answers: the DNS bound", cfg: byDNS(through, time.Second, "nginx resolver valid=1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, Proxy: d(ms(600)), DNS: dns, DNSTTL: 30},
			routed: ms(1370), from: "DNS window p99 370ms + nginx resolver valid=1s", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "DNS, no upstream, the answers' window past the bound: it wins", cfg: byDNS(through, time.Second, "nginx resolver valid=1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, Proxy: d(ms(4200)), DNS: dns, DNSTTL: 30},
			routed: ms(4200), from: "the proxy's window p99 4.2s (deletion → its last request to the pod), longer than 1.37s (DNS window p99 370ms + nginx resolver valid=1s)",
			preStop: 6 * time.Second, fit: "short", noKubeProxy: true},
		{name: "DNS, no upstream, refresh not known: the TTL, said", cfg: byDNS(through, 0, ""),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, DNS: dns, DNSTTL: 30},
			routed: ms(30370), from: "DNS window p99 370ms + DNS TTL 30s (the proxy's own re-resolve interval is not known: the TTL bounds it", preStop: 32 * time.Second, fit: "short", noKubeProxy: true},
		{name: "DNS not measured: the control plane stands in", cfg: byDNS(through, time.Second, "nginx resolver valid=1s"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp},
			routed: ms(1080), from: "control plane p99 80ms (no DNS window measured: the cluster's DNS answers from the EndpointSlices) + nginx resolver valid=1s", preStop: 3 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "neither the refresh nor the TTL known", cfg: byDNS(through, 0, ""), p: check.PropagationSummary{ControlPlane: cp, KubeProxy: kp},
			routed: ms(80), from: "control plane p99 80ms (no DNS window measured: the cluster's DNS answers from the EndpointSlices) (the proxy's own re-resolve interval is not known, nor the DNS TTL: not counted)",
			preStop: 2 * time.Second, fit: "headroom", noKubeProxy: true},
		{name: "resolved once: no preStop outlasts it, said", cfg: byDNS(through, check.ResolveOnce, "nginx's static upstream, resolved once at its start"),
			p:      check.PropagationSummary{ControlPlane: cp, KubeProxy: kp, DNS: dns, DNSTTL: 30},
			routed: ms(370), from: "DNS window p99 370ms, but the proxy never resolves again (nginx's static upstream, resolved once at its start): after a rollout every address it holds is gone, and no preStop outlasts that",
			preStop: 2 * time.Second, fit: "headroom", noKubeProxy: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &check.Explanation{Propagation: tc.p, RequestP99: ms(50)}
			r := Recommend(ex, tc.cfg, check.Durations{}, nil, true)
			if r == nil {
				t.Fatal("no recommendation")
			}
			if r.Routed != tc.routed || !strings.HasPrefix(r.RoutedFrom, tc.from) || r.PreStop != tc.preStop || r.Fit != tc.fit {
				t.Errorf("routed %s (%s), preStop %s, fit %q\nwant %s (%s…), %s, %q", r.Routed, r.RoutedFrom, r.PreStop, r.Fit, tc.routed, tc.from, tc.preStop, tc.fit)
			}
			if r.TTLStoodIn != strings.Contains(tc.from, "+ DNS TTL") {
				t.Errorf("TTLStoodIn %t, RoutedFrom %q", r.TTLStoodIn, r.RoutedFrom)
			}
			if tc.noKubeProxy && strings.Contains(r.RoutedFrom, "kube-proxy") {
				t.Errorf("RoutedFrom %q: a path that does not cross kube-proxy", r.RoutedFrom)
			}
		})
	}
}

// The DNS window is measured before the recommendation, which bounds a DNS proxy's path by it.
func TestExplainBoundsADNSProxyByItsDNSWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tl := timeline.Timeline{Propagation: []timeline.Propagation{
		{Pod: "a", DeletingAt: at(0), ToUnready: 80 * time.Millisecond, ToRemoved: -1},
	}}
	answers := []loadgen.DNSAnswer{
		{Time: at(-5000), Addrs: []string{"10.244.0.5", "10.244.0.6"}, TTL: 30},
		{Time: at(250), Addrs: []string{"10.244.0.6"}, TTL: 30},
	}
	attr := attribute.Result{Lives: []attribute.Life{{Pod: "a", IP: "10.244.0.5", Deleting: at(0)}}}
	kp := &check.Durations{N: 40, P99: 5550 * time.Millisecond}
	cfg := check.Applied{PreStop: check.PreStop{Sleep: 5 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart,
		LoadURL: "http://front/", Resolve: "web-headless", ResolveRefresh: time.Second, ResolveSetting: "nginx resolver valid=1s"}
	ex := explain(nil, answers, tl, attr, KubeProxy{Durations: kp}, cfg, false, nil)
	if ex.Propagation.DNS.N != 1 || ex.Propagation.DNSTTL != 30 {
		t.Fatalf("DNS window %+v TTL %d", ex.Propagation.DNS, ex.Propagation.DNSTTL)
	}
	if r := ex.Recommendation; r == nil || r.RoutedFrom != "DNS window p99 250ms + nginx resolver valid=1s" || r.PreStop != 3*time.Second || r.Fit != "headroom" {
		t.Errorf("recommendation %+v", r)
	}
}

// A name the load pods ask the cluster's DNS for with no proxy in front (check.Load.Resolve
// without a URL: rollcheck windows measure's headless Service) is measured only: the row carries
// its DNS window, and its recommendation and verdict are those of the same row without it,
// even when the DNS window is far longer than the data plane's.
func TestResolveWithoutAProxyIsMeasuredOnly(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tl := timeline.Timeline{Started: at(0), Ended: at(20000),
		Propagation: []timeline.Propagation{{Pod: "web-1", DeletingAt: at(5000), ToUnready: 90 * time.Millisecond, ToRemoved: -1}},
		Events: []timeline.Event{
			{Time: at(100), Kind: timeline.PodAddress, Pod: "web-1", Address: "10.244.1.5"},
			{Time: at(100), Kind: timeline.PodAddress, Pod: "web-2", Address: "10.244.1.6"},
			{Time: at(5000), Kind: timeline.PodDeleting, Pod: "web-1"},
			{Time: at(19000), Kind: timeline.PodGone, Pod: "web-1"}, // it kept accepting until then
		}}
	res := &loadgen.Result{Started: at(0), Ended: at(20000), EndReason: loadgen.EndStopped, Valid: true, AchievedRate: 10,
		DNS: []loadgen.DNSAnswer{
			{Time: at(1000), Addrs: []string{"10.244.1.5", "10.244.1.6"}, TTL: 30},
			{Time: at(9000), Addrs: []string{"10.244.1.6"}, TTL: 30}, // 4 s after the deletion
		}}
	for i := range 200 {
		pod := []string{"web-1", "web-2"}[i%2]
		if i > 52 && pod == "web-1" {
			pod = "web-2" // web-1's last answer 5.2 s in: a data plane of 200 ms
		}
		res.Requests = append(res.Requests, loadgen.Request{Seq: uint64(i), Timestamp: at(i * 100), Latency: 5 * time.Millisecond, Class: loadgen.ClassOK, Pod: pod})
	}
	res.Totals = loadgen.Totals{Requests: 200, OK: 200}
	plain := check.Applied{Name: "windows-1-node", PreStop: check.PreStop{None: true}, GraceSeconds: 30, Replicas: 3,
		Disruption: check.DeletePod, Count: 1, LoadFrom: check.LoadFromCluster, Expect: check.Zero()}
	resolving := plain
	resolving.Resolve = "app-headless"
	rowOf := func(cfg check.Applied) (Result, check.Verdict) {
		in := Input{Config: cfg, Load: res, Timeline: tl,
			Disruptions: []check.DisruptionResult{{Kind: check.DeletePod, N: 1, Pod: "web-1", Started: at(5000), Settled: at(8000)}}}
		r := Row(in)
		return r, Verdict(cfg, r)
	}
	without, vWithout := rowOf(plain)
	with, vWith := rowOf(resolving)
	if d := with.Explanation.Propagation.DNS; d.N != 1 || d.P99 != 4*time.Second || with.Explanation.Propagation.DNSTTL != 30 {
		t.Fatalf("DNS window %+v TTL %d: want the deleted pod's 4 s, TTL 30", d, with.Explanation.Propagation.DNSTTL)
	}
	rw, rwo := with.Explanation.Recommendation, without.Explanation.Recommendation
	if rw == nil || rwo == nil || !reflect.DeepEqual(*rw, *rwo) || !strings.HasPrefix(rw.RoutedFrom, "data plane p99 200ms") {
		t.Errorf("recommendation with resolve %+v\nwithout %+v\nwant the same, from the data plane", rw, rwo)
	}
	if !reflect.DeepEqual(vWith, vWithout) || vWith.Status != check.Pass {
		t.Errorf("verdict with resolve %+v, without %+v: want the same pass", vWith, vWithout)
	}
	// A row whose only window is the DNS one gets no recommendation, as without it.
	ex := &check.Explanation{Propagation: check.PropagationSummary{DNS: with.Explanation.Propagation.DNS, DNSTTL: 30}}
	if r := Recommend(ex, resolving, check.Durations{}, nil, true); r != nil {
		t.Errorf("only a DNS window no request's path crosses: %+v, want none", r)
	}
	// Through a proxy that resolves the name, the same window is the route.
	through := resolving
	through.LoadURL = "http://front/"
	if r := Recommend(with.Explanation, through, check.Durations{}, nil, true); r == nil || !strings.HasPrefix(r.RoutedFrom, "DNS window p99 4s + DNS TTL 30s") {
		t.Errorf("through a resolving proxy: %+v, want the DNS window + TTL", r)
	}
}

// censoredRow is a round_robin row over a headless Service, as agnhost's gRPC health server
// gives it: no lifecycle lines, no pod header (each RPC names only its peer address), exits
// from container statuses. Three old pods deleted 0, 1 and 2 s in, each with a native preStop
// sleep of pre; last[i] is when, after its deletion, the client sent its last RPC to old pod i,
// which answered every RPC until then. From failFrom after the first deletion until noneUntil
// the client held no live address (no peer, UNAVAILABLE) while the new pods were ready.
func censoredRow(pre time.Duration, last []time.Duration, failFrom, noneUntil time.Duration) ([]loadgen.Request, timeline.Timeline, attribute.Result, check.Applied) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	start := t0.Add(-5 * time.Second)
	tl := timeline.Timeline{Started: start, Ended: t0.Add(60 * time.Second)}
	var reqs []loadgen.Request
	seq := uint64(0)
	rpc := func(at time.Time, peer string, class loadgen.Class) {
		seq++
		reqs = append(reqs, loadgen.Request{Seq: seq, Timestamp: at, Latency: 2 * time.Millisecond, Class: class, Peer: peer})
	}
	code0 := int32(0)
	for i, l := range last {
		old, nw := fmt.Sprintf("old-%d", i), fmt.Sprintf("new-%d", i)
		oldIP, newIP := fmt.Sprintf("10.244.0.%d", 10+i), fmt.Sprintf("10.244.0.%d", 20+i)
		del := t0.Add(time.Duration(i) * time.Second)
		exit := del.Add(pre + 40*time.Millisecond)
		tl.Propagation = append(tl.Propagation, timeline.Propagation{Pod: old, DeletingAt: del, ToUnready: 50 * time.Millisecond, ToRemoved: -1})
		tl.Events = append(tl.Events,
			timeline.Event{Time: start, Kind: timeline.PodAddress, Pod: old, Address: oldIP},
			timeline.Event{Time: del.Add(-3 * time.Second), Kind: timeline.PodCreated, Pod: nw},
			timeline.Event{Time: del.Add(-3 * time.Second), Kind: timeline.PodAddress, Pod: nw, Address: newIP},
			timeline.Event{Time: del.Add(-time.Second), Kind: timeline.EndpointReady, Pod: nw},
			timeline.Event{Time: del, Kind: timeline.PodDeleting, Pod: old},
			timeline.Event{Time: exit.Add(300 * time.Millisecond), Kind: timeline.ContainerExited, Pod: old, ExitCode: &code0, Reported: exit.Truncate(time.Second)},
			timeline.Event{Time: exit.Add(time.Second), Kind: timeline.PodGone, Pod: old},
		)
		for at := start.Add(time.Duration(i) * 10 * time.Millisecond); !at.After(del.Add(l)); at = at.Add(100 * time.Millisecond) {
			rpc(at, oldIP+":8080", loadgen.ClassOK)
		}
		if at := del.Add(l); !reqs[len(reqs)-1].Timestamp.Equal(at) {
			rpc(at, oldIP+":8080", loadgen.ClassOK)
		}
	}
	for at := t0.Add(failFrom); at.Before(t0.Add(noneUntil)); at = at.Add(100 * time.Millisecond) {
		rpc(at, "", loadgen.GRPCClass(14))
	}
	slices.SortFunc(reqs, func(a, b loadgen.Request) int { return a.Timestamp.Compare(b.Timestamp) })
	cfg := check.Applied{Protocol: loadgen.ProtocolGRPC, GRPC: &check.GRPCLoad{Balancing: loadgen.BalancingRoundRobin},
		PreStop: check.PreStop{Sleep: pre}, GraceSeconds: 50, Disruption: check.RolloutRestart}
	attr := attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl, HeldFor: heldFor(cfg), Context: attribute.Context{Balanced: true}})
	return reqs, tl, attr, cfg
}

// A window that the pod's own serving life ends is censored: a lower bound, not the routing
// window. The client's last RPC to a pod that answered until it exited (at or after its
// preStop's end) says only that the client would have gone on using it: a row that passed with
// it is not called short on its strength, and its recommendation comes from the windows the
// client ended itself, or, with none, says it cannot judge the row's preStop. A row whose client
// held no live address after the pods stopped keeps the recommendation of that window.
func TestCensoredClientWindow(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	kp := &check.Durations{N: 40, P99: 3290 * time.Millisecond}
	for _, c := range []struct {
		name              string
		pre               time.Duration
		last              []time.Duration
		failFrom, failTo  time.Duration
		stale             int // stale-address failures
		client, cut       int // windows: all, censored
		routed            time.Duration
		preStop           time.Duration
		fit               string
		from, advice, not []string
	}{
		{name: "35 s preStop, every pod used until it exited: only a lower bound", pre: s(35), last: []time.Duration{s(35.039), s(35.02), s(35)},
			client: 3, cut: 3, routed: s(35.039), preStop: s(37), fit: "",
			from:   []string{"the client's window ≥ 35.039s for 3 pod(s) (deletion → its last RPC to the pod's address): the pod answered until it exited, so this is a lower bound of the client's window; nothing this row measured bounds it"},
			advice: []string{"The client's window ≥ 35.039s (3 pod(s)): the pod answered until it exited, so this is a lower bound of the client's window", "do not judge the row's own preStop (35s, grace 50s)"},
			not:    []string{"leaves no margin", "vs 37s recommended"}},
		{name: "35 s preStop, two pods left before they stopped: the bound is theirs", pre: s(35), last: []time.Duration{s(22.233), s(33.094), s(35.112)},
			client: 3, cut: 1, routed: s(33.094), preStop: s(35), fit: "headroom",
			from:   []string{"the client's window p99 33.094s (deletion → its last RPC to the pod's address); ≥ 35.112s for 1 pod(s): the pod answered until it exited, so this is a lower bound of the client's window, not counted"},
			advice: []string{"preStop 35s vs 35s recommended, grace 50s vs 38s", "for 1 pod(s) the client's window is ≥ 35.112s: the pod answered until it exited, so this is a lower bound"},
			not:    []string{"leaves no margin"}},
		{name: "5 s preStop, then no live address until the client resolved again: the failing window stands", pre: s(5), last: []time.Duration{s(5), s(4.99), s(5)},
			failFrom: s(7.1), failTo: s(24.95), stale: 179,
			client: 3, cut: 0, routed: s(24.9), preStop: s(26), fit: "short",
			from:   []string{"the client's window p99 24.9s (deletion → its last RPC to the pod's address, or, for 3 pod(s), to its last RPC that found no live address"},
			advice: []string{"preStop 5s vs 26s recommended", "most failures (179) went to pod addresses the client still held", "preStop sleep ≥ 26s"},
			not:    []string{"lower bound"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reqs, tl, attr, cfg := censoredRow(c.pre, c.last, c.failFrom, c.failTo)
			if got := attr.Counts[timeline.PhaseStaleAddress]; got != c.stale || len(attr.Failed) != c.stale {
				t.Fatalf("failures %v, want %d stale-address", attr.Counts, c.stale)
			}
			ex := explain(reqs, nil, tl, attr, KubeProxy{Durations: kp}, cfg, false, nil)
			_, cut, _, _ := clientWindow(attr, reqs, heldFor(cfg))
			if ex.Propagation.Client.N != c.client || len(cut) != c.cut {
				t.Errorf("client window %+v, %d censored (%v); want %d, %d", ex.Propagation.Client, len(cut), cut, c.client, c.cut)
			}
			r := ex.Recommendation
			if r == nil {
				t.Fatal("no recommendation")
			}
			if r.Routed != c.routed || r.PreStop != c.preStop || r.Fit != c.fit {
				t.Errorf("routed %s, preStop %s, fit %q; want %s, %s, %q", r.Routed, r.PreStop, r.Fit, c.routed, c.preStop, c.fit)
			}
			for _, w := range c.from {
				if !strings.Contains(r.RoutedFrom, w) {
					t.Errorf("routed from %q\nwant it to say %q", r.RoutedFrom, w)
				}
			}
			for _, w := range c.advice {
				if !strings.Contains(r.Advice, w) {
					t.Errorf("advice %q\nwant it to say %q", r.Advice, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(r.Advice, w) || r.Fit == w {
					t.Errorf("advice %q (fit %q) says %q", r.Advice, r.Fit, w)
				}
			}
		})
	}
}

// The same rule through a proxy in front: its window from its last request to a pod (named by
// its upstream header, no pod header) that answered until its preStop ended is a lower bound,
// not counted; the pod it left while it still served bounds the window. Without the upstream
// named, a proxy that finds the pods by DNS has its window from the pods' answers: one cut by
// the pod's end no longer outweighs the DNS bound.
func TestCensoredProxyWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(f float64) time.Time { return t0.Add(time.Duration(math.Round(f*1000)) * time.Millisecond) }
	code0 := int32(0)
	tl := timeline.Timeline{Started: at(-5), Ended: at(40)}
	var reqs []loadgen.Request
	// a: the proxy sent to it until 10.02 s after its deletion, past its 10 s preStop's end;
	// b: the proxy left it 1.2 s after its deletion, while it still served.
	for i, c := range []struct {
		pod, ip string
		last    float64
	}{{"a", "10.244.0.5", 10.02}, {"b", "10.244.0.6", 1.2}} {
		del := float64(i * 15)
		tl.Propagation = append(tl.Propagation, timeline.Propagation{Pod: c.pod, DeletingAt: at(del), ToUnready: 50 * time.Millisecond, ToRemoved: -1})
		tl.Events = append(tl.Events,
			timeline.Event{Time: at(-5), Kind: timeline.PodAddress, Pod: c.pod, Address: c.ip},
			timeline.Event{Time: at(del), Kind: timeline.PodDeleting, Pod: c.pod},
			timeline.Event{Time: at(del + 10.5), Kind: timeline.ContainerExited, Pod: c.pod, ExitCode: &code0, Reported: at(del + 10)},
			timeline.Event{Time: at(del + 11), Kind: timeline.PodGone, Pod: c.pod})
		for f := -4.0; f < c.last; f += 0.5 {
			reqs = append(reqs, loadgen.Request{Timestamp: at(del + f), Latency: time.Millisecond, Class: loadgen.ClassOK, Upstream: c.ip + ":8080"})
		}
		reqs = append(reqs, loadgen.Request{Timestamp: at(del + c.last), Latency: time.Millisecond, Class: loadgen.ClassOK, Upstream: c.ip + ":8080"})
	}
	slices.SortFunc(reqs, func(a, b loadgen.Request) int { return a.Timestamp.Compare(b.Timestamp) })
	for i := range reqs {
		reqs[i].Seq = uint64(i + 1)
	}
	cfg := check.Applied{PreStop: check.PreStop{Sleep: 10 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart,
		LoadURL: "http://front/", LoadFrom: check.LoadFromCluster, UpstreamHeader: "X-Upstream"}
	attr := attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl, HeldFor: heldFor(cfg), Context: attribute.Context{Proxy: true, UpstreamNamed: true}})
	kp := KubeProxy{Durations: &check.Durations{N: 40, P99: 3 * time.Second}}
	ex := explain(reqs, nil, tl, attr, kp, cfg, false, nil)
	if p := ex.Propagation.Proxy; p.N != 2 || p.P99 != 10020*time.Millisecond {
		t.Fatalf("proxy window %+v: want both pods, up to 10.02 s", p)
	}
	r := ex.Recommendation
	if r == nil || r.Routed != 1200*time.Millisecond || r.PreStop != 3*time.Second || r.Fit != "headroom" ||
		!strings.HasPrefix(r.RoutedFrom, "the proxy's window p99 1.2s (deletion → its last request to the pod); ≥ 10.02s for 1 pod(s): the pod answered until it exited, so this is a lower bound of the proxy's window, not counted") ||
		!strings.Contains(r.Advice, "for 1 pod(s) the proxy's window is ≥ 10.02s") {
		t.Errorf("upstream named: %+v\nwant 1.2 s from pod b, pod a's 10.02 s said as a lower bound, headroom", r)
	}

	// Through a proxy that resolves the name, without the upstream named: pod a's last answer,
	// at its preStop's end, is cut; the DNS window + the refresh bound the path.
	dns := cfg
	dns.UpstreamHeader, dns.Resolve, dns.ResolveRefresh, dns.ResolveSetting = "", "web-headless", time.Second, "nginx resolver valid=1s"
	answers := []loadgen.DNSAnswer{
		{Time: at(-5), Addrs: []string{"10.244.0.5", "10.244.0.6"}, TTL: 30},
		{Time: at(0.4), Addrs: []string{"10.244.0.6"}, TTL: 30},
		{Time: at(15.4), Addrs: []string{"10.244.0.7"}, TTL: 30},
	}
	for i := range reqs {
		if reqs[i].Upstream == "10.244.0.5:8080" {
			reqs[i].Pod = "a" // the pod header: the proxy names no upstream
		} else {
			reqs[i].Pod = "b"
		}
		reqs[i].Upstream = ""
	}
	attr = attribute.Attribute(attribute.Input{Requests: reqs, Timeline: tl, HeldFor: heldFor(dns), Context: attribute.Context{Proxy: true}})
	ex = explain(reqs, answers, tl, attr, kp, dns, true, nil)
	if r := ex.Recommendation; r == nil || r.Routed != 1400*time.Millisecond || r.Fit != "headroom" ||
		!strings.HasPrefix(r.RoutedFrom, "DNS window p99 400ms + nginx resolver valid=1s; ≥ 10.02s for 1 pod(s): the pod answered until it exited, so this is a lower bound of the proxy's window, not counted") {
		t.Errorf("DNS proxy: %+v\nwant the DNS bound 1.4 s, pod a's 10.02 s said as a lower bound (not 'longer than': it does not win)", r)
	}
}
