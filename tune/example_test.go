package tune_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes/scheme"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/tune"
)

// manifest is the app's Deployment as it ships (a check file names such files: see spec).
const manifest = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example/web:v1.4.2
        ports: [{containerPort: 8080}]
`

// Run looks for the smallest preStop with which the base Plan meets its threshold under its
// disruption repeated Count times. On a cluster the Runner is engine.Run on a Target:
//
//	run := func(ctx context.Context, p *check.Resolved) (*check.Row, error) { return engine.Run(ctx, target, p) }
//
// Here a stand-in runner plays an app whose requests stop failing from a 3 s preStop on (its
// rows: exampleRow). The hook is an exec of sleep (the image needs a sleep binary), so half
// seconds are possible; with the default, the native sleep action, the resolution would be
// whole seconds. The answer rests on runs alone that count 59 pod deletions, none failing
// (WithBound's default, 5 %): 15 a run here, so the search's run at 3 s and three confirmations.
func ExampleRun() {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(manifest), nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	base := check.Plan{
		Suite:      "web",
		App:        check.App{Objects: []check.Object{obj.(check.Object)}, Port: 8080},
		Variant:    check.Variant{Name: "web", Expect: check.Zero()},
		Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 5},
	}
	run := func(ctx context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		pre, _ := p.Variant.PreStop.Duration()
		failed := 0
		if pre < 3*time.Second {
			failed = 10
		}
		return exampleRow(p, failed), nil
	}
	opts := []tune.Option{
		tune.WithRange(0, 10*time.Second),
		tune.WithResolution(500 * time.Millisecond),
		tune.WithPreStop(func(d time.Duration) check.PreStop {
			if d == 0 {
				return check.PreStop{None: true}
			}
			return check.PreStop{Exec: []string{"sleep", fmt.Sprint(d.Seconds())}}
		}),
		tune.WithProgress(func(p tune.Probe) {
			if p.Status != "" {
				fmt.Printf("probe %d: preStop %s: %d of %d failed: %s\n", p.N, p.PreStop, p.Failed, p.Requests, p.Status)
			}
		}),
	}
	if err := tune.Validate(base, opts...); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the probe at 1.5s:", tune.Name(base.Variant.Name, 1500*time.Millisecond))
	res, err := tune.Run(context.Background(), run, base, opts...)
	if err != nil {
		fmt.Println("no answer:", err) // res still holds the probes that ran
		return
	}
	fmt.Println(res.Status, res.Found)
	fmt.Println("at", res.AtFound.PreStop, res.AtFound)
	fmt.Println("at", res.Below.PreStop, res.Below)
	// Output:
	// the probe at 1.5s: web-prestop-1p5s
	// probe 1: preStop 0s: 10 of 1000 failed: fail
	// probe 2: preStop 500ms: 10 of 1000 failed: fail
	// probe 3: preStop 1s: 10 of 1000 failed: fail
	// probe 4: preStop 2s: 10 of 1000 failed: fail
	// probe 5: preStop 4s: 0 of 1000 failed: pass
	// probe 6: preStop 3s: 0 of 1000 failed: pass
	// probe 7: preStop 2.5s: 10 of 1000 failed: fail
	// probe 8: preStop 3s: 0 of 1000 failed: pass
	// probe 9: preStop 3s: 0 of 1000 failed: pass
	// probe 10: preStop 3s: 0 of 1000 failed: pass
	// found 3s
	// at 3s 0 of 60 deletions failed in 4 runs alone: p ≤ 4.9 % (95 % confidence)
	// at 2.5s 3 of 15 deletions failed in 1 run alone: p ≤ 44.0 % (95 % confidence)
}

// exampleRow is what engine.Run would return for p: 1,000 requests, failed of them, under
// five rollouts of three pods (15 deletions, the first rollout losing the failed requests),
// judged against p's threshold.
func exampleRow(p check.Plan, failed int) *check.Row {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var ds []check.DisruptionResult
	var terms []check.Termination
	for i := range 5 {
		d := check.DisruptionResult{Kind: check.RolloutRestart, N: i + 1, Started: start.Add(time.Duration(i) * time.Minute),
			Requests: 200, SuccessRatio: 1}
		if i == 0 {
			d.Failed, d.SuccessRatio = failed, float64(200-failed)/200
		}
		ds = append(ds, d)
		for j := range 3 {
			terms = append(terms, check.Termination{Pod: fmt.Sprintf("web-%d-%d", i, j), Deleting: d.Started.Add(time.Duration(j) * 10 * time.Second)})
		}
	}
	sum := loadgen.Summary{Requests: 1000, OK: 1000 - failed, Failed: failed, FailureRatio: float64(failed) / 1000, Valid: true}
	return &check.Row{Suite: p.Suite, Config: p.Applied(), Summary: sum, Disruptions: ds, Times: check.NewTimes(terms, ds),
		Verdict: p.Variant.Expect.Judge(sum, ds...)}
}
