package loadgen_test

import (
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// A ledger judged into a Result, as an attack (package loadgen/attack) judges its own: ten
// requests of a 10/s load, the fourth refused.
func ExampleNewResult() {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := loadgen.Config{Target: "http://127.0.0.1:30080/", Rate: 10, Duration: time.Second}.WithDefaults()
	var reqs []loadgen.Request
	for i := range 10 {
		q := loadgen.Request{Seq: uint64(i), Timestamp: t0.Add(time.Duration(i+1) * 100 * time.Millisecond),
			Latency: 5 * time.Millisecond, Code: 200, Class: loadgen.ClassOK, Pod: "web-1"}
		if i == 3 {
			q.Code, q.Class, q.Error, q.Pod = 0, loadgen.ClassRefused, "connect: connection refused", ""
		}
		reqs = append(reqs, q)
	}
	res := loadgen.NewResult(cfg, loadgen.Run{Started: t0, Ended: t0.Add(time.Second + 5*time.Millisecond), EndReason: loadgen.EndDuration}, reqs)
	fmt.Println("requests:", res.Totals.Requests, "failures:", res.Totals.Failures)
	fmt.Println("disruption seconds:", res.DisruptionSeconds, "bursts:", len(res.Bursts))
	fmt.Println("valid:", res.Valid)
	// Output:
	// requests: 10 failures: map[refused:1]
	// disruption seconds: 1 bursts: 1
	// valid: true
}
