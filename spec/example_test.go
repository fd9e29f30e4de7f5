package spec_test

import (
	"context"
	"fmt"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/spec"
)

// A check file's variants × disruptions are resolved engine Plans: run each on a Target.
func ExampleLoad() {
	c, err := spec.Load("testdata/good.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	plans, warnings, err := c.Plans()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(warnings), "warnings")
	for _, r := range plans {
		p := r.Plan()
		fmt.Printf("%s under %s: expect %s\n", p.Variant.Name, p.Disruption.Kind, p.Variant.Expect)
	}
	var target engine.Target // from your cluster: see rctest.SetUp
	_ = func(ctx context.Context) {
		for _, p := range plans {
			row, err := engine.Run(ctx, target, p)
			fmt.Println(row.Verdict, err)
		}
	}
	// Output:
	// 0 warnings
	// as-is under rollout-restart: expect ≥ 99% per disruption
	// prestop-5s under rollout-restart: expect 0 failures
}
