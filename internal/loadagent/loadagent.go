// Package loadagent is the load pod's program: it runs one constant-rate attack
// (loadgen) against a Service of the cluster it runs in and writes the attack's ledger on
// stdout as loadgen's stream (JSON lines: start, each request as it completes, end), which the
// test process reads back through the pod's logs with attack.Follow.
//
//	rollcheck-load --target http://rollcheck-load.NS.svc:8080/ --rate 50 --duration 20s
//	               [--timeout 2s] [--method GET] [--keepalive] [--pod-header X-Pod-Name] [--name N]
//	               [--proxy] [--upstream-header X-Upstream] [--host HOST] [--resolve NAME]
//	               [--serving-replicas N] [--clock-port P]
//
// With --clock-port P it also answers GET /clock on port P with its clock's time (RFC 3339,
// nanoseconds): the test process reads it through the API server's pod proxy to measure the
// offset between this pod's clock, which stamps every request, and its own (engine).
//
// With --serving-replicas N it first waits, on its own path to the target, until the target
// answers cleanly from N pods (attack.WaitServing: a minute at most; exit 3 with one line when
// it does not), and only then starts the attack and writes the stream's start line.
//
// SIGTERM or SIGINT (the pod's deletion) stops the attack: nothing more is sent, the requests
// in flight complete and are written, then the end line, and the program exits 0. Every load
// loop is bounded: --duration is required and at most loadgen.MaxDuration.
//
// It runs as `rollcheck agent load` (the load image rollcheck makes of its own executable), or
// as the thin command cmd/rollcheck-load (its Dockerfile's image); the name rollcheck-load in
// its usage and error lines is kept for both.
//
// Everything on stdout is the stream. The container runtime merges stderr into the same pod
// log, so rollcheck-load writes on stderr only when it fails: one line, then exit 2 for bad
// flags (before anything is sent) or 1 when the stream cannot be written.
package loadagent

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
)

// Main is the program: args are its arguments after the program's name; it returns the exit
// status. SIGTERM or SIGINT stops the attack (it handles them itself until it returns).
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return run(ctx, args, stdout, stderr)
}

// run is the program: it parses args into a loadgen.Config, serves the attack's stream on
// stdout until it ends or ctx does, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, replicas, clockPort, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "rollcheck-load:", err)
		return 2
	}
	if clockPort > 0 {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", clockPort))
		if err != nil {
			fmt.Fprintln(stderr, "rollcheck-load: --clock-port:", oneLine(err))
			return 2
		}
		srv := &http.Server{Handler: clockHandler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	if replicas > 0 {
		if err := attack.WaitServing(ctx, cfg, replicas, nil); err != nil {
			fmt.Fprintln(stderr, "rollcheck-load:", oneLine(err))
			return 3
		}
	}
	if err := attack.Serve(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "rollcheck-load: writing the stream:", oneLine(err))
		return 1
	}
	return 0
}

const usage = "usage: rollcheck-load --target URL --rate N --duration D [--timeout D] [--method M] [--keepalive] [--pod-header H] [--name N] [--serving-replicas N] [--clock-port P]"

// clockHandler answers GET /clock with the time now, RFC 3339 with nanoseconds.
func clockHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /clock", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, time.Now().UTC().Format(time.RFC3339Nano))
	})
	return mux
}

// parse reads the flags into a validated Config; every problem is in one one-line error.
func parse(args []string) (cfg loadgen.Config, replicas, clockPort int, err error) {
	fs := flag.NewFlagSet("rollcheck-load", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The target is a cluster-internal Service address, never a loopback one.
	cfg = loadgen.Config{AllowRemote: true}
	fs.StringVar(&cfg.Target, "target", "", "URL to load, a Service of this cluster (required)")
	fs.IntVar(&cfg.Rate, "rate", 0, "requests per second (required)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "how long requests are sent (required, a bound)")
	fs.DurationVar(&cfg.Timeout, "timeout", 0, "per-request timeout (default loadgen.DefaultTimeout)")
	fs.StringVar(&cfg.Method, "method", "", "HTTP method (default GET)")
	fs.BoolVar(&cfg.KeepAlive, "keepalive", false, "reuse connections between requests")
	fs.StringVar((*string)(&cfg.Protocol), "protocol", "", "http1 (default), h2c (HTTP/2 cleartext), http2 (HTTP/2 over TLS, certificate not verified)\n"+
		"or grpc (--target is then host:port or dns:///host:port)")
	fs.StringVar(&cfg.GRPCMethod, "grpc-method", "", "gRPC: the full method to call (default /grpc.health.v1.Health/Check)")
	fs.Func("grpc-message", "gRPC: the request message, protobuf wire format in base64 (default empty)", func(v string) error {
		b, err := base64.StdEncoding.DecodeString(v)
		cfg.GRPCMessage = b
		return err
	})
	fs.StringVar((*string)(&cfg.Balancing), "balancing", "", "gRPC: pick_first (default) or round_robin")
	fs.BoolVar(&cfg.WaitForReady, "wait-for-ready", false, "gRPC: RPCs wait for a ready connection instead of failing UNAVAILABLE")
	fs.BoolVar(&cfg.Retry, "retry", false, "gRPC: a retry policy on UNAVAILABLE")
	fs.StringVar(&cfg.PodHeader, "pod-header", "", "response header naming the responding pod (default X-Pod-Name)")
	fs.StringVar(&cfg.Name, "name", "", "attack name (X-Vegeta-Attack header)")
	fs.BoolVar(&cfg.Proxy, "proxy", false, "the target is a proxy in front of the app: its own 5xx answers get their own classes")
	fs.StringVar(&cfg.UpstreamHeader, "upstream-header", "", "response header in which the proxy names the upstream it chose")
	fs.StringVar(&cfg.Resolve, "resolve", "", "a DNS name to ask the cluster's DNS for every 250 ms while the load runs (a headless Service)")
	fs.Func("host", "Host header of every request", func(v string) error {
		cfg.Headers = map[string]string{"Host": v}
		return nil
	})
	fs.IntVar(&replicas, "serving-replicas", 0, "wait until the target answers from this many pods first (0: no wait)")
	fs.IntVar(&clockPort, "clock-port", 0, "answer GET /clock with this pod's time on this port (0: no clock)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, 0, 0, err
		}
		return cfg, 0, 0, fmt.Errorf("%v (%s)", err, usage)
	}
	if fs.NArg() > 0 {
		return cfg, 0, 0, fmt.Errorf("unexpected argument %q (%s)", fs.Arg(0), usage)
	}
	if replicas < 0 || replicas > 100 {
		return cfg, 0, 0, fmt.Errorf("--serving-replicas %d: want 0 to 100", replicas)
	}

	if err := cfg.Validate(); err != nil {
		return cfg, 0, 0, errors.New(oneLine(err))
	}
	if clockPort < 0 || clockPort > 65535 {
		return cfg, 0, 0, fmt.Errorf("--clock-port %d: want 0 to 65535", clockPort)
	}
	return cfg, replicas, clockPort, nil
}

// oneLine joins the lines of err (errors.Join's) with "; ".
func oneLine(err error) string {
	return strings.Join(strings.Split(strings.TrimSpace(err.Error()), "\n"), "; ")
}
