package inplace

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// Preflight reads the workload of plans in place (a Deployment, an Argo Rollout or a Rollout's
// ReplicaSet: WorkloadOf) once, before any work, finds the Service
// the load goes to, and validates every plan with the Deployment (each row reads both again): a
// Deployment that is not there, no Service or several (inplace.Service), or one a variant
// or a disruption does not fit (a port no container declares, a scale-down of one replica, a
// native sleep past the grace period), is one line before any namespace is made. Plans that
// apply their app pass.
func Preflight(ctx context.Context, cfg *rest.Config, plans []*check.Resolved) error {
	if len(plans) == 0 || !plans[0].InPlace() {
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	client, err := klient.New(cfg)
	if err != nil {
		return err
	}
	a := plans[0].Plan().App
	wl := WorkloadOf(cs, client, a)
	d, err := wl.Read(ctx)
	if err != nil {
		return err
	}
	if _, _, err := Service(ctx, cs, d, a.Service, a.Port, a.Kind == check.KindRollout); err != nil {
		return err
	}
	for _, p := range plans {
		if _, err := p.Live(d); err != nil {
			return fmt.Errorf("%s: %w", wl.Pods(), err)
		}
	}
	return nil
}

// HoldRun holds, for the run, the Lease of the Deployment that plans check in place, renewed
// until the caller releases it (every row holds it too, sharing it): a second run is refused
// while this one lives, and a record this run leaves is restored by another only once the Lease
// expired. Nil for plans that apply their app.
func HoldRun(ctx context.Context, cfg *rest.Config, plans []*check.Resolved, runID string) (*runlease.Lease, error) {
	if len(plans) == 0 || !plans[0].InPlace() || runID == "" {
		return nil, nil // without a run id, each row holds it under an id of its own
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	a := plans[0].Plan().App
	return HoldLease(ctx, cs, a, runID)
}
