package loadagent

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
)

// failWriter fails every write, as a closed stdout does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestRunStream runs the program against a server on 127.0.0.1 and stops it as a SIGTERM
// does (ctx ends): the stream is whole, says the attack was stopped, and holds its requests;
// nothing is written on stderr, which the pod's log would mix into the stream.
func TestRunStream(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vegeta-Attack") != "pod-test" {
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Header().Set("X-Backend", "pod-a")
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	var stdout, stderr bytes.Buffer
	args := []string{"--target", srv.URL + "/", "--rate", "100", "--duration", "30s", "--timeout", "1s",
		"--method", "GET", "--keepalive", "--pod-header", "X-Backend", "--name", "pod-test"}
	start := time.Now()
	if code := run(ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s after its context ended at 300ms", took)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr %q: want nothing on a run that worked", stderr.String())
	}
	res, err := attack.Follow(&stdout).Wait()
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if res.EndReason != loadgen.EndStopped {
		t.Errorf("end reason %q, want %q", res.EndReason, loadgen.EndStopped)
	}
	if len(res.Requests) == 0 || res.Totals.Requests == 0 {
		t.Fatalf("no requests in the stream: %+v", res.Totals)
	}
	if res.Totals.Failed != 0 {
		t.Errorf("%d of %d requests failed: the flags did not reach the attack (%+v)", res.Totals.Failed, res.Totals.Requests, res.Totals)
	}
	for _, q := range res.Requests {
		if q.Pod != "pod-a" {
			t.Fatalf("request %+v: pod %q, want pod-a from --pod-header", q, q.Pod)
		}
	}
	if c := res.Config; c.Rate != 100 || c.Duration != 30*time.Second || c.Timeout != time.Second ||
		!c.KeepAlive || c.PodHeader != "X-Backend" || c.Name != "pod-test" || !c.AllowRemote {
		t.Errorf("config in the stream %+v: not the flags'", c)
	}
}

func TestRunBadFlags(t *testing.T) {
	const target = "http://rollcheck-load.ns.svc:8080/"
	for _, args := range [][]string{
		{"--rate", "10", "--duration", "1s"},
		{"--target", target, "--rate", "10"},
		{"--target", target, "--rate", "10", "--duration", "2h"},
		{"--target", target, "--rate", "100001", "--duration", "1s"},
		{"--target", target, "--rate", "0", "--duration", "0s", "--method", "GE T"},
		{"--target", target, "--rate", "ten", "--duration", "1s"},
		{"--target", target, "--rate", "10", "--duration", "1s", "--nope"},
		{"--target", target, "--rate", "10", "--duration", "1s", "extra"},
		{"--target", "ftp://x/", "--rate", "10", "--duration", "1s"},
		{"--target", "app.ns:8080", "--protocol", "grpc", "--rate", "10", "--duration", "1s", "--grpc-message", "%%"},
		{"--target", "app.ns:8080", "--protocol", "grpc", "--rate", "10", "--duration", "1s", "--balancing", "random"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		line := strings.TrimSuffix(stderr.String(), "\n")
		if code != 2 || line == "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "rollcheck-load: ") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line", args, code, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: stdout %q; want nothing (no attack)", args, stdout.String())
		}
	}
}

// A stream that cannot be written is exit 1, with one line.
func TestRunWriteError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var stderr bytes.Buffer
	args := []string{"--target", srv.URL, "--rate", "50", "--duration", "200ms"}
	if code := run(t.Context(), args, failWriter{}, &stderr); code != 1 || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 1 and one line", code, stderr.String())
	}
}

// GET /clock answers the time now; other methods and paths do not.
func TestClockHandler(t *testing.T) {
	before := time.Now()
	rec := httptest.NewRecorder()
	clockHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/clock", nil))
	at, err := time.Parse(time.RFC3339Nano, rec.Body.String())
	if rec.Code != 200 || err != nil || at.Before(before.Add(-time.Millisecond)) || at.After(time.Now().Add(time.Millisecond)) {
		t.Fatalf("GET /clock: %d %q (%v)", rec.Code, rec.Body.String(), err)
	}
	for _, r := range []*http.Request{httptest.NewRequest("POST", "/clock", nil), httptest.NewRequest("GET", "/", nil)} {
		rec := httptest.NewRecorder()
		clockHandler().ServeHTTP(rec, r)
		if rec.Code == 200 {
			t.Errorf("%s %s answered 200", r.Method, r.URL.Path)
		}
	}
	if cfg, _, _, err := parse([]string{"--target=dns:///app.ns:8080", "--protocol=grpc", "--rate=1", "--duration=1s", "--balancing=round_robin",
		"--wait-for-ready", "--retry", "--grpc-method=/pkg.Svc/Do", "--grpc-message=CAE="}); err != nil || cfg.Protocol != loadgen.ProtocolGRPC ||
		cfg.Balancing != loadgen.BalancingRoundRobin || !cfg.WaitForReady || !cfg.Retry || cfg.GRPCMethod != "/pkg.Svc/Do" || string(cfg.GRPCMessage) != "\x08\x01" {
		t.Errorf("gRPC flags: %+v, %v", cfg, err)
	}
	if _, _, _, err := parse([]string{"--target=http://10.0.0.1/", "--rate=1", "--duration=1s", "--clock-port=70000"}); err == nil {
		t.Error("--clock-port 70000 accepted")
	}
}
