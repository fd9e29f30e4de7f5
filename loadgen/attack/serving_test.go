package attack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

func TestWaitServing(t *testing.T) {
	var n atomic.Int64
	pods := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, []string{"pod-a", "pod-b"}[n.Add(1)%2])
	}))
	defer pods.Close()
	anonymous := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer anonymous.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()

	// Both replicas answered cleanly: one probe second.
	start := time.Now()
	if err := WaitServing(t.Context(), loadgen.Config{Target: pods.URL}, 2, nil); err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("two named pods: %v after %s", err, time.Since(start))
	}
	// Through a proxy, replicas is a least: two pods answering satisfy one.
	start = time.Now()
	if err := WaitServing(t.Context(), loadgen.Config{Target: pods.URL, Proxy: true}, 1, nil); err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("through a proxy, two pods for one: %v after %s", err, time.Since(start))
	}
	// An app that names no pod: two clean seconds in a row, and a line that says identity is unknown.
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, f) }
	if err := WaitServing(t.Context(), loadgen.Config{Target: anonymous.URL}, 3, logf); err != nil || len(logged) != 1 ||
		!strings.Contains(logged[0], "header: pod identity is unknown") {
		t.Errorf("no pod header: %v, logged %q", err, logged)
	}
	// A Service that fails is waited for until ctx ends (or a minute), and the error says so.
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if err := WaitServing(ctx, loadgen.Config{Target: failing.URL}, 1, nil); err == nil || !strings.Contains(err.Error(), "wait serving") {
		t.Errorf("failing Service: %v, want a wait serving error", err)
	}
}
