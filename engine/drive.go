package engine

// drive: the load (from the host, or from load pods) and the disruptions that run under it, and
// the monitor that stops the disruptions when the load stalls.

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/limits"
	"github.com/rollcheck/rollcheck/internal/observe"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
)

// driven is what the load and the disruptions left: the load's result, the disruptions as they
// happened, why they stopped early, and why the load cannot be trusted.
type driven struct {
	atk        load
	res        *loadgen.Result
	waitErr    error
	recs       []disrupt.Record
	disruptErr error
	loadFault  error
}

// drive runs the constant load on url (from the host) or on the load Service's cluster address
// (from a load pod) for the quiet time (Plan.Quiet), disrupts Disruption.Count times (each until
// it settled) and runs the quiet time again; it stops the load and waits for the requests in
// flight.
func (r *runner) drive(ctx context.Context, cs kubernetes.Interface, url string, obs *observe.Observer) (*driven, error) {
	p := r.p
	cfg := r.loadConfig(loadgen.Config{
		Name: "rollcheck-" + p.Variant.Name, Target: url, Method: p.Load.Method, Rate: p.Load.Rate,
		Duration: limits.Load(p.Quiet, p.App.RequestDuration, p.Load.Timeout, p.Disruption.Count, r.row.Config.GraceSeconds, r.row.Config.DrainTimeout),
		Timeout:  p.Load.Timeout, KeepAlive: p.Load.KeepAlive,
	})
	atk, err := r.startLoad(ctx, cs, cfg)
	if err != nil {
		return nil, fmt.Errorf("start the load: %w", err)
	}
	d := &driven{atk: atk}
	to := url
	if p.Load.From == check.LoadFromCluster && !p.Load.Through() {
		to = r.loadTo() // the load pod's target, not the host's URL
		if p.Load.Protocol == loadgen.ProtocolGRPC && p.Load.GRPC.Balancing == loadgen.BalancingRoundRobin {
			to = "the pods' addresses, resolved from " + check.LoadHeadlessServiceName
		}
	}
	r.progress(StepLoad, 0, atk.Progress(), fmt.Sprintf("%d req/s from %s to %s", p.Load.Rate, p.Load.From, to))

	// The disruptions stop early when the load does: a stalled generator or a load that ended
	// makes the row a harness fault, never zero failures.
	dctx, cancelDisrupt := context.WithCancelCause(ctx)
	defer cancelDisrupt(nil)
	mon := startMonitor(atk, p.Load.Rate, func(cause error) { cancelDisrupt(cause) }, func(pr loadgen.Progress) {
		r.progress(StepLoadTicker, 0, pr, "")
	})
	defer mon.stop()

	// Let every replica reach a steady state under load, slow requests included.
	sleep(dctx, p.Quiet+p.App.RequestDuration)
	dt := disrupt.Target{Client: r.client, Namespace: r.appNS, Owner: r.ns, Deployment: r.dep.Name, Kind: r.workload().Kind, Selector: selectorOf(r.dep),
		Timeout: limits.Disruption(r.row.Config.GraceSeconds, r.row.Config.DrainTimeout), DrainTimeout: r.row.Config.DrainTimeout, Logf: r.logf}
	if k, ok := r.t.Cluster.(KubeletRestarter); ok {
		dt.RestartKubelet = k.RestartKubelet
	}
	if p.Disruption.Node == check.DrainEntry {
		dt.Node = r.t.EntryNode
	}
	if dctx.Err() == nil {
		d.recs, d.disruptErr = disrupt.Repeat(dctx, dt, p.Disruption.Kind, p.Disruption.Count,
			func(rec disrupt.Record) {
				obs.Mark(observe.Disruption, fmt.Sprintf("%s %d/%d", rec.Kind, rec.N, p.Disruption.Count))
				r.progress(StepDisruption, rec.N, atk.Progress(), "")
			},
			func(rec disrupt.Record) {
				obs.Mark(observe.DisruptionDone, fmt.Sprintf("%s %d/%d %s", rec.Kind, rec.N, p.Disruption.Count, rec.Pod))
				r.progress(StepSettled, rec.N, atk.Progress(), rec.Pod)
			})
	}
	if d.disruptErr == nil {
		sleep(dctx, p.Quiet)
	}
	// Stopping the load leaves the requests in flight to finish (up to the timeout) with
	// nothing new sent: the stall monitor must not read that as a stalled generator.
	mon.stop()
	d.loadFault = context.Cause(dctx)
	if errors.Is(d.loadFault, context.Canceled) && ctx.Err() != nil {
		d.loadFault = nil // the caller cancelled: reported as the error by measure
	}
	atk.Stop()
	d.res, d.waitErr = atk.Wait()
	if c, ok := atk.(interface{ Clocks() []check.LoadClock }); ok {
		r.row.LoadClocks = c.Clocks()
	}
	if n, ok := atk.(interface{ Nodes() []string }); ok && r.row.Nodes != nil {
		r.row.Nodes.Load = n.Nodes()
		r.logf("%s: %s", r.p.Variant.Name, r.row.Nodes)
	}
	return d, nil
}

// startLoad starts the load of cfg from where the Plan says: the host, or a load pod sending to
// the load Service's cluster address.
func (r *runner) startLoad(ctx context.Context, cs kubernetes.Interface, cfg loadgen.Config) (load, error) {
	if r.p.Load.From != check.LoadFromCluster {
		atk, err := attack.Start(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Attack in a non-nil load
		}
		return atk, nil
	}
	// Through a proxy, the load pod resolves the URL in the row's namespace (a Service of the
	// app's manifests by its short name, or the address the user named); otherwise its target is
	// the row's own Service: nothing outside the cluster, no DNS.
	if !r.p.Load.Through() {
		addr, err := r.serviceAddress(ctx, cs)
		if err != nil {
			return nil, err
		}
		cfg.Target = "http://" + addr + r.p.App.Path
		switch {
		case r.p.Load.Protocol == loadgen.ProtocolGRPC && r.p.Load.GRPC.Balancing == loadgen.BalancingRoundRobin:
			// The client resolves the headless Service itself and balances over the pods.
			cfg.Target = fmt.Sprintf("dns:///%s.%s.svc.cluster.local:%d", check.LoadHeadlessServiceName, r.ns, r.p.App.Port)
		case r.p.Load.Protocol == loadgen.ProtocolGRPC:
			cfg.Target = addr
		case r.p.Load.Protocol == loadgen.ProtocolHTTP2:
			cfg.Target = "https://" + addr + r.p.App.Path
		}
		cfg.AllowRemote = true
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	place := loadPlacement{node: r.t.LoadNode, avoid: r.dep.Spec.Selector.MatchLabels}
	if r.appNS != r.ns {
		place.avoidIn = r.appNS
	}
	return startPodLoads(ctx, cs, r.ns, r.t.LoadImage, cfg, r.p.Load.Pods, r.servingReplicas(), r.t.SharedClock, place, r.logf)
}

// loadTo names where the load pods send, for a line.
func (r *runner) loadTo() string {
	if r.svcAddr != "" {
		return "the app's Service " + r.svcName + " at its cluster address " + r.svcAddr
	}
	return "the load Service's cluster address"
}

// serviceAddress is where the load pods send: the load Service's cluster IP and port 80, or, for
// an app checked in place, its own Service's cluster IP and port (readApp): no DNS either way.
func (r *runner) serviceAddress(ctx context.Context, cs kubernetes.Interface) (string, error) {
	if r.svcAddr != "" {
		return r.svcAddr, nil
	}
	svc, err := cs.CoreV1().Services(r.ns).Get(ctx, check.LoadServiceName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("the load Service's cluster address: %w", err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", fmt.Errorf("the load Service %s/%s has no cluster IP", r.ns, check.LoadServiceName)
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, "80"), nil
}

// grpcTarget is the gRPC target of a load URL: its host and port ("http://127.0.0.1:30080/x" is
// "127.0.0.1:30080"); a target that is not a URL (dns:///…) is kept.
func grpcTarget(u string) string {
	if p, err := neturl.Parse(u); err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
		return p.Host
	}
	return u
}

// servingReplicas is how many pods must answer before the load starts: every replica through
// rollcheck's own Service; through a proxy in front, one, since what reaches the pods is the
// proxy's to decide (a list resolved once at its start, connections kept to a ClusterIP that
// kube-proxy pinned to one pod), and that is what the row measures.
//
// With externalTrafficPolicy Local only the entry node's pods can answer the host's load.
func (r *runner) servingReplicas() int {
	if r.p.Load.Through() {
		return 1
	}
	if n := r.row.Nodes; r.row.Config.LocalOnly() && n != nil {
		return n.EntryPods
	}
	return r.row.Config.Replicas
}

// loadConfig adds to cfg what every request of the row carries and records: the app's pod
// header, the name the load pods ask the cluster's DNS for (Load.Resolve: with or without a
// proxy in front, which validation allows from the cluster only) and, through a proxy in front
// (Load.URL), its Host header and the header naming the upstream. A URL the user named may be
// any address the load's source reaches.
func (r *runner) loadConfig(cfg loadgen.Config) loadgen.Config {
	l := r.p.Load
	cfg.PodHeader = r.p.App.PodHeader
	cfg.Protocol = l.Protocol
	cfg.Resolve = l.Resolve
	switch l.Protocol {
	case loadgen.ProtocolGRPC:
		g := l.GRPC
		cfg.GRPCMethod, cfg.GRPCMessage, cfg.Balancing, cfg.WaitForReady, cfg.Retry = g.Method, g.Message, g.Balancing, g.WaitForReady, g.Retry
		cfg.Method = "" // HTTP's: an RPC calls GRPCMethod
		cfg.Target = grpcTarget(cfg.Target)
	case loadgen.ProtocolHTTP2:
		cfg.Target = strings.Replace(cfg.Target, "http://", "https://", 1)
	}
	if l.Through() {
		cfg.Proxy, cfg.UpstreamHeader, cfg.AllowRemote = true, l.UpstreamHeader, true
		if l.Host != "" {
			cfg.Headers = map[string]string{"Host": l.Host}
		}
	}
	return cfg
}

// monitor watches the load while the disruptions run: it reports progress every 5 s and
// calls fault when the generator stalls (nothing sent for stallLimit) or the load ended.
type monitor struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startMonitor(atk load, rate int, fault func(error), tick func(loadgen.Progress)) *monitor {
	m := &monitor{done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var lastSent int64
		lastChange, lastLog := time.Now(), time.Now()
		for {
			select {
			case <-m.done:
				return
			case <-atk.Done():
				if l, ok := atk.(interface{ Lost() error }); ok {
					if err := l.Lost(); err != nil {
						fault(fmt.Errorf("%w: no verdict", err))
						return
					}
				}
				fault(errors.New("the load ended before the disruptions did (it ran for its whole bound): no verdict"))
				return
			case now := <-t.C:
				p := atk.Progress()
				if p.Sent != lastSent {
					lastSent, lastChange = p.Sent, now
				} else if now.Sub(lastChange) > stallLimit {
					fault(fmt.Errorf("the load generator sent nothing for %s (asked %d req/s): %+v", now.Sub(lastChange).Round(time.Second), rate, p))
					return
				}
				if now.Sub(lastLog) >= 5*time.Second {
					tick(p)
					lastLog = now
				}
			}
		}
	}()
	return m
}

func (m *monitor) stop() { m.once.Do(func() { close(m.done); m.wg.Wait() }) }
