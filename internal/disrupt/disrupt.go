package disrupt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// Kind is how pods are taken away: the model's DisruptionKind, one list of kinds.
type Kind = check.DisruptionKind

// Disruption kinds (check's).
const (
	RolloutRestart = check.RolloutRestart
	DeletePod      = check.DeletePod
	ForceDelete    = check.ForceDelete
	ScaleDown      = check.ScaleDown
	ScaleToZero    = check.ScaleToZero
	KubeletRestart = check.KubeletRestart
	DrainNode      = check.DrainNode
)

// Target is the Deployment to disrupt.
type Target struct {
	Client     klient.Client
	Namespace  string
	Deployment string
	// Kind is what Deployment names: kube.KindDeployment (also when empty); kube.KindReplicaSet,
	// a ReplicaSet (an Argo Rollout's revision, checked as it runs), on which only pod deletions
	// run and a disruption settles when it has every replica ready again; or kube.KindRollout,
	// an Argo Rollout, which rollout-restart restarts by spec.restartAt and the scales scale by
	// spec.replicas, and which settles Healthy (kube.RolloutStatus.Complete).
	Kind string
	// Selector is the label selector of the Deployment's pods, e.g. "app=app".
	Selector string
	// Timeout bounds each wait (default 3m); it should exceed the pods' grace period.
	Timeout time.Duration
	// RestartKubelet restarts the kubelet of the named node and returns once it runs again
	// (kubelet-restart); nil: that disruption cannot run here.
	RestartKubelet func(ctx context.Context, node string) error
	// DrainTimeout bounds each drain of drain-node (default check.DefaultDrainTimeout).
	DrainTimeout time.Duration
	// Node, if set, is the node drain-node drains (check.DrainEntry: the load's entry node);
	// empty: the node that runs the most ready pods of the Deployment.
	Node string
	// Owner is the namespace a drain's cordon names (CordonedBy): the row's own, which a later
	// run finds gone when this one was killed. Empty: Namespace (the app's, when the row
	// deployed it; an app checked in place runs in a namespace that outlives the row).
	Owner string
	Logf  func(format string, args ...any)
}

// workload is what t's pods belong to.
func (t Target) workload() kube.Workload {
	return kube.Workload{Namespace: t.Namespace, Name: t.Deployment, Kind: t.Kind}
}

// owner is the namespace a cordon names.
func (t Target) owner() string {
	if t.Owner != "" {
		return t.Owner
	}
	return t.Namespace
}

// Record is one disruption as it happened.
type Record struct {
	Kind Kind `json:"kind"`
	N    int  `json:"n"` // 1-based
	// Pod is the pod deleted (delete-pod, force-delete), empty otherwise.
	Pod     string    `json:"pod,omitempty"`
	Started time.Time `json:"started"`
	// KubeletRestarted is when the kubelet restart was asked for, and KubeletBack when it ran
	// again (kubelet-restart).
	KubeletRestarted time.Time `json:"kubeletRestarted,omitzero"`
	KubeletBack      time.Time `json:"kubeletBack,omitzero"`
	// Complete is when the Deployment had settled: its rollout complete and none of its pods
	// terminating or left over (Settle). Settled is when the next disruption may start: the
	// same, except after a forced delete, which also waits ForcedStopWait.
	Complete time.Time `json:"complete"`
	Settled  time.Time `json:"settled"`
	// Drain is what a drain-node disruption did (the node, evictions accepted and refused, when
	// it drained, uncordoned and had its replacements ready, whether it was blocked); nil for
	// the other kinds. It is filled as far as the drain got, also when it failed.
	Drain *check.Drain `json:"drain,omitempty"`
}

// ForcedStopWait is how long a forced delete waits, after the Deployment settled, for the
// kubelet to stop the deleted pod's containers, which the API no longer shows.
var ForcedStopWait = 5 * time.Second

// Repeat runs the disruption count times, each after the previous one settled, calling
// before and after (either may be nil) around each, and returns what happened.
func Repeat(ctx context.Context, t Target, kind Kind, count int, before, after func(Record)) ([]Record, error) {
	var recs []Record
	for i := 1; i <= count; i++ {
		rec := Record{Kind: kind, N: i, Started: time.Now()}
		if before != nil {
			before(rec)
		}
		pod, err := once(ctx, t, kind, &rec)
		rec.Pod, rec.Complete = pod, time.Now()
		if err == nil && kind.Info().Forced {
			// The Pod is gone from the API at once, but its containers are still stopped by
			// the kubelet afterwards (preStop 1 s, then SIGTERM and 2 s more: seen up to ~5 s
			// after the deletion on a loaded node): wait that out, so that the next disruption
			// does not overlap this one's kill and each failure has one pod to be attributed to.
			select {
			case <-ctx.Done():
				err = ctx.Err()
			case <-time.After(ForcedStopWait):
			}
		}
		rec.Settled = time.Now()
		if err != nil {
			return recs, fmt.Errorf("%s %d of %d: %w", kind, i, count, err)
		}
		recs = append(recs, rec)
		if after != nil {
			after(rec)
		}
	}
	return recs, nil
}

// Once runs one disruption and waits until the Deployment has settled. It returns the name
// of the pod it deleted, if it deleted one.
func Once(ctx context.Context, t Target, kind Kind) (string, error) {
	return once(ctx, t, kind, &Record{})
}

func once(ctx context.Context, t Target, kind Kind, rec *Record) (string, error) {
	if t.Timeout == 0 {
		t.Timeout = 3 * time.Minute
	}
	if t.Logf == nil {
		t.Logf = func(string, ...any) {}
	}
	r, ok := runners[kind]
	if !ok {
		return "", fmt.Errorf("unknown disruption %q", kind)
	}
	if t.Kind == kube.KindReplicaSet && kind != DeletePod && kind != ForceDelete {
		return "", fmt.Errorf("%s on ReplicaSet %s/%s: a ReplicaSet checked as it runs is disrupted only by pod deletions", kind, t.Namespace, t.Deployment)
	}
	return r(ctx, t, kind, rec)
}

// runner runs one disruption of its kind and waits until the Deployment has settled; it
// returns the name of the pod it deleted, if it deleted one.
type runner func(ctx context.Context, t Target, kind Kind, rec *Record) (string, error)

// runners is how each kind of check.Disruptions runs, one function per kind (a test keeps
// them one to one); what else a kind means is its check.DisruptionInfo.
var runners = map[Kind]runner{
	RolloutRestart: rolloutRestart,
	DeletePod:      deletePod,
	ForceDelete:    deletePod,
	KubeletRestart: deletePod,
	ScaleDown:      scaleDown,
	ScaleToZero:    scaleToZero,
	DrainNode:      drainNode,
}

func drainNode(ctx context.Context, t Target, _ Kind, rec *Record) (string, error) {
	return "", drain(ctx, t, rec)
}

func rolloutRestart(ctx context.Context, t Target, _ Kind, _ *Record) (string, error) {
	if t.Kind == kube.KindRollout {
		at, err := kube.RestartRollout(ctx, t.Client, t.Namespace, t.Deployment)
		if err != nil {
			return "", err
		}
		t.Logf("rollout-restart: Rollout %s/%s restartAt %s", t.Namespace, t.Deployment, at)
		return "", Settle(ctx, t)
	}
	if err := kube.RestartDeployment(ctx, t.Client, t.Namespace, t.Deployment); err != nil {
		return "", err
	}
	return "", Settle(ctx, t)
}

// deletePod deletes one pod: with grace period 0 when the kind is Forced, and restarting the
// kubelet of its node check.KubeletRestartAfter later when the kind RestartsKubelet.
func deletePod(ctx context.Context, t Target, kind Kind, rec *Record) (string, error) {
	info := kind.Info()
	if info.RestartsKubelet && t.RestartKubelet == nil {
		return "", fmt.Errorf("%s: this cluster's front end cannot restart a kubelet (only kind's can)", kind)
	}
	pod, err := pickPod(ctx, t)
	if err != nil {
		return "", err
	}
	var opts []resources.DeleteOption
	if info.Forced {
		opts = append(opts, resources.WithGracePeriod(0))
	}
	// A deletion asked again after a lost answer may find the pod gone: it was deleted.
	err = kube.Retry(ctx, func(ctx context.Context) error { return t.Client.Resources(t.Namespace).Delete(ctx, pod, opts...) })
	if err != nil && !apierrors.IsNotFound(err) {
		return pod.Name, fmt.Errorf("%s %s/%s: %w", kind, t.Namespace, pod.Name, err)
	}
	t.Logf("%s: deleted pod %s", kind, pod.Name)
	if info.RestartsKubelet {
		select {
		case <-ctx.Done():
			return pod.Name, ctx.Err()
		case <-time.After(check.KubeletRestartAfter):
		}
		rec.KubeletRestarted = time.Now()
		if err := t.RestartKubelet(ctx, pod.Spec.NodeName); err != nil {
			return pod.Name, fmt.Errorf("%s: node %s: %w", kind, pod.Spec.NodeName, err)
		}
		rec.KubeletBack = time.Now()
		t.Logf("%s: kubelet of node %s restarted %s after deleting %s, running again %s later", kind, pod.Spec.NodeName,
			rec.KubeletRestarted.Sub(rec.Started).Round(10*time.Millisecond), pod.Name, rec.KubeletBack.Sub(rec.KubeletRestarted).Round(10*time.Millisecond))
	}
	if err := Settle(ctx, t); err != nil {
		return pod.Name, err
	}
	return pod.Name, nil
}

func scaleDown(ctx context.Context, t Target, _ Kind, _ *Record) (string, error) {
	n, err := replicas(ctx, t)
	if err != nil {
		return "", fmt.Errorf("scale down %s/%s: %w", t.Namespace, t.Deployment, err)
	}
	if n < 2 {
		return "", fmt.Errorf("scale down %s/%s: %d replica(s), need at least 2", t.Namespace, t.Deployment, n)
	}
	if err := scale(ctx, t, n-1); err != nil {
		return "", err
	}
	if err := Settle(ctx, t); err != nil {
		return "", err
	}
	if err := scale(ctx, t, n); err != nil {
		return "", err
	}
	return "", Settle(ctx, t)
}

func scaleToZero(ctx context.Context, t Target, kind Kind, rec *Record) (string, error) {
	n, err := replicas(ctx, t)
	if err != nil {
		return "", fmt.Errorf("scale to zero %s/%s: %w", t.Namespace, t.Deployment, err)
	}
	if err := scale(ctx, t, 0); err != nil {
		return "", err
	}
	if err := Settle(ctx, t); err != nil {
		return "", err
	}
	t.Logf("%s: no pod left after %s; scaling back to %d", kind, time.Since(rec.Started).Round(10*time.Millisecond), n)
	if err := scale(ctx, t, n); err != nil {
		return "", err
	}
	return "", Settle(ctx, t)
}

// Settle waits until the Deployment's rollout is complete and none of its pods is
// terminating or left over: the pod count equals the wanted replicas.
func Settle(ctx context.Context, t Target) error {
	if t.Timeout == 0 {
		t.Timeout = 3 * time.Minute
	}
	w := t.workload()
	if err := kube.WaitWorkload(ctx, t.Client, w, t.Timeout); err != nil {
		return err
	}
	var pods corev1.PodList
	var apiErr error
	err := wait.For(kube.Tolerant(func(ctx context.Context) (bool, error) {
		want, complete, err := kube.ReadWorkload(ctx, t.Client, w)
		if err != nil {
			return false, err
		}
		if err := t.Client.Resources(t.Namespace).List(ctx, &pods, resources.WithLabelSelector(t.Selector)); err != nil {
			return false, err
		}
		return len(pods.Items) == want && complete, nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(t.Timeout), wait.WithInterval(kube.PollInterval))
	if err = kube.WithLastError(err, apiErr); err != nil {
		var names []string
		for _, p := range pods.Items {
			s := p.Name
			if p.DeletionTimestamp != nil {
				s += " (terminating)"
			}
			names = append(names, s)
		}
		return fmt.Errorf("wait %s for %s/%s to settle with no terminating pod (pods: %s): %w",
			t.Timeout, t.Namespace, t.Deployment, strings.Join(names, ", "), err)
	}
	return nil
}

// pickPod picks the ready, not terminating pod that has been ready the longest (its Ready
// condition's lastTransitionTime; the lowest name among equals). The lowest name alone, as
// before, picked the replacement the previous deletion had just made about one time in three,
// right after it turned ready and before the data plane sent it any request: a deletion that
// tested nothing (measured in make e2e-gate: 0 failures at such deletions of an app that loses
// requests at every other one).
func pickPod(ctx context.Context, t Target) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := kube.Retry(ctx, func(ctx context.Context) error {
		return t.Client.Resources(t.Namespace).List(ctx, &pods, resources.WithLabelSelector(t.Selector))
	}); err != nil {
		return nil, fmt.Errorf("list pods %s in %s: %w", t.Selector, t.Namespace, err)
	}
	var ready []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && podReady(p) {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return nil, fmt.Errorf("no ready pod %s in %s to delete", t.Selector, t.Namespace)
	}
	slices.SortFunc(ready, func(a, b *corev1.Pod) int {
		if c := readySince(a).Compare(readySince(b)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return ready[0], nil
}

// readySince is when p's Ready condition last turned (the zero time when it has none).
func readySince(p *corev1.Pod) time.Time {
	if c := readyCondition(p); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func podReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// replicas is the workload's wanted replicas (1 when it names none: the API server's default).
func replicas(ctx context.Context, t Target) (int32, error) {
	var n int
	err := kube.Retry(ctx, func(ctx context.Context) (err error) {
		n, _, err = kube.ReadWorkload(ctx, t.Client, t.workload())
		return err
	})
	return int32(n), err
}

func scale(ctx context.Context, t Target, n int32) error {
	var obj k8s.Object = &appsv1.Deployment{}
	if t.Kind == kube.KindRollout {
		obj = kube.NewRollout(t.Namespace, t.Deployment)
	}
	obj.SetName(t.Deployment)
	obj.SetNamespace(t.Namespace)
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if err := kube.Retry(ctx, func(ctx context.Context) error {
		return t.Client.Resources(t.Namespace).Patch(ctx, obj, k8s.Patch{PatchType: types.MergePatchType, Data: []byte(patch)})
	}); err != nil {
		return fmt.Errorf("scale %s/%s to %d: %w", t.Namespace, t.Deployment, n, err)
	}
	t.Logf("scaled %s/%s to %d", t.Namespace, t.Deployment, n)
	return nil
}
