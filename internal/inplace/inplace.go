// Package inplace keeps a workload that rollcheck checks where it already runs as it found it.
// A row sees it through Workload (WorkloadOf chooses once): a Deployment, whose spec is recorded
// on the object itself (the annotation Annotation) before a row changes anything and put back,
// the record removed, after the row, on errors, on a cancelled context and by the next run after
// a killed one; or a ReplicaSet of a workload rollcheck does not change (an Argo Rollout's
// revision), which is only read. The PodDisruptionBudget a variant asks for is created in the
// app's namespace with rollcheck's label and deleted the same way. Service finds the app's own
// Service the load goes to.
package inplace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// Annotation holds, on a Deployment checked in place, what it was before rollcheck changed it:
// a Record as JSON. While it is there, rollcheck holds the Deployment.
const Annotation = "rollcheck.io/restore"

// RestoreWait bounds a restore, which runs on every path, a cancelled context's too: transient
// errors (an API server restarting or gone for a while) are asked again within it (kube.Retry,
// itself bounded by kube.RetryFor).
var RestoreWait = 3 * time.Minute

// Record is what Annotation holds: the Deployment's spec before the row, and who recorded it when.
type Record struct {
	// Run is the run's id (engine.Target.RunID; empty when the front end gives none).
	Run string `json:"run,omitempty"`
	// Row is the namespace of the row that recorded it (rollcheck's own, where its load pods run).
	Row string `json:"row"`
	// Time is when it was recorded.
	Time time.Time `json:"time"`
	// Spec is the Deployment's spec as it was (of an Argo Rollout: its replicas, selector, pod
	// template and minReadySeconds, as a Deployment's).
	Spec appsv1.DeploymentSpec `json:"spec"`
	// Template is an Argo Rollout's spec.template as it was written, put back as it was; empty
	// for a Deployment.
	Template json.RawMessage `json:"template,omitempty"`
	// RestartAt is an Argo Rollout's spec.restartAt as it was (empty: none).
	RestartAt string `json:"restartAt,omitempty"`
}

// String is "run 3f2a… (row rc-as-is-x7k2p) at 2026-11-27T10:00:00Z".
func (r Record) String() string {
	run := r.Run
	if run == "" {
		run = "without an id"
	}
	return fmt.Sprintf("run %s (row %s) at %s", run, r.Row, r.Time.UTC().Format(time.RFC3339))
}

// ErrHeld is Hold's error for a workload that carries a record already: another run holds it,
// or a killed one left it (Leftover restores that).
var ErrHeld = errors.New("the workload carries a restore record already")

// state is what a record keeps of a workload, and a restore puts back: its spec as a
// Deployment's, and of an Argo Rollout its pod template as it was written (Template) and its
// spec.restartAt.
type state struct {
	Spec      appsv1.DeploymentSpec
	Template  json.RawMessage
	RestartAt string
}

// store is a workload checked in place as the record and the restore read and write it.
type store interface {
	// String is "Deployment NS/NAME" or "Rollout NS/NAME".
	String() string
	// annotations reads the workload's annotations once (errors wrapped for kube.Retry).
	annotations(ctx context.Context) (map[string]string, error)
	// update reads the workload, lets change modify its annotations (never nil) and its state,
	// and writes what changed back, asking again on a conflict (someone else wrote it meanwhile:
	// the change is made again on the fresh object) and on transient errors (kube.Retry).
	update(ctx context.Context, change func(ann map[string]string, st *state) error) error
}

// deploymentStore is a Deployment.
type deploymentStore struct {
	cs       kubernetes.Interface
	ns, name string
}

func (d deploymentStore) String() string { return "Deployment " + d.ns + "/" + d.name }

func (d deploymentStore) annotations(ctx context.Context) (map[string]string, error) {
	dep, err := d.cs.AppsV1().Deployments(d.ns).Get(ctx, d.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return dep.Annotations, nil
}

func (d deploymentStore) update(ctx context.Context, change func(map[string]string, *state) error) error {
	return kube.Retry(ctx, func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			dep, err := d.cs.AppsV1().Deployments(d.ns).Get(ctx, d.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if dep.Annotations == nil {
				dep.Annotations = map[string]string{}
			}
			st := state{Spec: dep.Spec}
			if err := change(dep.Annotations, &st); err != nil {
				return err
			}
			dep.Spec = st.Spec
			_, err = d.cs.AppsV1().Deployments(d.ns).Update(ctx, dep, metav1.UpdateOptions{})
			return err
		})
	})
}

// recordOf reads the record in ann; nil without one.
func recordOf(what fmt.Stringer, ann map[string]string) (*Record, error) {
	s, ok := ann[Annotation]
	if !ok {
		return nil, nil
	}
	var r Record
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("%s: annotation %s is not a restore record: %w", what, Annotation, err)
	}
	return &r, nil
}

// Hold records the Deployment's spec on it (Annotation), before anything changes it. A
// Deployment that carries a record already is ErrHeld: nothing is written.
func Hold(ctx context.Context, cs kubernetes.Interface, ns, name string, rec Record) error {
	return hold(ctx, deploymentStore{cs, ns, name}, rec)
}

func hold(ctx context.Context, w store, rec Record) error {
	err := w.update(ctx, func(ann map[string]string, st *state) error {
		old, err := recordOf(w, ann)
		switch {
		case err != nil:
			return err
		case old != nil && old.Run == rec.Run && old.Row == rec.Row && old.Time.Equal(rec.Time):
			return nil // this very record: an earlier try was written, its answer lost
		case old != nil:
			return fmt.Errorf("%w: %s", ErrHeld, old)
		}
		rec.Spec, rec.Template, rec.RestartAt = st.Spec, st.Template, st.RestartAt
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		ann[Annotation] = string(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %s before the row: %w", w, err)
	}
	return nil
}

// Change gives the held Deployment the spec a variant asks for. It refuses a Deployment whose
// record is gone (someone removed it: rollcheck could no longer restore it).
func Change(ctx context.Context, cs kubernetes.Interface, ns, name string, spec appsv1.DeploymentSpec) error {
	return change(ctx, deploymentStore{cs, ns, name}, spec)
}

func change(ctx context.Context, w store, spec appsv1.DeploymentSpec) error {
	err := w.update(ctx, func(ann map[string]string, st *state) error {
		rec, err := recordOf(w, ann)
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("annotation %s is gone: rollcheck changes nothing it cannot restore", Annotation)
		}
		st.Spec, st.Template = *spec.DeepCopy(), nil
		return nil
	})
	if err != nil {
		return fmt.Errorf("change %s for the variant: %w", w, err)
	}
	return nil
}

// Restored is what Restore did.
type Restored struct {
	// Record is the record found; nil when there was none (nothing to restore).
	Record *Record
	// Changed says the spec differed from the record and was put back (which rolls the pods
	// again when the pod template differed: a variant's change, or a rollout restart's
	// restartedAt annotation).
	Changed bool
}

// Restore puts the recorded spec back on the Deployment and removes the record, with a context
// of its own (ctx's values, not its end: it runs after Ctrl-C too) bounded by RestoreWait. It
// asks again on conflicts and on transient errors, for as long as kube.Retry waits for an API
// server that is gone (kube.RetryFor). run, when not empty, must be the record's: a record of
// another run is not this run's to restore (an error).
func Restore(ctx context.Context, cs kubernetes.Interface, ns, name, run string) (Restored, error) {
	return restore(ctx, deploymentStore{cs, ns, name}, run)
}

func restore(ctx context.Context, w store, run string) (Restored, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreWait)
	defer cancel()
	var out Restored
	errNone := errors.New("no record")
	err := w.update(rctx, func(ann map[string]string, st *state) error {
		rec, err := recordOf(w, ann)
		if err != nil {
			return err
		}
		if rec == nil {
			return errNone
		}
		if run != "" && rec.Run != run {
			return fmt.Errorf("the record is %s's, not this run's (%s)", rec, run)
		}
		out.Record = rec
		want := state{Spec: *rec.Spec.DeepCopy(), Template: rec.Template, RestartAt: rec.RestartAt}
		out.Changed = !equality.Semantic.DeepEqual(st.Spec, want.Spec) || st.RestartAt != want.RestartAt
		*st = want
		delete(ann, Annotation)
		return nil
	})
	switch {
	case errors.Is(err, errNone):
		return out, nil // nothing recorded; or an earlier try restored it and its answer was lost
	case err != nil:
		return out, fmt.Errorf("restore %s: %w", w, err)
	}
	return out, nil
}

// LeaseName is the name of the Lease (coordination.k8s.io/v1) a run holds in the workload's
// namespace while it checks it in place: "rollcheck-" and the name of the Deployment (of an Argo
// Rollout: "rollout." and its name; of a ReplicaSet a gate checks: its owner's), a hash of it for
// a name too long for that.
func LeaseName(workload string) string {
	name := "rollcheck-" + workload
	if len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(workload))
	return name[:200] + "-" + hex.EncodeToString(sum[:8])
}

// leaseKey is what LeaseName names for the workload of a (check.App in place). A ReplicaSet's
// run (a gate on a Rollout's revision) holds the Lease of the workload that owns it: a check in
// place of that Rollout changes its pod template and so the gated revision's pods, and two gates
// of one Rollout would each take the other's deletions for its own; so one of them runs at a time.
func leaseKey(a check.App) string {
	kind, name := a.Kind, a.Deployment
	if k, n, ok := strings.Cut(a.ReplicaSetOf, "/"); ok {
		kind, name = k, n
	}
	if kind == check.KindRollout {
		return "rollout." + name
	}
	return name
}

// HoldLease holds the Lease of the workload of a (check.App in place; LeaseName) for the run,
// renewed until it is released: one run checks a workload at a time. A live Lease of another run
// is a *runlease.HeldError, one line that names it, and nothing is written.
func HoldLease(ctx context.Context, cs kubernetes.Interface, a check.App, run string, opts ...runlease.Option) (*runlease.Lease, error) {
	what := "deployment"
	switch {
	case a.Kind == check.KindRollout:
		what = "rollout"
	case a.ReplicaSetOf != "":
		what = "replicaset"
	}
	held := fmt.Sprintf("%s %s/%s", what, a.Namespace, a.Deployment)
	if a.ReplicaSetOf != "" {
		held += " of " + a.ReplicaSetOf
	}
	return runlease.Acquire(ctx, cs, a.Namespace, LeaseName(leaseKey(a)), run, held, opts...)
}

// ErrLive is Leftover's error for a record that may be a live run's: it names no run that held
// the workload's Lease, and it is younger than the Lease's duration.
var ErrLive = errors.New("the record may be a live run's")

// orphaned tells whether rec, found on the workload while the run holds its Lease l, is a run's
// that no longer runs: this run's own (an earlier row's whose restore failed), one whose Lease
// expired and this run took over (l.Took), or, for a run that held no Lease of the workload
// (a rollcheck before Leases, a Lease deleted by hand), one older than the Lease's duration.
func orphaned(rec *Record, l *runlease.Lease, w fmt.Stringer) error {
	now := l.Now()
	switch {
	case rec.Run != "" && rec.Run == l.ID():
		return nil
	case rec.Run != "" && rec.Run == l.Took().Holder:
		return nil
	case now.Sub(rec.Time) >= l.Duration():
		return nil
	}
	left := max(rec.Time.Add(l.Duration()).Sub(now), 0).Round(time.Second)
	return fmt.Errorf("%w: %s carries the record of %s, %s old, and no Lease of that run (a rollcheck without Leases, or a Lease deleted by hand): wait for that run, or %s more", ErrLive, w, rec, max(now.Sub(rec.Time), 0).Round(time.Second), left)
}

// Leftover restores a Deployment whose record a run left that ended without restoring it (a
// kill -9, or an API server gone for longer than the restore waited), and deletes the budget
// such a run left (DeleteBudget). It returns the one line that says so ("" when nothing was
// left) and the record it restored (nil for none), whose run's namespaces the caller may sweep.
// l is the Deployment's Lease, which the run holds (HoldLease): a record is restored only when
// its run no longer runs (orphaned); a record that may be a live run's is ErrLive, and nothing
// is changed.
func Leftover(ctx context.Context, cs kubernetes.Interface, ns, name string, l *runlease.Lease) (string, *Record, error) {
	w := deploymentStore{cs, ns, name}
	return leftover(ctx, cs, w, ns, l, func(ctx context.Context) (*appsv1.Deployment, error) {
		return cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	})
}

// leftover is Leftover for w in namespace ns; view reads w as a Deployment (its UID and selector
// find its ReplicaSets).
func leftover(ctx context.Context, cs kubernetes.Interface, w store, ns string, l *runlease.Lease, view func(context.Context) (*appsv1.Deployment, error)) (string, *Record, error) {
	var ann map[string]string
	err := kube.Retry(ctx, func(ctx context.Context) (err error) {
		ann, err = w.annotations(ctx)
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", w, err)
	}
	rec, err := recordOf(w, ann)
	if err != nil {
		return "", nil, err
	}
	var r Restored
	if rec != nil {
		if err := orphaned(rec, l, w); err != nil {
			return "", nil, err
		}
		// The run's own record only: one that another run wrote since is not this one.
		if r, err = restore(ctx, w, rec.Run); err != nil {
			return "", nil, err
		}
	}
	deleted, err := DeleteBudget(ctx, cs, ns)
	if err != nil {
		return "", nil, err
	}
	if r.Record != nil {
		var d *appsv1.Deployment
		err := kube.Retry(ctx, func(ctx context.Context) (err error) {
			d, err = view(ctx)
			return err
		})
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", w, err)
		}
		if _, err := CleanReplicaSets(ctx, cs, d); err != nil {
			return "", nil, err
		}
	}
	var line string
	if r.Record != nil {
		what := "its spec was as recorded; the record removed"
		if r.Changed {
			what = "its spec put back as recorded"
		}
		line = fmt.Sprintf("%s restored: %s left it changed and did not restore it (killed?); %s", w, r.Record, what)
	}
	if deleted {
		if line != "" {
			line += "; "
		}
		line += fmt.Sprintf("PodDisruptionBudget %s/%s that an earlier run left deleted", ns, check.PDBName)
	}
	return line, r.Record, nil
}

// CleanReplicaSets removes Annotation from the Deployment's ReplicaSets: the Deployment controller
// copies a Deployment's annotations to the ReplicaSet it rolls to (all but a few of its own), and
// never removes one, so the record would stay on them after the restore. Call it once the
// Deployment no longer carries the record (after Restore), with a context of its own as Restore
// has. It returns how many it cleaned.
func CleanReplicaSets(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment) (int, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreWait)
	defer cancel()
	var list *appsv1.ReplicaSetList
	sel := metav1.FormatLabelSelector(d.Spec.Selector)
	err := kube.Retry(cctx, func(ctx context.Context) (err error) {
		list, err = cs.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("list the ReplicaSets of Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, Annotation))
	n := 0
	for _, rs := range list.Items {
		if _, ok := rs.Annotations[Annotation]; !ok || !metav1.IsControlledBy(&rs, d) {
			continue
		}
		err := kube.Retry(cctx, func(ctx context.Context) error {
			_, err := cs.AppsV1().ReplicaSets(d.Namespace).Patch(ctx, rs.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return n, fmt.Errorf("remove %s from ReplicaSet %s/%s: %w", Annotation, d.Namespace, rs.Name, err)
		}
		n++
	}
	return n, nil
}

// CreateBudget creates a variant's PodDisruptionBudget in the app's namespace (check.Resolved.Objects
// renders it with rollcheck's label and the name check.PDBName).
func CreateBudget(ctx context.Context, cs kubernetes.Interface, pdb *policyv1.PodDisruptionBudget) error {
	err := kube.Retry(ctx, func(ctx context.Context) error {
		_, err := cs.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("create PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
	}
	return nil
}

// DeleteBudget deletes the PodDisruptionBudget check.PDBName of ns when rollcheck made it (its
// label check.PartOfLabel says so; a budget of the user's of that name is left), with a context
// of its own as Restore has. It reports whether one was deleted. A user who may not read budgets
// there could have created none: nothing to do.
func DeleteBudget(ctx context.Context, cs kubernetes.Interface, ns string) (bool, error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreWait)
	defer cancel()
	deleted := false
	err := kube.Retry(dctx, func(ctx context.Context) error {
		b, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, check.PDBName, metav1.GetOptions{})
		// Not there; or not readable: a user without in-place-budget.yaml's rights, whose runs
		// could create none.
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.Labels[check.PartOfLabel] != check.PartOfValue {
			return nil
		}
		err = cs.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, check.PDBName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID}})
		if err == nil || apierrors.IsNotFound(err) {
			deleted = err == nil
			return nil
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete PodDisruptionBudget %s/%s: %w", ns, check.PDBName, err)
	}
	return deleted, nil
}
