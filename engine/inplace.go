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

// live is an app checked where it runs (check.Plan.InPlace): its workload (inplace.Workload,
// chosen once by inplace.WorkloadOf) is read, recorded before the row changes it, changed for
// the variant and restored on every path, while the row holds its Lease.
type live struct {
	r  *runner
	wl inplace.Workload
	// dep is the workload as read before the row.
	dep *appsv1.Deployment
	// lease is the workload's Lease the row holds for r.runID (Target.RunID, else an id of the
	// row's own).
	lease *runlease.Lease
}

func (l *live) check(t Target) error {
	if t.RowNamespace != "" {
		return errors.New("target: RowNamespace is for an app the rows apply (an app checked in place runs in its own namespace)")
	}
	return nil
}

func (l *live) pods() kube.Workload { return l.wl.Pods() }

// open holds the workload's Lease for the row, before anything is read or changed (one run per
// workload; the front end usually holds it for the whole run already, and the row's hold shares
// it), then puts back what a killed run left on it and reads it (readApp). The Lease is released
// last, after the restore and the teardown.
func (l *live) open(ctx context.Context) (context.Context, func(context.Context) error, error) {
	r := l.r
	l.wl = inplace.WorkloadOf(r.cs, r.client, r.p.App)
	lctx, stop, err := l.holdLease(ctx)
	if err != nil {
		return nil, nil, err
	}
	end := func(ctx context.Context) error {
		stop()
		return l.lease.Release(ctx)
	}
	if err := l.readApp(lctx); err != nil {
		return nil, nil, errors.Join(err, end(ctx))
	}
	return lctx, end, nil
}

// holdLease holds the Lease of the workload checked in place for the run (Target.RunID; a row
// without one makes an id of its own): a live Lease of another run is the row's error, one line
// that names that run. The context returned ends when another run takes the Lease over (this
// process could not renew it within its duration): the row stops changing a workload it no
// longer holds. stop ends the watch.
func (l *live) holdLease(ctx context.Context) (context.Context, func(), error) {
	r := l.r
	r.runID = r.t.RunID
	if r.runID == "" {
		id := make([]byte, 6)
		_, _ = rand.Read(id)
		r.runID = hex.EncodeToString(id)
	}
	lease, err := inplace.HoldLease(ctx, r.cs, r.p.App, r.runID, runlease.WithClock(leaseClock))
	if err != nil {
		return nil, nil, err
	}
	l.lease = lease
	lctx, stop := lease.Context(ctx)
	return lctx, stop, nil
}

// readApp restores first what a killed run left on the workload (and deletes that run's
// namespaces), then reads the live workload into the Plan (resolved again with it), the row's
// configuration, and the Service the load goes to.
func (l *live) readApp(ctx context.Context) error {
	r, a := l.r, l.r.p.App
	line, dead, err := l.wl.Leftover(ctx, l.lease)
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
			return fmt.Errorf("the namespaces of run %s, which left %s changed: %w", dead.Run, l.wl.Pods(), err)
		}
		if n > 0 {
			r.progress(StepRestore, 0, loadgen.Progress{}, fmt.Sprintf("%d namespace(s) of run %s deleted", n, dead.Run))
		}
	}
	var dep *appsv1.Deployment
	err = kube.Retry(ctx, func(ctx context.Context) (err error) {
		dep, err = l.wl.Read(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("the app in place: %w", err)
	}
	l.dep = dep
	res, err := r.res.Live(dep)
	if err != nil {
		return err
	}
	r.res, r.p = res, res.Plan()
	for _, w := range res.Warnings() { // what the file alone could not say: the live Deployment's
		r.progress(StepDeploy, 0, loadgen.Progress{}, "warning: "+w)
	}
	r.dep = res.Deployment()
	r.row.Config = res.Applied()
	svc, port, err := inplace.Service(ctx, r.cs, dep, a.Service, a.Port, a.Kind == check.KindRollout)
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

// hold records the live workload on itself before the row changes anything (a rollout restart
// too changes its pod template); the release it returns puts it back as recorded, deletes the
// budget the row created and waits until the restored workload rolled out, on contexts of its
// own: it runs after errors and Ctrl-C too.
func (l *live) hold(ctx context.Context) (func(context.Context) error, error) {
	r := l.r
	r.appNS = r.p.App.Namespace
	if err := l.wl.Hold(ctx, inplace.Record{Run: r.runID, Row: r.ns, Time: l.lease.Now().UTC()}); err != nil {
		return nil, err
	}
	return l.release, nil
}

func (l *live) release(ctx context.Context) error {
	r := l.r
	line, err := l.wl.Restore(ctx, l.dep, r.runID)
	if r.p.Variant.PDB != nil {
		_, berr := inplace.DeleteBudget(ctx, r.cs, r.appNS)
		err = errors.Join(err, berr)
	}
	if err != nil {
		return err
	}
	if line != "" {
		r.progress(StepRestore, 0, loadgen.Progress{}, line)
	}
	return nil
}

// apply gives the live workload the variant's changes (nothing for an as-is variant) and creates
// its budget in the app's namespace.
func (l *live) apply(ctx context.Context) error {
	r := l.r
	objs, err := r.res.Objects("", 0)
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			if err := l.wl.Change(ctx, l.dep, o.Spec); err != nil {
				return fmt.Errorf("deploy: variant %s: %w", r.p.Variant.Name, err)
			}
		case *policyv1.PodDisruptionBudget:
			if err := inplace.CreateBudget(ctx, r.cs, o); err != nil {
				return fmt.Errorf("deploy: %w", err)
			}
		default:
			return fmt.Errorf("deploy: in place, %T %s is not rollcheck's to create", o, o.GetName())
		}
	}
	return nil
}
