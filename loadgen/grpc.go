package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The gRPC attacker is loadgen's own, on grpc-go, rather than ghz's runner: the newest ghz the
// module proxy serves (v0.93.0, 2020) paces through a channel its fixed workers read, so a slow
// server slows the schedule (a closed loop, unless async), its record of a call has no peer
// address and no response metadata (the pod), and it calls through dynamic messages that need
// the service's protos or reflection. This one is vegeta's loop: vegeta's ConstantPacer, one
// goroutine per RPC in flight up to MaxWorkers, every RPC kept.

const (
	// DefaultGRPCMethod is the RPC of a gRPC load when Config.GRPCMethod is empty: the standard
	// health check (grpc.health.v1), which any server that registers it answers without its
	// own protos.
	DefaultGRPCMethod = "/grpc.health.v1.Health/Check"
	// GRPCRetryAttempts is the number of attempts of an RPC, the first included, under
	// Config.Retry's policy.
	GRPCRetryAttempts = 4
)

// Balancing is a gRPC client's load balancing policy: which of the addresses its resolver
// returned each RPC goes to.
type Balancing string

// Balancing policies.
const (
	// BalancingPickFirst (grpc-go's default) connects to the first address that answers and
	// sends every RPC there until that connection breaks: through a ClusterIP Service,
	// kube-proxy picks one pod for the whole connection.
	BalancingPickFirst Balancing = "pick_first"
	// BalancingRoundRobin connects to every address and spreads the RPCs over the ready ones:
	// with "dns:///" and a headless Service, the client balances over the pods itself, from the
	// addresses it resolved last (grpc-go resolves again at most every 30 s, and when a
	// connection breaks).
	BalancingRoundRobin Balancing = "round_robin"
)

// ClassGRPCNotServing is a health check answered OK with a status other than SERVING
// (NOT_SERVING: a server that is shutting down says so): the RPC worked, the server refused the
// work. Only the default method (DefaultGRPCMethod) is read for it.
const ClassGRPCNotServing Class = "grpc_not_serving"

// grpcClasses are the classes of gRPC status codes 0-16, "grpc_" and the code's name in
// lower snake case: "grpc_unavailable", "grpc_deadline_exceeded".
var grpcClasses = func() (cs [17]Class) {
	for i := range cs {
		name := codes.Code(i).String()
		var b strings.Builder
		for j, r := range name {
			if j > 0 && r >= 'A' && r <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteString(strings.ToLower(string(r)))
		}
		cs[i] = Class("grpc_" + b.String())
	}
	cs[codes.OK] = ClassOK
	return cs
}()

// GRPCClass returns the class of an RPC that ended with code: ClassOK for OK, otherwise
// "grpc_" and the code's name in lower snake case, e.g. "grpc_unavailable",
// "grpc_deadline_exceeded" (the client's Timeout). An unknown code is ClassOther.
func GRPCClass(code codes.Code) Class {
	if int(code) < len(grpcClasses) {
		return grpcClasses[code]
	}
	return ClassOther
}

// TimedOut reports whether c is a request that ended by the client's own timeout: ClassTimeout,
// or an RPC's DEADLINE_EXCEEDED (the load's Timeout is every RPC's deadline). Nothing answered
// it in time; it was not cut.
func (c Class) TimedOut() bool { return c == ClassTimeout || c == grpcClasses[codes.DeadlineExceeded] }

// IsGRPC reports whether c is a gRPC status class (GRPCClass or ClassGRPCNotServing).
func (c Class) IsGRPC() bool { return strings.HasPrefix(string(c), "grpc_") }

// validateGRPC returns the problems of a gRPC Config, without ErrInvalidConfig.
func (c Config) validateGRPC() []error {
	var errs []error
	if err := validateGRPCTarget(c.Target, c.AllowRemote); err != nil {
		errs = append(errs, fmt.Errorf("target: %w", err))
	}
	if m := c.GRPCMethod; m != "" {
		if svc, meth, ok := strings.Cut(strings.TrimPrefix(m, "/"), "/"); !strings.HasPrefix(m, "/") || !ok || svc == "" || meth == "" || strings.Contains(meth, "/") {
			errs = append(errs, fmt.Errorf("grpcMethod %q: want /package.Service/Method", m))
		}
	}
	switch c.Balancing {
	case "", BalancingPickFirst, BalancingRoundRobin:
	default:
		errs = append(errs, fmt.Errorf("balancing %q: want %s or %s", c.Balancing, BalancingPickFirst, BalancingRoundRobin))
	}
	if c.Method != "" {
		errs = append(errs, fmt.Errorf("method %q is HTTP's: a gRPC load calls grpcMethod", c.Method))
	}
	return errs
}

// validateGRPCTarget checks a gRPC target: "host:port" or "dns:///host:port", with a loopback
// host unless allowRemote.
func validateGRPCTarget(target string, allowRemote bool) error {
	if target == "" {
		return errors.New("required, e.g. 127.0.0.1:30080 or dns:///app.ns:8080")
	}
	hostport := strings.TrimPrefix(target, "dns:///")
	if strings.Contains(hostport, "://") || strings.Contains(hostport, "/") {
		return fmt.Errorf("%q: want host:port or dns:///host:port", target)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("%q: want host:port or dns:///host:port", target)
	}
	if !allowRemote && !isLoopback(host) {
		return fmt.Errorf("%q: host %q is not a loopback address (load goes to 127.0.0.1; set allowRemote to override)", target, host)
	}
	return nil
}

// serviceConfig is the client's service config: the balancing policy, and for every method
// (an empty name) the wait for ready and the retry policy.
func (c Config) serviceConfig() string {
	method := `"name":[{}]`
	if c.WaitForReady {
		method += `,"waitForReady":true`
	}
	if c.Retry {
		method += fmt.Sprintf(`,"retryPolicy":{"maxAttempts":%d,"initialBackoff":"0.05s","maxBackoff":"0.5s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}`, GRPCRetryAttempts)
	}
	return fmt.Sprintf(`{"loadBalancingConfig":[{%q:{}}],"methodConfig":[{%s}]}`, c.Balancing, method)
}

// rawCodec sends a request that is already in protobuf's wire format and keeps the answer's
// bytes: no message types, so any method can be called. Its name is "proto", so the
// content-type is application/grpc+proto as the server expects.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec: marshal %T, want []byte", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: unmarshal into %T, want *[]byte", v)
	}
	*p = data.Materialize()
	return nil
}

// grpcAttacker sends cfg.Rate RPCs per second over one grpc-go client connection, open loop:
// vegeta's ConstantPacer says when, and each RPC runs on its own worker, more workers being
// started while all are busy, up to MaxWorkers (then the schedule waits, as vegeta's does).
type grpcAttacker struct {
	cfg    Config
	conn   *grpc.ClientConn
	ctx    context.Context // carries cfg.Headers as metadata
	opts   []grpc.CallOption
	podKey string
	health bool // the default method: read the health status
	sent   *atomic.Int64

	stopch   chan struct{}
	stopOnce sync.Once

	seqmu sync.Mutex
	seq   uint64
	began time.Time
}

// extraDialOptions are added to every gRPC client's options: tests give a resolver.
var extraDialOptions []grpc.DialOption

func newGRPCAttacker(cfg Config, sent *atomic.Int64) (*grpcAttacker, error) {
	conn, err := grpc.NewClient(cfg.Target, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(cfg.serviceConfig()),
		grpc.WithUserAgent("rollcheck/" + cfg.Name),
	}, extraDialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("gRPC client for %s: %w", cfg.Target, err)
	}
	md := metadata.MD{}
	for k, v := range cfg.Headers {
		md.Set(k, v)
	}
	return &grpcAttacker{
		cfg:    cfg,
		conn:   conn,
		ctx:    metadata.NewOutgoingContext(context.Background(), md),
		opts:   []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})},
		podKey: strings.ToLower(cfg.PodHeader),
		health: cfg.GRPCMethod == DefaultGRPCMethod,
		sent:   sent,
		stopch: make(chan struct{}),
	}, nil
}

// stop ends the sending; the RPCs in flight complete.
func (g *grpcAttacker) stop() { g.stopOnce.Do(func() { close(g.stopch) }) }

// attack runs the schedule and returns the RPCs as they complete; the channel is closed once
// sending has ended and every RPC in flight has completed, and the connection is closed.
func (g *grpcAttacker) attack() <-chan Request {
	pacer := vegeta.ConstantPacer{Freq: g.cfg.Rate, Per: time.Second}
	results := make(chan Request)
	ticks := make(chan struct{})
	var wg sync.WaitGroup
	worker := func() {
		defer wg.Done()
		for range ticks {
			results <- g.hit()
		}
	}
	workers := min(g.cfg.Workers, g.cfg.MaxWorkers)
	g.began = time.Now()
	for range workers {
		wg.Add(1)
		go worker()
	}
	go func() {
		defer func() {
			close(ticks)
			wg.Wait()
			close(results)
			_ = g.conn.Close()
		}()
		count := uint64(0)
		for {
			elapsed := time.Since(g.began)
			if elapsed > g.cfg.Duration {
				return
			}
			wait, stop := pacer.Pace(elapsed, count)
			if stop {
				return
			}
			time.Sleep(wait)
			if workers < g.cfg.MaxWorkers {
				select {
				case ticks <- struct{}{}:
					count++
					continue
				case <-g.stopch:
					return
				default: // every worker is busy: one more
					workers++
					wg.Add(1)
					go worker()
				}
			}
			select {
			case ticks <- struct{}{}:
				count++
			case <-g.stopch:
				return
			}
		}
	}()
	return results
}

// hit makes one RPC and returns its ledger entry.
func (g *grpcAttacker) hit() Request {
	g.sent.Add(1)
	// Sequence number and timestamp in one critical section, as vegeta does, so that both
	// orders agree.
	g.seqmu.Lock()
	q := Request{Seq: g.seq, Timestamp: g.began.Add(time.Since(g.began))}
	g.seq++
	g.seqmu.Unlock()

	ctx, cancel := context.WithTimeout(g.ctx, g.cfg.Timeout)
	defer cancel()
	var header, trailer metadata.MD
	var p peer.Peer
	var out []byte
	opts := append(g.opts[:len(g.opts):len(g.opts)], grpc.Header(&header), grpc.Trailer(&trailer), grpc.Peer(&p))
	err := g.conn.Invoke(ctx, g.cfg.GRPCMethod, g.cfg.GRPCMessage, &out, opts...)
	q.Latency = time.Since(q.Timestamp)
	q.BytesIn = uint64(len(out))
	if p.Addr != nil {
		q.Peer = p.Addr.String()
	}
	// A trailers-only answer (an error before any message) carries its metadata in the trailer.
	if vs := header.Get(g.podKey); len(vs) > 0 {
		q.Pod = vs[0]
	} else if vs := trailer.Get(g.podKey); len(vs) > 0 {
		q.Pod = vs[0]
	}
	st := status.Convert(err)
	q.Status = st.Code().String()
	q.Class = GRPCClass(st.Code())
	if err != nil {
		q.Error = err.Error()
		return q
	}
	if g.health {
		var hr healthpb.HealthCheckResponse
		if err := proto.Unmarshal(out, &hr); err != nil {
			q.Class, q.Error = ClassOther, fmt.Sprintf("decoding the health check's answer: %v", err)
		} else if hr.Status != healthpb.HealthCheckResponse_SERVING {
			q.Class, q.Error = ClassGRPCNotServing, "health: "+hr.Status.String()
		}
	}
	return q
}
