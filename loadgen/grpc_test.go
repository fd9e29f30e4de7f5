package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestGRPCValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg Config
		bad string
	}{
		{Config{Target: "127.0.0.1:50051"}, ""},
		{Config{Target: "dns:///localhost:50051", Balancing: BalancingRoundRobin, WaitForReady: true, Retry: true}, ""},
		{Config{Target: "dns:///app.ns:50051", AllowRemote: true, GRPCMethod: "/pkg.Svc/Do", GRPCMessage: []byte{8, 1}}, ""},
		{Config{Target: "http://127.0.0.1:50051/"}, "want host:port or dns:///host:port"},
		{Config{Target: "127.0.0.1"}, "want host:port or dns:///host:port"},
		{Config{Target: "10.0.0.1:50051"}, "is not a loopback address"},
		{Config{Target: "127.0.0.1:1", GRPCMethod: "pkg.Svc/Do"}, `grpcMethod "pkg.Svc/Do": want /package.Service/Method`},
		{Config{Target: "127.0.0.1:1", GRPCMethod: "/pkg.Svc"}, "want /package.Service/Method"},
		{Config{Target: "127.0.0.1:1", Balancing: "least_request"}, `balancing "least_request": want pick_first or round_robin`},
		{Config{Target: "127.0.0.1:1", Method: "POST"}, `method "POST" is HTTP's`},
	} {
		cfg := tc.cfg
		cfg.Protocol, cfg.Rate, cfg.Duration = ProtocolGRPC, 1, time.Second
		err := cfg.Validate()
		if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.bad)
		}
	}
	err := Config{Target: "http://127.0.0.1:1/", Rate: 1, Duration: time.Second, Retry: true}.Validate()
	if err == nil || !strings.Contains(err.Error(), "are gRPC's") {
		t.Errorf("retry over HTTP: %v", err)
	}
}

// A request ended by the client's own timeout, over HTTP or gRPC, timed out; nothing else did.
func TestTimedOut(t *testing.T) {
	for c, want := range map[Class]bool{ClassTimeout: true, GRPCClass(4): true, // DEADLINE_EXCEEDED
		GRPCClass(14): false, ClassEOF: false, ClassOK: false, ProxyClass(504): false} {
		if got := c.TimedOut(); got != want {
			t.Errorf("%s.TimedOut() = %t, want %t", c, got, want)
		}
	}
}

// GRPCClass keys the classes by gRPC's status code; loadgen/attack's tests check the names
// against grpc-go's codes.
func TestGRPCClass(t *testing.T) {
	for code, want := range map[uint32]Class{0: ClassOK, 1: "grpc_canceled", 4: "grpc_deadline_exceeded",
		8: "grpc_resource_exhausted", 14: "grpc_unavailable", 16: "grpc_unauthenticated", 17: ClassOther, 99: ClassOther} {
		if got := GRPCClass(code); got != want {
			t.Errorf("GRPCClass(%d) = %q, want %q", code, got, want)
		}
	}
	if !GRPCClass(14).IsGRPC() || !ClassGRPCNotServing.IsGRPC() || ClassReset.IsGRPC() || GRPCClass(0).IsGRPC() {
		t.Error("IsGRPC wrong")
	}
}
