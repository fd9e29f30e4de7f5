package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// existingTarget is the Target of a cluster rollcheck does not own, from its kubeconfig: it
// checks, before any work, that the load pod's image ref is named (ROLLCHECK_LOAD_IMAGE or the
// check file's cluster.loadImage: nothing is built or loaded into such a cluster) and that the
// API server answers within 10 s, and that the kubeconfig's user has every right the plans need
// (access.Review). A missing optional right lets the run go on: the lines of notes say what
// it will not measure.
func existingTarget(ctx context.Context, kubeconfig, ref string, plans []check.Plan) (t engine.Target, notes []string, err error) {
	if ref == "" {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig: %s (or the check file's cluster.loadImage) must name the load pod's image (cmd/rollcheck-load), one the cluster can run: rollcheck loads no image into a cluster it does not own", knobs.EnvLoadImage)
	}
	if errs := knobs.Check(os.Getenv, true); len(errs) > 0 {
		return engine.Target{}, nil, errs[0]
	}
	if err := check.ValidLoadImage(ref); err != nil {
		return engine.Target{}, nil, fmt.Errorf("load pod image %q: %w", ref, err)
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig %s: the API server at %s does not answer: %w", kubeconfig, cfg.Host, err)
	}
	if notes, err = reviewAccess(ctx, probe, plans); err != nil {
		return engine.Target{}, nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	level, _ := knobs.Get(os.Getenv, knobs.EnvPodSecurity)
	return engine.Target{RESTConfig: cfg, LoadImage: ref, RunID: hex.EncodeToString(id), NamespaceLabels: knobs.NamespaceLabels(level),
		Versions: check.Versions{Kind: "none (an existing cluster, " + v.GitVersion + ")"}}, notes, nil
}

// reviewAccess asks the API server for every right the plans need (access.PlansNeed: the core
// run, drains when a plan drains, the create right of each other kind the manifests hold) and
// for the optional ones. A required right denied is the error, one line; an optional one is a
// note.
func reviewAccess(ctx context.Context, cfg *rest.Config, plans []check.Plan) ([]string, error) {
	// A review per verb is some 30 small requests: client-go's default of 5 a second would make
	// them take seconds.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	need, err := access.PlansNeed(plans, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)))
	if err != nil {
		return nil, err
	}
	denied, err := access.Review(ctx, cs, need.Rights())
	if err != nil {
		return nil, err
	}
	if len(denied) > 0 {
		return nil, errors.New(access.Refusal(denied))
	}
	var notes []string
	for _, f := range access.Features {
		if !f.Optional() {
			continue
		}
		denied, err := access.Review(ctx, cs, access.Of(f))
		if err != nil {
			return nil, err
		}
		if len(denied) > 0 {
			notes = append(notes, access.Unmeasured(f, denied))
		}
	}
	return notes, nil
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
