//go:build e2e

// Package check_test is a user's own Ginkgo suite for their app, written with rollcheck's
// public API only (spec, engine, rctest): it reads the same check file the CLI runs and
// asserts what the team knows of its app — the manifests as they are drop requests during a
// rollout, and a 5 s preStop sleep fixes it. It needs a cluster, hence the build tag e2e:
// go test -tags e2e ./examples/check, or make e2e.
package check_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/rctest"
	"github.com/rollcheck/rollcheck/spec"
)

func TestHello(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hello: a user's app under rollout", Label("examples"))
}

var (
	kc    *rctest.Cluster
	plans = map[string]check.Plan{}
)

// One process sets the cluster up; under ginkgo --procs N every process joins it (Serial
// specs, as here, then run on the first process, one at a time: their load comes from the host).
var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	c, err := spec.Load("check.yaml")
	Expect(err).NotTo(HaveOccurred())
	for _, img := range c.Images() {
		Expect(exec.CommandContext(ctx, "docker", "image", "inspect", img).Run()).To(Succeed(),
			"image %s is not in the local Docker engine: make example-image builds it", img)
	}
	return rctest.SetUp(ctx, "hello").Share(nil)
}, func(ctx SpecContext, data []byte) {
	c, err := spec.Load("check.yaml")
	Expect(err).NotTo(HaveOccurred())
	ps, _, err := c.Plans()
	Expect(err).NotTo(HaveOccurred())
	for _, r := range ps {
		plans[r.Plan().Variant.Name] = r.Plan()
	}
	kc, _ = rctest.Join(ctx, "hello", data)
	// The examples' rows go apart from the conformance table's.
	kc.Artifacts = filepath.Join(kc.Artifacts, "examples")
}, NodeTimeout(15*time.Minute))

var _ = Describe("the hello app under rollout restarts", Serial, func() {
	It("drops requests as it is: it exits at SIGTERM", func(ctx SpecContext) {
		row := kc.Check(ctx, plans["as-is"])
		// as-is is a negative control: it passes when requests failed, mostly in propagation.
		Expect(row).To(rctest.Pass())
		Expect(row.Summary.Failed).To(BeNumerically(">", 0))
		Expect(row.PodIdentity).To(BeFalse(), "hello names no pod")
	}, SpecTimeout(10*time.Minute))

	It("drops none with a 5 s native preStop sleep", func(ctx SpecContext) {
		row := kc.Check(ctx, plans["prestop-5s"])
		Expect(row).To(rctest.Pass())
		Expect(row).To(rctest.HaveWorstDisruptionAtLeast(1))
	}, SpecTimeout(10*time.Minute))
})
