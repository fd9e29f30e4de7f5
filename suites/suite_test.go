//go:build e2e

package suites_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/rctest"
	"github.com/rollcheck/rollcheck/suites"
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

// The cluster is set up once, on Ginkgo's process 1, and every process joins it: rows with
// load from the cluster run as many at once as there are processes (ginkgo --procs, make e2e's
// ROLLCHECK_PROCS); rows with load from the host are Serial specs, which Ginkgo runs on process
// 1 after all others, one at a time (they share the NodePort).
var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	// Every row is validated before any cluster work: a bad row fails in seconds.
	for _, s := range suites.AllRows() {
		_, err := s.Plan("check", "rollcheck/app:validate")
		Expect(err).NotTo(HaveOccurred(), "matrix row %s", s.Variant.Name)
	}
	mode, err := suites.LoadModeFromEnv()
	Expect(err).NotTo(HaveOccurred())
	c := rctest.SetUp(ctx, "conformance")
	images := map[string]string{"": c.SampleAppImage(ctx)}
	if mode != knobs.LoadHost {
		rctest.Logf("load from the cluster: load pods run %s", c.UseLoadPods(ctx))
	}
	// The images of rows whose app starts another way (behind a shell, behind tini, with a
	// STOPSIGNAL), only for rows the label filter can select (their labels as table gives them).
	for _, s := range suites.Matrix(suites.AllRows(), mode) {
		if e := s.App.Entry; e != "" && images[e] == "" &&
			Label(append(suites.RowLabels(s), "conformance")...).MatchesLabelFilter(GinkgoLabelFilter()) {
			images[e] = c.EntryImage(ctx, images[""], e)
		}
	}
	return c.Share(images)
}, func(ctx SpecContext, data []byte) {
	kc, apps = rctest.Join(ctx, "conformance", data)
}, NodeTimeout(15*time.Minute))

// table declares one spec per Scenario under a disruption: a DescribeTable whose rows are
// named by the Scenario, labelled by disruption and expectation, each with its own timeout.
// With ROLLCHECK_REPEAT=N (1 to 20) every row runs N times, as N specs "row #k/N"; the report
// gives each row's runs, pooled failure ratio with its interval and verdict stability.
func table(title, suite string, rows []scenario.Scenario) bool {
	repeat, err := suites.RepeatFromEnv()
	if err != nil {
		panic(err) // at tree construction: Ginkgo reports it before any spec or cluster work
	}
	mode, err := suites.LoadModeFromEnv()
	if err != nil {
		panic(err)
	}
	rows = suites.Matrix(rows, mode)
	entries := make([]TableEntry, 0, len(rows)*repeat)
	for _, s := range rows {
		decorators := []any{Labels(suites.RowLabels(s)), SpecTimeout(suites.RowTimeout(s))}
		if s.Load.From != check.LoadFromCluster || s.Disruption.Kind == check.KubeletRestart {
			decorators = append(decorators, Serial) // the NodePort is one; a kubelet restart stops every row's terminations
		}
		for k := 1; k <= repeat; k++ {
			n := 0
			if repeat > 1 {
				n = k
			}
			entries = append(entries, Entry(nil, append(decorators, s, n, repeat)...))
		}
	}
	return DescribeTable(title, Label("conformance"), func(ctx SpecContext, s scenario.Scenario, k, _ int) {
		p, err := s.Plan(suite, apps[s.App.Entry])
		Expect(err).NotTo(HaveOccurred())
		p.Repeat = k
		row := kc.Check(ctx, p)
		Expect(row).To(rctest.Pass())
		if s.Also != nil {
			Expect(s.Also(row)).To(Succeed())
		}
	}, func(s scenario.Scenario, k, n int) string {
		if k == 0 {
			return suites.RowName(s)
		}
		return fmt.Sprintf("%s #%d/%d", suites.RowName(s), k, n)
	}, entries)
}
