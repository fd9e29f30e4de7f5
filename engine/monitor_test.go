package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
	"k8s.io/client-go/kubernetes/fake"
)

// faultOf runs the load monitor on atk until it reports a fault or the wait ends.
func faultOf(t *testing.T, atk load, wait time.Duration) error {
	t.Helper()
	var mu sync.Mutex
	var got error
	m := startMonitor(atk, 50, func(err error) { mu.Lock(); got = err; mu.Unlock() }, func(loadgen.Progress) {})
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		mu.Lock()
		g := got
		mu.Unlock()
		if g != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.stop()
	mu.Lock()
	defer mu.Unlock()
	return got
}

// A load that ends while disruptions still run is a fault, never a quiet end of counting.
func TestMonitorLoadEndedEarly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	atk, err := attack.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = faultOf(t, atk, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the load ended before the disruptions did") {
		t.Fatalf("fault = %v, want the load ended early", err)
	}
}

// A generator that sends nothing for longer than stallLimit is a fault.
func TestMonitorStall(t *testing.T) {
	// Every request hangs and MaxWorkers 1 stops the generator after the first one.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	atk, err := attack.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: time.Minute,
		Timeout: 9 * time.Second, MaxWorkers: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer atk.Stop()
	err = faultOf(t, atk, 8*time.Second)
	if err == nil || !strings.Contains(err.Error(), "sent nothing for") {
		t.Fatalf("fault = %v, want a stall", err)
	}
}

// A load that runs on reports no fault.
func TestMonitorHealthyLoad(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	atk, err := attack.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer atk.Stop()
	if err := faultOf(t, atk, 2*time.Second); err != nil {
		t.Fatalf("fault = %v on a healthy load", err)
	}
}

// A load pod whose stream ends without its end line (the pod killed), or with one the row did
// not ask for (the pod deleted or evicted by someone else: its SIGTERM stopped the attack), is a
// lost load: the fault says so, names the pod and what became of it.
func TestMonitorLostLoadPod(t *testing.T) {
	const start = `{"start":{"config":{"target":"http://x","rate":50},"started":"2026-01-01T00:00:00Z"}}` + "\n"
	for _, tc := range []struct{ name, stream, want string }{
		{"cut", start, "the stream of load pod rc-x/load (node worker) ended mid-row, the pod is gone (deleted or evicted): load stream ended after 1 lines without its end line"},
		{"stopped by someone else", start + `{"end":{"ended":"2026-01-01T00:00:03Z","endReason":"stopped"}}` + "\n",
			"load pod rc-x/load (node worker) was stopped mid-row by someone else (its attack ended stopped after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			pl := &podLoad{cs: fake.NewClientset(), ns: "rc-x", name: "load", node: "worker", remote: attack.Follow(pr)}
			go func() {
				_, _ = pw.Write([]byte(tc.stream))
				_ = pw.Close()
			}()
			if err := faultOf(t, pl, 5*time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("fault = %v, want %q", err, tc.want)
			}
		})
	}
}
