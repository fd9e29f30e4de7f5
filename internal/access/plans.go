package access

import (
	"context"
	"errors"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/rollcheck/rollcheck/check"
)

// ReviewPlans asks the API server for every right the plans need (PlansNeed: the core
// run, drains when a plan drains, the create right of each other kind the manifests hold; for an
// app checked in place InPlaceNeed: rights in its namespace and the load namespace; for
// rows in namespaces of the user's NamespacedNeed: rights in each) and for the optional
// ones. A required right denied is the error, one line; an optional one is a note.
func ReviewPlans(ctx context.Context, cfg *rest.Config, plans []*check.Resolved, loadNS string, rowsNS []string) ([]string, error) {
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
	var rights []Right
	switch {
	case len(plans) > 0 && plans[0].InPlace():
		rights = InPlaceNeed(plans, loadNS)
	case len(rowsNS) > 0:
		if rights, err = NamespacedNeed(plans, rowsNS, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))); err != nil {
			return nil, err
		}
	default:
		need, err := PlansNeed(plans, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)))
		if err != nil {
			return nil, err
		}
		rights = need.Rights()
	}
	denied, err := Review(ctx, cs, rights)
	if err != nil {
		return nil, err
	}
	if len(denied) > 0 {
		return nil, errors.New(Refusal(denied))
	}
	var notes []string
	for _, f := range Features {
		if !f.Optional() {
			continue
		}
		denied, err := Review(ctx, cs, Of(f))
		if err != nil {
			return nil, err
		}
		if len(denied) > 0 {
			notes = append(notes, Unmeasured(f, denied))
		}
	}
	return notes, nil
}
