package tune_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/e2e-framework/klient/decoder"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/tune"
)

const parallelWebYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: web
        image: example/web:dev
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /healthz, port: 8080}}
`

// WithParallel runs several probes at once, for the same answer in fewer rounds: here 3 at
// once. The load comes from load pods (check.LoadFromCluster), so the probes share nothing and
// Parallelism allows it; from the host it would allow 1. On a cluster the Runner is
// engine.Run on a Target, called from several goroutines at once:
//
//	run := func(ctx context.Context, p *check.Resolved) (*check.Row, error) { return engine.Run(ctx, target, p) }
//
// Here a stand-in runner plays an app whose requests stop failing from a 3 s preStop on (its
// rows: exampleRow, 15 deletions a run). The search runs probes at once; the answer rests on
// runs alone only, confirmations one a round: the search's last probe ran alone, clean; one at
// 2 s, one resolution below (whole seconds: the native sleep), fails alone, where the search's
// probe ran beside others; then three more runs at 3 s bring 60 deletions, none failing (the
// default bound needs 59). The confirmation looks below before it bounds: only the lowest
// clean value gets the bound's runs.
func ExampleWithParallel() {
	objs, err := decoder.DecodeAll(context.Background(), strings.NewReader(parallelWebYAML))
	if err != nil {
		fmt.Println(err)
		return
	}
	base := check.Plan{
		Suite:      "web",
		App:        check.App{Port: 8080, Path: "/", Images: []string{"example/web:dev"}},
		Variant:    check.Variant{Name: "web", Expect: check.Zero()},
		Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 5},
		Load:       check.Load{From: check.LoadFromCluster},
	}
	for _, o := range objs {
		base.App.Objects = append(base.App.Objects, o)
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
	n := min(3, tune.Parallelism(base))
	res, err := tune.Run(context.Background(), run, base, tune.WithRange(0, 10*time.Second), tune.WithParallel(n))
	if err != nil {
		fmt.Println("no answer:", err)
		return
	}
	// Each round's probes, in the order they started; those the search did not reach ran ahead,
	// and a round of one runs its probe alone.
	probes := append(res.Probes, res.Confirm...)
	slices.SortFunc(probes, func(a, b tune.Probe) int { return a.N - b.N })
	rounds := map[int][]string{}
	for _, p := range probes {
		s := fmt.Sprint(p.PreStop, " ", p.Status)
		if p.Confirm {
			s = "confirm " + s
		}
		if p.Ahead {
			s += " (ahead)"
		}
		if p.Alone && !p.Confirm {
			s += " (alone)"
		}
		rounds[p.Round] = append(rounds[p.Round], s)
	}
	for r := 1; r <= res.Rounds; r++ {
		fmt.Printf("round %d: %s\n", r, strings.Join(rounds[r], ", "))
	}
	fmt.Println(res.Status, res.Found)
	serial, _ := tune.Run(context.Background(), run, base, tune.WithRange(0, 10*time.Second))
	fmt.Printf("rounds %d, serial %d\n", res.Rounds, serial.Rounds)
	// Output:
	// round 1: 0s fail, 1s fail, 2s fail
	// round 2: 4s pass, 8s pass (ahead), 6s pass (ahead)
	// round 3: 3s pass (alone)
	// round 4: confirm 2s fail
	// round 5: confirm 3s pass
	// round 6: confirm 3s pass
	// round 7: confirm 3s pass
	// found 3s
	// rounds 7, serial 8
}
