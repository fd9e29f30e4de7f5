package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// faultOf runs the load monitor on atk until it reports a fault or the wait ends.
func faultOf(t *testing.T, atk *loadgen.Attack, wait time.Duration) error {
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
	atk, err := loadgen.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: 500 * time.Millisecond})
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
	atk, err := loadgen.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: time.Minute,
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
	atk, err := loadgen.Start(context.Background(), loadgen.Config{Target: srv.URL, Rate: 50, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer atk.Stop()
	if err := faultOf(t, atk, 2*time.Second); err != nil {
		t.Fatalf("fault = %v on a healthy load", err)
	}
}
