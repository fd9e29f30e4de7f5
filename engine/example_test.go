package engine_test

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/e2e-framework/klient/decoder"

	"github.com/rollcheck/rollcheck/engine"
)

const webYAML = `
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
        image: example/web:dev
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /healthz, port: 8080}}
`

// webApp is the app of webYAML, as a user builds it: the manifests decoded into objects, the
// port and path the load goes to, the image loaded from the local Docker engine.
func webApp() (engine.App, error) {
	objs, err := decoder.DecodeAll(context.Background(), strings.NewReader(webYAML))
	if err != nil {
		return engine.App{}, err
	}
	app := engine.App{Port: 8080, Path: "/", Images: []string{"example/web:dev"}}
	for _, o := range objs {
		app.Objects = append(app.Objects, o.(client.Object))
	}
	return app, nil
}

// A Plan is the user's Deployment as a Variant changes it, under one disruption; Run judges
// it on a Target (rctest.SetUp gives one for a kind cluster).
func ExampleRun() {
	app, err := webApp()
	if err != nil {
		fmt.Println(err)
		return
	}
	sleep := int64(30)
	plan := engine.Plan{
		Suite: "web",
		App:   app,
		Variant: engine.Variant{
			Name:                          "prestop-5s",
			PreStop:                       &engine.PreStop{Sleep: 5e9},
			TerminationGracePeriodSeconds: &sleep,
			Expect:                        engine.Zero().WithMinSuccessRatioPerDisruption(0.99),
		},
		Disruption: engine.Disruption{Kind: engine.RolloutRestart, Count: 3},
	}
	if _, err := plan.Check(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("expect:", plan.Variant.Expect)

	var target engine.Target // the cluster and how the load reaches it
	run := func(ctx context.Context) {
		row, err := engine.Run(ctx, target, plan)
		if err != nil {
			fmt.Println("no verdict:", err) // the row is still returned, with status error
		}
		fmt.Println(row.Verdict.Status, row.Verdict.Reason)
	}
	_ = run
	// Output:
	// expect: 0 failures, ≥ 99% per disruption
}
