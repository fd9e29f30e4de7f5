//go:build unix

package attack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rollcheck/rollcheck/loadgen"
)

// The benchmarks compare the client-side cost of a loadgen attack with a
// bare vegeta attack that only drains its results channel. The HTTP server
// runs in a child process (this test binary, re-executed) so that the CPU
// time and allocations measured are the client's alone.
//
//	go test -run '^$' -bench . -benchtime 5x ./loadgen/attack/

const (
	benchRate      = 2000
	benchDuration  = 500 * time.Millisecond
	benchServerEnv = "LOADGEN_BENCH_SERVER"
)

// TestBenchServer is the child-process HTTP server of the benchmarks, with a gRPC server (the
// health service) beside it. It is skipped unless run by them. It prints its URL and the gRPC
// server's address on two lines, then serves on 127.0.0.1 until its stdin is closed, or for
// at most 10 minutes.
func TestBenchServer(t *testing.T) {
	if os.Getenv(benchServerEnv) != "1" {
		t.Skip("child process of the benchmarks")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:     http.HandlerFunc(okHandler),
		IdleTimeout: 5 * time.Second,
		Protocols:   new(http.Protocols),
	}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // h2c beside HTTP/1.1
	go func() { _ = srv.Serve(ln) }()
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gsrv := grpc.NewServer()
	healthpb.RegisterHealthServer(gsrv, health.NewServer())
	go func() { _ = gsrv.Serve(gln) }()
	defer gsrv.Stop()
	fmt.Printf("http://%s/\n%s\n", ln.Addr(), gln.Addr())
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-stdinClosed:
	case <-time.After(10 * time.Minute):
	}
	srv.Close()
}

// benchServer starts the child-process server and returns its URL.
func benchServer(b *testing.B) string {
	b.Helper()
	url, _ := benchServers(b)
	return url
}

// benchServers starts the child-process servers and returns the HTTP server's URL and the gRPC
// server's address.
func benchServers(b *testing.B) (url, grpcAddr string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	gline, gerr := br.ReadString('\n')
	if err != nil || gerr != nil || !strings.HasPrefix(line, "http://127.0.0.1:") || !strings.HasPrefix(gline, "127.0.0.1:") {
		b.Fatalf("bench server: %q %q, %v %v", line, gline, err, gerr)
	}
	go func() { _, _ = io.Copy(io.Discard, br) }()
	return strings.TrimSpace(line), strings.TrimSpace(gline)
}

// clientCost measures the CPU time and allocations of this process.
type clientCost struct {
	cpu     time.Duration
	mallocs uint64
	bytes   uint64
}

func measure() clientCost {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return clientCost{
		cpu:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		mallocs: ms.Mallocs,
		bytes:   ms.TotalAlloc,
	}
}

func (c clientCost) report(b *testing.B, since clientCost, requests int) {
	if requests == 0 {
		b.Fatal("no requests")
	}
	n := float64(requests)
	b.ReportMetric(float64(c.cpu-since.cpu)/n, "cpu-ns/req")
	b.ReportMetric(float64(c.mallocs-since.mallocs)/n, "allocs/req")
	b.ReportMetric(float64(c.bytes-since.bytes)/n, "B/req")
	b.ReportMetric(n/float64(b.N), "req/op")
}

func BenchmarkLoadgen(b *testing.B) {
	url := benchServer(b)
	benchLoadgen(b, loadgen.Config{Target: url, Rate: benchRate, Duration: benchDuration, KeepAlive: true})
}

// BenchmarkLoadgenGRPC is BenchmarkLoadgen for the gRPC attacker: health checks over one
// connection (pick_first), at the same rate.
func BenchmarkLoadgenGRPC(b *testing.B) {
	_, addr := benchServers(b)
	benchLoadgen(b, loadgen.Config{Target: addr, Protocol: loadgen.ProtocolGRPC, Rate: benchRate, Duration: benchDuration})
}

// runBench runs one attack of cfg to its end.
func runBench(b *testing.B, cfg loadgen.Config) *loadgen.Result {
	b.Helper()
	a, err := Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	res, err := a.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// benchLoadgen runs cfg b.N times and reports the client's cost per request.
func benchLoadgen(b *testing.B, cfg loadgen.Config) {
	b.ReportAllocs()
	requests, failed := 0, 0
	runtime.GC()
	start := measure()
	b.ResetTimer()
	for range b.N {
		res := runBench(b, cfg)
		requests += res.Totals.Requests
		failed += res.Totals.Failed
	}
	b.StopTimer()
	measure().report(b, start, requests)
	if failed > 0 {
		b.Errorf("%d failed requests", failed)
	}
}

func BenchmarkVegeta(b *testing.B) {
	url := benchServer(b)
	target := vegeta.Target{Method: http.MethodGet, URL: url}
	pacer := vegeta.ConstantPacer{Freq: benchRate, Per: time.Second}
	b.ReportAllocs()
	requests, failed := 0, 0
	runtime.GC()
	start := measure()
	b.ResetTimer()
	for range b.N {
		atk := vegeta.NewAttacker(vegeta.Timeout(loadgen.DefaultTimeout), vegeta.KeepAlive(true),
			vegeta.MaxWorkers(loadgen.DefaultMaxWorkers), vegeta.Redirects(vegeta.NoFollow))
		for r := range atk.Attack(vegeta.NewStaticTargeter(target), pacer, benchDuration, loadgen.DefaultName) {
			requests++
			if r.Error != "" {
				failed++
			}
		}
	}
	b.StopTimer()
	measure().report(b, start, requests)
	if failed > 0 {
		b.Errorf("%d failed requests", failed)
	}
}

// BenchmarkAchievedRate1000 reports how far a 1 s attack at 1000/s lands
// from its asked rate, in percent (mean and worst over the iterations).
func BenchmarkAchievedRate1000(b *testing.B) {
	url := benchServer(b)
	cfg := loadgen.Config{Target: url, Rate: 1000, Duration: time.Second, KeepAlive: true}
	var sum, worst float64
	invalid := 0
	for range b.N {
		res := runBench(b, cfg)
		e := 100 * math.Abs(res.AchievedRate-float64(cfg.Rate)) / float64(cfg.Rate)
		sum += e
		worst = max(worst, e)
		if !res.Valid {
			invalid++
			b.Logf("invalid run: %s", res.InvalidReason)
		}
	}
	b.ReportMetric(sum/float64(b.N), "rate-err-%")
	b.ReportMetric(worst, "worst-rate-err-%")
	b.ReportMetric(float64(invalid), "invalid-runs")
}

// BenchmarkAchievedRateProtocols reports, in one run against the child-process servers, how far
// 2 s attacks land from their asked rate over HTTP/1.1 (keep-alive), h2c and gRPC (the health
// check, pick_first), at the same rates: rate-err-% (mean over the iterations), the worst, and
// the runs that were invalid or had failures. The protocols take turns within each iteration,
// so that what else the machine does falls on all of them alike.
//
//	go test -run '^$' -bench AchievedRateProtocols -benchtime 3x ./loadgen/attack/
func BenchmarkAchievedRateProtocols(b *testing.B) {
	url, addr := benchServers(b)
	for _, rate := range []int{1000, 2000, 4000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			protos := []loadgen.Config{
				{Target: url, Protocol: loadgen.ProtocolHTTP1, KeepAlive: true},
				{Target: url, Protocol: loadgen.ProtocolH2C, KeepAlive: true},
				{Target: addr, Protocol: loadgen.ProtocolGRPC},
			}
			sum, worst := make([]float64, len(protos)), make([]float64, len(protos))
			bad := make([]int, len(protos))
			for range b.N {
				for i, cfg := range protos {
					cfg.Rate, cfg.Duration = rate, 2*time.Second
					res := runBench(b, cfg)
					e := 100 * math.Abs(res.AchievedRate-float64(rate)) / float64(rate)
					sum[i] += e
					worst[i] = max(worst[i], e)
					if !res.Valid || res.Totals.Failed > 0 {
						bad[i]++
					}
					b.Logf("%-5s %d req/s: achieved %.1f (%.2f %%), %d failed, valid %v %s", cfg.Protocol, rate, res.AchievedRate, e,
						res.Totals.Failed, res.Valid, res.InvalidReason)
				}
			}
			for i, cfg := range protos {
				p := string(cfg.Protocol)
				b.ReportMetric(sum[i]/float64(b.N), p+"-rate-err-%")
				b.ReportMetric(worst[i], p+"-worst-rate-err-%")
				b.ReportMetric(float64(bad[i]), p+"-bad-runs")
			}
		})
	}
}

// BenchmarkAggregate measures the per-request cost of recording and
// aggregating 100,000 results, with 1 % failures.
func BenchmarkAggregate(b *testing.B) {
	const n = 100_000
	cfg := loadgen.Config{Target: "http://127.0.0.1:1/", Rate: 1000, Duration: 100 * time.Second}.WithDefaults()
	rs := make([]vegeta.Result, n)
	hdr := http.Header{"X-Pod-Name": {"pod-0"}}
	for i := range rs {
		rs[i] = vegeta.Result{Seq: uint64(i), Code: 200, Timestamp: t0.Add(time.Duration(i+1) * time.Millisecond),
			Latency: time.Duration(i%1000) * time.Microsecond, Headers: hdr}
		if i%100 == 0 {
			rs[i].Code, rs[i].Error = 0, "dial tcp 127.0.0.1:1: connect: connection refused"
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rc := newRecorder(cfg, &Attack{})
		for i := range rs {
			rc.add(&rs[i])
		}
		_ = loadgen.NewResult(cfg, loadgen.Run{Started: t0, Ended: t0.Add(cfg.Duration), EndReason: loadgen.EndDuration}, rc.reqs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/req")
}

// BenchmarkServeHeldRate reports the highest rate that load pods hold on this machine: the
// load pod's own code (Serve, its stream written and read back by Follow, merged with Merge
// when there are several), keep-alive off as the matrix's rows, against the child-process
// server. Rates are tried from 250 req/s up, doubling, then bisected down to 50 req/s; a rate
// is held when a 2 s run is valid and its achieved rate is within ±1 % of the asked one.
//
//	go test -run '^$' -bench ServeHeldRate -benchtime 1x ./loadgen/attack/
func BenchmarkServeHeldRate(b *testing.B) {
	url := benchServer(b)
	for _, pods := range []int{1, 2} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			for range b.N {
				b.ReportMetric(float64(heldRate(b, url, pods)), "held-req/s")
			}
		})
	}
}

// heldRate searches the highest rate pods hold within ±1 %.
func heldRate(b *testing.B, url string, pods int) int {
	holds := func(rate int) bool {
		results := make([]*loadgen.Result, pods)
		errs := make(chan error, pods)
		for i := range pods {
			go func() {
				pr, pw := io.Pipe()
				rm := Follow(pr)
				cfg := loadgen.Config{Target: url, Rate: rate / pods, Duration: 2 * time.Second}
				err := Serve(context.Background(), cfg, pw)
				_ = pw.Close()
				res, ferr := rm.Wait()
				results[i] = res
				errs <- errors.Join(err, ferr)
			}()
		}
		for range pods {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		res, err := loadgen.Merge(loadgen.Config{Target: url, Rate: rate / pods * pods, Duration: 2 * time.Second}, results...)
		if err != nil {
			b.Fatal(err)
		}
		e := math.Abs(res.AchievedRate-float64(res.Config.Rate)) / float64(res.Config.Rate)
		b.Logf("pods=%d %5d req/s: achieved %.1f (%.2f %%), valid %v %s", pods, rate, res.AchievedRate, 100*e, res.Valid, res.InvalidReason)
		return res.Valid && e <= 0.01 && res.Totals.Failed == 0
	}
	lo, hi := 0, 250
	for hi <= 16000 && holds(hi) {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 50 {
		if mid := (lo + hi) / 2; holds(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
