package inplace

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/check"
)

// Live reads the workload of an app checked in place (a.Namespace, a.Deployment,
// a.ReplicaSetOf) as a Deployment: the Deployment itself, or for a ReplicaSet of a workload
// rollcheck does not change (an Argo Rollout's revision) a Deployment of the ReplicaSet's name,
// labels, replicas, selector and pod template, which is what a row reads of it. Its status and
// managed fields are dropped. The ReplicaSet must be owned by what a.ReplicaSetOf names (KIND/NAME):
// a hash that names another workload's ReplicaSet, or none, is an error that says so. It asks
// once: errors are wrapped, so that a caller's kube.Retry finds the transient ones.
func Live(ctx context.Context, cs kubernetes.Interface, a check.App) (*appsv1.Deployment, error) {
	if a.ReplicaSetOf == "" {
		d, err := cs.AppsV1().Deployments(a.Namespace).Get(ctx, a.Deployment, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("Deployment %s/%s: not found (app.namespace, app.deployment)", a.Namespace, a.Deployment)
		case err != nil:
			return nil, fmt.Errorf("Deployment %s/%s: %w", a.Namespace, a.Deployment, err)
		}
		d = d.DeepCopy()
		d.APIVersion, d.Kind = "apps/v1", "Deployment"
		d.Status, d.ManagedFields = appsv1.DeploymentStatus{}, nil
		return d, nil
	}
	rs, err := cs.AppsV1().ReplicaSets(a.Namespace).Get(ctx, a.Deployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("ReplicaSet %s/%s of %s: not found (is the pod-template hash the revision's, and is it still there?)", a.Namespace, a.Deployment, a.ReplicaSetOf)
	case err != nil:
		return nil, fmt.Errorf("ReplicaSet %s/%s of %s: %w", a.Namespace, a.Deployment, a.ReplicaSetOf, err)
	}
	if !ownedBy(rs.OwnerReferences, a.ReplicaSetOf) {
		var owners []string
		for _, o := range rs.OwnerReferences {
			owners = append(owners, o.Kind+"/"+o.Name)
		}
		if len(owners) == 0 {
			owners = []string{"nothing"}
		}
		return nil, fmt.Errorf("ReplicaSet %s/%s: owned by %s, not %s", a.Namespace, a.Deployment, strings.Join(owners, ", "), a.ReplicaSetOf)
	}
	return ReplicaSetView(rs), nil
}

// ReplicaSetView is rs as a Deployment of its name: its labels, replicas, selector and pod
// template, what a row reads of the workload it checks.
func ReplicaSetView(rs *appsv1.ReplicaSet) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.Name, d.Namespace, d.UID = rs.Name, rs.Namespace, rs.UID
	d.Labels, d.Annotations = rs.Labels, rs.Annotations
	d.Spec.Replicas = rs.Spec.Replicas
	d.Spec.Selector = rs.Spec.Selector.DeepCopy()
	d.Spec.Template = *rs.Spec.Template.DeepCopy()
	d.Spec.MinReadySeconds = rs.Spec.MinReadySeconds
	return d
}

// ownedBy says whether refs name owner, KIND/NAME.
func ownedBy(refs []metav1.OwnerReference, owner string) bool {
	kind, name, _ := strings.Cut(owner, "/")
	for _, o := range refs {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}
