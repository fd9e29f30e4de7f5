package gate

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func row(status check.Status, requests, failed int, reason string) check.Row {
	r := check.Row{Config: check.Applied{Name: "as-is", Disruption: check.DeletePod, Count: 3},
		Started: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Duration: time.Minute,
		Summary: loadgen.Summary{Requests: requests, Failed: failed}, Verdict: check.Verdict{Status: status, Reason: reason}}
	if failed > 0 {
		r.Explanation = &check.Explanation{Phases: map[timeline.Phase]int{timeline.PhasePropagation: failed}}
	}
	return r
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		planned int
		rows    []check.Row
		reason  string
		want    string
		code    int
	}{
		{"every row passed", 2, []check.Row{row(check.Pass, 1000, 0, "ok"), row(check.Pass, 1000, 0, "ok")}, "", Pass, 0},
		// A harness fault beside a fail does not hide the fail.
		{"a fail beside a harness fault", 2, []check.Row{row(check.HarnessFault, 500, 3, "the load stalled"), row(check.Fail, 1000, 10, "10 failed")}, "", Fail, 1},
		{"a harness fault", 1, []check.Row{row(check.HarnessFault, 500, 0, "the load stalled")}, "", Inconclusive, 2},
		{"a row missing", 2, []check.Row{row(check.Pass, 1000, 0, "ok")}, "", Inconclusive, 2},
		{"no row", 1, nil, "", Inconclusive, 2},
		{"the run's own error", 1, []check.Row{row(check.Pass, 1000, 0, "ok")}, "interrupted", Inconclusive, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge("Deployment shop/web", c.planned, c.rows, c.reason)
			if v.Verdict != c.want || v.ExitCode() != c.code || v.State != Done {
				t.Fatalf("verdict %s exit %d state %s, want %s exit %d: %+v", v.Verdict, v.ExitCode(), v.State, c.want, c.code, v)
			}
			if c.want != Pass && v.Reason == "" {
				t.Errorf("no reason: %+v", v)
			}
		})
	}
	v := Judge("Deployment shop/web", 2, []check.Row{row(check.Pass, 1000, 0, "ok"), row(check.Fail, 1000, 10, "10 failed")}, "")
	if v.Requests != 2000 || v.Failed != 10 || v.FailureRatio != 0.005 || v.ByPhase[string(timeline.PhasePropagation)] != 10 {
		t.Errorf("counts: %+v", v)
	}
	if !strings.Contains(v.Reason, "10 failed") {
		t.Errorf("reason %q does not say the failed row's", v.Reason)
	}
}

func TestRunningIsNoPass(t *testing.T) {
	if c := (Verdict{State: Running, Verdict: Pass}).ExitCode(); c != 2 {
		t.Errorf("a running check's exit code is %d, want 2", c)
	}
}

func TestEncodeWithin(t *testing.T) {
	var rows []check.Row
	for range 60 {
		rows = append(rows, row(check.Fail, 1000, 10, strings.Repeat("the app lost requests by propagation; ", 5)))
	}
	v := Judge("Deployment shop/web", len(rows), rows, "")
	v.Reason = strings.Repeat("\"quoted\" ", 2000)
	b, err := v.EncodeWithin(MessageLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MessageLimit {
		t.Fatalf("%d bytes, over %d", len(b), MessageLimit)
	}
	var got Verdict
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got.Verdict != Fail || got.Failed != 600 || got.ByPhase[string(timeline.PhasePropagation)] != 600 {
		t.Errorf("lost what must stay: %+v", got)
	}
	small := Judge("Deployment shop/web", 1, rows[:1], "")
	b, _ = small.EncodeWithin(MessageLimit)
	if err := json.Unmarshal(b, &got); err != nil || len(got.Rows) != 1 || got.Rows[0].Reason == "" {
		t.Errorf("a small verdict lost its rows: %s", b)
	}
}

func TestChecksOncePerKey(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	c := NewChecks(context.Background(), func(ctx context.Context, key string) Verdict {
		runs.Add(1)
		<-release
		return Verdict{SchemaVersion: SchemaVersion, State: Done, Verdict: Fail}
	})
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Get(context.Background(), "hash:a", 0) }()
	}
	// A poll that gives up early gets Running and leaves the check going.
	if v := c.Get(context.Background(), "hash:a", 10*time.Millisecond); v.State != Running || v.ExitCode() != 2 {
		t.Fatalf("early poll: %+v", v)
	}
	close(release)
	wg.Wait()
	if v := c.Get(context.Background(), "hash:a", 0); v.Verdict != Fail || v.Key != "hash:a" {
		t.Fatalf("verdict kept: %+v", v)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the check of one key ran %d times, want once", n)
	}
	c.Get(context.Background(), "hash:b", 0)
	if n := runs.Load(); n != 2 {
		t.Fatalf("another key: %d runs, want 2", n)
	}
}

func TestChecksInconclusiveRunsAgain(t *testing.T) {
	var runs atomic.Int32
	c := NewChecks(context.Background(), func(ctx context.Context, key string) Verdict {
		if runs.Add(1) == 1 {
			return Verdict{SchemaVersion: SchemaVersion, State: Done, Verdict: Inconclusive, Reason: "the load stalled"}
		}
		return Verdict{SchemaVersion: SchemaVersion, State: Done, Verdict: Pass}
	})
	if v := c.Get(context.Background(), "k", 0); v.Verdict != Inconclusive {
		t.Fatalf("first: %+v", v)
	}
	if v := c.Get(context.Background(), "k", 0); v.Verdict != Pass || runs.Load() != 2 {
		t.Fatalf("an inconclusive verdict was kept: %+v after %d runs", v, runs.Load())
	}
}

func TestChecksKeep(t *testing.T) {
	var runs atomic.Int32
	c := NewChecks(context.Background(), func(ctx context.Context, key string) Verdict {
		runs.Add(1)
		return Verdict{State: Done, Verdict: Pass}
	})
	c.Keep = 2
	for _, k := range []string{"a", "b", "c", "c", "b"} {
		c.Get(context.Background(), k, 0)
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("%d runs, want 3 (b and c kept)", n)
	}
	c.Get(context.Background(), "a", 0) // forgotten: checked anew
	if n := runs.Load(); n != 4 {
		t.Fatalf("%d runs, want 4", n)
	}
}

func TestChecksServerStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := NewChecks(ctx, func(ctx context.Context, key string) Verdict {
		t.Error("a check ran after the server stopped")
		return Verdict{}
	})
	if v := c.Get(context.Background(), "k", 0); v.Verdict != Inconclusive {
		t.Fatalf("%+v", v)
	}
	c.Wait()
}

func serve(t *testing.T, verdict string) (*httptest.Server, *atomic.Int32) {
	var runs atomic.Int32
	c := NewChecks(context.Background(), func(ctx context.Context, key string) Verdict {
		runs.Add(1)
		return Judge("Deployment shop/web", 1, []check.Row{row(check.Status(verdict), 1000, map[string]int{Pass: 0, Fail: 12}[verdict], verdict+" reason")}, "")
	})
	s := httptest.NewServer(&Handler{Checks: c, Namespace: "shop"})
	t.Cleanup(s.Close)
	return s, &runs
}

func TestArgoEndpoint(t *testing.T) {
	s, runs := serve(t, Fail)
	for _, c := range []struct {
		url  string
		code int
	}{
		{"/v1/argo?hash=5d9f7c8b6", 200},
		{"/v1/argo?hash=5d9f7c8b6", 200}, // asked again: the same verdict, no second check
		{"/v1/argo", 400},
		{"/v1/argo?hash=a%20b", 400},
		{"/v1/argo?hash=x&wait=soon", 400},
		{"/healthz", 200},
		{"/nothing", 404},
	} {
		resp, err := http.Get(s.URL + c.url)
		if err != nil {
			t.Fatal(err)
		}
		var v Verdict
		if c.code == 200 && strings.HasPrefix(c.url, ArgoPath) {
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Verdict != Fail || v.State != Done || v.Failed != 12 {
				t.Errorf("%s: %+v %v", c.url, v, err)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.code)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("%d checks for one hash, want 1", n)
	}
	resp, _ := http.Post(s.URL+ArgoPath+"?hash=a", "application/json", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the Argo endpoint: %d", resp.StatusCode)
	}
}

func post(t *testing.T, url string, p FlaggerPayload) (*http.Response, string) {
	b, _ := json.Marshal(p)
	resp, err := http.Post(url+FlaggerPath, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, sb.String()
}

func TestFlaggerEndpoint(t *testing.T) {
	s, runs := serve(t, Fail)
	p := FlaggerPayload{Name: "web", Namespace: "shop", Phase: "Progressing", Checksum: "7b6f9c"}
	resp, body := post(t, s.URL, p)
	if resp.StatusCode != 500 || !strings.Contains(body, "**rollcheck: FAIL**") || !strings.Contains(body, "| as-is | delete-pod×3 | fail | 12 | 1000 |") {
		t.Errorf("a failed check: %d %q", resp.StatusCode, body)
	}
	post(t, s.URL, p)
	if n := runs.Load(); n != 1 {
		t.Errorf("%d checks for one checksum, want 1", n)
	}
	other := p
	other.Namespace = "billing"
	if resp, body := post(t, s.URL, other); resp.StatusCode != 400 || !strings.Contains(body, "namespace shop only") {
		t.Errorf("another namespace's Canary: %d %q", resp.StatusCode, body)
	}
	p.Checksum = ""
	if resp, _ := post(t, s.URL, p); resp.StatusCode != 400 {
		t.Errorf("no checksum: %d", resp.StatusCode)
	}

	s, _ = serve(t, Pass)
	p.Checksum = "7b6f9c"
	if resp, body := post(t, s.URL, p); resp.StatusCode != 200 || !strings.Contains(body, `"verdict":"pass"`) {
		t.Errorf("a passed check: %d %q", resp.StatusCode, body)
	}
}

func TestFlaggerRunning(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := NewChecks(context.Background(), func(ctx context.Context, key string) Verdict {
		<-release
		return Verdict{State: Done, Verdict: Pass}
	})
	s := httptest.NewServer(&Handler{Checks: c, MaxWait: 20 * time.Millisecond})
	defer s.Close()
	resp, _ := post(t, s.URL, FlaggerPayload{Name: "web", Namespace: "shop", Checksum: "abc"})
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a running check: %d, want 503 with Retry-After", resp.StatusCode)
	}
}
