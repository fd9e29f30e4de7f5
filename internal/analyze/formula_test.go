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
