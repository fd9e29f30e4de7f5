package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// existingTarget is the Target of a cluster rollcheck does not own, from its kubeconfig: it
// checks, before any work, that the load pod's image ref is named (ROLLCHECK_LOAD_IMAGE or the
// check file's cluster.loadImage: nothing is built or loaded into such a cluster) and that the
// API server answers within 10 s.
func existingTarget(ctx context.Context, kubeconfig, ref string) (engine.Target, error) {
	if ref == "" {
		return engine.Target{}, fmt.Errorf("--kubeconfig: %s (or the check file's cluster.loadImage) must name the load pod's image (cmd/rollcheck-load), one the cluster can run: rollcheck loads no image into a cluster it does not own", knobs.EnvLoadImage)
	}
	if errs := knobs.Check(os.Getenv, true); len(errs) > 0 {
		return engine.Target{}, errs[0]
	}
	if err := check.ValidLoadImage(ref); err != nil {
		return engine.Target{}, fmt.Errorf("load pod image %q: %w", ref, err)
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		return engine.Target{}, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return engine.Target{}, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return engine.Target{}, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return engine.Target{}, fmt.Errorf("--kubeconfig %s: the API server at %s does not answer: %w", kubeconfig, cfg.Host, err)
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	return engine.Target{RESTConfig: cfg, LoadImage: ref, RunID: hex.EncodeToString(id),
		Versions: check.Versions{Kind: "none (an existing cluster, " + v.GitVersion + ")"}}, nil
}

// checkExisting runs the plans on an existing cluster and then waits until every namespace this
// run created is gone (its own run label: no other namespace is touched).
func checkExisting(ctx context.Context, t engine.Target, plans []check.Plan, parallel int, artifacts string, stdout io.Writer, logf func(string, ...any)) int {
	logf("existing cluster at %s: no cluster is created and no image loaded; load pods run %s; run %s", t.RESTConfig.Host, t.LoadImage, t.RunID)
	code := runRows(ctx, t, plans, parallel, artifacts, stdout, logf)
	client, err := klient.New(t.RESTConfig)
	if err == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 4*time.Minute)
		defer cancel()
		var n int
		if n, err = kube.SweepNamespaces(cctx, client, engine.RunLabel+"="+t.RunID, 3*time.Minute); err == nil {
			logf("the run's %d namespace(s) are gone; nothing of it is left in the cluster", n)
		}
	}
	if err != nil {
		logf("cleanup: %v", err)
		code = max(code, exitBadInput)
	}
	return code
}
