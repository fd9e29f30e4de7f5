package attack_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
)

// A short constant-rate attack on a local server that names its pod in X-Pod-Name and
// answers its third request with 503: the Result holds every request, classified.
func ExampleStart() {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, "web-1")
		if served.Add(1) == 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	a, err := attack.Start(context.Background(), loadgen.Config{
		Target:    srv.URL, // loopback: loadgen refuses other hosts unless AllowRemote is set
		Rate:      100,     // requests per second
		Duration:  300 * time.Millisecond,
		KeepAlive: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Wait()
	if err != nil {
		fmt.Println(err)
		return
	}

	var pods []string
	for _, r := range res.Requests {
		if r.Pod != "" && !slices.Contains(pods, r.Pod) {
			pods = append(pods, r.Pod)
		}
	}
	t := res.Totals
	fmt.Println("ended by:", res.EndReason)
	fmt.Println("every request in the ledger:", len(res.Requests) == t.Requests && t.Requests == int(served.Load()))
	fmt.Println("ok + failed = requests:", t.OK+t.Failed == t.Requests)
	fmt.Println("failures:", t.Failures)
	fmt.Println("pods:", pods)
	// Output:
	// ended by: duration
	// every request in the ledger: true
	// ok + failed = requests: true
	// failures: map[http_503:1]
	// pods: [web-1]
}

// HTTP/2 over TLS against a server with a self-signed certificate (httptest's): every request
// is a stream of a shared connection, and the handler sees HTTP/2.
func ExampleStart_http2() {
	var h2 atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	a, err := attack.Start(context.Background(), loadgen.Config{
		Target:    srv.URL, // https://127.0.0.1:…
		Protocol:  loadgen.ProtocolHTTP2,
		Rate:      50,
		Duration:  200 * time.Millisecond,
		KeepAlive: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := a.Wait()
	fmt.Println("all HTTP/2:", int(h2.Load()) == res.Totals.Requests, "failed:", res.Totals.Failed)
	// Output:
	// all HTTP/2: true failed: 0
}

// gRPC load against a local server that registers the standard health service: every RPC is a
// health check, kept with its status and the address it went to.
func ExampleStart_grpc() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	a, err := attack.Start(context.Background(), loadgen.Config{
		Target:    ln.Addr().String(), // host:port, or dns:///name:port
		Protocol:  loadgen.ProtocolGRPC,
		Balancing: loadgen.BalancingPickFirst, // the default: one connection
		Rate:      50,
		Duration:  200 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := a.Wait()
	q := res.Requests[0]
	fmt.Println("method:", res.Config.GRPCMethod)
	fmt.Println("status:", q.Status, "class:", q.Class, "peer is the server:", q.Peer == ln.Addr().String())
	fmt.Println("failed:", res.Totals.Failed, "valid:", res.Valid)
	// Output:
	// method: /grpc.health.v1.Health/Check
	// status: OK class: ok peer is the server: true
	// failed: 0 valid: true
}
