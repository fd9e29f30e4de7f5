// Package rctest is rollcheck for Ginkgo suites: a kind cluster set up (or reused) from
// BeforeSuite and cleaned up with DeferCleanup, a Check that runs one engine.Plan as a spec
// and always writes its row, and Gomega matchers on rows. The built-in conformance matrix
// and users' own suites use it alike; package engine itself never imports Ginkgo.
//
// A suite that needs a cluster and cannot get one fails loudly: SetUp fails the suite.
package rctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// Cluster is a kind cluster ready for checks: the engine's Target and where rows go.
type Cluster struct {
	// Target is what engine.Run needs.
	Target engine.Target
	// Artifacts is the directory for rows, raw results and logs ($ARTIFACTS, else
	// <repo>/_artifacts, else ./_artifacts).
	Artifacts string
	c         *cluster.Cluster
}

var anyFailed bool

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		anyFailed = true
	}
})

// Logf writes a timestamped line to the Ginkgo writer.
func Logf(format string, args ...any) {
	GinkgoWriter.Printf("%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// SetUp creates or reuses the kind cluster described by the ROLLCHECK_* environment (as make
// e2e does: see the README), sweeps namespaces a killed run left behind, and registers the
// cleanup: cluster logs exported when a spec failed, every namespace of the suite waited for,
// the cluster deleted if SetUp created it and ROLLCHECK_KEEP_CLUSTER is not set. Call it from
// BeforeSuite; it fails the suite when no cluster can be had.
func SetUp(ctx context.Context, suite string) *Cluster {
	GinkgoHelper()
	root, _ := cluster.RepoRoot()
	opts, err := cluster.FromEnv(root)
	Expect(err).NotTo(HaveOccurred(), "cluster configuration")
	opts.Logf = Logf
	art := os.Getenv("ARTIFACTS")
	if art == "" {
		art = filepath.Join(root, "_artifacts")
	}
	Expect(os.MkdirAll(art, 0o755)).To(Succeed())

	start := time.Now()
	c, err := cluster.Up(ctx, opts)
	if c != nil {
		DeferCleanup(func(ctx SpecContext) {
			if anyFailed && c.Client != nil {
				dir := filepath.Join(art, "cluster-logs", suite)
				if err := c.ExportLogs(ctx, dir); err != nil {
					Logf("export logs: %v", err)
				} else {
					Logf("cluster logs exported to %s", dir)
				}
			}
			var sweepErr error
			if c.Client != nil {
				_, sweepErr = kube.SweepNamespaces(ctx, c.Client, engine.PartOfLabel+"="+engine.PartOfValue, 3*time.Minute)
			}
			Expect(c.Release(ctx)).To(Succeed())
			Expect(sweepErr).NotTo(HaveOccurred(), "namespaces of this suite left behind")
		}, NodeTimeout(5*time.Minute))
	}
	Expect(err).NotTo(HaveOccurred(), "a kind cluster is required: make e2e creates one (see README)")
	Logf("cluster %q up in %s (created: %v)", c.Name, time.Since(start).Round(100*time.Millisecond), c.Created)
	return &Cluster{Target: c.Target(), Artifacts: art, c: c}
}

// Client is a client of the cluster's API server.
func (c *Cluster) Client() klient.Client { return c.c.Client }

// SampleAppImage builds rollcheck's sample app (fixtures/app) into an image with a tag unique
// to this build and loads it into the cluster; it needs the rollcheck repository.
func (c *Cluster) SampleAppImage(ctx context.Context) string {
	GinkgoHelper()
	ref, err := c.c.BuildAppImage(ctx)
	Expect(err).NotTo(HaveOccurred(), "build and load the sample app image")
	return ref
}

// Check runs the Plan as part of the current spec and returns its row. The row is written to
// Artifacts/rows (also when the run failed, with status error and the reason) and carried
// into Ginkgo's JSON and JUnit reports; a run that could not finish (deploy, serving wait,
// disruption, cluster) fails the spec. Whether the row's verdict passes is the caller's to
// assert, usually with Expect(row).To(rctest.Pass()).
func (c *Cluster) Check(ctx context.Context, p engine.Plan) *engine.Row {
	GinkgoHelper()
	row, err := engine.Run(ctx, c.Target, p, engine.WithArtifacts(c.Artifacts), engine.WithProgress(logProgress))
	if row != nil {
		path, werr := engine.WriteRow(c.Artifacts, *row)
		Expect(werr).NotTo(HaveOccurred(), "write the row")
		AddReportEntry("row", path)
		AddReportEntry("load", row.Summary.String())
		AddReportEntry("verdict", fmt.Sprintf("%s: %s (expected %s)", row.Verdict.Status, row.Verdict.Reason, row.Config.Expect))
		AddReportEntry("disruptions", row.Disruptions)
		if row.Timeline != nil {
			AddReportEntry("endpoint propagation", row.Timeline.Propagation)
		}
	}
	Expect(err).NotTo(HaveOccurred())
	if row.Verdict.Status == engine.HarnessFault {
		Fail("harness fault, not a verdict on the app: " + row.Verdict.Reason)
	}
	return row
}

func logProgress(p engine.Progress) {
	switch p.Phase {
	case engine.PhaseDisruption:
		Logf("%s: disruption %d/%d starts (load %+v)", p.Row, p.N, p.Count, p.Load)
	case engine.PhaseSettled:
		Logf("%s: disruption %d/%d settled %s (load %+v)", p.Row, p.N, p.Count, p.Detail, p.Load)
	case engine.PhaseLoadTicker:
		Logf("%s: load %+v", p.Row, p.Load)
	default:
		Logf("%s: %s %s", p.Row, p.Phase, p.Detail)
	}
}
