package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/existingcluster"
	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// clusterRef names an existing cluster (internal/kubeconfig.Ref): from --kubeconfig and
// --context, or from the check file's cluster section; without either rollcheck runs on its own
// kind cluster and never reads KUBECONFIG or ~/.kube/config.
type clusterRef = kubeconfig.Ref

// flagsRef is the cluster --kubeconfig and --context name, or nil when neither is given.
var flagsRef = checkinput.FlagsRef

// kindNote is the line a run on rollcheck's kind cluster says when KUBECONFIG is set: that it
// is not read, and what would name an existing cluster instead (unless: "" for a command that
// runs on kind only); "" when KUBECONFIG is not set.
func kindNote(cmd, unless string) string {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		return ""
	}
	note := "KUBECONFIG is set but not read: rollcheck " + cmd + " runs on its own kind cluster"
	if unless != "" {
		note += " unless " + unless
	}
	return note
}

// acquireExisting is the cluster rollcheck does not own that ref names, as
// existingcluster.Acquire checks it for plans before any work (the API server answers, every
// right the plans need, an app in place there and fitting them) and holds it (the Leases of a
// Deployment in place or of the rows namespaces). The load pod's image is image
// (ROLLCHECK_LOAD_IMAGE or the check file's cluster.loadImage) when named; else rollcheck makes
// it of its own executable and pushes it to registry, or, on a kind cluster of this machine's
// Docker, loads it into the nodes. place says where the rows run when not in namespaces they
// create (--load-namespace, --row-namespace). The caller releases it (checkExisting does).
func acquireExisting(ctx context.Context, ref clusterRef, image, registry string, place rowPlace, plans []*check.Resolved, logf func(string, ...any)) (*existingcluster.Cluster, error) {
	if errs := knobs.Check(os.Getenv, true); len(errs) > 0 {
		return nil, errs[0]
	}
	if image != "" {
		if err := check.ValidLoadImage(image); err != nil {
			return nil, fmt.Errorf("load pod image %q: %w", image, err)
		}
	}
	opts := []existingcluster.Option{existingcluster.WithDescription(ref.By), existingcluster.WithKubeconfig(ref.Kubeconfig),
		existingcluster.WithContext(ref.Context), existingcluster.WithImageRegistry(registry), existingcluster.WithLoadNamespace(place.Load),
		existingcluster.WithRowNamespaces(place.Rows...), existingcluster.WithLogger(logf)}
	if ref.InCluster {
		opts = append(opts, existingcluster.InCluster())
	}
	if image != "" {
		opts = append(opts, existingcluster.WithLoadImage(image))
	}
	if level, _ := knobs.Get(os.Getenv, knobs.EnvPodSecurity); level != "" {
		opts = append(opts, existingcluster.WithPodSecurity(level)) // refused with rows namespaces: rowsInput said so first
	}
	return existingcluster.Acquire(ctx, plans, opts...)
}

// rowPlace is where a run's rows run when they create no namespace of their own: Load, the
// load namespace of an app checked in place (--load-namespace); Rows, the namespaces of the
// user's that rows apply their app into (--row-namespace), one row at a time in each.
type rowPlace struct {
	Load string
	Rows []string
}

// checkExisting runs the plans on an existing cluster and releases it (existingcluster's
// Release: the run's namespaces waited for until gone, its Leases released); a release that
// fails is said and raises the code to exitBadInput.
func checkExisting(ctx context.Context, c *existingcluster.Cluster, plans []*check.Resolved, parallel int, artifacts string, out rowsOut, logf func(string, ...any)) int {
	t := c.Target()
	logf("existing cluster: %s; no cluster is created; load pods run %s; run %s", c.Which(), t.LoadImage, t.RunID)
	code := runRows(ctx, t, plans, parallel, c.RowNamespaces(), artifacts, out, logf)
	if err := c.Release(ctx); err != nil {
		logf("cleanup: %v", err)
		code = max(code, exitBadInput)
	}
	return code
}

// releaseHeld releases the run's Lease of a Deployment checked in place on rollcheck's kind
// cluster, after Ctrl-C too; a release that fails is said and raises *code to exitBadInput (the
// Lease then expires on its own).
func releaseHeld(ctx context.Context, held *runlease.Lease, logf func(string, ...any), code *int) {
	if err := held.Release(ctx); err != nil {
		logf("cleanup: %v (it expires %s after its last renewal)", err, held.Duration())
		*code = max(*code, exitBadInput)
	}
}
