//go:build unix

package loadgen

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
)

// The benchmarks compare the client-side cost of a loadgen attack with a
// bare vegeta attack that only drains its results channel. The HTTP server
// runs in a child process (this test binary, re-executed) so that the CPU
// time and allocations measured are the client's alone.
//
//	go test -run '^$' -bench . -benchtime 5x ./loadgen/

const (
	benchRate      = 2000
	benchDuration  = 500 * time.Millisecond
	benchServerEnv = "LOADGEN_BENCH_SERVER"
)

// TestBenchServer is the child-process HTTP server of the benchmarks. It is
// skipped unless run by them. It prints its URL, then serves on 127.0.0.1
// until its stdin is closed, or for at most 10 minutes.
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
	}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("http://%s/\n", ln.Addr())
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
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		b.Fatalf("bench server: %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.TrimSpace(line)
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
	cfg := Config{Target: url, Rate: benchRate, Duration: benchDuration, KeepAlive: true}
	b.ReportAllocs()
	requests, failed := 0, 0
	runtime.GC()
	start := measure()
	b.ResetTimer()
	for range b.N {
		a, err := Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Wait()
		if err != nil {
			b.Fatal(err)
		}
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
		atk := vegeta.NewAttacker(vegeta.Timeout(DefaultTimeout), vegeta.KeepAlive(true),
			vegeta.MaxWorkers(DefaultMaxWorkers), vegeta.Redirects(vegeta.NoFollow))
		for r := range atk.Attack(vegeta.NewStaticTargeter(target), pacer, benchDuration, DefaultName) {
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
	cfg := Config{Target: url, Rate: 1000, Duration: time.Second, KeepAlive: true}
	var sum, worst float64
	invalid := 0
	for range b.N {
		a, err := Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Wait()
		if err != nil {
			b.Fatal(err)
		}
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

// BenchmarkAggregate measures the per-request cost of recording and
// aggregating 100,000 results, with 1 % failures.
func BenchmarkAggregate(b *testing.B) {
	const n = 100_000
	cfg := Config{Target: "http://127.0.0.1:1/", Rate: 1000, Duration: 100 * time.Second}.WithDefaults()
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
		_ = aggregate(cfg, run{started: t0, ended: t0.Add(cfg.Duration), endReason: EndDuration}, rc.reqs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/req")
}

// BenchmarkServeHeldRate reports the highest rate that load pods hold on this machine: the
// load pod's own code (Serve, its stream written and read back by Follow, merged with Merge
// when there are several), keep-alive off as the matrix's rows, against the child-process
// server. Rates are tried from 250 req/s up, doubling, then bisected down to 50 req/s; a rate
// is held when a 2 s run is valid and its achieved rate is within ±1 % of the asked one.
//
//	go test -run '^$' -bench ServeHeldRate -benchtime 1x ./loadgen/
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
		results := make([]*Result, pods)
		errs := make(chan error, pods)
		for i := range pods {
			go func() {
				pr, pw := io.Pipe()
				rm := Follow(pr)
				cfg := Config{Target: url, Rate: rate / pods, Duration: 2 * time.Second}
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
		res, err := Merge(Config{Target: url, Rate: rate / pods * pods, Duration: 2 * time.Second}, results...)
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
