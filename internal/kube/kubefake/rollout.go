package kubefake

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// rolloutGVK is Argo Rollouts' Rollout (kube.RolloutGVK; kube's own tests use this package).
var rolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// Rollout is an Argo Rollout of 3 replicas at generation gen, Healthy on revision 7d9f as Argo's
// controller reports it, as unstructured.
func Rollout(ns, name string, gen int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rolloutGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetGeneration(gen)
	u.Object["spec"] = map[string]any{"replicas": int64(3)}
	u.Object["status"] = map[string]any{"observedGeneration": strconv.FormatInt(gen, 10), "phase": "Healthy", "stableRS": "7d9f",
		"currentPodHash": "7d9f", "replicas": int64(3), "updatedReplicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3)}
	return u
}

// RolloutMapper is a REST mapper that knows the Rollout, for a fake client that serves it.
func RolloutMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(rolloutGVK, meta.RESTScopeNamespace)
	return m
}
