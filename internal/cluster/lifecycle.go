package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/runlease"
)

// A Func is one piece of a run's hold on a cluster, in the manner of e2e-framework's env funcs:
// a plain function, composed in order by Run.Setup and Run.Teardown. DefaultSetup and
// DefaultTeardown are the policy every front end follows (rctest.SetUp, rollcheck check and
// tune, rollcheck e2e); a front end that needs another order composes the same funcs. (Not a
// step: a step is engine.Step, a stage of one row, DESIGN.md's glossary.)
type Func func(ctx context.Context, r *Run) error

// Run is one run's hold on a kind cluster: the options it asked for, the cluster once it has
// one, whether anything failed (Teardown then exports the cluster's logs), and where they go.
type Run struct {
	// lease is the run's Lease (HoldRun), released by ReleaseRun.
	lease   *runlease.Lease
	Options Options
	// LogsDir receives the cluster's logs when the run failed (ExportLogsIfFailed).
	LogsDir string
	// Cluster is set by CreateOrReuse, also when it fails after kind created the cluster.
	Cluster *Cluster
	// Failed makes ExportLogsIfFailed export; Setup sets it when a func fails, the front end
	// when its own work failed.
	Failed bool
}

// DefaultSetup creates the cluster or reuses a running one, holds the run's Lease, then deletes
// the namespaces earlier runs left behind (not those of a run that still holds its Lease).
var DefaultSetup = []Func{CreateOrReuse, HoldRun, SweepStale}

// DefaultTeardown exports the cluster's logs if the run failed, waits until the run's namespaces
// are gone, releases its Lease, and deletes the cluster if this run created it and it is not to
// be kept.
var DefaultTeardown = []Func{ExportLogsIfFailed, SweepOwn, ReleaseRun, Release}

// TeardownTimeout bounds Teardown: logs, namespaces and the deletion together.
const TeardownTimeout = 5 * time.Minute

// Setup runs funcs in order and stops at the first that fails; it marks the run failed then.
func (r *Run) Setup(ctx context.Context, funcs ...Func) error {
	for _, s := range funcs {
		if err := s(ctx, r); err != nil {
			r.Failed = true
			return err
		}
	}
	return nil
}

// Teardown runs every func, whatever fails and even when ctx is cancelled (an interrupted run
// still cleans up, within TeardownTimeout), and returns their errors joined. Without a cluster
// there is nothing to tear down.
func (r *Run) Teardown(ctx context.Context, funcs ...Func) error {
	if r.Cluster == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TeardownTimeout)
	defer cancel()
	var errs []error
	for _, s := range funcs {
		errs = append(errs, s(ctx, r))
	}
	return errors.Join(errs...)
}

// CreateOrReuse creates the cluster the run's options describe, or reuses a running one (Up).
func CreateOrReuse(ctx context.Context, r *Run) error {
	c, err := Up(ctx, r.Options)
	r.Cluster = c
	return err
}

// SweepStale deletes the namespaces earlier runs left behind (a killed run does) and waits
// until they are gone: they would hold the NodePort this run's Service needs. A run that still
// holds its Lease (another run on the same cluster) keeps its namespaces.
func SweepStale(ctx context.Context, r *Run) error {
	if !r.connected() {
		return nil
	}
	n, live, err := r.Cluster.SweepNamespaces(ctx, false)
	if n > 0 {
		r.Cluster.Logf("swept %d namespace(s) that earlier runs left behind (label %s)", n, PartOfSelector)
	}
	if len(live) > 0 {
		r.Cluster.Logf("left the namespaces of run(s) %s alone: they hold their Lease in %s (running on this cluster)", strings.Join(live, ", "), RunsNamespace)
	}
	return err
}

// SweepOwn waits until this run's namespaces are gone (the engine deletes each row's namespace
// and leaves the rest of its deletion to the background), deleting any still there, and those
// runs that ended since left; a live run's stay.
func SweepOwn(ctx context.Context, r *Run) error {
	if !r.connected() {
		return nil
	}
	if _, _, err := r.Cluster.SweepNamespaces(ctx, true); err != nil {
		return fmt.Errorf("namespaces of this run left behind: %w", err)
	}
	return nil
}

// LoadImages returns a Func that loads images from the local Docker engine into the nodes.
func LoadImages(refs ...string) Func {
	return func(ctx context.Context, r *Run) error {
		if r.Cluster == nil {
			return errors.New("load images: no cluster")
		}
		return r.Cluster.LoadImages(ctx, refs)
	}
}

// ExportLogsIfFailed exports the cluster's logs into LogsDir when the run failed. A failed
// export is logged, not returned: the logs only help explain another failure.
func ExportLogsIfFailed(ctx context.Context, r *Run) error {
	if !r.Failed || r.LogsDir == "" {
		return nil
	}
	if err := r.Cluster.ExportLogs(ctx, r.LogsDir); err != nil {
		r.Cluster.Logf("could not export the cluster's logs: %v", err)
		return nil
	}
	r.Cluster.Logf("cluster logs exported to %s", r.LogsDir)
	return nil
}

// Release deletes the cluster if this run created it and ROLLCHECK_KEEP_CLUSTER is not set
// (Cluster.Release); a reused or kept cluster is left running.
func Release(ctx context.Context, r *Run) error {
	return r.Cluster.Release(ctx)
}

// connected tells whether the run has a cluster with a working client.
func (r *Run) connected() bool { return r.Cluster != nil && r.Cluster.Client != nil }
