// Package kindcluster gives a Go program or test a kind cluster to run rollcheck's checks on,
// without Ginkgo: Acquire creates the cluster, or reuses a running one of the same name, and
// waits until it is ready; Target is what engine.Run and tune.Run take; Release deletes the
// cluster if Acquire created it and it is not to be kept. kind runs in-process (kind's Go API,
// sigs.k8s.io/kind/pkg/cluster): no kind binary is needed, only a Docker engine that holds the
// node image, which is never pulled, so that no registry is contacted by surprise.
//
// Options are functional, as kind's own Create options are, and default from nothing: a
// cluster named "rollcheck" on the node image "auto" (kind's own image when the Docker engine
// has it, else rollcheck's offline one), one node, rollcheck's kind config, deleted by Release.
// FromEnv reads the ROLLCHECK_* knobs instead, as make e2e, rctest and the rollcheck command
// do. Bad options are reported all at once, on one line, before Docker is asked anything.
//
// The policy is the one every rollcheck front end follows: Acquire also holds a Lease for the run
// (renewed until Release; its id labels the rows' namespaces), deletes the namespaces earlier
// runs left behind (they would hold the NodePort the rows need), but not those of a run on the
// same cluster that still holds its Lease, and loads WithImages' images; Release exports the
// cluster's logs when the run was marked failed (MarkFailed, WithLogsDir), waits until the
// namespaces of this run's rows are gone, releases the run's Lease, and deletes the cluster
// only when Acquire created it and WithKeep is not set. A cluster that was reused is never
// deleted: rollcheck cannot tell who else relies on it.
package kindcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/kindlink"
)

func init() {
	kindlink.RunOf = func(c any) *cluster.Run { return c.(*Cluster).run }
}

// DefaultName is the name of the cluster Acquire creates or reuses without WithName: the one
// make e2e, make cluster and the rollcheck command use, so that they share one cluster.
const DefaultName = "rollcheck"

// Cluster is a kind cluster acquired for checks. Its methods may be called from several
// goroutines.
type Cluster struct {
	run *cluster.Run

	mu       sync.Mutex
	target   engine.Target
	failed   bool
	released bool
}

// Acquire creates the kind cluster the options describe, or reuses a running one of the same
// name (which must run the same node image and map the same NodePort), waits until its nodes
// are Ready and its system pods run, holds the run's Lease, deletes the namespaces earlier runs
// left behind (not a live run's) and loads the WithImages images into its nodes. Creating takes a minute or two; reusing, seconds.
//
// Bad options give an error before any work. When a later part fails, Acquire releases what it
// created before it returns the error; on success the caller must call Release.
func Acquire(ctx context.Context, options ...Option) (*Cluster, error) {
	s, err := applyOptions(options)
	if err != nil {
		return nil, err
	}
	r := &cluster.Run{Options: s.opts, LogsDir: s.logsDir}
	funcs := slices.Clone(cluster.DefaultSetup)
	if len(s.images) > 0 {
		funcs = append(funcs, cluster.LoadImages(s.images...))
	}
	if err := r.Setup(ctx, funcs...); err != nil {
		if terr := r.Teardown(ctx, cluster.DefaultTeardown...); terr != nil {
			err = errors.Join(err, fmt.Errorf("release after the failed set-up: %w", terr))
		}
		return nil, err
	}
	return &Cluster{run: r, target: r.Cluster.Target()}, nil
}

// Name is the kind cluster's name.
func (c *Cluster) Name() string { return c.run.Cluster.Name }

// Created tells whether Acquire created the cluster (false: it reused a running one, which
// Release leaves running).
func (c *Cluster) Created() bool { return c.run.Cluster.Created }

// Target is the engine's view of the cluster: its API server, the NodePort kind maps to
// 127.0.0.1 for the load, the images a Plan lists loaded from the local Docker engine, and the
// NodePort's conntrack entries flushed between rows (a dead pod's entries would catch the next
// row's connections).
func (c *Cluster) Target() engine.Target {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target
}

// LoadImages loads images from the local Docker engine into the cluster's nodes, as kind load
// docker-image does. engine.Run loads the images a Plan lists by itself (check.App.Images).
func (c *Cluster) LoadImages(ctx context.Context, refs ...string) error {
	if err := validImages(refs); err != nil {
		return fmt.Errorf("load images: %w", err)
	}
	return c.run.Cluster.LoadImages(ctx, refs)
}

// SampleAppImage makes rollcheck's sample app image (internal/sampleapp, a small HTTP server
// whose behaviour on SIGTERM its flags choose, see its doc), tagged by its content (never
// :latest), in process, loads it into the cluster's nodes and returns its reference. A test
// binary is not rollcheck, so the image holds a build of rollcheck's command from the rollcheck
// module that the working directory's module requires (the go command must be on PATH; a
// minute or so with a cold build cache, once per process).
func (c *Cluster) SampleAppImage(ctx context.Context) (string, error) {
	return c.run.Cluster.BuildAppImage(ctx)
}

// UseLoadPods makes the cluster ready for Plans whose load comes from inside it
// (check.LoadFromCluster): the load pod's image, made as SampleAppImage's is and loaded into
// the nodes (or the prebuilt one ROLLCHECK_LOAD_IMAGE names, with FromEnv), becomes the
// Target's LoadImage. It returns the image.
func (c *Cluster) UseLoadPods(ctx context.Context) (string, error) {
	ref, err := c.run.Cluster.LoadPodImage(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.target.LoadImage = ref
	c.mu.Unlock()
	return ref, nil
}

// MarkFailed tells Release that the run failed, so that it exports the cluster's logs into
// the WithLogsDir directory before anything is deleted. A test calls it when it failed.
func (c *Cluster) MarkFailed() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// Release ends the hold Acquire took: it exports the cluster's logs if the run was marked
// failed, waits until the namespaces of this run's rows are gone (deleting any left), and
// deletes the cluster if Acquire created it and WithKeep is not set. It runs to the end even
// when ctx is cancelled (an interrupted test still cleans up), within 5 minutes, and returns
// every problem it met. Calling it again does nothing.
func (c *Cluster) Release(ctx context.Context) error {
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return nil
	}
	c.released = true
	c.run.Failed = c.run.Failed || c.failed
	c.mu.Unlock()
	return c.run.Teardown(ctx, cluster.DefaultTeardown...)
}
