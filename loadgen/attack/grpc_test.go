package attack

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"

	"github.com/rollcheck/rollcheck/loadgen"
)

// grpcTestServer is a grpc-go server on 127.0.0.1 with the standard health service. Every
// answer names the pod in x-pod-name: in the trailer, since header metadata set before an
// error makes grpc-go send a separate HEADERS frame, the answer is then not trailers-only, and
// the client's retry policy does not apply to it; the request metadata x-want-code makes it fail with that
// code, x-sleep makes it wait first, and x-fail-first fails the first attempt of each RPC with
// UNAVAILABLE (a retry carries grpc-previous-rpc-attempts).
type grpcTestServer struct {
	srv    *grpc.Server
	health *health.Server
	addr   string
	calls  atomic.Int64
}

func newGRPCTestServer(t *testing.T, pod string) *grpcTestServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &grpcTestServer{addr: ln.Addr().String(), health: health.NewServer()}
	s.srv = grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		s.calls.Add(1)
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-pod-name", pod))
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get("x-sleep"); len(v) > 0 {
			d, _ := time.ParseDuration(v[0])
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if v := md.Get("x-fail-first"); len(v) > 0 && len(md.Get("grpc-previous-rpc-attempts")) == 0 {
			return nil, status.Error(codes.Unavailable, "first attempt refused")
		}
		if v := md.Get("x-want-code"); len(v) > 0 {
			c, _ := strconv.Atoi(v[0])
			return nil, status.Error(codes.Code(c), "asked for")
		}
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(s.srv, s.health)
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.srv.Stop)
	return s
}

func grpcConfig(target string) loadgen.Config {
	return loadgen.Config{Target: target, Protocol: loadgen.ProtocolGRPC, Rate: 100, Duration: 500 * time.Millisecond}
}

func TestGRPCHealthLoad(t *testing.T) {
	s := newGRPCTestServer(t, "grpc-0")
	res := runAttack(t, grpcConfig(s.addr))
	if !res.Valid || res.Totals.Failed != 0 || res.Totals.Requests < 45 || int(s.calls.Load()) != res.Totals.Requests {
		t.Fatalf("want a valid run of successes, every RPC served once: %s (server saw %d)", res, s.calls.Load())
	}
	q := res.Requests[0]
	if q.Status != "OK" || q.Peer != s.addr || q.Pod != "grpc-0" || q.Code != 0 || q.Class != loadgen.ClassOK {
		t.Errorf("ledger entry %+v: want status OK, peer %s, pod grpc-0", q, s.addr)
	}
	if res.GRPCVersion != "v"+grpc.Version || !res.TransparentRetry || res.Config.GRPCMethod != loadgen.DefaultGRPCMethod || res.Config.Balancing != loadgen.BalancingPickFirst {
		t.Errorf("result: grpc %q, transparent retry %v, method %q, balancing %q", res.GRPCVersion, res.TransparentRetry, res.Config.GRPCMethod, res.Config.Balancing)
	}
	if s := res.String(); !strings.HasPrefix(s, "gRPC /grpc.health.v1.Health/Check 127.0.0.1:") || !strings.Contains(s, "pick_first") {
		t.Errorf("String = %q", s)
	}
}

// Each way an RPC ends has its class, with the status message as its error.
func TestGRPCClasses(t *testing.T) {
	s := newGRPCTestServer(t, "grpc-0")
	notServing := newGRPCTestServer(t, "grpc-1")
	notServing.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	for _, tc := range []struct {
		name    string
		addr    string
		headers map[string]string
		timeout time.Duration
		want    loadgen.Class
		status  string
	}{
		{"unavailable", s.addr, map[string]string{"x-want-code": "14"}, 0, "grpc_unavailable", "Unavailable"},
		{"internal", s.addr, map[string]string{"x-want-code": "13"}, 0, "grpc_internal", "Internal"},
		{"resource-exhausted", s.addr, map[string]string{"x-want-code": "8"}, 0, "grpc_resource_exhausted", "ResourceExhausted"},
		{"deadline", s.addr, map[string]string{"x-sleep": "1s"}, 100 * time.Millisecond, "grpc_deadline_exceeded", "DeadlineExceeded"},
		{"not-serving", notServing.addr, nil, 0, loadgen.ClassGRPCNotServing, "OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := grpcConfig(tc.addr)
			cfg.Rate, cfg.Duration, cfg.Headers, cfg.Timeout = 20, 200*time.Millisecond, tc.headers, tc.timeout
			res := runAttack(t, cfg)
			if res.Totals.Failures[tc.want] != res.Totals.Requests || res.Totals.Requests == 0 {
				t.Fatalf("failures %v of %d, want every RPC %s", res.Totals.Failures, res.Totals.Requests, tc.want)
			}
			q := res.Requests[0]
			t.Logf("%s: status %s, error %q, pod %q, peer %q", tc.want, q.Status, q.Error, q.Pod, q.Peer)
			if q.Status != tc.status || q.Error == "" || q.Peer != tc.addr {
				t.Errorf("ledger entry %+v: want status %s, an error text and the peer", q, tc.status)
			}
			if tc.want != loadgen.ClassGRPCNotServing && tc.want != "grpc_deadline_exceeded" && q.Pod == "" {
				t.Errorf("an error answer's pod (trailers-only metadata) not recorded: %+v", q)
			}
		})
	}
}

// loadgen keys the gRPC classes by the status code's number, without grpc-go: each of grpc-go's
// codes has the class of its own name, in lower snake case after "grpc_", and the codes it does
// not name are ClassOther. The codes are gRPC's wire protocol; this keeps loadgen's names of
// them grpc-go's.
func TestGRPCClassesAreGRPCGosCodes(t *testing.T) {
	snake := func(name string) string {
		var b strings.Builder
		for j, r := range name {
			if j > 0 && r >= 'A' && r <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteString(strings.ToLower(string(r)))
		}
		return b.String()
	}
	for c := codes.Code(0); c < 100; c++ {
		want := loadgen.ClassOther
		if name := c.String(); c == codes.OK {
			want = loadgen.ClassOK
		} else if !strings.HasPrefix(name, "Code(") { // grpc-go names it
			want = loadgen.Class("grpc_" + snake(name))
		}
		if got := loadgen.GRPCClass(uint32(c)); got != want {
			t.Errorf("GRPCClass(%d) = %q, want %q (grpc-go's %s)", uint32(c), got, want, c)
		}
	}
	if !loadgen.GRPCClass(uint32(codes.DeadlineExceeded)).TimedOut() || loadgen.GRPCClass(uint32(codes.Canceled)).TimedOut() {
		t.Error("TimedOut does not key DEADLINE_EXCEEDED by grpc-go's code")
	}
}

// Retry (a service config retry policy on UNAVAILABLE) hides a refused first attempt; without
// it every RPC fails.
func TestGRPCRetryPolicy(t *testing.T) {
	for _, retry := range []bool{false, true} {
		s := newGRPCTestServer(t, "grpc-0")
		cfg := grpcConfig(s.addr)
		cfg.Rate, cfg.Duration, cfg.Retry = 20, 500*time.Millisecond, retry
		cfg.Headers = map[string]string{"x-fail-first": "1"}
		res := runAttack(t, cfg)
		failed, calls := res.Totals.Failures["grpc_unavailable"], int(s.calls.Load())
		if retry && (res.Totals.Failed != 0 || calls != 2*res.Totals.Requests) || !retry && (failed != res.Totals.Requests || calls != res.Totals.Requests) {
			t.Errorf("retry %v: %v of %d failed, the server saw %d calls", retry, res.Totals.Failures, res.Totals.Requests, calls)
		}
	}
}

// A server that stops under load: Stop cuts the RPCs in flight, GracefulStop lets them
// finish; what comes after finds no server (UNAVAILABLE), or with WaitForReady waits for one
// until its deadline.
func TestGRPCServerStops(t *testing.T) {
	for _, tc := range []struct {
		name         string
		graceful     bool
		waitForReady bool
		want         map[loadgen.Class]bool
	}{
		{"stop", false, false, map[loadgen.Class]bool{"grpc_unavailable": true}},
		{"graceful-stop", true, false, map[loadgen.Class]bool{"grpc_unavailable": true}},
		{"graceful-stop-wait-for-ready", true, true, map[loadgen.Class]bool{"grpc_deadline_exceeded": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGRPCTestServer(t, "grpc-0")
			cfg := grpcConfig(s.addr)
			cfg.Rate, cfg.Duration, cfg.Timeout, cfg.WaitForReady = 50, 1500*time.Millisecond, 500*time.Millisecond, tc.waitForReady
			cfg.Headers = map[string]string{"x-sleep": "200ms"}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			a, err := Start(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(600 * time.Millisecond)
			stopAt := time.Now()
			if tc.graceful {
				s.srv.GracefulStop()
			} else {
				s.srv.Stop()
			}
			res, err := a.Wait()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", res)
			texts, ok := map[loadgen.Class]string{}, 0
			for _, q := range res.Requests {
				sentBefore := q.Timestamp.Before(stopAt)
				switch {
				case q.OK():
					ok++
				case !tc.want[q.Class] && !(sentBefore && !tc.graceful && q.Class == "grpc_unavailable"):
					t.Errorf("RPC %d at +%s: %s (%s)", q.Seq, q.Timestamp.Sub(res.Started), q.Class, q.Error)
				default:
					texts[q.Class] = q.Error
				}
			}
			// GracefulStop lets every RPC the server began finish: the server's own count is the
			// truth here, not the send time, since an RPC issued just before the stop may reach
			// the server only after its listener closed (a loaded machine).
			if calls := int(s.calls.Load()); tc.graceful && ok != calls {
				t.Errorf("GracefulStop: the server began %d RPCs, %d finished OK", calls, ok)
			}
			var cutInFlight int
			for _, q := range res.Requests {
				if q.Timestamp.Before(stopAt) && !q.OK() {
					cutInFlight++
				}
			}
			if !tc.graceful && cutInFlight == 0 {
				t.Error("Stop cut no RPC in flight")
			}
			if len(texts) == 0 {
				t.Error("no RPC failed after the server stopped")
			}
			for c, e := range texts {
				t.Logf("%s: %s", c, e)
			}
		})
	}
}

// round_robin over the addresses a resolver gives spreads the RPCs over every server, and the
// ledger names the peer of each; pick_first sends all to one.
func TestGRPCBalancing(t *testing.T) {
	a, b := newGRPCTestServer(t, "pod-a"), newGRPCTestServer(t, "pod-b")
	for _, bal := range []loadgen.Balancing{loadgen.BalancingPickFirst, loadgen.BalancingRoundRobin} {
		t.Run(string(bal), func(t *testing.T) {
			r := manual.NewBuilderWithScheme("dns")
			r.InitialState(resolver.State{Addresses: []resolver.Address{{Addr: a.addr}, {Addr: b.addr}}})
			extraDialOptions = []grpc.DialOption{grpc.WithResolvers(r)}
			defer func() { extraDialOptions = nil }()
			cfg := grpcConfig("dns:///app.test:50051")
			cfg.AllowRemote, cfg.Balancing = true, bal
			res := runAttack(t, cfg)
			peers, pods := map[string]int{}, map[string]int{}
			for _, q := range res.Requests {
				peers[q.Peer]++
				pods[q.Pod]++
			}
			if res.Totals.Failed != 0 {
				t.Fatalf("failures: %v", res.Totals.Failures)
			}
			want := map[loadgen.Balancing]int{loadgen.BalancingPickFirst: 1, loadgen.BalancingRoundRobin: 2}[bal]
			if len(peers) != want || len(pods) != want {
				t.Errorf("%s: peers %v, pods %v; want %d of each", bal, peers, pods, want)
			}
			if bal == loadgen.BalancingRoundRobin && (peers[a.addr] == 0 || pods["pod-b"] == 0) {
				t.Errorf("round_robin: peers %v, pods %v", peers, pods)
			}
		})
	}
}

// A gRPC attack streamed by Serve and rebuilt by Follow (a load pod's path) keeps each RPC's
// status, peer and pod, and the configuration that says it was gRPC.
func TestGRPCServeFollow(t *testing.T) {
	s := newGRPCTestServer(t, "grpc-0")
	var buf bytes.Buffer
	cfg := grpcConfig(s.addr)
	cfg.Duration = 300 * time.Millisecond
	if err := Serve(t.Context(), cfg, &buf); err != nil {
		t.Fatal(err)
	}
	res, err := Follow(&buf).Wait()
	if err != nil {
		t.Fatal(err)
	}
	q := res.Requests[0]
	if res.Totals.Requests < 25 || res.Totals.Failed != 0 || q.Status != "OK" || q.Peer != s.addr || q.Pod != "grpc-0" ||
		res.Config.Protocol != loadgen.ProtocolGRPC || res.GRPCVersion == "" || !res.Valid {
		t.Errorf("rebuilt: %s; first RPC %+v; grpc %q", res, q, res.GRPCVersion)
	}
}

// rotatingResolver answers "dns" targets with its addresses, rotated by one at each client
// built: pick_first's one connection reaches another server with each client, as kube-proxy's
// choice of a pod does for each new connection to a ClusterIP.
type rotatingResolver struct {
	addrs []string
	n     atomic.Int64
}

func (r *rotatingResolver) Scheme() string { return "dns" }

func (r *rotatingResolver) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	k := int(r.n.Add(1))
	var as []resolver.Address
	for i := range r.addrs {
		as = append(as, resolver.Address{Addr: r.addrs[(i+k)%len(r.addrs)]})
	}
	return nopResolver{}, cc.UpdateState(resolver.State{Addresses: as})
}

type nopResolver struct{}

func (nopResolver) ResolveNow(resolver.ResolveNowOptions) {}

func (nopResolver) Close() {}

// WaitServing over gRPC: round_robin sees both servers in one probe; pick_first sees one per
// probe (one connection) and counts the pods over clean probes in a row.
func TestGRPCWaitServing(t *testing.T) {
	a, b := newGRPCTestServer(t, "pod-a"), newGRPCTestServer(t, "pod-b")
	extraDialOptions = []grpc.DialOption{grpc.WithResolvers(&rotatingResolver{addrs: []string{a.addr, b.addr}})}
	defer func() { extraDialOptions = nil }()
	for _, bal := range []loadgen.Balancing{loadgen.BalancingRoundRobin, loadgen.BalancingPickFirst} {
		start := time.Now()
		cfg := loadgen.Config{Target: "dns:///app.test:50051", AllowRemote: true, Protocol: loadgen.ProtocolGRPC, Balancing: bal}
		if err := WaitServing(t.Context(), cfg, 2, t.Logf); err != nil || time.Since(start) > 10*time.Second {
			t.Errorf("%s, two servers: %v after %s", bal, err, time.Since(start))
		}
		t.Logf("%s: both pods seen after %s", bal, time.Since(start).Round(time.Millisecond))
	}
}

// The client's service config names the balancing policy and, for every method, the wait for
// ready and the retry policy.
func TestServiceConfig(t *testing.T) {
	if got := serviceConfig(loadgen.Config{Balancing: loadgen.BalancingRoundRobin, WaitForReady: true}); got != `{"loadBalancingConfig":[{"round_robin":{}}],"methodConfig":[{"name":[{}],"waitForReady":true}]}` {
		t.Errorf("service config %s", got)
	}
}
