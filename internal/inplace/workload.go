package inplace

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// Workload is the workload of an app checked where it runs: what a row reads of it, records on it
// before it changes anything, changes for a variant and puts back on every path. WorkloadOf
// chooses the implementation once, from the plan's app:
//   - a Deployment, which a row may change (its variant, a rollout restart) and restores;
//   - an Argo Rollout (a.Kind check.KindRollout), read and written as unstructured, whose
//     variants change its pod template and replicas (a new revision to Argo, rolled out by the
//     Rollout's strategy) and which is restored as a Deployment is;
//   - a ReplicaSet of a workload rollcheck does not change (an Argo Rollout's revision, which
//     its own controller owns): read as it runs, never written; a variant that would change it
//     is refused in one line.
type Workload interface {
	// Pods names what the row's pods belong to, for the observer and the disruptions; its
	// String is the workload's name in messages ("Deployment shop/web").
	Pods() kube.Workload
	// Read reads it as a Deployment (Live): the view a row renders its variant on.
	Read(ctx context.Context) (*appsv1.Deployment, error)
	// Leftover puts back what a run that is gone left on it (Leftover), while the run holds the
	// workload's Lease l: the one line that says what it did ("" for nothing), and the dead run's
	// record (nil for none).
	Leftover(ctx context.Context, l *runlease.Lease) (string, *Record, error)
	// Hold records it on itself before the row changes anything (Hold).
	Hold(ctx context.Context, rec Record) error
	// Change gives it the spec a variant renders (live is what Read returned): nothing when the
	// spec is live's.
	Change(ctx context.Context, live *appsv1.Deployment, spec appsv1.DeploymentSpec) error
	// Restore puts it back as Hold recorded it for run, waits until it rolled out when that
	// changed its pods, and removes the record wherever its controller copied it (live is what
	// Read returned: its selector finds them). It runs on contexts of its own (after errors and
	// Ctrl-C too) and says what it did in one line.
	Restore(ctx context.Context, live *appsv1.Deployment, run string) (string, error)
}

// WorkloadOf is the workload of a (check.App in place): a.ReplicaSetOf set, the ReplicaSet
// a.Deployment owned by it; otherwise the Deployment a.Deployment. cs and client are the same
// cluster's.
func WorkloadOf(cs kubernetes.Interface, client klient.Client, a check.App) Workload {
	if a.ReplicaSetOf != "" {
		return replicaSet{cs: cs, app: a}
	}
	if a.Kind == check.KindRollout {
		return rollout{cs: cs, store: rolloutStore{client: client, ns: a.Namespace, name: a.Deployment}, app: a}
	}
	return deployment{cs: cs, client: client, app: a}
}

// deployment is a Deployment checked in place.
type deployment struct {
	cs     kubernetes.Interface
	client klient.Client
	app    check.App
}

func (d deployment) Pods() kube.Workload {
	return kube.Workload{Namespace: d.app.Namespace, Name: d.app.Deployment}
}

func (d deployment) Read(ctx context.Context) (*appsv1.Deployment, error) {
	return Live(ctx, d.cs, d.app)
}

func (d deployment) Leftover(ctx context.Context, l *runlease.Lease) (string, *Record, error) {
	return Leftover(ctx, d.cs, d.app.Namespace, d.app.Deployment, l)
}

func (d deployment) Hold(ctx context.Context, rec Record) error {
	return Hold(ctx, d.cs, d.app.Namespace, d.app.Deployment, rec)
}

func (d deployment) Change(ctx context.Context, live *appsv1.Deployment, spec appsv1.DeploymentSpec) error {
	if unchanged(live, spec) {
		return nil
	}
	return Change(ctx, d.cs, d.app.Namespace, d.app.Deployment, spec)
}

func (d deployment) Restore(ctx context.Context, live *appsv1.Deployment, run string) (string, error) {
	return restoreWorkload(ctx, d.cs, d.client, deploymentStore{d.cs, d.app.Namespace, d.app.Deployment}, d.Pods(), live, run)
}

// restoreWorkload puts w back as its record says for run (restore), waits until pods rolled out
// when that changed them (kube.WaitWorkload: a Rollout its controller gave up is an error that
// says so), and removes the record from the ReplicaSets of live (as Read returned it; nil: none
// read). It says what it did in one line.
func restoreWorkload(ctx context.Context, cs kubernetes.Interface, client klient.Client, w store, pods kube.Workload, live *appsv1.Deployment, run string) (string, error) {
	res, err := restore(ctx, w, run)
	if err != nil {
		return "", err
	}
	what := "spec unchanged"
	if res.Changed {
		what = "spec put back as recorded"
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreWait)
		defer cancel()
		if err := kube.WaitWorkload(wctx, client, pods, RestoreWait); err != nil {
			return "", fmt.Errorf("restored %s: %w", w, err)
		}
		what += ", rolled out"
	}
	if res.Record != nil && live != nil {
		if _, err := CleanReplicaSets(ctx, cs, live); err != nil {
			return "", fmt.Errorf("restored %s: %w", w, err)
		}
	}
	return fmt.Sprintf("%s restored (%s)", w, what), nil
}

// replicaSet is a ReplicaSet of a workload rollcheck does not change, checked as it runs.
type replicaSet struct {
	cs  kubernetes.Interface
	app check.App
}

func (r replicaSet) Pods() kube.Workload {
	return kube.Workload{Namespace: r.app.Namespace, Name: r.app.Deployment, Kind: kube.KindReplicaSet}
}

func (r replicaSet) Read(ctx context.Context) (*appsv1.Deployment, error) {
	return Live(ctx, r.cs, r.app)
}

// Leftover: no run records anything on it.
func (r replicaSet) Leftover(context.Context, *runlease.Lease) (string, *Record, error) {
	return "", nil, nil
}

// Hold: nothing of it changes, nothing is recorded.
func (r replicaSet) Hold(context.Context, Record) error { return nil }

func (r replicaSet) Change(_ context.Context, live *appsv1.Deployment, spec appsv1.DeploymentSpec) error {
	if unchanged(live, spec) {
		return nil
	}
	return fmt.Errorf("would change ReplicaSet %s/%s of %s, which is checked as it runs", r.app.Namespace, r.app.Deployment, r.app.ReplicaSetOf)
}

func (r replicaSet) Restore(context.Context, *appsv1.Deployment, string) (string, error) {
	return "", nil
}

// unchanged says whether spec is live's spec: a variant that changes nothing writes nothing.
func unchanged(live *appsv1.Deployment, spec appsv1.DeploymentSpec) bool {
	return live != nil && equality.Semantic.DeepEqual(spec, live.Spec)
}
