package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// RowsLease is the Lease a run holds in each namespace of the user's its rows apply their app
// into (Target.RowNamespace): one run uses such a namespace at a time, and what a run left there
// is deleted by another only once its Lease expired.
const RowsLease = "rollcheck-rows"

// HoldRowNamespace holds, for the run runID, the Lease of a namespace of the user's that rows
// apply their app into (Target.RowNamespace), renewed until it is released: a live Lease of
// another run is a runlease.HeldError, one line that names that run and its last renewal.
func HoldRowNamespace(ctx context.Context, cfg *rest.Config, ns, runID string) (*runlease.Lease, error) {
	_, cs, err := connect(cfg)
	if err != nil {
		return nil, err
	}
	return runlease.Acquire(ctx, cs, ns, RowsLease, runID, "namespace "+ns+" (the rows of a rollcheck run)", runlease.WithClock(leaseClock))
}

// useRowNamespace readies the namespace of the user's a row applies its app into
// (Target.RowNamespace): it holds the namespace's Lease for the row, deletes what an earlier row
// or a killed run applied there (objects labelled RunLabel: rollcheck's; an object of the row's
// names without it is the user's, and the row refuses to touch it), and refuses a namespace
// where pods rollcheck did not start match the app's selector (the observer would count them).
// The returned teardown deletes what the row applied and its load pods, and releases the Lease;
// the returned context is ctx, cancelled once another run took the Lease over (the row stops
// there, as a row in place does).
func (r *runner) useRowNamespace(ctx context.Context) (context.Context, func(context.Context) error, error) {
	ns := r.t.RowNamespace
	r.runID = r.t.RunID
	if r.runID == "" {
		id := make([]byte, 6)
		_, _ = rand.Read(id)
		r.runID = hex.EncodeToString(id)
	}
	l, err := runlease.Acquire(ctx, r.cs, ns, RowsLease, r.runID, "namespace "+ns+" (the rows of a rollcheck run)", runlease.WithClock(leaseClock))
	if err != nil {
		return nil, nil, err
	}
	lctx, stop := l.Context(ctx)
	release := func(ctx context.Context) error {
		stop()
		return l.Release(ctx)
	}
	objs, err := r.rowObjects()
	if err != nil {
		return nil, nil, errors.Join(err, release(ctx))
	}
	teardown := func(ctx context.Context) error {
		return errors.Join(clearRowNamespace(ctx, r.client, ns, objs), release(ctx))
	}
	if err := sweepRowNamespace(lctx, r.client, ns); err != nil {
		return nil, nil, errors.Join(withLost(lctx, err), release(ctx))
	}
	if err := clearRowNamespace(lctx, r.client, ns, objs); err != nil {
		return nil, nil, errors.Join(withLost(lctx, err), release(ctx))
	}
	if err := foreignPods(lctx, r.client, ns, selectorOf(r.dep)); err != nil {
		return nil, nil, errors.Join(withLost(lctx, err), release(ctx))
	}
	return lctx, teardown, nil
}

// withLost is err, said after the Lease loss that stopped it when ctx ended so (a
// runlease.LostError: another run took the row's Lease over); err itself otherwise.
func withLost(ctx context.Context, err error) error {
	var lost *runlease.LostError
	if err == nil || ctx == nil { // ctx is nil when the app's source could not open
		return err
	}
	if errors.As(context.Cause(ctx), &lost) && !strings.Contains(err.Error(), lost.Error()) {
		return fmt.Errorf("%w; stopped at: %v", lost, err)
	}
	return err
}

// rowObjects is what the row applies (check.Resolved.Objects into the row's namespace), rendered
// once per row: in a namespace of the user's, clearing the namespace before the row, applying and
// the teardown all take the same objects. There each object and the Deployment's pods carry
// RunLabel, which is how a later row tells rollcheck's objects from the user's.
func (r *runner) rowObjects() ([]check.Object, error) {
	if r.objs != nil {
		return r.objs, nil
	}
	nodePort := r.t.NodePort
	if r.p.Load.From == check.LoadFromCluster {
		nodePort = 0 // the load Service is reached at its cluster address only
	}
	objs, err := r.res.Objects(r.ns, nodePort)
	if err != nil || r.t.RowNamespace == "" {
		return objs, err
	}
	for _, o := range objs {
		o.SetLabels(withRunLabel(o.GetLabels(), r.runID))
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == r.dep.Name {
			d.Spec.Template.Labels = withRunLabel(d.Spec.Template.Labels, r.runID)
		}
	}
	r.objs = objs
	return objs, nil
}

func withRunLabel(l map[string]string, runID string) map[string]string {
	l = maps.Clone(l)
	if l == nil {
		l = map[string]string{}
	}
	l[RunLabel] = runID
	return l
}

// ranByRollcheck selects what rollcheck applied in a namespace of the user's: RunLabel set.
func ranByRollcheck() string {
	req, _ := labels.NewRequirement(RunLabel, selection.Exists, nil)
	return labels.NewSelector().Add(*req).String()
}

// clearRowNamespace deletes, in ns, each of objs that rollcheck applied (RunLabel set; one
// without it is the user's: an error, nothing of it touched), then the pods rollcheck started
// there (the app's, labelled through its pod template, and the load pods), with grace 0, and
// returns once none is left.
func clearRowNamespace(ctx context.Context, client klient.Client, ns string, objs []check.Object) error {
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		got := o.DeepCopyObject().(k8s.Object)
		err := kube.Retry(ctx, func(ctx context.Context) error { return client.Resources(ns).Get(ctx, o.GetName(), ns, got) })
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %T %s/%s: %w", o, ns, o.GetName(), err)
		}
		if _, ours := got.GetLabels()[RunLabel]; !ours {
			return fmt.Errorf("namespace %s holds %s %s, which rollcheck did not apply (no label %s): rollcheck touches no object of yours; name a namespace that holds none of the app's objects",
				ns, kindOf(o), o.GetName(), RunLabel)
		}
		err = kube.Retry(ctx, func(ctx context.Context) error {
			return client.Resources(ns).Delete(ctx, got, resources.WithDeletePropagation(string(metav1.DeletePropagationBackground)))
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s %s/%s: %w", kindOf(o), ns, o.GetName(), err)
		}
	}
	if err := kube.DeletePods(ctx, client, ns, ranByRollcheck()); err != nil {
		return err
	}
	return kube.DeletePods(ctx, client, ns, labels.SelectorFromSet(loadPodLabels).String())
}

// sweepRowNamespace deletes what killed runs applied in ns (their Leases expired: this row
// holds the namespace's) under names this row does not apply: every Deployment, Service,
// ConfigMap and budget there labelled RunLabel.
func sweepRowNamespace(ctx context.Context, client klient.Client, ns string) error {
	var deps appsv1.DeploymentList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	var pdbs policyv1.PodDisruptionBudgetList
	for _, list := range []k8s.ObjectList{&deps, &svcs, &cms, &pdbs} {
		if err := kube.Retry(ctx, func(ctx context.Context) error {
			return client.Resources(ns).List(ctx, list, resources.WithLabelSelector(ranByRollcheck()))
		}); err != nil {
			return fmt.Errorf("list what rollcheck applied in namespace %s: %w", ns, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, it := range items {
			o, ok := it.(k8s.Object)
			if !ok || o.GetNamespace() != ns {
				continue
			}
			err := kube.Retry(ctx, func(ctx context.Context) error {
				return client.Resources(ns).Delete(ctx, o, resources.WithDeletePropagation(string(metav1.DeletePropagationBackground)))
			})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s/%s, which a killed run left: %w", ns, o.GetName(), err)
			}
		}
	}
	return nil
}

// foreignPods refuses a namespace where pods rollcheck did not start match selector.
func foreignPods(ctx context.Context, client klient.Client, ns, selector string) error {
	var pods corev1.PodList
	if err := kube.Retry(ctx, func(ctx context.Context) error {
		return client.Resources(ns).List(ctx, &pods, resources.WithLabelSelector(selector))
	}); err != nil {
		return fmt.Errorf("list the pods %s of namespace %s: %w", selector, ns, err)
	}
	for _, p := range pods.Items {
		if _, ours := p.Labels[RunLabel]; !ours {
			return fmt.Errorf("namespace %s runs pod %s, which the app's selector %s matches and rollcheck did not start: the row would count it as the app's; name a namespace that runs none",
				ns, p.Name, selector)
		}
	}
	return nil
}

func kindOf(o check.Object) string {
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", o)
}
