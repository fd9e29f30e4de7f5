package rctest_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/rctest"
	"github.com/rollcheck/rollcheck/spec"
)

// A user's suite: the kind cluster from BeforeSuite, one spec per row of a check file, each
// asserting the row's verdict. examples/check is a complete one.
func ExampleCluster_Check() {
	var kc *rctest.Cluster
	var plans []check.Plan
	_ = BeforeSuite(func(ctx context.Context) {
		c, err := spec.Load("check.yaml")
		Expect(err).NotTo(HaveOccurred())
		plans, _, err = c.Plans()
		Expect(err).NotTo(HaveOccurred())
		kc = rctest.SetUp(ctx, "my-app")
	}, NodeTimeout(15*time.Minute))
	_ = It("keeps every request through rollouts", func(ctx SpecContext) {
		for _, p := range plans {
			Expect(kc.Check(ctx, p)).To(rctest.Pass())
		}
	}, SpecTimeout(30*time.Minute))
}
