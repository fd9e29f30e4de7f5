package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// MaxDuration is the longest attack a Config may ask for. Every load loop
	// in rollcheck is bounded; an unbounded (zero) duration is refused.
	MaxDuration = time.Hour
	// MaxRate is the highest request rate, per second, a Config may ask for.
	MaxRate = 100_000
	// MaxRequests bounds Rate × Duration, since the ledger keeps every
	// request in memory (about 120 bytes each).
	MaxRequests = 10_000_000
	// maxWorkersLimit is the highest MaxWorkers a Config may ask for.
	maxWorkersLimit = 100_000
	// MaxInFlight bounds the default MaxWorkers, sized from Rate × Timeout: the requests that
	// may be in flight at once when the app stops answering, each a worker (and a connection)
	// of its own. rollcheck's checks refuse a rate and timeout whose product exceeds it.
	MaxInFlight = 20_000

	// DefaultMethod is the HTTP method used when Config.Method is empty.
	DefaultMethod = http.MethodGet
	// DefaultTimeout is the per-request timeout used when Config.Timeout is
	// zero. It is short so that a black-holed request fails in its own bucket.
	DefaultTimeout = 2 * time.Second
	// DefaultConnections is the maximum number of idle connections kept per host when
	// Config.Connections is zero: vegeta's own default (vegeta.DefaultConnections).
	DefaultConnections = 10000
	// DefaultWorkers is the initial number of workers when Config.Workers is zero: vegeta's
	// own default (vegeta.DefaultWorkers).
	DefaultWorkers = 10
	// DefaultMaxWorkers bounds the number of concurrent requests when
	// Config.MaxWorkers is zero. Vegeta's own default is unbounded.
	DefaultMaxWorkers = 1000
	// DefaultPodHeader is the response header that names the responding pod
	// when Config.PodHeader is empty.
	DefaultPodHeader = "X-Pod-Name"
	// DefaultName is the attack name used when Config.Name is empty. Vegeta
	// sends it in the X-Vegeta-Attack request header and "vegeta plot" uses it
	// to label the series.
	DefaultName = "rollcheck"
)

// ErrInvalidConfig is wrapped by every error Config.Validate returns.
var ErrInvalidConfig = errors.New("invalid loadgen config")

// Config describes one constant-rate load run against one target.
//
// Durations are encoded in JSON as integer nanoseconds.
type Config struct {
	// Name labels the attack (X-Vegeta-Attack header, vegeta plot series).
	// Default DefaultName.
	Name string `json:"name,omitempty"`
	// Target is the full URL to hit, e.g. http://127.0.0.1:30080/. Required;
	// scheme http or https, with a host.
	Target string `json:"target"`
	// Method is the HTTP method. Default GET.
	Method string `json:"method"`
	// Headers are sent with every request.
	Headers map[string]string `json:"headers,omitempty"`
	// Rate is the number of requests per second. Required, > 0.
	Rate int `json:"rate"`
	// Duration is how long requests are sent. Required, > 0 and
	// <= MaxDuration.
	Duration time.Duration `json:"duration"`
	// Timeout is the per-request timeout. Default DefaultTimeout.
	Timeout time.Duration `json:"timeout"`
	// KeepAlive reuses connections between requests. Off by default: see the
	// package documentation on transparent retries.
	KeepAlive bool `json:"keepAlive"`
	// Connections is the maximum number of idle connections kept per host.
	// Default DefaultConnections.
	Connections int `json:"connections"`
	// MaxConnections is the maximum number of connections per host;
	// 0 means unlimited.
	MaxConnections int `json:"maxConnections"`
	// Workers is the initial number of workers. Default DefaultWorkers.
	Workers uint64 `json:"workers"`
	// MaxWorkers bounds the number of workers, i.e. concurrent requests.
	// Default: enough for every request of Rate × Timeout to be in flight at once
	// (InFlight), at least DefaultMaxWorkers and at most MaxInFlight; never unbounded.
	MaxWorkers uint64 `json:"maxWorkers"`
	// PodHeader is the response header naming the responding pod. Default
	// DefaultPodHeader.
	PodHeader string `json:"podHeader"`
	// UpstreamHeader is the response header in which a proxy in front of the app names the
	// upstream address (ip:port) it sent the request to: nginx's $upstream_addr, HAProxy's
	// %si:%sp, Caddy's {rp.upstream.hostport}. Recorded as Request.Upstream. Empty: none.
	UpstreamHeader string `json:"upstreamHeader,omitempty"`
	// Proxy says the target is a proxy in front of the app (an ingress, a gateway, a reverse
	// proxy): a 5xx answer without PodHeader, when the app's own answers carry it, is the
	// proxy's own (ProxyClass) and Result.ProxyTold is set. Where no answer carries PodHeader
	// the two cannot be told apart and 5xx answers keep their HTTP5xxClass.
	Proxy bool `json:"proxy,omitempty"`
	// Resolve is a DNS name (a headless Service: the one a proxy in front resolves, or one whose
	// DNS window alone is measured) that the attack asks the DNS server of its resolv.conf for,
	// every ResolveEvery while it runs, from where it runs (a load pod): Result.DNS holds each
	// change of the answer, with its TTL. A name without a dot gets resolv.conf's first search
	// domain (the load pod's namespace). Empty: none.
	Resolve string `json:"resolve,omitempty"`
	// AllowRemote permits a target whose host is not a loopback address.
	AllowRemote bool `json:"allowRemote,omitempty"`
	// Protocol is what the load speaks: ProtocolHTTP1 (empty means it), ProtocolH2C (HTTP/2
	// over cleartext with prior knowledge, target scheme http) or ProtocolHTTP2 (HTTP/2 over
	// TLS, target scheme https, the server's certificate not verified) or ProtocolGRPC (unary
	// RPCs, Target a gRPC target). See Protocol.
	Protocol Protocol `json:"protocol,omitempty"`

	// GRPCMethod is the full method every RPC calls over gRPC, "/package.Service/Method".
	// Default DefaultGRPCMethod, the standard health check.
	GRPCMethod string `json:"grpcMethod,omitempty"`
	// GRPCMessage is the request message of every RPC, in protobuf's wire format (base64 in
	// JSON); the answer is kept as bytes, never decoded, so no .proto is needed. Default empty:
	// for the health check, a HealthCheckRequest that asks about the whole server.
	GRPCMessage []byte `json:"grpcMessage,omitempty"`
	// Balancing is the gRPC client's load balancing policy. Default BalancingPickFirst.
	Balancing Balancing `json:"balancing,omitempty"`
	// WaitForReady makes each RPC wait (until its Timeout) for a connection instead of failing
	// at once with UNAVAILABLE while the client has none ready.
	WaitForReady bool `json:"waitForReady,omitempty"`
	// Retry gives the client a service config retry policy: an RPC that ends UNAVAILABLE is
	// tried again, up to GRPCRetryAttempts attempts in all, within its Timeout.
	Retry bool `json:"retry,omitempty"`
}

// Protocol names the protocol of the load.
type Protocol string

// Protocols.
const (
	// ProtocolHTTP1 is HTTP/1.1, over TLS for an https target: the default, what an empty
	// Config.Protocol means.
	ProtocolHTTP1 Protocol = "http1"
	// ProtocolH2C is HTTP/2 over cleartext TCP with prior knowledge (RFC 9113 section 3.3):
	// no HTTP/1.1 Upgrade, the connection starts with the HTTP/2 preface. The target's scheme
	// is http.
	ProtocolH2C Protocol = "h2c"
	// ProtocolHTTP2 is HTTP/2 over TLS, negotiated by ALPN; a server that does not offer h2
	// fails every request. The target's scheme is https. The server's certificate is not
	// verified (InsecureSkipVerify): rollcheck is a test harness whose targets are apps in
	// its own cluster with self-signed certificates, and it measures availability, not trust.
	ProtocolHTTP2 Protocol = "http2"

	// ProtocolGRPC is gRPC over cleartext HTTP/2: unary RPCs of Config.GRPCMethod with
	// Config.GRPCMessage, through one grpc-go client connection (see Balancing). Target is a
	// gRPC target, "127.0.0.1:30080" or "dns:///name.namespace:port", not a URL. Method,
	// KeepAlive, Connections and MaxConnections are HTTP's and play no part: the client keeps
	// one connection per address it balances over; Headers are sent as request metadata.
	ProtocolGRPC Protocol = "grpc"
)

// Protocols is every Protocol a Config may name, in the order they are documented.
var Protocols = []Protocol{ProtocolHTTP1, ProtocolH2C, ProtocolHTTP2, ProtocolGRPC}

// HTTP2 reports whether p speaks HTTP/2 (ProtocolH2C or ProtocolHTTP2).
func (p Protocol) HTTP2() bool { return p == ProtocolH2C || p == ProtocolHTTP2 }

// WithDefaults returns a copy of c with every unset optional field set to its
// default.
func (c Config) WithDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Protocol == ProtocolGRPC {
		if c.GRPCMethod == "" {
			c.GRPCMethod = DefaultGRPCMethod
		}
		if c.Balancing == "" {
			c.Balancing = BalancingPickFirst
		}
	} else if c.Method == "" {
		c.Method = DefaultMethod
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxWorkers == 0 {
		c.MaxWorkers = sizedWorkers(c.Rate, c.Timeout)
	}
	if c.PodHeader == "" {
		c.PodHeader = DefaultPodHeader
	}
	return c
}

// InFlight is how many requests of rate per second may be in flight at once when each takes
// up to timeout (0: DefaultTimeout): the workers a load needs so that an app that stops
// answering makes its requests time out, not the generator stall.
func InFlight(rate int, timeout time.Duration) uint64 {
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if rate <= 0 || timeout < 0 {
		return 0
	}
	return uint64(math.Ceil(float64(rate) * timeout.Seconds()))
}

// sizedWorkers is the default MaxWorkers of a load of rate with timeout: InFlight, at least
// DefaultMaxWorkers and at most MaxInFlight. A load that needs more is judged by its stalls: one
// with every worker waiting on the app is the app's (Stall.Saturated).
func sizedWorkers(rate int, timeout time.Duration) uint64 {
	return min(max(DefaultMaxWorkers, InFlight(rate, timeout)), MaxInFlight)
}

// Validate reports every problem of c, one error per problem, joined. Each
// wraps ErrInvalidConfig. Fields that WithDefaults fills may be left zero.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}

	if c.Protocol == ProtocolGRPC {
		for _, err := range c.validateGRPC() {
			bad("%v", err)
		}
	} else if err := validateTarget(c.Target, c.AllowRemote); err != nil {
		bad("target: %v", err)
	} else if err := validateProtocol(c.Protocol, c.Target); err != nil {
		bad("protocol: %v", err)
	}
	if c.Protocol != ProtocolGRPC && (c.GRPCMethod != "" || len(c.GRPCMessage) > 0 || c.Balancing != "" || c.WaitForReady || c.Retry) {
		bad("grpcMethod, grpcMessage, balancing, waitForReady and retry are gRPC's: protocol is %q", c.Protocol)
	}
	if c.Method != "" && !isToken(c.Method) {
		bad("method %q is not a valid HTTP method", c.Method)
	}
	if c.Resolve != "" {
		if _, err := dnsmessage.NewName(strings.TrimSuffix(c.Resolve, ".") + "."); err != nil || strings.ContainsAny(c.Resolve, " /:") {
			bad("resolve %q is not a DNS name", c.Resolve)
		}
	}
	if c.UpstreamHeader != "" && !isToken(c.UpstreamHeader) {
		bad("upstream header %q is not a valid HTTP header name", c.UpstreamHeader)
	}
	for k, v := range c.Headers {
		if !isToken(k) {
			bad("header name %q is not a valid HTTP header name", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			bad("header %q: value contains CR, LF or NUL", k)
		}
	}

	switch {
	case c.Rate <= 0:
		bad("rate must be > 0 requests per second, got %d", c.Rate)
	case c.Rate > MaxRate:
		bad("rate %d/s exceeds MaxRate %d/s", c.Rate, MaxRate)
	}
	switch {
	case c.Duration == 0:
		bad("duration is required: zero would mean an unbounded attack (max %s)", MaxDuration)
	case c.Duration < 0:
		bad("duration must be > 0, got %s", c.Duration)
	case c.Duration > MaxDuration:
		bad("duration %s exceeds MaxDuration %s", c.Duration, MaxDuration)
	}
	if c.Rate > 0 && c.Rate <= MaxRate && c.Duration > 0 && c.Duration <= MaxDuration {
		if n := float64(c.Rate) * c.Duration.Seconds(); n > MaxRequests {
			bad("rate %d/s for %s is %.0f requests, more than MaxRequests %d (every request is kept)",
				c.Rate, c.Duration, n, MaxRequests)
		}
	}
	if c.Timeout < 0 {
		bad("timeout must be >= 0 (0 means %s), got %s", DefaultTimeout, c.Timeout)
	}
	if c.Connections < 0 {
		bad("connections must be >= 0, got %d", c.Connections)
	}
	if c.MaxConnections < 0 {
		bad("maxConnections must be >= 0 (0 means unlimited), got %d", c.MaxConnections)
	}
	if c.MaxWorkers > maxWorkersLimit {
		bad("maxWorkers %d exceeds %d", c.MaxWorkers, maxWorkersLimit)
	}
	if c.MaxWorkers != 0 && c.Workers > c.MaxWorkers {
		bad("workers %d exceeds maxWorkers %d", c.Workers, c.MaxWorkers)
	}
	if c.Workers > maxWorkersLimit {
		bad("workers %d exceeds %d", c.Workers, maxWorkersLimit)
	}
	if c.PodHeader != "" && !isToken(c.PodHeader) {
		bad("podHeader %q is not a valid HTTP header name", c.PodHeader)
	}
	return errors.Join(errs...)
}

func validateTarget(target string, allowRemote bool) error {
	if target == "" {
		return errors.New("required, e.g. http://127.0.0.1:30080/")
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", target, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https, got %q", target, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%q: no host", target)
	}
	if !allowRemote && !isLoopback(host) {
		return fmt.Errorf("%q: host %q is not a loopback address (load goes to 127.0.0.1; set allowRemote to override)", target, host)
	}
	return nil
}

// validateProtocol checks that p is known and fits the target's scheme (a valid target).
func validateProtocol(p Protocol, target string) error {
	u, _ := url.Parse(target)
	switch p {
	case "", ProtocolHTTP1:
	case ProtocolH2C:
		if u.Scheme != "http" {
			return fmt.Errorf("%s needs an http:// target (cleartext), got %q", p, target)
		}
	case ProtocolHTTP2:
		if u.Scheme != "https" {
			return fmt.Errorf("%s needs an https:// target (HTTP/2 over TLS), got %q", p, target)
		}
	case ProtocolGRPC: // validateGRPC
	default:
		return fmt.Errorf("%q is not one of %v", p, Protocols)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isToken reports whether s is a non-empty RFC 7230 token, the syntax of HTTP
// methods and header names.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// transparentRetry reports whether Go's http.Transport silently retries a
// request of this config on a reused connection that the server closed. Over HTTP/2 it
// always does, for any method: a stream the server refused (above the last stream ID of its
// GOAWAY, or REFUSED_STREAM) is sent again on a new connection, since vegeta's requests can
// replay their body (GetBody is set). grpc-go does the same for an RPC that never reached the
// server's application (gRFC A6's transparent retry), whatever its retry policy.
func (c Config) transparentRetry() bool {
	if c.Protocol.HTTP2() || c.Protocol == ProtocolGRPC {
		return true
	}
	if !c.KeepAlive {
		return false
	}
	switch c.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	for k := range c.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Idempotency-Key", "X-Idempotency-Key":
			return true
		}
	}
	return false
}
