package attribute

import (
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// proxied is a DNS-discovered proxy's row: pod a (10.244.0.5) deleted at 0 with a 5 s preStop,
// its listener closed at 5 s, routed out of the Service at 0.5 s, gone at 6 s; pod b serves.
func proxied() *tl {
	b := &tl{}
	b.del("a", 0, 0.5).add(
		ev(-60, timeline.PodAddress, "a", "10.244.0.5"),
		ev(-60, timeline.PodAddress, "b", "10.244.0.6"),
		ev(5, timeline.AppEvent, "a", "listener_closed"),
		ev(6, timeline.PodGone, "a", ""),
	)
	return b
}

func sentTo(seq uint64, sent, lat float64, c loadgen.Class, code uint16, up string) loadgen.Request {
	q := failed(seq, sent, lat, c)
	q.Code, q.Upstream = code, up
	return q
}

func TestProxyPropagationNamed(t *testing.T) {
	// 20 s after the deletion the proxy still sends to a's address (its DNS answer is cached):
	// far past kube-proxy's window, the proxy's own.
	in := Input{Timeline: proxied().timeline(), Container: "app",
		Requests: []loadgen.Request{sentTo(1, 20, 0.01, loadgen.ProxyClass(502), 502, "10.244.0.5:8080")}, Context: Context{Proxy: true, UpstreamNamed: true}}
	a := one(t, in)
	want(t, a, timeline.PhaseProxyPropagation, "a")
	// Without a proxy in front the same request is not the proxy's: past every window.
	in.Proxy = false
	if a := one(t, in); a.Phase == timeline.PhaseProxyPropagation {
		t.Errorf("without a proxy: %s", a.Phase)
	}
}

func TestProxyPropagationUnnamedWithinLastSent(t *testing.T) {
	// The proxy named a for a request at 9 s (a 502 to its address); a failure at 8 s that names
	// nothing (a timeout) lies within the proxy's window for a.
	in := Input{Timeline: proxied().timeline(), Container: "app",
		Requests: []loadgen.Request{
			failed(1, 8, 2, loadgen.ClassTimeout),
			sentTo(2, 9, 0.01, loadgen.ProxyClass(502), 502, "10.244.0.6:8080, 10.244.0.5:8080"),
		}, Context: Context{Proxy: true, UpstreamNamed: true}}
	res := Attribute(in)
	for _, f := range res.Failed {
		if f.Phase != timeline.PhaseProxyPropagation || f.Pod != "a" {
			t.Errorf("request %d: %s (pod %q: %s), want proxy-propagation of a", f.Seq, f.Phase, f.Pod, f.Why)
		}
	}
	for _, l := range res.Lives {
		if l.Pod == "a" && !l.LastSent.Equal(at(9)) {
			t.Errorf("a's LastSent %v, want %v", l.LastSent, at(9))
		}
	}
}

func TestProxyNoUpstream(t *testing.T) {
	// HAProxy with every server down answers 503 itself and names "-" (or <NOSRV>).
	for _, up := range []string{"", "-", "<NOSRV>"} {
		in := Input{Timeline: proxied().timeline(), Container: "app",
			Requests: []loadgen.Request{sentTo(1, 3, 0.001, loadgen.ProxyClass(503), 503, up)}, Context: Context{Proxy: true, UpstreamNamed: true}}
		want(t, one(t, in), timeline.PhaseProxyNoUpstream, "")
		// A proxy that names no upstream at all says nothing of it: the pod rules decide.
		in.UpstreamNamed = false
		if a := one(t, in); a.Phase == timeline.PhaseProxyNoUpstream {
			t.Errorf("upstream %q without an upstream header: %s", up, a.Phase)
		}
	}
}

func TestProxyAppStillAccepting(t *testing.T) {
	// Sent to a at 2 s, while a is in its preStop and still accepting: not the proxy's stale
	// list; nothing matches a pod that accepts.
	in := Input{Timeline: proxied().timeline(), Container: "app",
		Requests: []loadgen.Request{sentTo(1, 2, 0.01, loadgen.ProxyClass(502), 502, "10.244.0.5:8080")}, Context: Context{Proxy: true, UpstreamNamed: true}}
	if a := one(t, in); a.Phase == timeline.PhaseProxyPropagation {
		t.Errorf("attributed to %s (%s) while a still accepted", a.Phase, a.Why)
	}
}

func TestUpstreamIP(t *testing.T) {
	for in, want := range map[string]string{
		"10.244.0.5:8080":                  "10.244.0.5",
		"10.244.0.6:8080, 10.244.0.5:8080": "10.244.0.5",
		"[fd00::5]:8080":                   "fd00::5",
		"10.244.0.5":                       "10.244.0.5",
	} {
		if got := upstreamIP(in); got != want {
			t.Errorf("upstreamIP(%q) = %q, want %q", in, got, want)
		}
	}
	if isAddress("-") || isAddress("<NOSRV>") || isAddress("") || isAddress("backend_app") || !isAddress("10.0.0.1:80") {
		t.Error("isAddress")
	}
}

// A proxy that sends to pod addresses itself takes kube-proxy out of the path: a failure that
// names no pod, after the last request the proxy sent to the pod, is not propagation
// (kube-proxy's window); nothing tells, and it stays unknown. Through a Service's address (nginx
// kept alive to a ClusterIP) kube-proxy's rules still apply.
func TestProxyDirectNoKubeProxyWindow(t *testing.T) {
	b := &tl{}
	b.del("a", 0, 0.5).add(
		ev(-60, timeline.PodAddress, "a", "10.244.0.5"),
		ev(-60, timeline.PodAddress, "b", "10.244.0.6"),
		ev(0.1, timeline.AppEvent, "a", "listener_closed"),
		ev(6, timeline.PodGone, "a", ""),
	)
	reqs := []loadgen.Request{
		sentTo(1, 0.2, 0.01, loadgen.ProxyClass(502), 502, "10.244.0.5:8080"), // the proxy's last request to a
		failed(2, 1, 2, loadgen.ClassTimeout),                                 // names nothing: kube-proxy's window only
	}
	in := Input{Timeline: b.timeline(), Container: "app", Requests: reqs, Context: Context{Proxy: true, UpstreamNamed: true}}
	if ph := Attribute(in).BySeq[2]; ph != timeline.PhaseUnknown {
		t.Errorf("direct proxy: %s, want unknown", ph)
	}
	in.Proxy = false // the same requests straight through the Service: kube-proxy's window
	if ph := Attribute(in).BySeq[2]; ph != timeline.PhasePropagation {
		t.Errorf("through the Service: %s, want propagation", ph)
	}
}

func TestProxyTimeoutIsNoCut(t *testing.T) {
	// A rollout behind a proxy that names no upstream (Traefik): a exited at 0.3 s, its address
	// gone, and the proxy still sends it requests; c, deleted at 1 s, exits at 1.2 s. A request
	// sent to a's dead address at 0.9 s gets the proxy's own 504 after its 500 ms dial timeout:
	// it spans c's exit, but a proxy's 504 is its own timeout, not a cut (nothing was in flight
	// at c): proxy-propagation, as the proxy still held a (and c).
	b := (&tl{}).del("a", 0, 0.05).del("c", 1, 0.05).add(
		ev(-60, timeline.PodAddress, "a", "10.244.0.5"),
		ev(-60, timeline.PodAddress, "c", "10.244.0.7"),
		ev(0.01, timeline.AppEvent, "a", "listener_closed"),
		exited(0.3, "a", 0, 0.3),
		ev(1.15, timeline.AppEvent, "c", "listener_closed"),
		exited(1.2, "c", 0, 1.2),
		ev(1.5, timeline.PodGone, "a", ""),
		ev(2.5, timeline.PodGone, "c", ""),
	)
	in := Input{Timeline: b.timeline(), Container: "app",
		Requests: []loadgen.Request{sentTo(1, 0.9, 0.5, loadgen.ProxyClass(504), 504, "")}, Context: Context{Proxy: true}}
	if a := one(t, in); a.Phase != timeline.PhaseProxyPropagation {
		t.Errorf("a 504 across c's exit: %s (%s), want proxy-propagation", a.Phase, a.Why)
	}
	// A 502 over the same span may be c's cut: the proxy's answer to a connection c closed.
	in.Requests = []loadgen.Request{sentTo(1, 0.9, 0.5, loadgen.ProxyClass(502), 502, "")}
	want(t, one(t, in), timeline.PhaseInFlightCut, "c")
}
