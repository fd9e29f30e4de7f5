package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
	"github.com/rollcheck/rollcheck/loadgen"
)

// StepRestore says what was restored of an app checked in place: a killed run's leftover before
// the row, the row's own changes after it.
const StepRestore Step = "restore"

// leaseClock is the clock of the Deployments' Leases and records (tests: a fake).
var leaseClock clock.WithTicker = clock.RealClock{}

// holdLease holds the Lease of the Deployment checked in place for the run (Target.RunID; a row
// without one makes an id of its own), before anything is read or changed: a live Lease of
// another run is the row's error, one line that names that run. The front end usually holds it
// for the whole run already (the row's hold shares it). The context returned ends when another
// run takes the Lease over (this process could not renew it within its duration): the row stops
// changing a Deployment it no longer holds. stop ends the watch.
func (r *runner) holdLease(ctx context.Context) (context.Context, func(), error) {
	r.runID = r.t.RunID
	if r.runID == "" {
		id := make([]byte, 6)
		_, _ = rand.Read(id)
		r.runID = hex.EncodeToString(id)
	}
	l, err := inplace.HoldLease(ctx, r.cs, r.p.App.Namespace, r.p.App.Deployment, r.runID, runlease.WithClock(leaseClock))
	if err != nil {
		return nil, nil, err
	}
	r.lease = l
	lctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-l.Lost():
			cancel(l.Err())
		case <-lctx.Done():
		}
	}()
	return lctx, func() { cancel(nil) }, nil
}

// readApp reads an app checked in place (check.Plan.InPlace): it restores first what a killed
// run left on the Deployment, then reads the live Deployment into the Plan (validated again with
// it), the row's configuration, and the Service the load goes to.
func (r *runner) readApp(ctx context.Context) error {
	a := r.p.App
	if a.ReplicaSetOf != "" {
		// A ReplicaSet checked as it runs is never changed: no record of a run is on it.
		return r.readLive(ctx)
	}
	line, dead, err := inplace.Leftover(ctx, r.cs, a.Namespace, a.Deployment, r.lease)
	if err != nil {
		return err
	}
	if line != "" {
		r.logf("%s", line)
		r.progress(StepRestore, 0, loadgen.Progress{}, line)
	}
	// The dead run's own namespaces (its load pods may still be sending) go too; in a load
	// namespace of the user's, the row deletes the load pods it finds before it starts.
	if dead != nil && dead.Run != "" && dead.Run != r.runID && r.t.LoadNamespace == "" {
		n, err := kube.SweepNamespaces(ctx, r.client, labels.SelectorFromSet(labels.Set{check.PartOfLabel: check.PartOfValue, RunLabel: dead.Run}).String(), 3*time.Minute)
		if err != nil {
			return fmt.Errorf("the namespaces of run %s, which left Deployment %s/%s changed: %w", dead.Run, a.Namespace, a.Deployment, err)
		}
		if n > 0 {
			r.progress(StepRestore, 0, loadgen.Progress{}, fmt.Sprintf("%d namespace(s) of run %s deleted", n, dead.Run))
		}
	}
	return r.readLive(ctx)
}

// readLive reads the live workload (inplace.Live: the Deployment, or a ReplicaSet's view as one)
// into the Plan, validates the Plan with it, and finds the Service the load goes to.
func (r *runner) readLive(ctx context.Context) error {
	a := r.p.App
	var live *appsv1.Deployment
	err := kube.Retry(ctx, func(ctx context.Context) (err error) {
		live, err = inplace.Live(ctx, r.cs, a)
		return err
	})
	if err != nil {
		return fmt.Errorf("the app in place: %w", err)
	}
	r.live = live
	res, err := r.res.Live(live)
	if err != nil {
		return err
	}
	r.res, r.p = res, res.Plan()
	for _, w := range res.Warnings() { // what the file alone could not say: the live Deployment's
		r.progress(StepDeploy, 0, loadgen.Progress{}, "warning: "+w)
	}
	r.dep = res.Deployment()
	r.row.Config = res.Applied()
	svc, port, err := inplace.Service(ctx, r.cs, live, a.Service, a.Port)
	if err != nil {
		return err
	}
	// The load pods send to the address the Service's DNS name resolves to, its cluster IP, as
	// they do to rollcheck's own Service: per-request lookups (Go's resolver caches nothing, and
	// SERVICE.NS.svc walks the pod's search path first) would put the cluster DNS's misses and
	// latency in the app's error rate, and a ClusterIP Service's answer never changes in a
	// rollout. load.url takes a DNS name for the path that resolves.
	p := strconv.Itoa(int(port))
	r.svc, r.svcAddr = svc.Name, net.JoinHostPort(svc.Spec.ClusterIP, p)
	r.svcName = net.JoinHostPort(svc.Name+"."+a.Namespace+".svc", p)
	return nil
}

// hold records the live Deployment on itself before the row changes anything (a rollout restart
// too changes its pod template).
func (r *runner) hold(ctx context.Context) error {
	if r.p.App.ReplicaSetOf != "" {
		return nil // nothing of it changes
	}
	_, err := inplace.Hold(ctx, r.cs, r.appNS, r.dep.Name, inplace.Record{Run: r.runID, Row: r.ns, Time: r.lease.Now().UTC()})
	return err
}

// release puts the Deployment back as hold recorded it, deletes the budget the row created,
// waits until the restored Deployment rolled out (when its pod template changed, its pods roll
// once more) and removes the record the Deployment controller copied onto its ReplicaSets, on
// contexts of its own: it runs after errors and Ctrl-C too.
func (r *runner) release(ctx context.Context) error {
	if r.p.App.ReplicaSetOf != "" {
		return nil // hold recorded nothing
	}
	res, err := inplace.Restore(ctx, r.cs, r.appNS, r.dep.Name, r.runID)
	if r.p.Variant.PDB != nil {
		_, berr := inplace.DeleteBudget(ctx, r.cs, r.appNS)
		err = errors.Join(err, berr)
	}
	if err != nil {
		return err
	}
	what := "spec unchanged"
	if res.Changed {
		what = "spec put back as recorded"
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inplace.RestoreWait)
		defer cancel()
		if err := kube.WaitRollout(wctx, r.client, r.appNS, r.dep.Name, inplace.RestoreWait); err != nil {
			return fmt.Errorf("restored Deployment %s/%s: %w", r.appNS, r.dep.Name, err)
		}
		what += ", rolled out"
	}
	if res.Record != nil {
		if _, err := inplace.CleanReplicaSets(ctx, r.cs, r.live); err != nil {
			return fmt.Errorf("restored Deployment %s/%s: %w", r.appNS, r.dep.Name, err)
		}
	}
	r.progress(StepRestore, 0, loadgen.Progress{}, fmt.Sprintf("Deployment %s/%s restored (%s)", r.appNS, r.dep.Name, what))
	return nil
}

// applyInPlace gives the live Deployment the Variant's changes (nothing for an as-is variant) and
// creates its budget in the app's namespace.
func (r *runner) applyInPlace(ctx context.Context) error {
	objs, err := r.res.Objects("", 0)
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			if equality.Semantic.DeepEqual(o.Spec, r.live.Spec) {
				continue
			}
			if r.p.App.ReplicaSetOf != "" {
				return fmt.Errorf("deploy: variant %s would change ReplicaSet %s/%s of %s, which is checked as it runs", r.p.Variant.Name, r.appNS, o.Name, r.p.App.ReplicaSetOf)
			}
			if err := inplace.Change(ctx, r.cs, r.appNS, o.Name, o.Spec); err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
		default:
			pdb, ok := o.(*policyv1.PodDisruptionBudget)
			if !ok {
				return fmt.Errorf("deploy: in place, %T %s is not rollcheck's to create", o, o.GetName())
			}
			if err := inplace.CreateBudget(ctx, r.cs, pdb); err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
		}
	}
	return nil
}
