// Package sampleapp is the sample HTTP service that rollcheck deploys to kind and
// keeps under load while its pods are rolled, deleted or drained. It runs as
// `rollcheck agent app` (the image rollcheck makes of its own executable, where
// /app is a link to it: the program named app is the sample app), or as the
// thin command fixtures/app (its Dockerfile's image).
//
// Its only job is to behave in a known, configurable way when Kubernetes
// stops it, and to say what it did on stdout, one JSON line per lifecycle
// moment (started, ready, sigterm, prestop, listener_closed, drained,
// exiting).
//
// What it does on SIGTERM (SIGINT is treated the same, for local use) is
// chosen by --shutdown or SHUTDOWN_MODE:
//
//	exit    exit at once with status 0; in-flight requests are dropped and
//	        the kernel tears down open connections.
//	drain   keep serving normally for --drain-delay, then close the listener,
//	        let in-flight requests finish (keep-alive responses carry
//	        "Connection: close", idle connections are closed) and exit 0.
//	        A second signal during the drain exits at once.
//	ignore  log the signal and keep serving until SIGKILL.
//
// Every flag has an environment fallback; a flag given on the command line
// wins over its variable:
//
//	--listen              LISTEN_ADDR          address to listen on (":8080")
//	--shutdown            SHUTDOWN_MODE        exit, drain or ignore ("drain")
//	--drain-delay         DRAIN_DELAY          drain mode: serve this long after SIGTERM before closing the listener (0s)
//	--request-duration    REQUEST_DURATION     how long each "/" request takes: "100ms" or a uniform range "50ms-200ms" (0s)
//	--unready-on-sigterm  UNREADY_ON_SIGTERM   /readyz answers 503 after SIGTERM (true)
//	--ready-delay         READY_DELAY          /readyz answers 503 for this long after the start, a
//	                                           warm-up: a new pod turns ready that much later (0s)
//	--stop-signal         STOP_SIGNAL          the signal to stop on: TERM (with INT) or QUIT (TERM)
//	--proxy-to            PROXY_TO             forward "/" to this upstream instead of serving it: the
//	                                           app as a proxy sidecar in front of another app ("")
//	--lines               LIFECYCLE_LINES      write the lifecycle lines (true); false: stdout stays
//	                                           empty, as with an app or proxy nobody here wrote
//	--protocol            PROTOCOL             http1, h2c, h2c-handler, http2 or grpc ("http1"): see below
//	--admin-listen        ADMIN_LISTEN         grpc: address of the HTTP endpoints (":8081")
//	--graceful-timeout    GRACEFUL_TIMEOUT     grpc, drain: GracefulStop at most this long, then Stop (0s: no bound)
//	--max-connection-age  MAX_CONNECTION_AGE   grpc: the server's MaxConnectionAge (0s: infinite)
//	--max-connection-age-grace MAX_CONNECTION_AGE_GRACE  grpc: its MaxConnectionAgeGrace (0s: infinite)
//
// The h2c modes serve HTTP/2 over cleartext on the same port as HTTP/1.1 (probes and /stats
// stay HTTP/1.1): "h2c" with the standard library's http.Server.Protocols, whose Shutdown (the
// drain mode) sends every HTTP/2 connection a GOAWAY and waits for its streams; "h2c-handler"
// with golang.org/x/net/http2/h2c's handler, which hijacks its connections from the server, so
// that Shutdown neither sends GOAWAY nor waits for them (golang/go#26682): the drain returns at
// once and the exit cuts their streams.
//
// The http2 mode serves HTTP over TLS on --listen, with an ECDSA P-256 certificate it makes and
// signs itself at start (in memory: no files, no key to mount; it names the pod, POD_IP and the
// loopback, and the "started" line gives its SHA-256): ALPN offers h2 and http/1.1, so HTTP/2
// clients (loadgen's http2 load) get HTTP/2 and others (the kubelet's probes and hooks, which
// must say scheme: HTTPS and do not verify the certificate) HTTP/1.1. Every endpoint is behind
// TLS; a cleartext request gets the server's 400. As in the h2c mode the server is the standard
// library's (http.Server.Protocols): the drain's Shutdown sends every HTTP/2 connection a
// GOAWAY and waits for its streams; exit cuts them.
//
// The grpc mode serves gRPC with grpc-go's own server on --listen: the standard health service
// (grpc.health.v1, SERVING from the end of the warm-up until SIGTERM, then NOT_SERVING unless
// --unready-on-sigterm=false) and rollcheck.app.v1.App/Sleep, which takes a
// google.protobuf.Duration (zero: the request duration), waits and answers
// google.protobuf.Empty; every answer names the pod in its trailer
// metadata (x-pod-name, x-pod-ip). The HTTP endpoints below move to --admin-listen. On SIGTERM,
// drain is GracefulStop (GOAWAY, listener closed, RPCs in flight finished) after the drain
// delay, bounded by --graceful-timeout after which Stop cuts what is left; exit and ignore are
// as over HTTP. The app's dependencies outside the standard library are golang.org/x/net (the
// h2c-handler mode) and grpc-go (the grpc mode).
//
// As a proxy (--proxy-to) the app is a sidecar in front of another app in its pod: "/" requests
// go to the upstream (an upstream that cannot be reached answers 502), and the shutdown mode
// applies to the proxy's own listener and the requests it forwards.
//
// POD_NAME and POD_IP (from the downward API) are sent back on every response
// as X-Pod-Name and X-Pod-IP; without POD_NAME the host name is used.
//
// Endpoints:
//
//	/              sleeps for the request duration (or ?sleep=250ms) and names the pod
//	/healthz       200 while the process lives
//	/readyz        200 from the end of the warm-up (--ready-delay; at once without one) until
//	               SIGTERM, then 503 (unless --unready-on-sigterm=false); the "ready" line says when
//	/prestop       for an httpGet preStop hook: sleeps ?sleep=5s (at most 5m) and logs it
//	/stats         JSON: pod, ready, in-flight and served counts of "/" requests
//
// The image is FROM scratch, with no shell and no sleep binary, so an exec preStop hook runs
// the app itself: "/app sleep 5s" sleeps (at most 5m) and exits 0 (Main's "sleep" argument);
// "/app await-dns NAME COUNT WITHIN" waits for a DNS name to answer COUNT addresses (AwaitDNS).
//
// A bad flag or variable is reported on one line of stderr and the process
// exits with status 2 before it listens.
package sampleapp

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rollcheck/rollcheck/timeline"
)

// Main is the program: args are its arguments after the program's name ("sleep 5s", or the
// flags), its configuration's fallbacks come from the environment, and it returns the exit
// status. It installs its own signal handling (see run): the caller must have none.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "sleep" {
		return sleepCommand(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == AwaitDNS {
		return awaitDNSCommand(context.Background(), args[1:], net.DefaultResolver.LookupHost, stdout, stderr)
	}
	return run(args, os.Getenv, stdout, stderr)
}

// newHTTPServer returns the server of h speaking p (see appProtocol). In the http2 mode it
// holds its TLS configuration and is served with ServeTLS, which offers h2 and http/1.1 by ALPN.
func newHTTPServer(p appProtocol, h http.Handler, cert tls.Certificate) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	switch p {
	case protoH2C:
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	case protoHTTP2:
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetHTTP2(true)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case protoH2CHandler:
		// Deliberately without http2.ConfigureServer: that is what leaves Shutdown blind.
		srv.Handler = h2c.NewHandler(h, &http2.Server{})
	}
	return srv
}

// sleepCommand is "app sleep DURATION", for exec preStop hooks in an image without a shell.
func sleepCommand(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "app: usage: app sleep DURATION (e.g. 5s)")
		return 2
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < 0 || d > maxSleep {
		fmt.Fprintf(stderr, "app: sleep %q: want a duration from 0 to %s\n", args[0], maxSleep)
		return 2
	}
	time.Sleep(d)
	return 0
}

// AwaitDNS is the sample app's command "app await-dns NAME COUNT WITHIN": it asks the cluster's
// DNS for NAME every 250 ms until the answer holds at least COUNT addresses, and exits 0 naming
// them; 1 when WITHIN passed first, naming the last answer. An init container of a proxy that
// resolves its upstream once, at its start (internal/proxies), runs it, so that the proxy starts
// with every pod of the app, not with the first one the DNS answered with.
const AwaitDNS = "await-dns"

// awaitDNSCommand is AwaitDNS, resolving with lookup.
func awaitDNSCommand(ctx context.Context, args []string, lookup func(context.Context, string) ([]string, error), stdout, stderr io.Writer) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "app: "+AwaitDNS+": "+format+" (usage: app "+AwaitDNS+" NAME COUNT WITHIN, e.g. app-headless 3 60s)\n", a...)
		return 2
	}
	if len(args) != 3 {
		return usage("want 3 arguments, got %d", len(args))
	}
	name := args[0]
	count, err := strconv.Atoi(args[1])
	if err != nil || count < 1 {
		return usage("count %q: want a whole number of addresses, at least 1", args[1])
	}
	within, err := time.ParseDuration(args[2])
	if err != nil || within <= 0 || within > maxSleep {
		return usage("within %q: want a duration above 0 and at most %s", args[2], maxSleep)
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last []string
	var lastErr error
	for {
		qctx, qcancel := context.WithTimeout(ctx, time.Second)
		addrs, err := lookup(qctx, name)
		qcancel()
		if err == nil {
			slices.Sort(addrs)
			last, lastErr = addrs, nil
			if len(addrs) >= count {
				fmt.Fprintf(stdout, "app: %s answers %d address(es): %s\n", name, len(addrs), strings.Join(addrs, " "))
				return 0
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				fmt.Fprintf(stderr, "app: %s: fewer than %d addresses after %s: %v\n", name, count, within, lastErr)
			} else {
				fmt.Fprintf(stderr, "app: %s: fewer than %d addresses after %s: the last answer held %d (%s)\n", name, count, within, len(last), strings.Join(last, " "))
			}
			return 1
		case <-tick.C:
		}
	}
}

// run starts the app and returns its exit status once the shutdown mode says
// it is time to stop.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "Usage: app [flags]")
		defaults := defaultConfig()
		fs := newFlagSet(&defaults)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "app: %v\n", err)
		return 2
	}

	lines := stdout
	if cfg.quiet {
		lines = io.Discard // every lifecycle line, "started" included; errors still go to stderr
	}
	events := newLifecycle(lines)
	pod := podFromEnv(getenv)
	srv := newServer(pod, cfg.requestDuration, events)
	if cfg.readyDelay > 0 {
		srv.ready.Store(false) // warming up: /readyz answers 503 until the delay has passed
	}
	if cfg.proxyTo != nil {
		srv.proxy = newProxy(cfg.proxyTo, events)
	}

	// Listen for signals before listening for traffic, so that no SIGTERM
	// can arrive while the default action (die at once) is still in place.
	sigs := make(chan os.Signal, 2)
	if cfg.stopSignal == "QUIT" {
		signal.Notify(sigs, syscall.SIGQUIT) // SIGTERM keeps its default: the process dies at once
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	}

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		fmt.Fprintf(stderr, "app: %v\n", err)
		return 1
	}
	ln = &loggedListener{Listener: ln, events: events}
	started := fields{
		"addr":               ln.Addr().String(),
		"shutdown":           string(cfg.mode),
		"drain_delay":        cfg.drainDelay.String(),
		"request_duration":   cfg.requestDuration.String(),
		"unready_on_sigterm": cfg.unreadyOnSigterm,
		"ready_delay":        cfg.readyDelay.String(),
		"pod":                pod.name,
		"pod_ip":             pod.ip,
		"pid":                os.Getpid(),
		"proxy_to":           proxyTo(cfg),
		"protocol":           string(cfg.protocol),
	}
	serveErr := make(chan error, 2)
	sd := &shutdown{cfg: cfg, srv: srv, events: events, sigs: sigs}
	if cfg.protocol == protoGRPC {
		aln, err := net.Listen("tcp", cfg.adminListen)
		if err != nil {
			fmt.Fprintf(stderr, "app: admin: %v\n", err)
			return 1
		}
		sd.health = health.NewServer()
		if cfg.readyDelay > 0 {
			sd.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING) // warming up, as /readyz
		}
		sd.grpc = newGRPCServer(cfg, srv, sd.health)
		admin := newHTTPServer(protoHTTP1, srv.handler(), tls.Certificate{})
		started["admin_addr"] = aln.Addr().String()
		started["graceful_timeout"] = cfg.gracefulTimeout.String()
		started["max_connection_age"] = cfg.maxConnAge.String()
		started["max_connection_age_grace"] = cfg.maxConnAgeGrace.String()
		events.log(timeline.LineStarted, started)
		go func() { serveErr <- sd.grpc.Serve(ln) }()
		go func() { serveErr <- admin.Serve(aln) }()
	} else {
		var cert tls.Certificate
		if cfg.protocol == protoHTTP2 {
			if cert, err = selfSignedCert(pod, time.Now()); err != nil {
				fmt.Fprintf(stderr, "app: tls certificate: %v\n", err)
				return 1
			}
			started["tls"] = "self-signed ECDSA P-256, sha256 " + fingerprint(cert)
		}
		sd.http = newHTTPServer(cfg.protocol, srv.handler(), cert)
		events.log(timeline.LineStarted, started)
		go func() {
			if sd.http.TLSConfig != nil {
				serveErr <- sd.http.ServeTLS(ln, "", "") // the certificate is in TLSConfig
				return
			}
			serveErr <- sd.http.Serve(ln)
		}()
	}
	if cfg.readyDelay > 0 {
		go sd.warmUp(cfg.readyDelay)
	} else {
		events.log(timeline.LineReady, nil)
	}

	return sd.wait(serveErr)
}
