package rctest_test

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/rctest"
)

// In a user's suite each spec checks a Plan on the cluster SetUp gave and asserts the row
// (examples/check is a whole suite):
//
//	var _ = BeforeSuite(func(ctx context.Context) { kc = rctest.SetUp(ctx, "my-app") })
//	var _ = It("keeps every request through rollouts", func(ctx SpecContext) {
//		Expect(kc.Check(ctx, plan)).To(rctest.Pass())
//	})
//
// Under ginkgo --procs N, one process sets the cluster up and every process joins it; specs with
// load from the cluster then run N at once (specs with load from the host must be Serial):
//
//	var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
//		c := rctest.SetUp(ctx, "my-app") // released after every process is done
//		c.UseLoadPods(ctx)
//		return c.Share(nil)
//	}, func(ctx SpecContext, data []byte) {
//		kc, _ = rctest.Join(ctx, "my-app", data)
//	})
//
// Here the matchers judge two rows made by hand, with a Gomega that prints its failures.
func ExamplePass() {
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(strings.SplitN(message, "\n", 2)[0]) })
	cfg := check.Applied{Name: "prestop-5s", PreStop: check.PreStop{Sleep: 5e9}, GraceSeconds: 30, Method: "GET",
		Disruption: check.RolloutRestart, Count: 3, Expect: check.Zero()}
	passed := check.Row{Config: cfg, Verdict: check.Verdict{Status: check.Pass, Reason: "0 of 1802 requests failed"},
		Disruptions: []check.DisruptionResult{{N: 1, SuccessRatio: 1}, {N: 2, SuccessRatio: 1}}}
	failed := passed
	failed.Verdict = check.Verdict{Status: check.Fail, Reason: "12 of 1790 requests failed (0.670%), expected none"}

	fmt.Println(g.Expect(passed).To(rctest.Pass()))
	fmt.Println(g.Expect(passed).To(rctest.HaveWorstDisruptionAtLeast(1)))
	fmt.Println(g.Expect(failed).To(rctest.Pass()))
	// Output:
	// true
	// true
	// row prestop-5s: preStop=sleep:5s grace=30s keepalive=off rollout-restart×3: fail, want pass: 12 of 1790 requests failed (0.670%), expected none (expected 0 failures)
	// false
}
