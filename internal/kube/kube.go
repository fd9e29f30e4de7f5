package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"
)

// PollInterval is how often the waits here and in internal/disrupt ask the API server again;
// unit tests shorten it.
var PollInterval = 250 * time.Millisecond

// sweepInterval is how often SweepNamespaces looks again for the namespaces it deleted.
var sweepInterval = time.Second

// Apply creates each object, or updates it when it exists already.
func Apply(ctx context.Context, client klient.Client, objs ...k8s.Object) error {
	r := client.Resources()
	for _, o := range objs {
		err := r.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			existing := o.DeepCopyObject().(k8s.Object)
			if err = r.Get(ctx, o.GetName(), o.GetNamespace(), existing); err == nil {
				o.SetResourceVersion(existing.GetResourceVersion())
				err = r.Update(ctx, o)
			}
		}
		if err != nil {
			return fmt.Errorf("apply %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// RestartDeployment does what `kubectl rollout restart` does: it stamps the pod template with
// a restartedAt annotation, which makes the Deployment roll all its pods.
func RestartDeployment(ctx context.Context, client klient.Client, ns, name string) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`,
		time.Now().UTC().Format(time.RFC3339Nano))
	dep := &appsv1.Deployment{}
	dep.Name, dep.Namespace = name, ns
	// The same patch asked again after a lost answer restarts once: its timestamp is the same.
	if err := Retry(ctx, func(ctx context.Context) error {
		return client.Resources(ns).Patch(ctx, dep, k8s.Patch{PatchType: types.StrategicMergePatchType, Data: []byte(patch)})
	}); err != nil {
		return fmt.Errorf("rollout restart %s/%s: %w", ns, name, err)
	}
	return nil
}

// RolloutComplete reports whether a Deployment has finished rolling out, as `kubectl rollout
// status` judges it: the controller saw the latest spec, every replica is updated and available,
// and no old replica is left.
func RolloutComplete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation &&
		s.UpdatedReplicas == want && s.Replicas == want &&
		s.AvailableReplicas == want && s.ReadyReplicas == want
}

// WaitRollout waits until the Deployment's rollout is complete, or gives up after timeout
// saying how far it got.
func WaitRollout(ctx context.Context, client klient.Client, ns, name string, timeout time.Duration) error {
	var last appsv1.Deployment
	var apiErr error
	err := wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		if err := client.Resources(ns).Get(ctx, name, ns, &last); err != nil {
			return false, err
		}
		return RolloutComplete(&last), nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(timeout), wait.WithInterval(PollInterval))
	if err = WithLastError(err, apiErr); err != nil {
		s := last.Status
		return fmt.Errorf("wait %s for rollout of %s/%s (generation %d observed %d, replicas %d updated %d ready %d available %d): %w",
			timeout, ns, name, last.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, err)
	}
	return nil
}

// Workload is what a row's pods belong to: a Deployment, a ReplicaSet (one revision of a
// workload rollcheck does not change: an Argo Rollout's), or an Argo Rollout.
type Workload struct {
	Namespace, Name string
	// Kind is KindDeployment (also when empty), KindReplicaSet or KindRollout.
	Kind string
}

// The kinds of a Workload.
const (
	KindDeployment = "Deployment"
	KindReplicaSet = "ReplicaSet"
	KindRollout    = "Rollout"
)

// KindOf is w's kind, KindDeployment when empty.
func (w Workload) KindOf() string {
	if w.Kind == "" {
		return KindDeployment
	}
	return w.Kind
}

// String is "Deployment NS/NAME", "ReplicaSet NS/NAME" or "Rollout NS/NAME".
func (w Workload) String() string {
	return w.KindOf() + " " + w.Namespace + "/" + w.Name
}

// ReplicaSetComplete reports whether every replica rs wants is there, ready and available, as
// its controller has seen its newest spec: what RolloutComplete is for a Deployment.
func ReplicaSetComplete(rs *appsv1.ReplicaSet) bool {
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	s := rs.Status
	return s.ObservedGeneration >= rs.Generation && s.Replicas == want &&
		s.ReadyReplicas == want && s.AvailableReplicas == want
}

// ReadWorkload reads w and returns the replicas it wants (1 when it names none: the API
// server's default) and whether its rollout is complete (RolloutComplete, ReplicaSetComplete,
// RolloutStatus.Complete).
func ReadWorkload(ctx context.Context, client klient.Client, w Workload) (int, bool, error) {
	var replicas *int32
	var complete bool
	switch w.KindOf() {
	case KindRollout:
		u := NewRollout(w.Namespace, w.Name)
		if err := client.Resources(w.Namespace).Get(ctx, w.Name, w.Namespace, u); err != nil {
			return 0, false, err
		}
		s := RolloutStatusOf(u)
		return s.Wanted, s.Complete(), nil
	case KindReplicaSet:
		var rs appsv1.ReplicaSet
		if err := client.Resources(w.Namespace).Get(ctx, w.Name, w.Namespace, &rs); err != nil {
			return 0, false, err
		}
		replicas, complete = rs.Spec.Replicas, ReplicaSetComplete(&rs)
	default:
		var d appsv1.Deployment
		if err := client.Resources(w.Namespace).Get(ctx, w.Name, w.Namespace, &d); err != nil {
			return 0, false, err
		}
		replicas, complete = d.Spec.Replicas, RolloutComplete(&d)
	}
	want := 1
	if replicas != nil {
		want = int(*replicas)
	}
	return want, complete, nil
}

// WaitWorkload waits until w's rollout is complete (WaitRollout for a Deployment; for a
// ReplicaSet, every wanted replica ready and available; for an Argo Rollout, Healthy on its
// newest revision with every replica, a restart asked for over: RolloutStatus.Complete), or gives
// up after timeout saying how far it got. A Rollout its controller gave up (Degraded, aborted)
// is ErrRolloutDegraded at once.
func WaitWorkload(ctx context.Context, client klient.Client, w Workload, timeout time.Duration) error {
	switch w.KindOf() {
	case KindRollout:
		return waitRollout(ctx, client, w, timeout)
	case KindDeployment:
		return WaitRollout(ctx, client, w.Namespace, w.Name, timeout)
	}
	var last appsv1.ReplicaSet
	var apiErr error
	err := wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		if err := client.Resources(w.Namespace).Get(ctx, w.Name, w.Namespace, &last); err != nil {
			return false, err
		}
		return ReplicaSetComplete(&last), nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(timeout), wait.WithInterval(PollInterval))
	if err = WithLastError(err, apiErr); err != nil {
		s := last.Status
		return fmt.Errorf("wait %s for %s (generation %d observed %d, replicas %d ready %d available %d): %w",
			timeout, w, last.Generation, s.ObservedGeneration, s.Replicas, s.ReadyReplicas, s.AvailableReplicas, err)
	}
	return nil
}

// CreateNamespace creates a namespace named prefix-<random> with the given labels and
// returns its name.
func CreateNamespace(ctx context.Context, client klient.Client, prefix string, labels map[string]string) (string, error) {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	ns.Labels = labels
	if err := client.Resources().Create(ctx, ns); err != nil {
		return "", fmt.Errorf("create namespace %s-*: %w", prefix, err)
	}
	return ns.Name, nil
}

// TeardownNamespace deletes the namespace (so no new pod can start in it), then its pods
// with grace 0 (the measurement is over: waiting for preStop sleeps and grace periods would
// only slow the next row) and its Services, and returns once no pod and no Service of it is
// left, so that the next row finds the NodePort free. The rest of the namespace goes away in
// the background (SweepNamespaces waits for it).
func TeardownNamespace(ctx context.Context, client klient.Client, name string) error {
	if name == "" {
		return fmt.Errorf("tear down namespace: empty name")
	}
	// client.Resources(ns) sets the namespace on one Resources shared by every caller of the
	// client (e2e-framework), so it is called afresh for each request, never kept: a kept one
	// turns cluster-wide as soon as anything calls client.Resources() again.
	err := Retry(ctx, func(ctx context.Context) error {
		return client.Resources().Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	var pods corev1.PodList
	var svcs corev1.ServiceList
	var apiErr error
	err = wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		if err := client.Resources(name).List(ctx, &pods); err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Namespace != name {
				return false, fmt.Errorf("listing the pods of namespace %s returned pod %s/%s: refusing to delete it", name, p.Namespace, p.Name)
			}
			if err := client.Resources(name).Delete(ctx, p, resources.WithGracePeriod(0)); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		if err := client.Resources(name).List(ctx, &svcs); err != nil {
			return false, err
		}
		// Deleted here rather than left to the namespace controller, which took about 5 s a
		// row to get to them (its discovery of every resource first).
		for i := range svcs.Items {
			s := &svcs.Items[i]
			if s.Namespace != name {
				return false, fmt.Errorf("listing the Services of namespace %s returned Service %s/%s: refusing to delete it", name, s.Namespace, s.Name)
			}
			if s.DeletionTimestamp != nil {
				continue
			}
			// Without the right (a Role made before rollcheck asked for it), the namespace
			// controller still deletes them: waited for, as before.
			if err := client.Resources(name).Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
				return false, err
			}
		}
		return len(pods.Items) == 0 && len(svcs.Items) == 0, nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(2*time.Minute), wait.WithInterval(PollInterval))
	if err = WithLastError(err, apiErr); err != nil {
		return fmt.Errorf("wait until namespace %s has no pod (%d left) and no Service (%d left): %w", name, len(pods.Items), len(svcs.Items), err)
	}
	return nil
}

// DeletePods deletes the pods of namespace ns that selector selects, with grace 0, and returns
// once none is left (within 2 minutes): the pods a row started in a namespace it keeps.
func DeletePods(ctx context.Context, client klient.Client, ns, selector string) error {
	var pods corev1.PodList
	var apiErr error
	err := wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		if err := client.Resources(ns).List(ctx, &pods, resources.WithLabelSelector(selector)); err != nil {
			return false, err
		}
		for i := range pods.Items {
			if err := client.Resources(ns).Delete(ctx, &pods.Items[i], resources.WithGracePeriod(0)); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return len(pods.Items) == 0, nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(2*time.Minute), wait.WithInterval(PollInterval))
	if err = WithLastError(err, apiErr); err != nil {
		return fmt.Errorf("delete the pods %s of namespace %s (%d left): %w", selector, ns, len(pods.Items), err)
	}
	return nil
}

// SweepNamespaces deletes every namespace matching the label selector and waits (up to
// timeout) until none is left; it returns how many it found. rollcheck labels the namespaces
// it creates, so that what a killed run left behind is swept by the next one, and a run
// ends only when its own namespaces are gone.
func SweepNamespaces(ctx context.Context, client klient.Client, selector string, timeout time.Duration) (int, error) {
	var list corev1.NamespaceList
	if err := Retry(ctx, func(ctx context.Context) error {
		return client.Resources().List(ctx, &list, resources.WithLabelSelector(selector))
	}); err != nil {
		return 0, fmt.Errorf("list namespaces %s: %w", selector, err)
	}
	found := len(list.Items)
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp != nil {
			continue
		}
		if err := Retry(ctx, func(ctx context.Context) error { return client.Resources().Delete(ctx, &list.Items[i]) }); err != nil && !apierrors.IsNotFound(err) {
			return found, fmt.Errorf("delete namespace %s: %w", list.Items[i].Name, err)
		}
	}
	var apiErr error
	err := wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		if err := client.Resources().List(ctx, &list, resources.WithLabelSelector(selector)); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(timeout), wait.WithInterval(sweepInterval))
	if err = WithLastError(err, apiErr); err != nil {
		var left []string
		for _, n := range list.Items {
			left = append(left, n.Name)
		}
		return found, fmt.Errorf("wait %s for namespaces %s to go (left: %s): %w", timeout, selector, strings.Join(left, ", "), err)
	}
	return found, nil
}

// PodProblems describes why pods matching selector in ns are not running or not ready (the
// waiting reason, e.g. ErrImageNeverPull, CrashLoopBackOff), as "; pods: ..." to append to an
// error, or "" when it finds nothing to say.
func PodProblems(ctx context.Context, client klient.Client, ns, selector string) string {
	var pods corev1.PodList
	if err := client.Resources(ns).List(ctx, &pods, resources.WithLabelSelector(selector)); err != nil {
		return ""
	}
	var out []string
	for _, p := range pods.Items {
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				out = append(out, fmt.Sprintf("%s/%s %s: %s", p.Name, cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
			case cs.State.Terminated != nil:
				out = append(out, fmt.Sprintf("%s/%s terminated (%s, exit %d)", p.Name, cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode))
			case !cs.Ready && cs.RestartCount > 0:
				out = append(out, fmt.Sprintf("%s/%s not ready after %d restarts", p.Name, cs.Name, cs.RestartCount))
			}
		}
		if p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) == 0 {
			for _, c := range p.Status.Conditions {
				if c.Status != corev1.ConditionTrue && c.Message != "" {
					out = append(out, fmt.Sprintf("%s %s: %s", p.Name, c.Reason, c.Message))
				}
			}
		}
	}
	out = append(out, nodeProblems(ctx, client, pods.Items)...)
	if len(out) == 0 {
		return ""
	}
	return "; pods: " + strings.Join(out, "; ")
}

// nodeProblems names the nodes of pods that are not ready (a stopped node: its kubelet stopped
// posting its status), with the pods on each. A node that cannot be read is left out.
func nodeProblems(ctx context.Context, client klient.Client, pods []corev1.Pod) []string {
	on := map[string][]string{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p.Name)
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(on)) {
		var n corev1.Node
		if err := client.Resources().Get(ctx, name, "", &n); err != nil {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				out = append(out, fmt.Sprintf("node %s not ready (%s: %s), running %s", name, c.Reason, c.Message, strings.Join(on[name], ", ")))
			}
		}
	}
	return out
}
