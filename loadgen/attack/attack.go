package attack

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rollcheck/rollcheck/loadgen"
)

// Attack is a running load attack, started with Start.
type Attack struct {
	cfg     loadgen.Config
	halt    func() // stops the sending: vegeta's attacker's or the gRPC attacker's
	started time.Time

	sent, ok, failed atomic.Int64

	mu        sync.Mutex
	finished  bool
	stopAt    time.Time
	endReason loadgen.EndReason
	ctxErr    error

	dns *dnsLog // Config.Resolve's answers; nil without

	done   chan struct{}
	run    loadgen.Run // as finish judged it, for Serve's end line
	result *loadgen.Result
	err    error
}

// Start validates cfg (after WithDefaults) and starts a constant-rate attack
// on cfg.Target. The attack runs until cfg.Duration is up, Stop is called,
// or ctx ends, whichever comes first; then it waits for in-flight requests
// (at most cfg.Timeout) and builds its Result.
func Start(ctx context.Context, cfg loadgen.Config) (*Attack, error) {
	return start(ctx, cfg, nil, nil)
}

// start is Start with a hook called with each request as it completes, on the one goroutine
// that records them (Serve streams them).
func start(ctx context.Context, cfg loadgen.Config, onRequest func(loadgen.Request), onDNS func(loadgen.DNSAnswer)) (*Attack, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("starting load attack: %w", err)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("starting load attack on %s: %w", cfg.Target, err)
	}

	a := &Attack{cfg: cfg, done: make(chan struct{})}
	rec := newRecorder(cfg, a)
	rec.onRequest = onRequest
	// drain records every result until the attack's channel closes; closeIdle then lets the
	// connections go.
	var drain, closeIdle func()
	if cfg.Protocol == loadgen.ProtocolGRPC {
		g, err := newGRPCAttacker(cfg, &a.sent)
		if err != nil {
			return nil, fmt.Errorf("starting load attack: %w", err)
		}
		a.halt, closeIdle = g.stop, func() {} // the attacker closes its connection itself
		a.started = time.Now()
		results := g.attack()
		drain = func() {
			for q := range results {
				rec.record(q)
			}
		}
	} else {
		header := make(http.Header, len(cfg.Headers))
		for k, v := range cfg.Headers {
			header.Set(k, v)
		}
		target := vegeta.Target{Method: cfg.Method, URL: cfg.Target, Header: header}

		// Our own transport, so that it can be closed when the attack ends
		// (vegeta's has no idle timeout and would keep its connections, and
		// their goroutines, forever). Vegeta's options below configure it in place.
		tr := newTransport(cfg.Protocol)
		attacker := vegeta.NewAttacker(
			vegeta.Client(&http.Client{Transport: tr}),
			vegeta.Timeout(cfg.Timeout),
			vegeta.KeepAlive(cfg.KeepAlive),
			vegeta.Connections(cfg.Connections),
			vegeta.MaxConnections(cfg.MaxConnections),
			vegeta.Workers(cfg.Workers),
			vegeta.MaxWorkers(cfg.MaxWorkers),
			vegeta.Redirects(vegeta.NoFollow),
		)
		targeter := func(t *vegeta.Target) error {
			a.sent.Add(1)
			*t = target
			return nil
		}
		pacer := newSteadyPacer(cfg.Rate)
		a.halt, closeIdle = func() { attacker.Stop() }, tr.CloseIdleConnections
		a.started = time.Now()
		results := attacker.Attack(targeter, pacer, cfg.Duration, cfg.Name)
		drain = func() {
			for r := range results {
				rec.add(r)
			}
		}
	}
	stopOnCancel := context.AfterFunc(ctx, func() { a.stop(loadgen.EndCanceled, context.Cause(ctx)) })

	// The DNS watch runs while the requests do and ends with them (or with ctx).
	dnsCancel, dnsDone := func() {}, make(chan struct{})
	close(dnsDone)
	if cfg.Resolve != "" {
		a.dns = &dnsLog{}
		var dctx context.Context
		dctx, dnsCancel = context.WithCancel(ctx)
		dnsDone = make(chan struct{})
		go func() {
			defer close(dnsDone)
			dnsWatch(dctx, cfg.Resolve, func(d loadgen.DNSAnswer) {
				a.dns.add(d)
				if onDNS != nil {
					onDNS(d)
				}
			})
		}()
	}
	go func() {
		drain()
		dnsCancel()
		<-dnsDone
		stopOnCancel()
		closeIdle()
		a.finish(rec.reqs)
	}()
	return a, nil
}

// newTransport returns the transport of an attack speaking p. HTTP/2 is the standard
// library's own (Transport.Protocols), not vegeta's HTTP2 and H2C options: those install
// golang.org/x/net/http2's transport, which would make http.Client start a timer goroutine
// per request (see the package documentation) and which vegeta's other options, which
// configure an *http.Transport in place, cannot reach. The standard library bundles the same
// x/net code, so the error texts that classify reads are the same.
func newTransport(p loadgen.Protocol) *http.Transport {
	tr := &http.Transport{
		Proxy:           http.ProxyFromEnvironment,
		DialContext:     (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		IdleConnTimeout: 90 * time.Second,
	}
	switch p {
	case loadgen.ProtocolH2C:
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	case loadgen.ProtocolHTTP2:
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		// A test harness against the app's self-signed certificate: see loadgen.ProtocolHTTP2.
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // documented
	}
	return tr
}

// Progress returns live counts of the attack so far. It is safe to call
// concurrently with the attack.
func (a *Attack) Progress() loadgen.Progress {
	// Read completions before Sent so that Sent >= OK + Failed.
	ok, failed := a.ok.Load(), a.failed.Load()
	return loadgen.Progress{Sent: a.sent.Load(), OK: ok, Failed: failed}
}

// Stop ends the attack early: no more requests are sent, in-flight ones
// complete. It returns at once and is idempotent; call Wait for the Result.
func (a *Attack) Stop() { a.stop(loadgen.EndStopped, nil) }

// Done returns a channel closed when the attack has ended and its Result is
// ready.
func (a *Attack) Done() <-chan struct{} { return a.done }

// Wait blocks until the attack has ended (Duration up, Stop, or the context
// of Start ended) and returns its Result. The Result is returned even when
// the error is non-nil: the error reports that the context ended the attack
// early.
func (a *Attack) Wait() (*loadgen.Result, error) {
	<-a.done
	return a.result, a.err
}

// Config returns the attack's configuration, defaults applied.
func (a *Attack) Config() loadgen.Config { return a.cfg }

func (a *Attack) stop(reason loadgen.EndReason, cause error) {
	a.mu.Lock()
	if !a.finished && a.endReason == "" {
		a.endReason, a.stopAt, a.ctxErr = reason, time.Now(), cause
	}
	a.mu.Unlock()
	a.halt()
}

func (a *Attack) finish(reqs []loadgen.Request) {
	a.mu.Lock()
	a.finished = true
	rn := loadgen.Run{Started: a.started, Ended: time.Now(), StopAt: a.stopAt, EndReason: a.endReason}
	ctxErr := a.ctxErr
	a.mu.Unlock()

	// A stop that came after the sending window had passed did not cut the
	// run short.
	if rn.EndReason == "" || !rn.StopAt.Before(rn.Started.Add(a.cfg.Duration)) {
		rn.EndReason, rn.StopAt, ctxErr = loadgen.EndDuration, time.Time{}, nil
	}
	a.run = rn
	a.result = loadgen.NewResult(a.cfg, rn, reqs)
	if a.dns != nil {
		a.result.DNS = a.dns.all()
	}
	if rn.EndReason == loadgen.EndCanceled {
		a.err = fmt.Errorf("load attack on %s ended early: %w", a.cfg.Target, ctxErr)
	}
	close(a.done)
}

// recorder turns vegeta results into ledger entries. It runs on the one
// goroutine that drains vegeta's results channel.
type recorder struct {
	a      *Attack
	podKey string
	upKey  string
	pods   map[string]string
	errs   map[string]string
	reqs   []loadgen.Request
	// onRequest, if set, sees each request as it is recorded.
	onRequest func(loadgen.Request)
}

// maxInterned bounds the error texts kept for de-duplication; texts with
// connection ports in them are mostly unique.
const maxInterned = 4096

func newRecorder(cfg loadgen.Config, a *Attack) *recorder {
	expected := float64(cfg.Rate)*cfg.Duration.Seconds() + 16
	return &recorder{
		a:      a,
		podKey: http.CanonicalHeaderKey(cfg.PodHeader),
		upKey:  http.CanonicalHeaderKey(cfg.UpstreamHeader),
		pods:   map[string]string{},
		errs:   map[string]string{},
		reqs:   make([]loadgen.Request, 0, int(min(expected, 1<<20))),
	}
}

// add records one vegeta result.
func (rc *recorder) add(r *vegeta.Result) {
	q := loadgen.Request{
		Seq:       r.Seq,
		Timestamp: r.Timestamp,
		Latency:   r.Latency,
		Code:      r.Code,
		BytesIn:   r.BytesIn,
		Class:     loadgen.ClassOK,
	}
	if vs := r.Headers[rc.podKey]; len(vs) > 0 {
		q.Pod = vs[0] // interned by record
	}
	if rc.upKey != "" {
		if vs := r.Headers[rc.upKey]; len(vs) > 0 {
			q.Upstream = intern(rc.pods, vs[0])
		}
	}
	if r.Error != "" || r.Code < 200 || r.Code >= 400 {
		q.Class = classifyResult(r.Code, r.Error)
		q.Error = r.Error
	}
	rc.record(q)
}

// record keeps one request, classified; its texts are interned.
func (rc *recorder) record(q loadgen.Request) {
	if q.Class == loadgen.ClassOK {
		rc.a.ok.Add(1)
	} else {
		q.Error = intern(rc.errs, q.Error)
		rc.a.failed.Add(1)
	}
	if q.Peer != "" {
		q.Peer = intern(rc.pods, q.Peer)
	}
	if q.Pod != "" {
		q.Pod = intern(rc.pods, q.Pod)
	}
	if q.Status != "" {
		q.Status = intern(rc.pods, q.Status)
	}
	rc.reqs = append(rc.reqs, q)
	if rc.onRequest != nil {
		rc.onRequest(q)
	}
}

func intern(m map[string]string, s string) string {
	if v, ok := m[s]; ok {
		return v
	}
	if len(m) < maxInterned {
		m[s] = s
	}
	return s
}
