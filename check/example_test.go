package check_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/e2e-framework/klient/decoder"

	"github.com/rollcheck/rollcheck/check"
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
func webApp() (check.App, error) {
	objs, err := decoder.DecodeAll(context.Background(), strings.NewReader(webYAML))
	if err != nil {
		return check.App{}, err
	}
	app := check.App{Port: 8080, Path: "/", Images: []string{"example/web:dev"}}
	for _, o := range objs {
		app.Objects = append(app.Objects, o)
	}
	return app, nil
}

// A Plan is the user's Deployment as a Variant changes it, under one disruption and one load,
// with the outcome it must produce. Validate reports every problem at once before any cluster
// work; Applied is the configuration a row of it runs, as the reports show it.
func ExamplePlan() {
	app, err := webApp()
	if err != nil {
		fmt.Println(err)
		return
	}
	grace := int64(30)
	plan := check.Plan{
		Suite: "web",
		App:   app,
		Variant: check.Variant{
			Name:                          "prestop-5s",
			PreStop:                       &check.PreStop{Sleep: 5 * time.Second},
			TerminationGracePeriodSeconds: &grace,
			Expect:                        check.Zero().WithMinSuccessRatioPerDisruption(0.99),
		},
		Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 3},
	}
	resolved, err := plan.Resolve()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("warnings:", len(resolved.Warnings()))
	fmt.Println(resolved.Applied())
	fmt.Println("expect:", resolved.Plan().Variant.Expect)

	objs, err := resolved.Objects("rc-prestop-5s", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		fmt.Printf("%T %s\n", o, o.GetName())
	}

	// An exec preStop longer than the grace period is allowed, with a warning; a native sleep
	// as long as the grace period is not (the API server refuses it), nor one of half seconds.
	plan.Variant.PreStop = &check.PreStop{Exec: []string{"/app", "sleep", "45s"}}
	warnings, _ := plan.Validate()
	fmt.Println(warnings)
	plan.Variant.PreStop = &check.PreStop{Sleep: 45 * time.Second}
	_, err = plan.Validate()
	fmt.Println(err)
	plan.Variant.PreStop = &check.PreStop{Sleep: 2500 * time.Millisecond}
	_, err = plan.Validate()
	fmt.Println(err)
	// Output:
	// warnings: 0
	// prestop-5s: preStop=sleep:5s grace=30s keepalive=off rollout-restart×3
	// expect: 0 failures, ≥ 99% per disruption
	// *v1.Deployment web
	// *v1.Service rollcheck-load
	// [Deployment web: container web's preStop (45s) is longer than terminationGracePeriodSeconds (30s): the kubelet cuts the hook at the grace period's end and gives SIGTERM only its 2 s minimum before SIGKILL]
	// prestop-5s: Deployment web: container web's native preStop sleep (45s) must be shorter than terminationGracePeriodSeconds (30s), as the API server requires; a hook past the grace period needs exec or httpGet
	// prestop-5s: preStop sleep 2.5s: want whole seconds from 1s to 5m
}
