package loadgen

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

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

// grpcCodeNames are the names of gRPC's status codes 0-16, by code, as grpc-go's
// codes.Code.String gives them. The codes are gRPC's wire protocol and do not change; the tests
// of loadgen/attack, which imports grpc-go, keep the names equal to grpc-go's.
var grpcCodeNames = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// grpcDeadlineExceeded is gRPC's status code DEADLINE_EXCEEDED (grpc-go's codes.DeadlineExceeded).
const grpcDeadlineExceeded = 4

// grpcClasses are the classes of gRPC status codes 0-16, "grpc_" and the code's name in
// lower snake case: "grpc_unavailable", "grpc_deadline_exceeded".
var grpcClasses = func() (cs [len(grpcCodeNames)]Class) {
	for i, name := range grpcCodeNames {
		var b strings.Builder
		for j, r := range name {
			if j > 0 && r >= 'A' && r <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteString(strings.ToLower(string(r)))
		}
		cs[i] = Class("grpc_" + b.String())
	}
	cs[0] = ClassOK
	return cs
}()

// GRPCClass returns the class of an RPC that ended with the gRPC status code code (grpc-go's
// codes.Code, as a number: GRPCClass(uint32(status.Code(err)))): ClassOK for OK (0), otherwise
// "grpc_" and the code's name in lower snake case, e.g. "grpc_unavailable" (14),
// "grpc_deadline_exceeded" (4, the client's Timeout). An unknown code is ClassOther.
func GRPCClass(code uint32) Class {
	if code < uint32(len(grpcClasses)) {
		return grpcClasses[code]
	}
	return ClassOther
}

// TimedOut reports whether c is a request that ended by the client's own timeout: ClassTimeout,
// or an RPC's DEADLINE_EXCEEDED (the load's Timeout is every RPC's deadline). Nothing answered
// it in time; it was not cut.
func (c Class) TimedOut() bool { return c == ClassTimeout || c == grpcClasses[grpcDeadlineExceeded] }

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
