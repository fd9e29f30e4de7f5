package engine

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// source is where a row's app comes from, chosen once per row (sourceOf): applied, the plan's
// manifests applied into the row's namespace beside rollcheck's load Service; or live, a
// workload checked where it runs (check.Plan.InPlace), recorded before the row changes it and put
// back after. The row's steps are the same for both; only these differ.
type source interface {
	// check refuses, before any work, a Target this source cannot run on.
	check(t Target) error
	// open runs once the row is connected, before its namespace exists: it sets r.dep, the
	// Deployment (or view of one) the row measures, and returns the context the row runs on and
	// what ends it (nil for nothing), which runs last, on every path.
	open(ctx context.Context) (context.Context, func(context.Context) error, error)
	// hold runs once the row's namespace (r.ns) exists, before anything of the app changes: it
	// sets r.appNS and r.svc, where the app runs and the Service the load goes to, and returns
	// what puts the app back (nil for nothing), which runs on every path.
	hold(ctx context.Context) (func(context.Context) error, error)
	// apply gives the app the variant: applies its objects, or changes the live workload.
	apply(ctx context.Context) error
	// pods is what the row's pods belong to.
	pods() kube.Workload
}

// sourceOf is the plan's source: live for an app checked in place, applied otherwise.
func sourceOf(r *runner) source {
	if r.p.InPlace() {
		return &live{r: r}
	}
	return applied{r: r}
}

// applied is an app the row applies from the plan's manifests.
type applied struct{ r *runner }

func (a applied) check(t Target) error {
	switch {
	case t.LoadURL == "" && a.r.p.Load.From != check.LoadFromCluster:
		return errors.New("target: LoadURL is required for load from the host (or load from the cluster)")
	case t.LoadNamespace != "":
		return errors.New("target: LoadNamespace is only for an app checked in place (its rows apply nothing there)")
	}
	return nil
}

func (a applied) open(ctx context.Context) (context.Context, func(context.Context) error, error) {
	a.r.dep = a.r.res.Deployment()
	return ctx, nil, nil
}

func (a applied) hold(context.Context) (func(context.Context) error, error) {
	a.r.appNS, a.r.svc = a.r.ns, check.LoadServiceName
	return nil, nil
}

// apply applies the app's objects into the row's namespace, with rollcheck's load Service.
func (a applied) apply(ctx context.Context) error {
	objs, err := a.r.rowObjects()
	if err != nil {
		return err
	}
	kobjs := make([]k8s.Object, len(objs))
	for i, o := range objs {
		kobjs[i] = o
	}
	if err := kube.Apply(ctx, a.r.client, kobjs...); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	return nil
}

func (a applied) pods() kube.Workload {
	return kube.Workload{Namespace: a.r.appNS, Name: a.r.dep.Name}
}
