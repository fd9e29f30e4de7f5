package attack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rollcheck/rollcheck/loadgen"
)

// The gRPC attacker is rollcheck's own, on grpc-go, rather than ghz's runner: the newest ghz the
// module proxy serves (v0.93.0, 2020) paces through a channel its fixed workers read, so a slow
// server slows the schedule (a closed loop, unless async), its record of a call has no peer
// address and no response metadata (the pod), and it calls through dynamic messages that need
// the service's protos or reflection. This one is vegeta's loop: vegeta's ConstantPacer
// (steadyPacer: no burst after a stall), one goroutine per RPC in flight up to MaxWorkers, every
// RPC kept.

// serviceConfig is the client's service config: the balancing policy, and for every method
// (an empty name) the wait for ready and the retry policy.
func serviceConfig(c loadgen.Config) string {
	method := `"name":[{}]`
	if c.WaitForReady {
		method += `,"waitForReady":true`
	}
	if c.Retry {
		method += fmt.Sprintf(`,"retryPolicy":{"maxAttempts":%d,"initialBackoff":"0.05s","maxBackoff":"0.5s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}`, loadgen.GRPCRetryAttempts)
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
// steadyPacer (vegeta's ConstantPacer, no burst after a stall) says when, and each RPC runs on
// its own worker, more workers being started while all are busy, up to MaxWorkers (then the
// schedule waits, as vegeta's does).
type grpcAttacker struct {
	cfg    loadgen.Config
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

func newGRPCAttacker(cfg loadgen.Config, sent *atomic.Int64) (*grpcAttacker, error) {
	conn, err := grpc.NewClient(cfg.Target, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(serviceConfig(cfg)),
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
		health: cfg.GRPCMethod == loadgen.DefaultGRPCMethod,
		sent:   sent,
		stopch: make(chan struct{}),
	}, nil
}

// stop ends the sending; the RPCs in flight complete.
func (g *grpcAttacker) stop() { g.stopOnce.Do(func() { close(g.stopch) }) }

// attack runs the schedule and returns the RPCs as they complete; the channel is closed once
// sending has ended and every RPC in flight has completed, and the connection is closed.
func (g *grpcAttacker) attack() <-chan loadgen.Request {
	pacer := newSteadyPacer(g.cfg.Rate)
	results := make(chan loadgen.Request)
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
func (g *grpcAttacker) hit() loadgen.Request {
	g.sent.Add(1)
	// Sequence number and timestamp in one critical section, as vegeta does, so that both
	// orders agree.
	g.seqmu.Lock()
	q := loadgen.Request{Seq: g.seq, Timestamp: g.began.Add(time.Since(g.began))}
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
	q.Class = loadgen.GRPCClass(uint32(st.Code()))
	if err != nil {
		q.Error = err.Error()
		return q
	}
	if g.health {
		var hr healthpb.HealthCheckResponse
		if err := proto.Unmarshal(out, &hr); err != nil {
			q.Class, q.Error = loadgen.ClassOther, fmt.Sprintf("decoding the health check's answer: %v", err)
		} else if hr.Status != healthpb.HealthCheckResponse_SERVING {
			q.Class, q.Error = loadgen.ClassGRPCNotServing, "health: "+hr.Status.String()
		}
	}
	return q
}
