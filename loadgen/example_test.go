package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// A short constant-rate attack on a local server that names its pod in X-Pod-Name and
// answers its third request with 503: the Result holds every request, classified.
func Example() {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(loadgen.DefaultPodHeader, "web-1")
		if served.Add(1) == 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	a, err := loadgen.Start(context.Background(), loadgen.Config{
		Target:    srv.URL, // loopback: loadgen refuses other hosts unless AllowRemote is set
		Rate:      100,     // requests per second
		Duration:  300 * time.Millisecond,
		KeepAlive: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Wait()
	if err != nil {
		fmt.Println(err)
		return
	}

	var pods []string
	for _, r := range res.Requests {
		if r.Pod != "" && !slices.Contains(pods, r.Pod) {
			pods = append(pods, r.Pod)
		}
	}
	t := res.Totals
	fmt.Println("ended by:", res.EndReason)
	fmt.Println("every request in the ledger:", len(res.Requests) == t.Requests && t.Requests == int(served.Load()))
	fmt.Println("ok + failed = requests:", t.OK+t.Failed == t.Requests)
	fmt.Println("failures:", t.Failures)
	fmt.Println("pods:", pods)
	// Output:
	// ended by: duration
	// every request in the ledger: true
	// ok + failed = requests: true
	// failures: map[http_503:1]
	// pods: [web-1]
}
