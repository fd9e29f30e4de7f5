package scenario

import (
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/loadgen"
)

// Shutdown is what the app does on SIGTERM (the sample app's --shutdown modes).
type Shutdown string

// Shutdown modes.
const (
	ShutdownExit   Shutdown = "exit"   // stop at once; in-flight requests are dropped
	ShutdownDrain  Shutdown = "drain"  // stop accepting, finish in-flight requests, exit
	ShutdownIgnore Shutdown = "ignore" // keep serving until SIGKILL
)

// Sample is the sample app's own settings (its flags): what a scenario sets in the app
// rather than in its Deployment.
type Sample struct {
	// OnSIGTERM is what the app does on SIGTERM.
	OnSIGTERM Shutdown
	// DrainDelay: drain mode keeps serving this long after SIGTERM before it closes the listener.
	DrainDelay time.Duration
	// RequestDuration is how long the app takes to answer a request.
	RequestDuration time.Duration
	// ReadyDelay is the app's warm-up (its --ready-delay): its readiness probe fails for this
	// long after it starts, so that a new pod turns ready that much later (0: at once). The app
	// serves meanwhile; only the Service does not send to it.
	ReadyDelay time.Duration
	// Entry is how the image starts the app, which decides who is PID 1: "" (the app itself,
	// exec form), "shell" (a wrapper script under a shell that does not pass SIGTERM on) or
	// "tini" (a minimal init that forwards signals). The front end builds the image
	// (cluster.EntryImage) and gives it to Plan; "stopsignal" is the app itself in an image
	// whose STOPSIGNAL is SIGQUIT.
	Entry string
	// StopSignal is the signal the app stops on: "" (SIGTERM) or "QUIT" (then SIGTERM kills it
	// at once, Go's default).
	StopSignal string
	// Proxy, when set, puts the sample app as a proxy sidecar in front of the app: it listens on
	// the port the load is sent to and forwards to the app on 8081 in the same pod, and it exits
	// at SIGTERM (a proxy that does not drain).
	Proxy *Proxy
	// Protocol is what the app serves besides HTTP/1.1 (its --protocol): "" (HTTP/1.1 only),
	// "h2c" (the standard library's HTTP/2 over cleartext, whose Shutdown sends GOAWAY and waits
	// for the streams) or "h2c-handler" (golang.org/x/net/http2/h2c's handler, whose connections
	// Shutdown neither tells nor waits for), "http2" (HTTP/2 and HTTP/1.1 over TLS with a
	// self-signed certificate the app makes at start; Shutdown sends GOAWAY and waits, as with
	// h2c; the readiness probe says scheme HTTPS) or "grpc" (gRPC on the load's port: the health
	// service and App/Sleep; drain is GracefulStop; the HTTP endpoints and the readiness probe
	// on 8081).
	Protocol string
	// GracefulTimeout bounds the grpc mode's GracefulStop, after which Stop cuts the RPCs left
	// (0: no bound, GracefulStop waits for every RPC).
	GracefulTimeout time.Duration
	// MaxConnectionAge and MaxConnectionAgeGrace are the grpc mode's server settings (0:
	// infinite): the age after which it sends GOAWAY, and how long it then waits for the RPCs
	// in flight before it closes the connection.
	MaxConnectionAge, MaxConnectionAgeGrace time.Duration
}

// protocolString is the Protocol with the grpc mode's settings: "grpc,graceful=5s,age=30s+10s".
func (a Sample) protocolString() string {
	p := a.Protocol
	if a.GracefulTimeout > 0 {
		p += ",graceful=" + a.GracefulTimeout.String()
	}
	if a.MaxConnectionAge > 0 || a.MaxConnectionAgeGrace > 0 {
		p += ",age=" + a.MaxConnectionAge.String() + "+" + a.MaxConnectionAgeGrace.String()
	}
	return p
}

// Proxy is the proxy sidecar of a Sample.
type Proxy struct {
	// Native makes it a native sidecar (an init container with restartPolicy Always, GA in
	// Kubernetes 1.33), which the kubelet stops only after the app's container has exited;
	// otherwise it is a classic one, stopped with the app.
	Native bool
	// PreStop is its preStop (whole seconds; 0: none): an httpGet to its own /prestop, which
	// sleeps that long and logs when it starts and ends, so the rows see when the kubelet ran it.
	PreStop time.Duration
	// Quiet turns its lifecycle lines off (--lines=false), as with a proxy nobody here wrote:
	// only Kubernetes (its container status) and its spec say when it ended.
	Quiet bool
}

// preStopSeconds is the proxy's preStop sleep in seconds; 0 for none or no proxy.
func (p *Proxy) preStopSeconds() int64 {
	if p == nil {
		return 0
	}
	return int64(p.PreStop / time.Second)
}

// ProxyContainer and AppContainer are the containers of a Sample with a Proxy.
const (
	ProxyContainer = "proxy"
	AppContainer   = "app"
)

// Scenario is one configuration of the built-in matrix (a scenario; a row is what one run of
// its Plan found, check.Row): the sample app's settings and a Variant of its
// Deployment (the preStop, grace period and replicas, and the expected Outcome), under one
// disruption and one load. Everything but the Sample is the model's own (package check), with
// its defaults and limits: Plan validates it as any check file's.
type Scenario struct {
	App        Sample
	Variant    check.Variant
	Disruption check.Disruption
	Load       check.Load
	Quiet      time.Duration
	// Front, when set, is a real proxy in front of the app: the load goes through it.
	Front *Front
}

// check validates the sample app's settings, the one part of a Scenario the model does not know.
func (a Sample) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch a.OnSIGTERM {
	case ShutdownExit, ShutdownDrain, ShutdownIgnore:
	default:
		bad("onSIGTERM %q: want exit, drain or ignore", a.OnSIGTERM)
	}
	if a.Entry != "" && a.Entry != "shell" && a.Entry != "tini" && a.Entry != "stopsignal" {
		bad("entry %q: want empty (exec), shell, tini or stopsignal", a.Entry)
	}
	if a.StopSignal != "" && a.StopSignal != "QUIT" {
		bad("stopSignal %q: want empty (SIGTERM) or QUIT", a.StopSignal)
	}
	if a.Protocol != "" && a.Protocol != "h2c" && a.Protocol != "h2c-handler" && a.Protocol != "http2" && a.Protocol != "grpc" {
		bad("protocol %q: want empty (HTTP/1.1), h2c, h2c-handler, http2 or grpc", a.Protocol)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"gracefulTimeout", a.GracefulTimeout}, {"maxConnectionAge", a.MaxConnectionAge}, {"maxConnectionAgeGrace", a.MaxConnectionAgeGrace}} {
		if d.v < 0 || d.v > 5*time.Minute {
			bad("%s %s: want 0 to 5m", d.name, d.v)
		}
		if d.v != 0 && a.Protocol != "grpc" {
			bad("%s %s only applies to protocol grpc", d.name, d.v)
		}
	}
	if a.Protocol == "grpc" && a.Proxy != nil {
		bad("protocol grpc: the sample app is no gRPC proxy")
	}
	if a.Protocol == "http2" && a.Proxy != nil {
		bad("protocol http2: the proxy sidecar forwards cleartext HTTP/1.1 to the app, which would serve TLS")
	}
	if a.DrainDelay < 0 || a.DrainDelay > 5*time.Minute {
		bad("drainDelay %s: want 0 to 5m", a.DrainDelay)
	}
	if a.DrainDelay > 0 && a.OnSIGTERM != ShutdownDrain {
		bad("drainDelay %s only applies to onSIGTERM drain, not %s", a.DrainDelay, a.OnSIGTERM)
	}
	if p := a.Proxy; p != nil && (p.PreStop < 0 || p.PreStop%time.Second != 0 || p.PreStop > 5*time.Minute) {
		bad("proxy preStop %s: want whole seconds from 0 to 5m", p.PreStop)
	}
	if a.RequestDuration < 0 || a.RequestDuration > time.Minute {
		bad("requestDuration %s: want 0 to 1m", a.RequestDuration)
	}
	if a.ReadyDelay < 0 || a.ReadyDelay > time.Minute {
		bad("readyDelay %s: want 0 to 1m", a.ReadyDelay)
	}
	return oneline.Join(errs)
}

// ExecSleep is a preStop that runs the sample app's own sleep (`/app sleep 5s`): an exec hook
// that needs no shell or sleep binary in its FROM-scratch image.
func ExecSleep(d time.Duration) *check.PreStop {
	return &check.PreStop{Exec: []string{"/app", "sleep", d.String()}}
}

// HTTPSleep is a preStop httpGet to the sample app's /prestop, which answers after d.
func HTTPSleep(d time.Duration) *check.PreStop {
	return &check.PreStop{HTTPGet: "/prestop?sleep=" + d.String()}
}

// NativeSleep is Kubernetes' native sleep action for d (whole seconds).
func NativeSleep(d time.Duration) *check.PreStop {
	ps := check.NativeSleep(d)
	return &ps
}

// Plan is the check Plan of a Scenario: the sample app running image, rendered with its own
// settings, as the Variant changes it, under the Scenario's disruption and load. The Plan is
// validated (the model's rules, as for a check file, and the sample app's settings) and every
// problem is reported at once.
func (s Scenario) Plan(suite, image string) (check.Plan, error) {
	name := s.Variant.Name
	if image == "" {
		return check.Plan{}, fmt.Errorf("%s: no sample app image", name)
	}
	var errs []error
	if err := s.App.check(); err != nil {
		errs = append(errs, err)
	}
	if s.App.Protocol == "http2" && (s.Load.Protocol != loadgen.ProtocolHTTP2 || s.Front != nil) {
		// Only the http2 load sends TLS to the app (an https target); a proxy in front speaks
		// cleartext to it.
		errs = append(errs, fmt.Errorf("protocol http2: the app serves only TLS, which only load protocol http2 sends, straight to it (load protocol %q, front %v)",
			s.Load.Protocol, s.Front != nil))
	}
	objs, err := Render(name, s.App, image)
	if err != nil {
		return check.Plan{}, err
	}
	onSIGTERM := string(s.App.OnSIGTERM)
	if s.App.DrainDelay > 0 {
		onSIGTERM += "+" + s.App.DrainDelay.String()
	}
	if s.App.StopSignal != "" {
		onSIGTERM += "/SIG" + s.App.StopSignal // the signal it stops on: "drain/SIGQUIT"
	}
	if s.App.Entry != "" {
		onSIGTERM += "@" + s.App.Entry // how the image starts it: "drain@shell"
	}
	if s.App.Protocol != "" {
		onSIGTERM += "[" + s.App.protocolString() + "]" // whose shutdown it is: "drain[h2c-handler]"
	}
	container := ""
	if s.App.Proxy != nil {
		container = AppContainer // the proxy declares the port the load is sent to
	}
	p := check.Plan{
		Suite: suite,
		App: check.App{Objects: objs, Deployment: AppName, Port: SampleAppPort, Container: container, Path: "/", Images: []string{image},
			OnSIGTERM: onSIGTERM, RequestDuration: s.App.RequestDuration, ReadyDelay: s.App.ReadyDelay},
		Variant: s.Variant, Disruption: s.Disruption, Load: s.Load, Quiet: s.Quiet,
	}
	if s.Front != nil {
		if p, err = s.Front.withFront(p, image, replicasOf(objs, s.Variant)); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := p.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return check.Plan{}, fmt.Errorf("scenario %q: %w", name, oneline.Join(errs))
	}
	return p, nil
}
