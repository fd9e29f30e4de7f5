//go:build e2e

package suites_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/matrix"
	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/rctest"
)

// suiteNeeds is the least time the whole matrix needs; `go test`'s default 10-minute timeout
// would panic in the middle of it and skip the cleanups, leaking the cluster.
const suiteNeeds = 45 * time.Minute

func TestConformance(t *testing.T) {
	if d, ok := t.Deadline(); ok && time.Until(d) < suiteNeeds && !onlySmoke() {
		t.Fatalf("go test's -timeout (%s left) is shorter than the matrix needs (%s): the timeout would panic mid-run and leak the cluster; run make e2e, or go test -tags e2e -timeout 90m ./suites", time.Until(d).Round(time.Second), suiteNeeds)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck conformance")
}

// onlySmoke reports whether the label filter selects the smoke specs only (a short run).
func onlySmoke() bool {
	f, _ := GinkgoConfiguration()
	return f.LabelFilter == "smoke"
}

var (
	kc *rctest.Cluster
	// apps are the sample app's images, built once per run, by how they start it (Sample.Entry;
	// "" the exec form).
	apps map[string]string
)

// The cluster is set up once, on Ginkgo's process 1, and every process joins it: rows run as
// many at once as there are processes (ginkgo --procs, make e2e's ROLLCHECK_PROCS), except the
// rows that must run alone (Row.SerialReason, check.Plan.RunsAlone: load from the host, a
// kubelet restart, a node drain), which are Serial specs, which Ginkgo runs on process 1 after
// all others, one at a time. The setup may take 40 minutes: the cluster and the images take
// minutes, but a first build of Traefik's image (its Go module, cold) takes over ten on two
// shared cores; then each is cached.
var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	// Every row of the run's load paths, with their bounds, is validated before any cluster
	// work: a bad row fails in seconds.
	mode, err := matrix.LoadModeFromEnv()
	Expect(err).NotTo(HaveOccurred())
	for _, r := range matrix.Matrix(matrix.AllEntries(), mode) {
		_, err := r.Scenario.Plan("check", "rollcheck/app:validate")
		Expect(err).NotTo(HaveOccurred(), "matrix row %s", r.Name())
	}
	c := rctest.SetUp(ctx, "conformance")
	images := map[string]string{"": c.SampleAppImage(ctx)}
	if mode != knobs.LoadHost {
		rctest.Logf("load from the cluster: load pods run %s", c.UseLoadPods(ctx))
	}
	// The images of rows whose app starts another way (behind a shell, behind tini, with a
	// STOPSIGNAL), and of the proxies in front, only for rows the label filter can select
	// (their labels as table gives them).
	for _, sp := range matrix.Specs(matrix.AllEntries(), mode, 1) {
		if !append(Label("conformance"), sp.Labels...).MatchesLabelFilter(GinkgoLabelFilter()) {
			continue
		}
		if e := sp.Scenario.App.Entry; e != "" && images[e] == "" {
			images[e] = c.EntryImage(ctx, images[""], e)
		}
		if f := sp.Scenario.Front; f != nil && images[proxyKey(f.Config.Proxy())] == "" {
			ref, err := proxies.EnsureImage(ctx, f.Config.Proxy(), rctest.Logf)
			Expect(err).NotTo(HaveOccurred(), "the %s image of row %s", f.Config.Proxy(), sp.Scenario.Variant.Name)
			images[proxyKey(f.Config.Proxy())] = ref
		}
	}
	return c.Share(images)
}, func(ctx SpecContext, data []byte) {
	kc, apps = rctest.Join(ctx, "conformance", data)
}, NodeTimeout(40*time.Minute))

// table declares the specs of rows under a disruption: a DescribeTable whose entries are
// matrix.Specs, each named, labelled, run alone or not and given its timeout as its Spec says.
// With ROLLCHECK_REPEAT=N (1 to 20) every row runs N times, as N specs "row #k/N"; the report
// gives each row's runs, pooled failure ratio with its interval and verdict stability.
func table(title, suite string, rows []matrix.Entry) bool {
	repeat, err := matrix.RepeatFromEnv()
	if err != nil {
		panic(err) // at tree construction: Ginkgo reports it before any spec or cluster work
	}
	mode, err := matrix.LoadModeFromEnv()
	if err != nil {
		panic(err)
	}
	for _, why := range matrix.Unbounded(rows, mode) {
		// Said once, at tree construction: a row the matrix leaves out is not a row that passed.
		fmt.Fprintf(os.Stderr, "rollcheck: not run (%s): %s\n", mode, why)
	}
	var entries []TableEntry
	for _, sp := range matrix.Specs(rows, mode, repeat) {
		decorators := []any{Labels(sp.Labels), SpecTimeout(sp.Timeout)}
		if sp.Serial {
			decorators = append(decorators, Serial)
		}
		entries = append(entries, Entry(sp.Name, append(decorators, sp)...))
	}
	return DescribeTable(title, Label("conformance"), func(ctx SpecContext, sp matrix.Spec) {
		if f := sp.Scenario.Front; f != nil {
			// The proxies' images, built once for the run (SynchronizedBeforeSuite).
			withImages := *f
			for _, p := range proxies.All {
				withImages.Images = withImages.Images.With(p, apps[proxyKey(p)])
			}
			sp.Scenario.Front = &withImages
		}
		p, err := sp.Scenario.Plan(suite, apps[sp.Scenario.App.Entry])
		Expect(err).NotTo(HaveOccurred())
		p.Repeat = sp.Run
		row := kc.Check(ctx, p)
		Expect(row).To(rctest.Pass())
		if sp.Also != nil {
			Expect(sp.Also(row)).To(Succeed())
		}
	}, entries)
}

// proxyKey is the key of a proxy's image among the images shared between processes.
func proxyKey(p proxies.Proxy) string { return "proxy:" + string(p) }
