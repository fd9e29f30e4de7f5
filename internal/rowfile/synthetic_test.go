package rowfile

import (
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// t0 is the start of the first synthetic row.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

var testVersions = check.Versions{
	Rollcheck: "v0.1.0-test", Go: "go1.25.7", Vegeta: "v12.12.0", Kubernetes: "v1.34.0",
	Kind: "v0.30.0", NodeImage: "kindest/node:v1.34.0", ImageSource: "upstream",
}

// syntheticRow is a row of cfg, started at start, whose load of 10 requests per 100 ms bucket
// ran for d from start+1s; failed[i] requests of bucket i failed with class c. Each disruption
// starts at one of the given offsets of the load and settles 4 s later.
func syntheticRow(suite string, cfg check.Applied, start time.Time, d time.Duration, c loadgen.Class,
	failed map[int]int, disruptions []time.Duration) check.Row {
	loadStart := start.Add(time.Second)
	sum := loadgen.Summary{Target: "http://127.0.0.1:30080/", Method: cfg.Method, KeepAlive: cfg.KeepAlive,
		Rate: cfg.Rate, Duration: d, EndReason: loadgen.EndStopped, Failures: map[loadgen.Class]int{},
		Bursts: []loadgen.Burst{}, Valid: true, AchievedRate: float64(cfg.Rate)}
	buckets := make([]loadgen.Bucket, int(d/loadgen.BucketWidth))
	for i := range buckets {
		b := &buckets[i]
		b.Start, b.Sent, b.Failed = time.Duration(i)*loadgen.BucketWidth, 10, failed[i]
		b.OK = b.Sent - b.Failed
		if b.Failed > 0 {
			b.Failures = map[loadgen.Class]int{c: b.Failed}
			sum.Failures[c] += b.Failed
		}
		sum.Requests += b.Sent
		sum.OK += b.OK
		sum.Failed += b.Failed
	}
	sum.SuccessRatio = float64(sum.OK) / float64(sum.Requests)
	sum.FailureRatio = float64(sum.Failed) / float64(sum.Requests)

	tl := &timeline.Timeline{Namespace: "rc-" + cfg.Name, Started: start, Ended: loadStart.Add(d)}
	var ds []check.DisruptionResult
	for i, at := range disruptions {
		dr := check.DisruptionResult{Kind: cfg.Disruption, N: i + 1, Started: loadStart.Add(at), Settled: loadStart.Add(at + 4*time.Second)}
		for _, b := range buckets {
			if b.Start >= at && b.Start <= at+4*time.Second {
				dr.Requests += b.Sent
				dr.Failed += b.Failed
			}
		}
		if dr.Failed > 0 {
			dr.Failures = map[loadgen.Class]int{c: dr.Failed}
		}
		dr.SuccessRatio = float64(dr.Requests-dr.Failed) / float64(dr.Requests)
		ds = append(ds, dr)
		pod := fmt.Sprintf("app-7d9f8c6b5-old%02d", i)
		tl.Events = append(tl.Events,
			timeline.Event{Time: dr.Started, Kind: timeline.Disruption, Detail: fmt.Sprintf("%s %d/%d", cfg.Disruption, i+1, len(disruptions))},
			timeline.Event{Time: dr.Started.Add(time.Second), Kind: timeline.PodDeleting, Pod: pod, Detail: "grace 30s"},
			timeline.Event{Time: dr.Started.Add(1700 * time.Millisecond), Kind: timeline.EndpointUnready, Pod: pod},
			timeline.Event{Time: dr.Settled, Kind: timeline.DisruptionDone, Detail: fmt.Sprintf("%s %d/%d", cfg.Disruption, i+1, len(disruptions))})
		tl.Propagation = append(tl.Propagation, timeline.Propagation{Pod: pod, DeletingAt: dr.Started.Add(time.Second),
			ToUnready: 700 * time.Millisecond, ToRemoved: -1})
	}
	return check.Row{
		Suite: suite, Config: cfg, Started: start, Duration: d + 3*time.Second, Summary: sum, Disruptions: ds,
		Verdict: cfg.Expect.Judge(sum, ds...), PodIdentity: true, Buckets: buckets, LoadStarted: loadStart,
		Timeline: tl, Versions: testVersions,
		Artifacts: map[string]string{"vegeta": "raw/" + cfg.Name + ".vegeta.bin", "ledger": "raw/" + cfg.Name + ".ledger.json"},
	}
}

// syntheticRows are three rows, in the order they started: a pass, a negative control that
// passed, and a harness fault.
func syntheticRows() []check.Row {
	good := check.Applied{Name: "prestop-sleep-drain", Why: "the preStop sleep outlasts endpoint propagation", App: "app",
		PreStop: check.PreStop{Sleep: 5 * time.Second}, OnSIGTERM: "drain", GraceSeconds: 30, Replicas: 3, Path: "/", Rate: 100, Method: "GET",
		Disruption: check.RolloutRestart, Count: 2, Quiet: 3 * time.Second, Expect: check.Zero().WithMinSuccessRatioPerDisruption(0.95)}
	naive := check.Applied{Name: "naive-exit", Why: "no preStop: SIGTERM arrives <before> kube-proxy stops routing", App: "app",
		PreStop: check.PreStop{None: true}, OnSIGTERM: "exit", GraceSeconds: 30, Replicas: 3, Path: "/", Rate: 100, Method: "POST", KeepAlive: true,
		Disruption: check.DeletePod, Count: 2, Quiet: 3 * time.Second, Expect: check.Failures(loadgen.ClassReset)}
	slow := check.Applied{Name: "slow", App: "web", PreStop: check.PreStop{Exec: []string{"/app", "sleep", "2s"}}, GraceSeconds: 10,
		RequestDuration: 100 * time.Millisecond, Replicas: 2, Patched: true, Path: "/healthz", Rate: 100, Method: "GET",
		Disruption: check.ScaleDown, Count: 1, Quiet: time.Second, Expect: check.AtMost(0.001).WithMaxDisruptionSeconds(1)}
	r1 := syntheticRow("rollout", good, t0, 20*time.Second, "", nil, []time.Duration{4 * time.Second, 11 * time.Second})
	r2 := syntheticRow("delete", naive, t0.Add(time.Minute), 20*time.Second, loadgen.ClassReset,
		map[int]int{56: 4, 57: 4, 58: 2, 136: 3}, []time.Duration{4 * time.Second, 12 * time.Second})
	r3 := syntheticRow("spec", slow, t0.Add(2*time.Minute), 15*time.Second, loadgen.ClassTimeout,
		map[int]int{70: 1}, []time.Duration{5 * time.Second})
	// r3's load missed its rate: a harness fault whatever its failures.
	r3.Summary.Valid = false
	r3.Summary.AchievedRate = 91.3
	r3.Summary.InvalidReason = "achieved rate 91.30/s misses the asked 100/s by 8.7% (tolerance 1%)"
	r3.Verdict = r3.Config.Expect.Judge(r3.Summary, r3.Disruptions...)
	return []check.Row{r1, r2, r3}
}
