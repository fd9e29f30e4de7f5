package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/engine"
)

// Tune looks for the smallest preStop with which the base Plan meets its threshold under its
// disruption repeated Count times. Here the hook is an exec of sleep (the image needs a sleep
// binary), so half seconds are possible; with the default, the native sleep action, the
// resolution would be whole seconds.
func ExampleTune() {
	app, err := webApp() // the manifests, port, path and image (see ExampleRun)
	if err != nil {
		fmt.Println(err)
		return
	}
	grace := int64(30)
	base := engine.Plan{
		Suite:      "web",
		App:        app,
		Variant:    engine.Variant{Name: "web", TerminationGracePeriodSeconds: &grace, Expect: engine.Zero()},
		Disruption: engine.Disruption{Kind: engine.RolloutRestart, Count: 5},
	}
	opts := engine.TuneOptions{
		Max:        10 * time.Second,
		Resolution: 500 * time.Millisecond,
		PreStop: func(d time.Duration) engine.PreStop {
			if d == 0 {
				return engine.PreStop{None: true}
			}
			return engine.PreStop{Exec: []string{"sleep", fmt.Sprint(d.Seconds())}}
		},
		Progress: func(p engine.TuneProbe) {
			if p.Status != "" {
				fmt.Printf("probe %d: preStop %s: %d of %d failed: %s\n", p.N, p.PreStop, p.Failed, p.Requests, p.Status)
			}
		},
	}
	if err := opts.Check(base); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the probe at 1.5s:", engine.TuneName(base.Variant.Name, 1500*time.Millisecond))

	var target engine.Target // the cluster and how the load reaches it
	tune := func(ctx context.Context) {
		res, err := engine.Tune(ctx, target, base, opts)
		if err != nil {
			fmt.Println("no answer:", err) // res still holds the probes that ran
		}
		if res != nil && res.FoundOK {
			fmt.Printf("preStop %s, confirmed; grace period: %v\n", res.Found, res.Recommendation)
		}
	}
	_ = tune
	// Output:
	// the probe at 1.5s: web-prestop-1p5s
}
