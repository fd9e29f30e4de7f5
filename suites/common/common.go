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
	// namespaces made by the suite's specs, all waited for at the end of the suite
	namespaces []string
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
			if anySpecFailed {
				dir := filepath.Join(env.Artifacts, "cluster-logs", suite)
				if err := c.ExportLogs(ctx, dir); err != nil {
					Logf("export logs: %v", err)
				} else {
					Logf("cluster logs exported to %s", dir)
				}
			}
			nsErr := env.waitNamespacesGone(ctx)
			Expect(c.Release(ctx)).To(Succeed())
			Expect(nsErr).NotTo(HaveOccurred(), "namespaces of this suite left behind")
		}, NodeTimeout(5*time.Minute))
	}
	Expect(err).NotTo(HaveOccurred(), "a kind cluster is required: make e2e creates one (see README)")
	env.Cluster = c
	Logf("cluster %q up in %s (created: %v)", c.Name, time.Since(start).Round(100*time.Millisecond), c.Created)

	env.AppImage, err = c.BuildAppImage(ctx)
	Expect(err).NotTo(HaveOccurred(), "build and load the sample app image")
	return env
}

// Namespace creates a fresh namespace for one spec and registers its teardown: the namespace is
// deleted (so no new pod can start in it), its pods are then deleted with grace 0 (the spec is
// over: waiting for preStop sleeps and grace periods would only slow the matrix), and the spec
// ends once no pod and no Service of it is left — the next spec finds the NodePort free and no
// pod of this one — and the NodePort's conntrack entries are flushed. The rest of the
// namespace goes away in the background; the suite waits for every namespace it made before
// it ends (see SetUp).
func (e *Env) Namespace(ctx context.Context, prefix string) string {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	ns.Labels = map[string]string{"app.kubernetes.io/part-of": "rollcheck"}
	Expect(e.Cluster.Client.Resources().Create(ctx, ns)).To(Succeed(), "create namespace")
	name := ns.Name
	e.namespaces = append(e.namespaces, name)
	DeferCleanup(func(ctx SpecContext) {
		err := e.Cluster.Client.Resources().Delete(ctx, &corev1.Namespace{ObjectMeta: ns.ObjectMeta})
		Expect(client.IgnoreNotFound(err)).To(Succeed(), "delete namespace %s", name)
		var pods corev1.PodList
		var svcs corev1.ServiceList
		err = wait.For(func(ctx context.Context) (bool, error) {
			if err := e.Cluster.Client.Resources(name).List(ctx, &pods); err != nil {
				return false, err
			}
			for i := range pods.Items {
				if err := e.Cluster.Client.Resources(name).Delete(ctx, &pods.Items[i], resources.WithGracePeriod(0)); client.IgnoreNotFound(err) != nil {
					return false, err
				}
			}
			if err := e.Cluster.Client.Resources(name).List(ctx, &svcs); err != nil {
				return false, err
			}
			return len(pods.Items) == 0 && len(svcs.Items) == 0, nil
		}, wait.WithContext(ctx), wait.WithTimeout(2*time.Minute), wait.WithInterval(250*time.Millisecond))
		Expect(err).NotTo(HaveOccurred(), "wait until namespace %s has no pod (%d left) and no Service (%d left)", name, len(pods.Items), len(svcs.Items))
		e.FlushConntrack(ctx)
	}, NodeTimeout(3*time.Minute))
	return name
}

// waitNamespacesGone waits until every namespace the suite made is gone.
func (e *Env) waitNamespacesGone(ctx context.Context) error {
	return wait.For(func(ctx context.Context) (bool, error) {
		for _, name := range e.namespaces {
			var got corev1.Namespace
			err := e.Cluster.Client.Resources().Get(ctx, name, "", &got)
			if err == nil {
				return false, nil
			}
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	}, wait.WithContext(ctx), wait.WithTimeout(3*time.Minute), wait.WithInterval(time.Second))
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
