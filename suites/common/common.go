// Package common is the Ginkgo side shared by rollcheck's suites: the suite-level cluster and
// app image, namespaces cleaned up with DeferCleanup, and deploying a Scenario. Unlike the
// library packages under internal/, it asserts (Gomega) — it only runs inside suites.
package common

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/scenario"
)

// Env is what a suite's BeforeSuite set up.
type Env struct {
	Cluster  *cluster.Cluster
	AppImage string
	// Artifacts is the directory for reports and raw results ($ARTIFACTS or <repo>/_artifacts).
	Artifacts string
	failed    bool
}

// anySpecFailed is set by the ReportAfterEach below, which every suite importing this package
// registers at its top level (package initialisation happens before the spec tree is built).
var anySpecFailed bool

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		anySpecFailed = true
	}
})

// Logf writes a timestamped line to the Ginkgo writer.
func Logf(format string, args ...any) {
	GinkgoWriter.Printf("%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// SetUp creates or reuses the cluster and builds and loads the app image; it registers the
// cleanup that exports the cluster's logs when a spec failed and releases the cluster. Call it
// from BeforeSuite. A cluster that cannot be had fails the suite loudly.
func SetUp(ctx context.Context, suite string) *Env {
	root, err := cluster.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	opts, err := cluster.FromEnv(root)
	Expect(err).NotTo(HaveOccurred(), "cluster configuration")
	opts.Logf = Logf
	env := &Env{Artifacts: os.Getenv("ARTIFACTS")}
	if env.Artifacts == "" {
		env.Artifacts = filepath.Join(root, "_artifacts")
	}
	Expect(os.MkdirAll(env.Artifacts, 0o755)).To(Succeed())

	start := time.Now()
	c, err := cluster.Up(ctx, opts)
	if c != nil {
		DeferCleanup(func(ctx SpecContext) {
			if env.failed || anySpecFailed {
				dir := filepath.Join(env.Artifacts, "cluster-logs", suite)
				if err := c.ExportLogs(ctx, dir); err != nil {
					Logf("export logs: %v", err)
				} else {
					Logf("cluster logs exported to %s", dir)
				}
			}
			Expect(c.Release(ctx)).To(Succeed())
		}, NodeTimeout(5*time.Minute))
	}
	Expect(err).NotTo(HaveOccurred(), "a kind cluster is required: make e2e creates one (see README)")
	env.Cluster = c
	Logf("cluster %q up in %s (created: %v)", c.Name, time.Since(start).Round(100*time.Millisecond), c.Created)

	env.AppImage, err = c.BuildAppImage(ctx)
	Expect(err).NotTo(HaveOccurred(), "build and load the sample app image")
	return env
}

// MarkFailed makes the suite export cluster logs at the end.
func (e *Env) MarkFailed() { e.failed = true }

// Namespace creates a fresh namespace for one spec and registers its deletion, waiting until
// it is gone so that the next spec finds the NodePort free and no pod of this one.
func (e *Env) Namespace(ctx context.Context, prefix string) string {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	ns.Labels = map[string]string{"app.kubernetes.io/part-of": "rollcheck"}
	Expect(e.Cluster.Client.Resources().Create(ctx, ns)).To(Succeed(), "create namespace")
	name := ns.Name
	DeferCleanup(func(ctx SpecContext) {
		r := e.Cluster.Client.Resources()
		// The spec is over: its pods need no graceful shutdown, and waiting for one (preStop
		// sleeps, 30 s grace periods) would only slow the matrix down.
		var pods corev1.PodList
		Expect(e.Cluster.Client.Resources(name).List(ctx, &pods)).To(Succeed())
		for i := range pods.Items {
			err := r.Delete(ctx, &pods.Items[i], resources.WithGracePeriod(0))
			Expect(client.IgnoreNotFound(err)).To(Succeed(), "delete pod %s", pods.Items[i].Name)
		}
		err := r.Delete(ctx, &corev1.Namespace{ObjectMeta: ns.ObjectMeta})
		if apierrors.IsNotFound(err) {
			return
		}
		Expect(err).NotTo(HaveOccurred(), "delete namespace %s", name)
		err = wait.For(func(ctx context.Context) (bool, error) {
			var got corev1.Namespace
			err := r.Get(ctx, name, "", &got)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}, wait.WithContext(ctx), wait.WithTimeout(3*time.Minute), wait.WithInterval(500*time.Millisecond))
		Expect(err).NotTo(HaveOccurred(), "wait for namespace %s to be deleted", name)
		e.FlushConntrack(ctx)
	}, NodeTimeout(4*time.Minute))
	return name
}

// FlushConntrack drops the nodes' conntrack entries for the NodePort, so that connections a
// previous spec left to pods that are gone cannot catch this spec's connections (see
// cluster.FlushConntrack).
func (e *Env) FlushConntrack(ctx context.Context) {
	GinkgoHelper()
	n, err := e.Cluster.FlushConntrack(ctx)
	Expect(err).NotTo(HaveOccurred())
	Logf("conntrack: %d entries for NodePort %d flushed", n, e.Cluster.Config.NodePort)
}

// Deploy renders the Scenario into ns, applies it and waits until the rollout is complete.
func (e *Env) Deploy(ctx context.Context, s scenario.Scenario, ns string) {
	objs, err := scenario.Render(s, scenario.Target{Namespace: ns, Image: e.AppImage, NodePort: e.Cluster.Config.NodePort})
	Expect(err).NotTo(HaveOccurred())
	Expect(cluster.Apply(ctx, e.Cluster.Client, objs...)).To(Succeed())
	Expect(cluster.WaitRollout(ctx, e.Cluster.Client, ns, scenario.AppName, 3*time.Minute)).To(Succeed())
}
