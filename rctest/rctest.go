// Package rctest is rollcheck for Ginkgo suites: a kind cluster set up (or reused) from
// BeforeSuite and cleaned up with DeferCleanup (SetUp, or its pieces Acquire, LoadImages and
// Release in the suite's own order), a thin layer over package kindcluster that fails the spec
// where kindcluster returns an error, a Check that runs one check.Plan as a spec
// and always writes its row, and Gomega matchers on rows. The built-in conformance matrix
// and users' own suites use it alike; package engine itself never imports Ginkgo.
//
// A suite that needs a cluster and cannot get one fails loudly: SetUp fails the suite.
//
// In Ginkgo's parallel mode (ginkgo --procs N) one process sets the cluster up and the others
// join it: SetUp and Share in SynchronizedBeforeSuite's first function, Join in its second (see
// the package example). A Plan for which check.Plan.RunsAlone gives a reason (load from the
// host, which shares the NodePort; a node drain; ...) must be a Serial spec; the others may run
// at once.
package rctest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/frontend"
	"github.com/rollcheck/rollcheck/internal/kindlink"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/kindcluster"
)

// Cluster is a kind cluster ready for checks: the engine's Target and where rows go.
type Cluster struct {
	// Target is what engine.Run needs.
	Target engine.Target
	// Artifacts is the directory for rows, raw results and logs ($ARTIFACTS, else _artifacts
	// in the working directory).
	Artifacts string
	suite     string
	// acquired is the hold of the process that set the cluster up (nil in a process that
	// joined it), kind the cluster itself, for images and Share.
	acquired *kindcluster.Cluster
	kind     *cluster.Cluster
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

// SetUp is the one-call default of a suite's BeforeSuite: Acquire the kind cluster the
// ROLLCHECK_* environment describes (as make e2e does: see the README) and register Release
// with DeferCleanup. It fails the suite when no cluster can be had.
func SetUp(ctx context.Context, suite string) *Cluster {
	GinkgoHelper()
	c := Acquire(ctx, suite)
	DeferCleanup(c.Release, NodeTimeout(cluster.TeardownTimeout+time.Minute))
	return c
}

// Acquire is kindcluster.Acquire with the options the ROLLCHECK_* environment gives
// (kindcluster.FromEnv), progress lines on the Ginkgo writer and the cluster's logs exported
// into Artifacts/cluster-logs/<suite> when a spec failed: the cluster is created or reused,
// ready, and rid of the namespaces earlier runs left behind. kind runs in-process, so no kind
// binary is needed, only a Docker engine and the node image. It registers no cleanup: call
// Release (usually with DeferCleanup). When it fails it has already released what it created,
// and it fails the spec.
func Acquire(ctx context.Context, suite string) *Cluster {
	GinkgoHelper()
	art, err := Artifacts()
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	kc, err := kindcluster.Acquire(ctx, kindcluster.FromEnv(), kindcluster.WithLogger(Logf),
		kindcluster.WithLogsDir(filepath.Join(art, "cluster-logs", suite)))
	Expect(err).NotTo(HaveOccurred(), "a kind cluster is required: make e2e creates one (see README)")
	Logf("cluster %q up in %s (created: %v)", kc.Name(), time.Since(start).Round(100*time.Millisecond), kc.Created())
	return &Cluster{Target: kc.Target(), Artifacts: art, suite: suite, acquired: kc, kind: kindlink.RunOf(kc).Cluster}
}

// Artifacts is where rows, raw results and logs go: $ARTIFACTS, else _artifacts in the working
// directory (go test runs a suite in its package's directory). It is created if missing.
func Artifacts() (string, error) {
	art := os.Getenv("ARTIFACTS")
	if art == "" {
		art = "_artifacts"
	}
	art, err := filepath.Abs(art)
	if err == nil {
		err = os.MkdirAll(art, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("artifacts directory: %w", err)
	}
	return art, nil
}

// SweepStale deletes the namespaces earlier runs left behind (a killed run does) and waits until
// they are gone; they would hold the NodePort. Those of a run that still holds its Lease (another
// run on the same cluster) and this suite's own stay. Acquire does it already; a suite calls it
// again where it knows more may be left. It fails the spec if they do not go.
func (c *Cluster) SweepStale(ctx context.Context) {
	GinkgoHelper()
	Expect(cluster.SweepStale(ctx, &cluster.Run{Cluster: c.kind})).To(Succeed())
}

// LoadImages loads images from the local Docker engine into the cluster's nodes (as kind load
// docker-image does); engine.Run also loads the images a Plan lists.
func (c *Cluster) LoadImages(ctx context.Context, refs ...string) {
	GinkgoHelper()
	l, ok := c.Target.Cluster.(engine.ImageLoader)
	Expect(ok).To(BeTrue(), "this cluster's Target cannot load images")
	Expect(l.LoadImages(ctx, refs)).To(Succeed())
}

// Release is the suite's cleanup (kindcluster's Cluster.Release): the cluster's logs exported
// into Artifacts/cluster-logs/<suite> when a spec failed, every namespace of the suite waited
// for, and the cluster deleted if Acquire created it and ROLLCHECK_KEEP_CLUSTER is not set. In
// a process that joined the cluster it does nothing.
func (c *Cluster) Release(ctx context.Context) {
	GinkgoHelper()
	if c.acquired == nil {
		return
	}
	if anyFailed {
		c.acquired.MarkFailed()
	}
	Expect(c.acquired.Release(ctx)).To(Succeed())
}

// Client is a client of the cluster's API server.
func (c *Cluster) Client() klient.Client { return c.kind.Client }

// SampleAppImage makes rollcheck's sample app image (of a build of rollcheck's command from the
// rollcheck module the working directory's module requires: the suite's binary is not
// rollcheck) with a tag derived from its content and loads it into the cluster
// (kindcluster's Cluster.SampleAppImage).
func (c *Cluster) SampleAppImage(ctx context.Context) string {
	GinkgoHelper()
	ref, err := c.kind.BuildAppImage(ctx)
	Expect(err).NotTo(HaveOccurred(), "build and load the sample app image")
	return ref
}

// EntryImage builds the sample app image app started as entry says ("shell": a wrapper script
// under busybox sh that does not pass SIGTERM on; "tini": tini as PID 1; "": app itself) and
// loads it into the cluster.
func (c *Cluster) EntryImage(ctx context.Context, app, entry string) string {
	GinkgoHelper()
	ref, err := c.kind.EntryImage(ctx, app, cluster.Entry(entry))
	Expect(err).NotTo(HaveOccurred(), "the sample app image started by %q", entry)
	return ref
}

// UseLoadPods makes the cluster ready for plans whose load comes from inside it (Load.From
// cluster): the load pod's image, made as SampleAppImage's is and loaded into the nodes, or the one
// ROLLCHECK_LOAD_IMAGE names, becomes Target.LoadImage. It returns the image.
func (c *Cluster) UseLoadPods(ctx context.Context) string {
	GinkgoHelper()
	ref, err := c.kind.LoadPodImage(ctx)
	Expect(err).NotTo(HaveOccurred(), "the load pod's image")
	c.Target.LoadImage = ref
	return ref
}

// Check runs the Plan as part of the current spec and returns its row. The plan is resolved once
// (check.Plan.Resolve); one that does not resolve is an error row, and fails the spec before any
// cluster work. The row is written to
// Artifacts/rows (also when the run failed, with status error and the reason) and carried
// into Ginkgo's JSON and JUnit reports; a run that could not finish (deploy, serving wait,
// disruption, cluster) fails the spec. A harness fault (the load itself was invalid: it says
// nothing about the app) runs the row once more, by the front ends' one policy (rollcheck
// check's and tune's too): both attempts are kept, the first under the row's
// file name with .attempt1 before .json, and the row records the retry (Attempts, Retried); a second
// fault fails the spec. Whether the row's verdict passes is the caller's to assert, usually with
// Expect(row).To(rctest.Pass()).
func (c *Cluster) Check(ctx context.Context, p check.Plan) *check.Row {
	GinkgoHelper()
	res, err := p.Resolve()
	if err != nil {
		p = p.WithDefaults()
		row := &check.Row{Suite: p.Suite, Repeat: p.Repeat, Started: time.Now(), Config: p.Applied(),
			Verdict: check.Verdict{Status: check.Error, Reason: err.Error()}}
		c.report(row)
		Fail("the plan: " + err.Error())
	}
	row, err := frontend.Attempt(ctx, c.Target, res, c.Artifacts, func(first *check.Row) {
		c.entries(first, rowfile.AttemptName(*first, 1))
		AddReportEntry("harness fault, run once more", first.Verdict.Reason)
		GinkgoWriter.Printf("harness fault, not a verdict on the app: %s; running %s once more\n", first.Verdict.Reason, p.Variant.Name)
	}, engine.WithProgress(logProgress))
	if row != nil {
		c.entries(row, rowfile.Name(*row))
	}
	Expect(err).NotTo(HaveOccurred())
	if row.Verdict.Status == check.HarnessFault {
		Fail("harness fault, not a verdict on the app: " + row.Verdict.Reason)
	}
	return row
}

// report writes row to Artifacts/rows and adds it to the spec's report.
func (c *Cluster) report(row *check.Row) {
	GinkgoHelper()
	_, werr := rowfile.Write(c.Artifacts, *row)
	Expect(werr).NotTo(HaveOccurred(), "write the row")
	c.entries(row, rowfile.Name(*row))
}

// entries adds row to the spec's report: its file (name, in Artifacts/rows), load, verdict,
// disruptions and endpoint propagation.
func (c *Cluster) entries(row *check.Row, name string) {
	AddReportEntry("row", filepath.Join(c.Artifacts, "rows", name))
	AddReportEntry("load", row.Summary.String())
	AddReportEntry("verdict", fmt.Sprintf("%s: %s (expected %s)", row.Verdict.Status, row.Verdict.Reason, row.Config.Expect))
	AddReportEntry("disruptions", row.Disruptions)
	if row.Timeline != nil {
		AddReportEntry("endpoint propagation", row.Timeline.Propagation)
	}
}

// shared is what Share hands to Join.
type shared struct {
	Cluster   cluster.Shared    `json:"cluster"`
	Artifacts string            `json:"artifacts"`
	LoadImage string            `json:"loadImage,omitempty"`
	Values    map[string]string `json:"values,omitempty"`
}

// Share returns what the other processes of a parallel Ginkgo run need to Join c, with values of
// the suite's own (an image it built, say): the return value of SynchronizedBeforeSuite's first
// function. Call it after UseLoadPods, if the rows need load pods.
func (c *Cluster) Share(values map[string]string) []byte {
	GinkgoHelper()
	b, err := json.Marshal(shared{Cluster: c.kind.Share(), Artifacts: c.Artifacts, LoadImage: c.Target.LoadImage, Values: values})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// Join is SynchronizedBeforeSuite's second function: every process (the first too) gets its own
// handle on the cluster Share described, and the values shared with it. It creates, sweeps and
// releases nothing: the process that called SetUp releases the cluster once all are done.
func Join(ctx context.Context, suite string, data []byte) (*Cluster, map[string]string) {
	GinkgoHelper()
	var sh shared
	Expect(json.Unmarshal(data, &sh)).To(Succeed(), "the data SynchronizedBeforeSuite's first function returned (Cluster.Share)")
	kc, err := cluster.Join(ctx, sh.Cluster, Logf)
	Expect(err).NotTo(HaveOccurred())
	t := kc.Target()
	t.LoadImage = sh.LoadImage
	return &Cluster{Target: t, Artifacts: sh.Artifacts, suite: suite, kind: kc}, sh.Values
}

// logProgress logs each step of a row, as rollcheck check shows it (frontend.ProgressLine).
func logProgress(p engine.Progress) { Logf("%s", frontend.ProgressLine(p)) }
