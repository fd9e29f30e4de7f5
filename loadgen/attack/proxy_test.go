package attack

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// TestProxyAnswers sends the load through a reverse proxy that names its upstream and answers
// 502 itself for every fifth request: those are the proxy's own (proxy_502), the app's own 503s
// stay http_503, and every answer records the upstream the proxy named.
func TestProxyAnswers(t *testing.T) {
	var n atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, "pod-0")
		if n.Add(1)%7 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(app.Close)
	up, _ := url.Parse(app.URL)
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.ModifyResponse = func(r *http.Response) error {
		r.Header.Set("X-Upstream", up.Host)
		return nil
	}
	var m atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Add(1)%5 == 0 {
			w.Header().Set("X-Upstream", "")
			http.Error(w, "no upstream", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	a, err := Start(t.Context(), loadgen.Config{Target: proxy.URL + "/", Rate: 100, Duration: time.Second, Proxy: true, UpstreamHeader: "X-Upstream"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.ProxyTold {
		t.Fatal("ProxyTold false: the app's answers named their pod")
	}
	own, app503 := res.Totals.Failures[loadgen.ProxyClass(502)], res.Totals.Failures[loadgen.HTTP5xxClass(503)]
	if own == 0 || app503 == 0 || res.Totals.Failures[loadgen.HTTP5xxClass(502)] != 0 {
		t.Fatalf("failures %v: want proxy_502 (the proxy's own) and http_503 (the app's), no http_502", res.Totals.Failures)
	}
	for _, q := range res.Requests {
		if q.Class != loadgen.ProxyClass(502) && q.Upstream != up.Host {
			t.Fatalf("request %d (%s): upstream %q, want %q", q.Seq, q.Class, q.Upstream, up.Host)
		}
	}
	if !loadgen.ProxyClass(502).IsProxy() || loadgen.HTTP5xxClass(502).IsProxy() {
		t.Fatal("IsProxy")
	}
}

// TestProxyAnonymousApp: an app that names no pod gives no way to tell the proxy's answers from
// its own: every 5xx keeps its HTTP class and ProxyTold is false.
func TestProxyAnonymousApp(t *testing.T) {
	var m atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Add(1)%5 == 0 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	a, err := Start(t.Context(), loadgen.Config{Target: srv.URL + "/", Rate: 50, Duration: time.Second, Proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.ProxyTold || res.Totals.Failures[loadgen.HTTP5xxClass(502)] == 0 || res.Totals.Failures[loadgen.ProxyClass(502)] != 0 {
		t.Fatalf("told %v, failures %v: want every 502 kept as http_502", res.ProxyTold, res.Totals.Failures)
	}
}
