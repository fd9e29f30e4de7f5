// Package checktest builds valid check Plans for the tests of the packages that run or search
// them (engine, tune), without a cluster.
package checktest

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
)

// Image is the image WebPlan's app runs (and loads into the cluster).
const Image = "rollcheck-app:t1"

// WebPlan is a valid Plan, suite "spec", variant "web-drain", expecting zero failures under a
// rollout restart, of a web app: a Deployment "web" of 3 replicas whose container "app" serves
// on 8080 with a readiness probe and an exec preStop, and a grace period of 30 s.
func WebPlan() check.Plan {
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers: []corev1.Container{{
						Name: "app", Image: Image, Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}},
						Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
							Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 3"}}}},
					}},
				},
			},
		},
	}
	return check.Plan{
		Suite:      "spec",
		App:        check.App{Objects: []check.Object{d}, Port: 8080, Path: "/hello", Images: []string{Image}},
		Variant:    check.Variant{Name: "web-drain", Expect: check.Zero()},
		Disruption: check.Disruption{Kind: check.RolloutRestart},
	}
}

// Resolve resolves each plan (check.Plan.Resolve), failing t at the first that does not.
func Resolve(t testing.TB, plans ...check.Plan) []*check.Resolved {
	t.Helper()
	out := make([]*check.Resolved, len(plans))
	for i, p := range plans {
		r, err := p.Resolve()
		if err != nil {
			t.Fatalf("plan %s: %v", p.Variant.Name, err)
		}
		out[i] = r
	}
	return out
}
