package attack

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

func okHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set(loadgen.DefaultPodHeader, "pod-0")
	_, _ = w.Write([]byte("ok"))
}

// TestRefusedWindow closes the listener for a known window, then listens on
// the same port again: connections are refused exactly in that window.
func TestRefusedWindow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	srv1 := &http.Server{Handler: http.HandlerFunc(okHandler)}
	srv2 := &http.Server{Handler: http.HandlerFunc(okHandler)}
	go func() { _ = srv1.Serve(ln) }()
	t.Cleanup(func() { srv1.Close(); srv2.Close() })

	ctx := t.Context()
	a, err := Start(ctx, loadgen.Config{Target: "http://" + addr + "/", Rate: 100, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var w window
	go func() {
		if !after(ctx, a.started, time.Second) {
			return
		}
		ln.Close()
		closed := time.Now()
		if !after(ctx, a.started, 2*time.Second) {
			return
		}
		ln2, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listening again on %s: %v", addr, err)
			return
		}
		w.set(closed, time.Now())
		go func() { _ = srv2.Serve(ln2) }()
	}()
	res, err := a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	start, end := w.get()
	checkWindow(t, res, start, end, 100*time.Millisecond, loadgen.ClassRefused)

	if got := res.Totals.Failures[loadgen.ClassRefused]; got < 80 {
		t.Errorf("refused = %d, want about 100 (1 s at 100/s)", got)
	}
	if len(res.Bursts) != 1 {
		t.Errorf("bursts = %+v, want exactly one", res.Bursts)
	} else if b := res.Bursts[0]; b.First.Before(start.Add(-100*time.Millisecond)) || b.Last.After(end.Add(100*time.Millisecond)) {
		t.Errorf("burst [+%s, +%s] outside the window [+%s, +%s]", b.First.Sub(res.Started),
			b.Last.Sub(res.Started), start.Sub(res.Started), end.Sub(res.Started))
	}
	if res.DisruptionSeconds < 1 || res.DisruptionSeconds > 3 {
		t.Errorf("disruption seconds = %d, want 1..3 for a 1 s window", res.DisruptionSeconds)
	}
	if !res.Valid {
		// Validity is asserted by TestHealthy and TestJudge; here the
		// classes are under test and a starved CPU must not fail them.
		t.Logf("run invalid: %s", res.InvalidReason)
	}
	// Buckets well inside the window hold only refused requests.
	for _, b := range res.Buckets {
		bs, be := res.Started.Add(b.Start), res.Started.Add(b.Start+loadgen.BucketWidth)
		if bs.After(start.Add(100*time.Millisecond)) && be.Before(end.Add(-100*time.Millisecond)) {
			if b.Sent == 0 || b.Failures[loadgen.ClassRefused] != b.Sent {
				t.Errorf("bucket +%s inside the window: %+v, want all refused", b.Start, b)
			}
		}
	}
}

// TestReset answers every request with a RST (SO_LINGER 0 then close).
func TestReset(t *testing.T) {
	s := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if s.readRequest(c, br, 2*time.Second) {
			resetConn(c)
		}
	})
	for _, keepAlive := range []bool{false, true} {
		res := runAttack(t, loadgen.Config{Target: s.url, Rate: 50, Duration: time.Second, KeepAlive: keepAlive})
		if res.Totals.Requests < 40 {
			t.Fatalf("keepAlive=%v: %d requests, want about 50", keepAlive, res.Totals.Requests)
		}
		if got := res.Totals.Failures[loadgen.ClassReset]; got != res.Totals.Requests {
			t.Errorf("keepAlive=%v: reset = %d of %d requests, failures %v", keepAlive, got, res.Totals.Requests, res.Totals.Failures)
		}
	}
}

// Test503Window answers 503 during a known window.
func Test503Window(t *testing.T) {
	var unavailable atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unavailable.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		okHandler(w, r)
	}))
	t.Cleanup(srv.Close)

	ctx := t.Context()
	a, err := Start(ctx, loadgen.Config{Target: srv.URL, Rate: 100, Duration: 3 * time.Second, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	var w window
	go func() {
		if !after(ctx, a.started, time.Second) {
			return
		}
		unavailable.Store(true)
		start := time.Now()
		if !after(ctx, a.started, 2*time.Second) {
			return
		}
		unavailable.Store(false)
		w.set(start, time.Now())
	}()
	res, err := a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	start, end := w.get()
	checkWindow(t, res, start, end, 100*time.Millisecond, loadgen.HTTP5xxClass(503))
	if got := res.Totals.Failures["http_503"]; got < 80 || got != res.Totals.Failed {
		t.Errorf("failures = %v, want about 100, all http_503", res.Totals.Failures)
	}
	for _, q := range res.Requests {
		if q.Class == "http_503" && (q.Code != 503 || !strings.HasPrefix(q.Error, "503")) {
			t.Errorf("request %d: code %d error %q", q.Seq, q.Code, q.Error)
		}
	}
	if !res.Valid {
		// Validity is asserted by TestHealthy and TestJudge; here the
		// classes are under test and a starved CPU must not fail them.
		t.Logf("run invalid: %s", res.InvalidReason)
	}
}

// TestTimeout hangs every request past the client timeout.
func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)

	const timeout = 250 * time.Millisecond
	res := runAttack(t, loadgen.Config{Target: srv.URL, Rate: 20, Duration: time.Second, Timeout: timeout, KeepAlive: true})
	if res.Totals.Requests < 15 {
		t.Fatalf("%d requests, want about 20", res.Totals.Requests)
	}
	if got := res.Totals.Failures[loadgen.ClassTimeout]; got != res.Totals.Requests {
		t.Errorf("timeout = %d of %d, failures %v", got, res.Totals.Requests, res.Totals.Failures)
	}
	if res.Latency.P50 < timeout || res.Latency.Max > timeout+time.Second {
		t.Errorf("latency %+v, want about the %s timeout", res.Latency, timeout)
	}
	if !res.Valid {
		// Validity is asserted by TestHealthy and TestJudge; here the
		// classes are under test and a starved CPU must not fail them.
		t.Logf("run invalid: %s", res.InvalidReason)
	}
}

// TestKeepAliveClosedConnections answers one request per connection without
// saying so (no "Connection: close"); if the client sends another request on
// that connection, the server reads it and hangs up without an answer.
//
// What really happens, and what this test pins down:
//   - keep-alive off: every request has its own connection, nothing fails;
//   - keep-alive on, GET: the client reuses connections and the server drops
//     requests, yet nothing fails: http.Transport replays each dropped GET on
//     another connection (the server sees more requests than were sent);
//   - keep-alive on, POST: not replayable, so each dropped request is an EOF
//     (or a reset, when the server hangs up with a RST).
func TestKeepAliveClosedConnections(t *testing.T) {
	var answered, dropped atomic.Int64
	var withReset atomic.Bool
	s := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if !s.readRequest(c, br, 2*time.Second) {
			return
		}
		// Count before answering: once answered, the client may end its
		// run and the next subtest reset the counters.
		answered.Add(1)
		if _, err := c.Write([]byte(okResponse)); err != nil {
			return
		}
		if s.readRequest(c, br, 300*time.Millisecond) {
			dropped.Add(1)
			if withReset.Load() {
				resetConn(c)
			}
		}
	})

	cases := []struct {
		name      string
		keepAlive bool
		method    string
		retry     bool
		// reset: the server drops requests with a RST instead of a FIN.
		reset bool
		// want: the class of the expected failures; empty: no failures.
		want loadgen.Class
		// wantDropped: the server dropped requests on reused connections.
		wantDropped bool
	}{
		{name: "keepalive=off GET", method: "GET"},
		{name: "keepalive=off POST", method: "POST"},
		{name: "keepalive=on GET", keepAlive: true, method: "GET", retry: true, wantDropped: true},
		{name: "keepalive=on POST", keepAlive: true, method: "POST", want: loadgen.ClassEOF, wantDropped: true},
		// A reset reused connection is replayed the same way.
		{name: "keepalive=on GET reset", keepAlive: true, method: "GET", reset: true, retry: true, wantDropped: true},
		{name: "keepalive=on POST reset", keepAlive: true, method: "POST", reset: true, want: loadgen.ClassReset, wantDropped: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answered.Store(0)
			dropped.Store(0)
			withReset.Store(tc.reset)
			res := runAttack(t, loadgen.Config{Target: s.url, Method: tc.method, Rate: 100, Duration: time.Second, KeepAlive: tc.keepAlive})
			t.Logf("server: %d answered, %d dropped; client: %d sent, failures %v",
				answered.Load(), dropped.Load(), res.Totals.Requests, res.Totals.Failures)
			if res.TransparentRetry != tc.retry {
				t.Errorf("TransparentRetry = %v, want %v", res.TransparentRetry, tc.retry)
			}
			if tc.wantDropped != (dropped.Load() > 0) {
				t.Errorf("server dropped %d requests, want dropped: %v", dropped.Load(), tc.wantDropped)
			}
			switch {
			case tc.want != "":
				n := res.Totals.Failures[tc.want]
				if n == 0 || n != res.Totals.Failed {
					t.Errorf("failures %v, want only and some %s", res.Totals.Failures, tc.want)
				}
				if int64(n) > dropped.Load() {
					t.Errorf("%d %s failures but the server dropped only %d requests", n, tc.want, dropped.Load())
				}
				if int64(res.Totals.OK) != answered.Load() {
					t.Errorf("client ok = %d, server answered %d", res.Totals.OK, answered.Load())
				}
			default:
				if res.Totals.Failed != 0 {
					t.Errorf("failures %v, want none", res.Totals.Failures)
				}
				if tc.retry && answered.Load()+dropped.Load() <= int64(res.Totals.Requests) {
					t.Errorf("server saw %d requests for %d sent: no transparent retry seen",
						answered.Load()+dropped.Load(), res.Totals.Requests)
				}
			}
		})
	}
}

// TestInvalidRate: a slow server and a single worker cannot hold the rate.
func TestInvalidRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		okHandler(w, r)
	}))
	t.Cleanup(srv.Close)

	res := runAttack(t, loadgen.Config{Target: srv.URL, Rate: 50, Duration: time.Second, Workers: 1, MaxWorkers: 1, KeepAlive: true})
	if res.Valid {
		t.Fatalf("run valid at %.1f/s of 50/s", res.AchievedRate)
	}
	if !strings.Contains(res.InvalidReason, "achieved rate") {
		t.Errorf("invalid reason %q, want it to name the achieved rate", res.InvalidReason)
	}
	if res.AchievedRate > 25 {
		t.Errorf("achieved rate %.1f/s, want about 10/s", res.AchievedRate)
	}
	if res.Totals.Failed != 0 {
		t.Errorf("failures %v, want none (slow is not failed)", res.Totals.Failures)
	}
}

// TestHealthy checks the ledger of a clean run: counts, pods, headers,
// method, progress, validity.
func TestHealthy(t *testing.T) {
	var n, badReq atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.Header.Get("X-Test") != "yes" || r.Header.Get("X-Vegeta-Attack") != "healthy" {
			badReq.Add(1)
		}
		w.Header().Set("X-Served-By", []string{"pod-a", "pod-b"}[n.Add(1)%2])
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(srv.Close)

	cfg := loadgen.Config{Name: "healthy", Target: srv.URL + "/path?q=1", Method: http.MethodPut, Rate: 200, Duration: 2 * time.Second,
		KeepAlive: true, Headers: map[string]string{"X-Test": "yes"}, PodHeader: "x-served-by"}
	a, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Config(); got.Timeout != loadgen.DefaultTimeout || got.MaxWorkers != loadgen.DefaultMaxWorkers {
		t.Errorf("Config() = %+v, want defaults applied", got)
	}
	time.Sleep(500 * time.Millisecond)
	if p := a.Progress(); p.Sent < 50 || p.OK < 40 || p.Failed != 0 || p.InFlight() < 0 {
		t.Errorf("progress after 0.5 s = %+v", p)
	}
	res, err := a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if p := a.Progress(); p.Sent != int64(res.Totals.Requests) || p.OK != int64(res.Totals.OK) || p.InFlight() != 0 {
		t.Errorf("final progress %+v, totals %+v", p, res.Totals)
	}
	if res.Totals.Requests < 390 || res.Totals.Requests > 410 || res.Totals.Failed != 0 {
		t.Errorf("totals %+v, want 400 ok", res.Totals)
	}
	if badReq.Load() != 0 {
		t.Errorf("%d requests without the configured method or headers", badReq.Load())
	}
	pods := map[string]int{}
	for i, q := range res.Requests {
		pods[q.Pod]++
		if q.Seq != uint64(i) || q.Code != 200 || q.Class != loadgen.ClassOK || q.BytesIn != 5 {
			t.Fatalf("request %d = %+v", i, q)
		}
	}
	if len(pods) != 2 || pods["pod-a"] == 0 || pods["pod-b"] == 0 {
		t.Errorf("pods = %v, want pod-a and pod-b", pods)
	}
	if !res.Valid || res.EndReason != loadgen.EndDuration || res.TransparentRetry != false {
		t.Errorf("valid=%v (%s) end=%s retry=%v", res.Valid, res.InvalidReason, res.EndReason, res.TransparentRetry)
	}
	if res.DisruptionSeconds != 0 || len(res.Bursts) != 0 {
		t.Errorf("disruption %d s, bursts %v; want none", res.DisruptionSeconds, res.Bursts)
	}
	if len(res.Buckets) < 20 || len(res.Buckets) > 21 {
		t.Errorf("%d buckets, want 20 for 2 s (21 when the last hit lands just past 2 s)", len(res.Buckets))
	}
	if res.Latency.P50 <= 0 || res.Latency.P50 > res.Latency.P99 || res.Latency.P99 > res.Latency.Max {
		t.Errorf("latency %+v", res.Latency)
	}
	if res.GoVersion == "" || res.VegetaVersion == "" {
		t.Errorf("versions %q %q", res.GoVersion, res.VegetaVersion)
	}
}

// TestStopAndCancel ends attacks early with Stop and with the context.
func TestStopAndCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(okHandler))
	t.Cleanup(srv.Close)
	cfg := loadgen.Config{Target: srv.URL, Rate: 100, Duration: 20 * time.Second, KeepAlive: true}

	t.Run("stop", func(t *testing.T) {
		a, err := Start(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		a.Stop()
		a.Stop()
		select {
		case <-a.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("attack still running 5 s after Stop")
		}
		a.Stop()
		res, err := a.Wait()
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if res.EndReason != loadgen.EndStopped || res.Window < 400*time.Millisecond || res.Window > 2*time.Second {
			t.Errorf("end %s window %s, want stopped after about 0.5 s", res.EndReason, res.Window)
		}
		if !res.Valid {
			t.Errorf("a run stopped early is judged over the time it ran, got invalid: %s", res.InvalidReason)
		}
		if res.Totals.Requests < 30 || res.Totals.Requests > 200 {
			t.Errorf("%d requests, want about 50", res.Totals.Requests)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		a, err := Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		cancel()
		res, err := a.Wait()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait error %v, want context.Canceled", err)
		}
		if res == nil || res.EndReason != loadgen.EndCanceled || res.Totals.Requests == 0 {
			t.Fatalf("result %v", res)
		}
	})

	t.Run("canceled before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := Start(ctx, cfg); !errors.Is(err, context.Canceled) {
			t.Errorf("Start error %v, want context.Canceled", err)
		}
	})

	t.Run("invalid config", func(t *testing.T) {
		if _, err := Start(t.Context(), loadgen.Config{Target: srv.URL}); !errors.Is(err, loadgen.ErrInvalidConfig) {
			t.Errorf("Start error %v, want ErrInvalidConfig", err)
		}
	})
}

// TestNoGoroutineLeak: once an attack has ended, its goroutines, workers and
// connections are gone.
func TestNoGoroutineLeak(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(okHandler))
	t.Cleanup(srv.Close)
	before := runtime.NumGoroutine()

	for _, keepAlive := range []bool{true, false} {
		runAttack(t, loadgen.Config{Target: srv.URL, Rate: 200, Duration: 500 * time.Millisecond, KeepAlive: keepAlive})
		a, err := Start(t.Context(), loadgen.Config{Target: srv.URL, Rate: 200, Duration: 10 * time.Second, KeepAlive: keepAlive})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		a.Stop()
		if _, err := a.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
