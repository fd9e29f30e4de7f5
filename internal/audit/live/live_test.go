package live

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// A cluster's objects read into the model: the Deployment of namespace shop joined with its
// Service, PDB and HTTPRoute; another namespace's left out; only list calls made.
func TestRead(t *testing.T) {
	labels := map[string]string{"app": "web"}
	dep := func(ns string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}}}}}}}
	}
	cs := fake.NewClientset(dep("shop"), dep("other"),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}})
	route := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec":     map[string]any{"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "web", "port": int64(80)}}}}},
	}}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schemaGVR]string{
		Routes[0]: "HTTPRouteList", Routes[1]: "GRPCRouteList"}, route)
	inv, err := Read(context.Background(), cs, dyn, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Workloads) != 1 {
		t.Fatalf("workloads %d, want shop's web only", len(inv.Workloads))
	}
	w := inv.Workloads[0]
	if w.ID() != "Deployment/shop/web" || w.Front != "web" || w.PDB == nil || len(w.Routes) != 1 || w.Routes[0] != "HTTPRoute/web" || w.PreStop().Sleep.D().Seconds() != 5 {
		t.Errorf("web: %+v", w)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("a %s call: the audit only lists", a.GetVerb())
		}
	}
	// A cluster without the Gateway API: its routes are none, not an error.
	dyn.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, notFound()
	})
	if _, err := Read(context.Background(), cs, dyn, ""); err != nil {
		t.Errorf("without the Gateway API: %v", err)
	}
}
