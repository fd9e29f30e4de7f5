package report

import (
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// t0 is the start of the first synthetic row.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

var testVersions = Versions{
	Rollcheck: "v0.1.0-test", Go: "go1.25.7", Vegeta: "v12.12.0", Kubernetes: "v1.34.0",
	Kind: "v0.30.0", NodeImage: "kindest/node:v1.34.0", ImageSource: "upstream",
}

// failSpan makes every request sent in [from, to) of the load fail with class c, at most
// perBucket per 100 ms bucket.
type failSpan struct {
	from, to  time.Duration
	c         loadgen.Class
	perBucket int
}

// settleAfter is how long after it started each synthetic disruption settles.
const settleAfter = 4 * time.Second

// syntheticRow builds a row of the given configuration: a load of rate req/s for d from
// start+loadDelay, failing as spans say, with pods rolled at the disruption times (each
// settling settleAfter later, its preStop taking preStopSeconds). Each disruption's own
// requests are those of the buckets that start within [at, at+settleAfter].
func syntheticRow(suite string, s check.Applied, preStopSeconds int, start time.Time, loadDelay, d time.Duration,
	spans []failSpan, disruptions []time.Duration) Row {
	loadStart := start.Add(loadDelay)
	perBucket := s.Rate / 10
	nb := int(d / loadgen.BucketWidth)
	sum := loadgen.Summary{
		Target: "http://127.0.0.1:30080/", Method: "GET", KeepAlive: s.KeepAlive, Rate: s.Rate,
		Duration: d, EndReason: loadgen.EndDuration, Failures: map[loadgen.Class]int{},
		Bursts: []loadgen.Burst{}, Valid: true, TransparentRetry: s.KeepAlive,
		Latency: loadgen.Latency{Mean: 3 * time.Millisecond, P50: 2 * time.Millisecond,
			P90: 4 * time.Millisecond, P95: 5 * time.Millisecond, P99: 9 * time.Millisecond, Max: 2 * time.Second},
	}
	buckets := make([]loadgen.Bucket, nb)
	var burst *loadgen.Burst
	lastWindow := -1
	for i := range buckets {
		b := &buckets[i]
		b.Start = time.Duration(i) * loadgen.BucketWidth
		b.Sent = perBucket
		for _, sp := range spans {
			if b.Start >= sp.from && b.Start < sp.to {
				n := min(sp.perBucket, b.Sent-b.Failed)
				if n <= 0 {
					continue
				}
				if b.Failures == nil {
					b.Failures = map[loadgen.Class]int{}
				}
				b.Failures[sp.c] += n
				b.Failed += n
			}
		}
		b.OK = b.Sent - b.Failed
		sum.Requests += b.Sent
		sum.OK += b.OK
		sum.Failed += b.Failed
		for c, n := range b.Failures {
			sum.Failures[c] += n
		}
		if b.Failed > 0 {
			at := loadStart.Add(b.Start)
			if w := int(b.Start / time.Second); w != lastWindow {
				sum.DisruptionSeconds++
				lastWindow = w
			}
			if burst == nil || at.Sub(burst.Last) > loadgen.BurstGap {
				sum.Bursts = append(sum.Bursts, loadgen.Burst{First: at, Classes: map[loadgen.Class]int{}})
				burst = &sum.Bursts[len(sum.Bursts)-1]
			}
			burst.Last = at.Add(loadgen.BucketWidth - time.Millisecond)
			burst.Count += b.Failed
			for c, n := range b.Failures {
				burst.Classes[c] += n
			}
		}
	}
	sum.SuccessRatio = float64(sum.OK) / float64(sum.Requests)
	sum.FailureRatio = float64(sum.Failed) / float64(sum.Requests)
	sum.AchievedRate = float64(s.Rate)

	tl := &timeline.Timeline{Namespace: "rc-" + s.Name, Started: start, Ended: loadStart.Add(d)}
	ev := func(at time.Duration, k timeline.Kind, pod, detail string) {
		tl.Events = append(tl.Events, timeline.Event{Time: loadStart.Add(at), Kind: k, Pod: pod, Detail: detail})
	}
	var drs []check.DisruptionResult
	for di, at := range disruptions {
		dr := check.DisruptionResult{Kind: s.Disruption, N: di + 1, Started: loadStart.Add(at), Settled: loadStart.Add(at + settleAfter)}
		for _, b := range buckets {
			if b.Start < at || b.Start > at+settleAfter {
				continue
			}
			dr.Requests += b.Sent
			dr.Failed += b.Failed
			for c, n := range b.Failures {
				if dr.Failures == nil {
					dr.Failures = map[loadgen.Class]int{}
				}
				dr.Failures[c] += n
			}
		}
		dr.SuccessRatio = float64(dr.Requests-dr.Failed) / float64(dr.Requests)
		drs = append(drs, dr)
	}

	rs := "app-7d9f8c6b5"
	var pods []string
	for i := range s.Replicas {
		p := fmt.Sprintf("%s-old%02d", rs, i)
		pods = append(pods, p)
		ev(-loadDelay+time.Second, timeline.PodCreated, p, "")
		ev(-loadDelay+3*time.Second, timeline.EndpointReady, p, "")
	}
	gen := 0
	for di, at := range disruptions {
		ev(at, timeline.Disruption, "", fmt.Sprintf("%s %d/%d", s.Disruption, di+1, len(disruptions)))
		// Roll one pod per disruption: a new one comes up, the oldest goes.
		victim := pods[0]
		pods = pods[1:]
		gen++
		np := fmt.Sprintf("%s-new%02d", rs, gen)
		pods = append(pods, np)
		ev(at+100*time.Millisecond, timeline.PodCreated, np, "")
		ev(at+1500*time.Millisecond, timeline.EndpointReady, np, "")
		del := at + 1600*time.Millisecond
		ev(del, timeline.PodDeleting, victim, "grace 30s")
		ev(del+50*time.Millisecond, timeline.K8sEvent, victim, "Killing: Stopping container app")
		ev(del+700*time.Millisecond, timeline.EndpointUnready, victim, "ready=false serving=true terminating=true")
		ev(del+time.Duration(preStopSeconds)*time.Second+1200*time.Millisecond, timeline.EndpointRemoved, victim, "")
		ev(del+time.Duration(preStopSeconds)*time.Second+1500*time.Millisecond, timeline.PodGone, victim, "")
		ev(at+settleAfter, timeline.DisruptionDone, "", fmt.Sprintf("%s %d/%d settled", s.Disruption, di+1, len(disruptions)))
		tl.Propagation = append(tl.Propagation, timeline.Propagation{
			Pod: victim, DeletingAt: loadStart.Add(del), ToUnready: 700 * time.Millisecond,
			ToRemoved: time.Duration(preStopSeconds)*time.Second + 1200*time.Millisecond,
		})
	}

	row := Row{
		Suite: suite, Config: s, PodIdentity: true, Started: start, Duration: loadDelay + d + 2*time.Second,
		Summary: sum, Disruptions: drs, Verdict: s.Expect.Judge(sum, drs...), Buckets: buckets, LoadStarted: loadStart,
		Timeline: tl, Versions: testVersions,
		Artifacts: map[string]string{"vegeta": "results/" + s.Name + ".gob", "ledger": "results/" + s.Name + ".json"},
	}
	return row
}

// syntheticRows are three rows: a passing row, a failing row with several failure classes and a
// harness fault, plus text that needs escaping.
func syntheticRows() []Row {
	good := check.Applied{
		Name: "prestop-sleep-drain", Why: "the preStop sleep outlasts endpoint propagation; drain finishes in-flight requests",
		App: "app", PreStop: check.PreStop{Sleep: 5 * time.Second}, OnSIGTERM: "drain", GraceSeconds: 30, Replicas: 3, Path: "/", Rate: 100, Method: "GET",
		Disruption: check.RolloutRestart, Count: 2, Quiet: 3 * time.Second,
		Expect: check.Zero().WithMinSuccessRatioPerDisruption(0.95),
	}
	naive := check.Applied{
		Name: "naive-exit", Why: "no preStop: SIGTERM arrives <before> kube-proxy stops routing & the app exits at once",
		App: "app", PreStop: check.PreStop{None: true}, OnSIGTERM: "exit", GraceSeconds: 30, Replicas: 3, Path: "/", Rate: 100, Method: "GET", KeepAlive: true,
		Disruption: check.DeletePod, Count: 2, Quiet: 3 * time.Second,
		Expect: check.Failures(loadgen.ClassRefused, loadgen.ClassReset),
	}
	atMost := check.Applied{
		Name: "exit-at-most", App: "app", PreStop: check.PreStop{Exec: []string{"/app", "sleep", "2s"}}, OnSIGTERM: "exit",
		GraceSeconds: 10, RequestDuration: 100 * time.Millisecond, Replicas: 3, Path: "/", Rate: 100, Method: "GET",
		Disruption: check.RolloutRestart, Count: 1, Quiet: 3 * time.Second, Expect: check.AtMost(0.001),
	}
	r1 := syntheticRow("rollout", good, 5, t0, 2*time.Second, 20*time.Second, nil, []time.Duration{4 * time.Second, 11 * time.Second})
	r2 := syntheticRow("delete", naive, 0, t0.Add(time.Minute), 3*time.Second, 20*time.Second, []failSpan{
		{5600 * time.Millisecond, 6400 * time.Millisecond, loadgen.ClassRefused, 4},
		{5600 * time.Millisecond, 5900 * time.Millisecond, loadgen.ClassReset, 2},
		{6300 * time.Millisecond, 6500 * time.Millisecond, loadgen.ClassEOF, 1},
		{13600 * time.Millisecond, 14000 * time.Millisecond, loadgen.ClassRefused, 3},
		{13900 * time.Millisecond, 14100 * time.Millisecond, loadgen.HTTP5xxClass(503), 2},
	}, []time.Duration{4 * time.Second, 12 * time.Second})
	r3 := syntheticRow("rollout", atMost, 2, t0.Add(2*time.Minute), 2*time.Second, 15*time.Second, []failSpan{
		{7 * time.Second, 7300 * time.Millisecond, loadgen.ClassTimeout, 1},
	}, []time.Duration{5 * time.Second})
	// r2's deleted pods: one exited by itself, one was killed; its disruptions took 9 s and 11 s.
	r2.Times = check.NewTimes([]check.Termination{
		{Pod: "app-1", Deleting: t0.Add(time.Minute + 4*time.Second), SIGTERM: 20 * time.Millisecond, Exit: 1200 * time.Millisecond, How: "own", Gone: 2 * time.Second},
		{Pod: "app-2", Deleting: t0.Add(time.Minute + 12*time.Second), Exit: 30500 * time.Millisecond, ExitUncertainty: time.Second, How: "killed", Gone: 31 * time.Second},
	}, []check.DisruptionResult{
		{Started: t0.Add(time.Minute + 4*time.Second), Complete: t0.Add(time.Minute + 13*time.Second)},
		{Started: t0.Add(time.Minute + 12*time.Second), Complete: t0.Add(time.Minute + 23*time.Second)},
	})
	// r3's load missed its rate and stalled, every failure in flight across the stall: a harness
	// fault (failures outside a stall of the load would be the app's, and judged).
	r3.Summary.Valid = false
	r3.Summary.AchievedRate = 91.3
	r3.Summary.InvalidReason = "achieved rate 91.30/s misses the asked 100/s by 8.7% (tolerance 1%); stalled: no request sent for 1.5s from +7s"
	r3.Summary.StallFailed = r3.Summary.Failed
	r3.Verdict = r3.Config.Expect.Judge(r3.Summary, r3.Disruptions...)
	return []Row{r1, r2, r3}
}
