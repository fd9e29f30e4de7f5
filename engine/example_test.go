package engine_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
)

// webPlan is a Plan built by hand: the app's Deployment (3 replicas serving on 8080, ready on
// /healthz), the variant under test (a 5 s native preStop sleep, a 30 s grace period, zero
// failures expected) and the disruption (three rollout restarts). spec.Load makes the same from
// a check file.
func webPlan() check.Plan {
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "registry.example/web:v1.4.2",
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}},
				}}},
			},
		},
	}
	return check.Plan{
		Suite: "web",
		App:   check.App{Objects: []check.Object{web}, Port: 8080, Path: "/", Images: []string{"registry.example/web:v1.4.2"}},
		Variant: check.Variant{
			Name:                          "prestop-5s",
			PreStop:                       &check.PreStop{Sleep: 5 * time.Second},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Expect:                        check.Zero(),
		},
		Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 3},
	}
}

// Run judges a resolved Plan on a Target: the cluster's API server and the URL under which the
// load reaches rollcheck's load Service (kindcluster.Acquire gives one for a kind cluster). The
// plan is resolved first (check.Plan.Resolve: defaults, validation, the Deployment rendered),
// before any cluster work. A row that cannot run to the end is still returned, with status error
// and the reason, so that a table can never count it as passed; here no API server answers.
func ExampleRun() {
	plan, err := webPlan().Resolve()
	if err != nil {
		fmt.Println(err)
		return
	}
	target := engine.Target{
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second},
		LoadURL:    "http://127.0.0.1:1",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var steps []engine.Step
	row, err := engine.Run(ctx, target, plan, engine.WithProgress(func(p engine.Progress) { steps = append(steps, p.Step) }))
	fmt.Println("error:", err != nil)
	fmt.Println(row.Verdict.Status == check.Error, row.Config)
	fmt.Println("steps:", steps)
	// Output:
	// error: true
	// true prestop-5s: preStop=sleep:5s grace=30s keepalive=off rollout-restart×3
	// steps: []
}

// Rows in namespaces a user created (a Role there, no ClusterRole): the run holds each
// namespace's Lease for its whole length, and each row applies its app into one of them, one row
// at a time in each, deleting at its end what it applied and started there.
func ExampleTarget_rowNamespace() {
	ctx := context.Background()
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"} // the user's kubeconfig, as clientcmd reads it
	p := webPlan()
	p.Load.From = check.LoadFromCluster // from load pods in team-a
	plan, err := p.Resolve()
	if err != nil {
		fmt.Println(err)
		return
	}
	const runID = "4b1d2c3e5f60"
	lease, err := engine.HoldRowNamespace(ctx, cfg, "team-a", runID)
	if err != nil {
		fmt.Println(err) // another live run holds team-a: its id and last renewal
		return
	}
	defer func() { _ = lease.Release(ctx) }()
	row, err := engine.Run(ctx, engine.Target{RESTConfig: cfg, RunID: runID, RowNamespace: "team-a", LoadImage: "registry.example/rollcheck/load:v1"}, plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(row.Verdict.Status)
}
