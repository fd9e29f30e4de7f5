package engine_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/checktest"
)

// Run judges a Plan on a Target: the cluster's API server and the URL under which the load
// reaches rollcheck's load Service (rctest.SetUp gives one for a kind cluster). A row that
// cannot run to the end is still returned, with status error and the reason, so that a table
// can never count it as passed; here no API server answers.
func ExampleRun() {
	plan := checktest.WebPlan() // see check.Plan for building one from a user's manifests
	target := engine.Target{
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second},
		LoadURL:    "http://127.0.0.1:1",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var steps []engine.Step
	row, err := engine.Run(ctx, target, plan, engine.WithProgress(func(p engine.Progress) { steps = append(steps, p.Step) }))
	fmt.Println("error:", err != nil)
	fmt.Println(row.Verdict.Status == check.Error, row.Config)
	fmt.Println("steps:", steps)
	// Output:
	// error: true
	// true web-drain: preStop=exec:sh -c sleep 3 grace=30s keepalive=off rollout-restart×3
	// steps: []
}
