// Package gotest_test is a user's plain go test of a rollout, on a kind cluster, with rollcheck's
// public packages only (kindcluster, engine, check): no Ginkgo. TestRollout needs a Docker engine
// and a node image, hence the build tag e2e:
//
//	go test -tags e2e -v ./...
//
// make e2e runs it after the suites, on the same cluster. Without the tag, TestPlan checks the
// plan alone, so that go vet and go test cover this module everywhere.
package gotest_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
)

// rolloutPlan is the one row TestRollout runs: rollcheck's sample app (image) as a user's
// Deployment of two replicas that turn unready at SIGTERM, with a 5 s native preStop sleep,
// under one rollout restart with load from this machine. The sleep holds each old pod serving
// while the endpoint removal reaches kube-proxy, so no request may fail (check.Zero).
func rolloutPlan(image string) check.Plan {
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: image,
					// The sample app names its pod in X-Pod-Name, so the row says which pod
					// answered each request.
					Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
						FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
						PeriodSeconds: 1, FailureThreshold: 1,
					},
				}}},
			},
		},
	}
	return check.Plan{
		Suite: "gotest",
		App:   check.App{Objects: []check.Object{web}, Port: 8080, Path: "/", Images: []string{image}},
		Variant: check.Variant{
			Name:                          "prestop-5s",
			Why:                           "the preStop sleep outlasts the endpoint removal's way to kube-proxy",
			PreStop:                       &check.PreStop{Sleep: 5 * time.Second},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Expect:                        check.Zero(),
		},
		Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 1},
	}
}

// TestPlan checks the row as engine.Run will, without a cluster: a mistake in the plan shows
// in go test, not after a cluster was set up.
func TestPlan(t *testing.T) {
	p := rolloutPlan("rollcheck/app:example")
	warnings, err := p.Validate()
	if err != nil {
		t.Fatalf("the plan is refused: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("warning: %s", w)
	}
	if got := p.Applied().String(); got != "prestop-5s: preStop=sleep:5s grace=30s keepalive=off rollout-restart×1" {
		t.Errorf("the row runs %q", got)
	}
}
