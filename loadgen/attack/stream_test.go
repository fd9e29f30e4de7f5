package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// serveStream runs Serve on a local server answering every 7th request with 503, stops it
// after stopAfter, and returns the stream.
func serveStream(t *testing.T, stopAfter time.Duration) []byte {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, "pod-a")
		if n.Add(1)%7 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), stopAfter)
	defer cancel()
	var buf bytes.Buffer
	cfg := loadgen.Config{Target: srv.URL, Rate: 200, Duration: 10 * time.Second}
	if err := Serve(ctx, cfg, &buf); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return buf.Bytes()
}

func TestServeFollow(t *testing.T) {
	stream := serveStream(t, 700*time.Millisecond)
	lines := strings.Split(strings.TrimSpace(string(stream)), "\n")
	if !strings.HasPrefix(lines[0], `{"start":`) || !strings.HasPrefix(lines[len(lines)-1], `{"end":`) {
		t.Fatalf("stream from %.60q to %.60q: want a start line first and an end line last", lines[0], lines[len(lines)-1])
	}
	// Besides the requests, the attack's count of requests sent every half second.
	progress := 0
	for _, l := range lines {
		if strings.HasPrefix(l, `{"sent":`) {
			progress++
		}
	}
	if progress == 0 {
		t.Error("no progress line in a 700 ms stream")
	}
	rm := Follow(bytes.NewReader(stream))
	res, err := rm.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	select {
	case <-rm.Started():
	default:
		t.Error("Started not closed after the whole stream")
	}
	// Every request line is in the ledger, in sending order, counted and classified as the
	// attack counted them; the end reason says the caller stopped it.
	if got := len(res.Requests); got != len(lines)-2-progress || got < 40 {
		t.Fatalf("%d requests rebuilt from %d lines", got, len(lines))
	}
	if res.EndReason != loadgen.EndStopped || res.Window >= 10*time.Second {
		t.Errorf("end reason %s, window %s: want stopped early", res.EndReason, res.Window)
	}
	p := rm.Progress()
	if p.Sent != int64(res.Totals.Requests) || p.OK != int64(res.Totals.OK) || p.Failed != int64(res.Totals.Failed) ||
		res.Totals.Failed == 0 || res.Totals.Failures[loadgen.HTTP5xxClass(503)] != res.Totals.Failed {
		t.Errorf("progress %+v, totals %+v: want the same counts, every failure a 503", p, res.Totals)
	}
	for i := 1; i < len(res.Requests); i++ {
		if res.Requests[i].Seq < res.Requests[i-1].Seq {
			t.Fatalf("ledger not in sending order at %d", i)
		}
	}
	if res.Requests[0].Pod != "pod-a" || len(res.Buckets) == 0 || res.Config.Target == "" {
		t.Errorf("pod %q, %d buckets, config %+v", res.Requests[0].Pod, len(res.Buckets), res.Config)
	}
	// The Result is the attack's own: rebuilt again from the same lines it is the same.
	again, _ := Follow(bytes.NewReader(stream)).Wait()
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Error("the same stream rebuilt twice gives two Results")
	}
}

// A stream cut before its end line, or holding a line that does not decode, is an error: a
// lost stream is never a run with fewer failures.
func TestFollowBrokenStream(t *testing.T) {
	stream := serveStream(t, 200*time.Millisecond)
	cut := stream[:bytes.LastIndex(stream, []byte(`{"end":`))]
	for name, tc := range map[string]struct {
		in   io.Reader
		want string
	}{
		"cut":     {bytes.NewReader(cut), "without its end line"},
		"garbage": {io.MultiReader(bytes.NewReader(cut), strings.NewReader("not json\n")), "does not decode"},
		"empty":   {strings.NewReader(""), "after 0 lines"},
		"no start": {strings.NewReader(`{"end":{"ended":"2026-01-01T00:00:00Z","endReason":"stopped"}}` + "\n"),
			"no start line"},
	} {
		rm := Follow(tc.in)
		res, err := rm.Wait()
		if err == nil || res != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Result %v, error %v; want no Result and an error with %q", name, res != nil, err, tc.want)
		}
	}
}

// With slow requests nothing completes for seconds: the reader still sees the requests sent.
func TestFollowSeesRequestsSentBeforeTheyComplete(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(1500 * time.Millisecond) }))
	defer srv.Close()
	pr, pw := io.Pipe()
	rm := Follow(pr)
	ctx, cancel := context.WithTimeout(t.Context(), 1200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, loadgen.Config{Target: srv.URL, Rate: 50, Duration: 10 * time.Second, Timeout: 5 * time.Second}, pw)
		_ = pw.Close()
	}()
	time.Sleep(1100 * time.Millisecond)
	if p := rm.Progress(); p.Sent < 20 || p.OK+p.Failed != 0 {
		t.Errorf("after 1.1 s of 1.5 s requests: %+v, want about 50 sent and none completed", p)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res, err := rm.Wait(); err != nil || res.Totals.OK == 0 {
		t.Errorf("Wait: %v, %+v", err, res)
	}
}
