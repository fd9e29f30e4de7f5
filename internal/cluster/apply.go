package cluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/wait"
)

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
	if err := client.Resources(ns).Patch(ctx, dep, k8s.Patch{PatchType: types.StrategicMergePatchType, Data: []byte(patch)}); err != nil {
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
	err := wait.For(func(ctx context.Context) (bool, error) {
		if err := client.Resources(ns).Get(ctx, name, ns, &last); err != nil {
			return false, err
		}
		return RolloutComplete(&last), nil
	}, wait.WithContext(ctx), wait.WithTimeout(timeout), wait.WithInterval(250*time.Millisecond))
	if err != nil {
		s := last.Status
		return fmt.Errorf("wait %s for rollout of %s/%s (generation %d observed %d, replicas %d updated %d ready %d available %d): %w",
			timeout, ns, name, last.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas, err)
	}
	return nil
}
