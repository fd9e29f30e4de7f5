package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// The formula's arithmetic: preStop = routed + 1 s rounded up; grace = preStop + p99 + 2 s
// rounded up; Fit compares both.
func TestSettingsAndFit(t *testing.T) {
	pre, grace := Settings(1200*time.Millisecond, 900*time.Millisecond)
	if pre != 3*time.Second || grace != 6 {
		t.Errorf("Settings(1.2s, 900ms) = %s, %d; want 3s, 6 (ceil 2.2 s; ceil 5.9 s)", pre, grace)
	}
	for _, c := range []struct {
		pre   time.Duration
		known bool
		own   time.Duration
		grace int64
		want  string
	}{
		{5 * time.Second, true, 0, 30, "headroom"},
		{2 * time.Second, true, 0, 30, "short"},
		{2 * time.Second, true, time.Second, 30, "headroom"}, // the app's own delay counts
		{5 * time.Second, true, 0, 5, "short"},
		{0, false, 0, 30, ""},
	} {
		if got := Fit(c.pre, c.known, c.own, c.grace, pre, grace); got != c.want {
			t.Errorf("Fit(%s, %t, %s, %d) = %q, want %q", c.pre, c.known, c.own, c.grace, got, c.want)
		}
	}
	if (Windows{KubeProxy: Window{N: 3, P99: time.Second}}).Measured() {
		t.Error("kube-proxy's programming alone is no routed window")
	}
}

// The rule as check.Recommendation documents it, on kind's routed time of the README's
// example rows (3.937 s, request p99 145 ms: ≥ 5 s, ≥ 8 s), and on the routed time rollcheck
// init assumes.
func TestSettingsRule(t *testing.T) {
	pre, grace := Settings(3937*time.Millisecond, 145*time.Millisecond)
	if pre != 5*time.Second || grace != 8 {
		t.Errorf("Settings(3.937s, 145ms) = %s, %d; want 5s, 8", pre, grace)
	}
	if pre, _ := Settings(AssumedKindRouted, 0); pre != 5*time.Second {
		t.Errorf("Settings(AssumedKindRouted) = %s, want 5s", pre)
	}
	if pre, _ := Settings(3*time.Second, 0); pre != 4*time.Second {
		t.Errorf("Settings(3s) = %s, want 4s (a whole second is not rounded up again)", pre)
	}
	if g := Grace(5*time.Second, 2*time.Second); g != 9 {
		t.Errorf("Grace(5s, 2s) = %d, want 9", g)
	}
}

// PathOf says the requests rode a pinned connection (check.Applied's PinsConnections) when the
// load kept its connections (keep-alive, whatever the protocol) or spoke gRPC through one
// channel that does not balance itself (pick_first, the default), and not when each request
// was routed afresh or a gRPC client balanced over the pods' addresses itself.
func TestPathPinned(t *testing.T) {
	grpc := func(b loadgen.Balancing) check.Applied {
		return check.Applied{Protocol: loadgen.ProtocolGRPC, GRPC: &check.GRPCLoad{Balancing: b}}
	}
	for _, c := range []struct {
		name string
		cfg  check.Applied
		want bool
	}{
		{"HTTP/1.1, keep-alive off: a connection per request", check.Applied{}, false},
		{"HTTP/1.1 keep-alive", check.Applied{KeepAlive: true}, true},
		{"h2c on kept-alive connections", check.Applied{Protocol: loadgen.ProtocolH2C, KeepAlive: true}, true},
		{"HTTP/2 over TLS, keep-alive off", check.Applied{Protocol: loadgen.ProtocolHTTP2}, false},
		{"gRPC without settings: pick_first", check.Applied{Protocol: loadgen.ProtocolGRPC}, true},
		{"gRPC, balancing left empty: pick_first", grpc(""), true},
		{"gRPC pick_first", grpc(loadgen.BalancingPickFirst), true},
		{"gRPC round_robin: the client balances itself", grpc(loadgen.BalancingRoundRobin), false},
		{"through a proxy, keep-alive off", check.Applied{LoadURL: "http://front/"}, false},
	} {
		if got := PathOf(c.cfg).Pinned; got != c.want || c.cfg.PinsConnections() != c.want {
			t.Errorf("%s: PathOf(…).Pinned %t, PinsConnections %t; want %t", c.name, got, c.cfg.PinsConnections(), c.want)
		}
	}
}

// Over a pinned connection the pod answers until it closes the connection itself (GOAWAY after
// its preStop): the data plane measures the preStop, not routing. Route counts the control
// plane + kube-proxy's programming instead, as with no data plane, and says why; a load routed
// afresh still counts the data plane. The numbers are those of the gRPC pick_first row found on
// kind (preStop 5s, no failure) that was told "≥ 7s · ≥ 11s" from its own preStop.
func TestRoutePinnedConnection(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	w := Windows{ControlPlane: Window{N: 3, P99: ms(130)}, KubeProxy: Window{N: 40, P99: ms(2911)}, DataPlane: Window{N: 3, P99: ms(5177)}}

	fresh := Route(w, Path{})
	if fresh.Window != ms(5177) || fresh.From != "data plane p99 5.177s (last answer after deletion)" {
		t.Errorf("routed afresh: %s (%s), want the data plane 5.177s", fresh.Window, fresh.From)
	}
	pinned := Route(w, Path{Pinned: true})
	if pinned.Window != ms(3041) || !strings.HasPrefix(pinned.From, "control plane p99 130ms + kube-proxy programming p99 2.911s (not the data plane p99 5.177s: the requests rode a connection pinned to the pod") {
		t.Errorf("pinned: %s (%s), want control plane + kube-proxy 3.041s, the data plane said not counted", pinned.Window, pinned.From)
	}
	noDP := w
	noDP.DataPlane = Window{}
	if r := Route(noDP, Path{Pinned: true}); r.Window != ms(3041) || r.From != "control plane p99 130ms + kube-proxy programming p99 2.911s" {
		t.Errorf("pinned, no data plane: %s (%s)", r.Window, r.From)
	}

	cfg := check.Applied{PreStop: check.PreStop{Sleep: 5 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart,
		Protocol: loadgen.ProtocolGRPC, GRPC: &check.GRPCLoad{Balancing: loadgen.BalancingPickFirst, Method: "/rollcheck.app.v1.App/Sleep", Message: []byte{8, 1}}}
	ex := &check.Explanation{RequestP99: ms(1108), Propagation: check.PropagationSummary{
		ControlPlane: check.Durations{N: 3, P99: ms(130)}, KubeProxy: &check.Durations{N: 40, P99: ms(2911)}, DataPlane: check.Durations{N: 3, P99: ms(5177)}}}
	r := Recommend(ex, cfg, check.Durations{}, nil, true)
	if r == nil {
		t.Fatal("no recommendation")
	}
	if r.Routed != ms(3041) || r.PreStop != 5*time.Second || r.GraceSeconds != 9 || r.Fit != "headroom" || !strings.Contains(r.RoutedFrom, "not the data plane p99 5.177s") {
		t.Errorf("gRPC pick_first, preStop 5s: routed %s (%s), ≥ %s · ≥ %ds, fit %q; want 3.041s from control plane + kube-proxy, ≥ 5s · ≥ 9s, headroom", r.Routed, r.RoutedFrom, r.PreStop, r.GraceSeconds, r.Fit)
	}
	if ex.Propagation.DataPlane.N != 3 {
		t.Error("the data plane is still the row's, reported")
	}
}

// A sender's window that the pods' own end cut (Windows.ClientCut, ProxyCut) is a lower bound:
// one rule for a client that balances itself and a proxy in front, its own list or DNS. Where it
// reaches past what bounds the window (the windows the sender ended itself; DNS + the refresh)
// it is said and not counted; with nothing that bounds it, it is the routed time as a lower
// bound (AtLeast); within the bound, nothing changes.
func TestRouteCensored(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	win := func(n int, p99 time.Duration) Window { return Window{N: n, P99: p99} }
	cp := win(3, s(0.08))
	dnsPath := Path{Resolve: true, Refresh: time.Second, RefreshSetting: "nginx resolver valid=1s"}
	for _, c := range []struct {
		name    string
		w       Windows
		p       Path
		routed  time.Duration
		from    string
		cut     Window
		atLeast bool
	}{
		{"client: cut past the windows it ended itself", Windows{ControlPlane: cp, Client: win(7, s(33.094)), ClientCut: win(2, s(35.112))}, Path{},
			s(33.094), "the client's window p99 33.094s (deletion → its last RPC to the pod's address); ≥ 35.112s for 2 pod(s): the pod answered until it exited, so this is a lower bound of the client's window, not counted", win(2, s(35.112)), false},
		{"client: every window cut, nothing bounds it", Windows{ControlPlane: cp, ClientCut: win(3, s(35.039))}, Path{},
			s(35.039), "the client's window ≥ 35.039s for 3 pod(s) (deletion → its last RPC to the pod's address): the pod answered until it exited, so this is a lower bound of the client's window; nothing this row measured bounds it", win(3, s(35.039)), true},
		{"client: cut within the windows it ended itself", Windows{ControlPlane: cp, Client: win(3, s(24)), ClientNoAddress: 3, ClientCut: win(1, s(5))}, Path{},
			s(24), "the client's window p99 24s (deletion → its last RPC to the pod's address, or, for 3 pod(s), to its last RPC that found no live address: at least that long, since it had not resolved again by then)", Window{}, false},
		{"proxy with its own list: cut past its measured window", Windows{ControlPlane: cp, Proxy: win(2, s(1.9)), ProxyCut: win(1, s(10.02))}, Path{UpstreamNamed: true},
			s(1.9), "the proxy's window p99 1.9s (deletion → its last request to the pod); ≥ 10.02s for 1 pod(s): the pod answered until it exited, so this is a lower bound of the proxy's window, not counted", win(1, s(10.02)), false},
		{"proxy with its own list: every window cut", Windows{ControlPlane: cp, ProxyCut: win(2, s(10.02))}, Path{},
			s(10.02), "the proxy's window ≥ 10.02s for 2 pod(s) (deletion → its last request to the pod): the pod answered until it exited, so this is a lower bound of the proxy's window; nothing this row measured bounds it", win(2, s(10.02)), true},
		{"DNS proxy: a cut window past the DNS bound does not win", Windows{ControlPlane: cp, DNS: win(3, s(0.37)), DNSTTL: 30, ProxyCut: win(3, s(10))}, dnsPath,
			s(1.37), "DNS window p99 370ms + nginx resolver valid=1s; ≥ 10s for 3 pod(s): the pod answered until it exited, so this is a lower bound of the proxy's window, not counted", win(3, s(10)), false},
		{"DNS proxy: a window it ended itself past the bound still wins", Windows{ControlPlane: cp, DNS: win(3, s(0.37)), Proxy: win(2, s(4.2)), ProxyCut: win(1, s(10))}, dnsPath,
			s(4.2), "the proxy's window p99 4.2s (deletion → its last request to the pod), longer than 1.37s (DNS window p99 370ms + nginx resolver valid=1s); ≥ 10s for 1 pod(s)", win(1, s(10)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.w.Measured() {
				t.Fatal("not measured")
			}
			r := Route(c.w, c.p)
			if r.Window != c.routed || !strings.HasPrefix(r.From, c.from) || r.Cut != c.cut || r.AtLeast != c.atLeast {
				t.Errorf("routed %s (%s), cut %+v, at least %t\nwant %s (%s…), %+v, %t", r.Window, r.From, r.Cut, r.AtLeast, c.routed, c.from, c.cut, c.atLeast)
			}
		})
	}
}

// Censor splits a row's summary of a sender's windows into those the sender ended and those cut.
func TestCensor(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	all := check.Summarize([]time.Duration{s(22), s(33), s(35.1), s(35)})
	m, c := Censor(all, []time.Duration{s(35.1), s(35)})
	if m != (Window{N: 2, P99: s(33)}) || c != (Window{N: 2, P99: s(35.1)}) {
		t.Errorf("Censor = %+v, %+v; want 2 ≤ 33s, 2 ≥ 35.1s", m, c)
	}
	if m, c := Censor(all, nil); m != (Window{N: 4, P99: s(35.1)}) || c.Measured() {
		t.Errorf("nothing cut: %+v, %+v", m, c)
	}
}
