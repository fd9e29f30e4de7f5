package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

// The stop signal a variant set is read back from the workload's running pods, whatever made
// them (a Deployment, an Argo Rollout's ReplicaSet): a pod of the earlier revision without it,
// or a terminating one, says nothing; one running pod that asks for it shows the API server kept
// the field, and its container's status is the runtime's report. No running pod asking for it
// is the dropped field (the ContainerStopSignals gate off).
func TestStopSignalOf(t *testing.T) {
	pod := func(name string, sig, reported string, terminating bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		c := corev1.Container{Name: "app"}
		if sig != "" {
			c.Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.Signal(sig))}
		}
		p.Spec.Containers = []corev1.Container{{Name: "sidecar", Lifecycle: &corev1.Lifecycle{StopSignal: ptr.To(corev1.Signal("SIGQUIT"))}}, c}
		if reported != "" {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", StopSignal: ptr.To(corev1.Signal(reported))}}
		}
		if terminating {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		pods     []corev1.Pod
		want     int
		reported string
	}{
		{"the new revision's pod after an old one's", []corev1.Pod{pod("old", "", "", false), pod("new", "SIGQUIT", "SIGQUIT", false)}, 1, "SIGQUIT"},
		{"a runtime that reports none", []corev1.Pod{pod("new", "SIGQUIT", "", false)}, 0, ""},
		{"dropped: only the sidecar asks for it", []corev1.Pod{pod("a", "", "", false), pod("b", "", "", false)}, -1, ""},
		{"only a terminating pod asks for it", []corev1.Pod{pod("gone", "SIGQUIT", "SIGQUIT", true), pod("a", "", "", false)}, -1, ""},
		{"another signal", []corev1.Pod{pod("a", "SIGINT", "SIGINT", false)}, -1, ""},
		{"no pods", nil, -1, ""},
	} {
		i, reported := stopSignalOf(tc.pods, "app", "SIGQUIT")
		if i != tc.want || reported != tc.reported {
			t.Errorf("%s: %d %q, want %d %q", tc.name, i, reported, tc.want, tc.reported)
		}
	}
}

// podsOf is a source whose pods are w's (readPods asks nothing else of it).
type podsOf struct {
	source
	w kube.Workload
}

func (p podsOf) pods() kube.Workload { return p.w }

// An Argo Rollout checked in place with a stop-signal variant, on an API server that dropped the
// field from the pods its controller made (the ContainerStopSignals gate off): the row's error,
// as for a Deployment, not a row that measures SIGTERM and calls it the stop signal's doing.
func TestReadPodsStopSignalDroppedFromARollout(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rweb-5d9f-abcde", Namespace: "shop", Labels: map[string]string{"app": "rweb", "rollouts-pod-template-hash": "5d9f"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app"}}}}
	r := &runner{
		client: kubefake.Wrap(t, crfake.NewClientBuilder().WithObjects(pod, kubefake.Node("n1")).Build()),
		appNS:  "shop",
		dep:    &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rweb"}}}},
		row:    &check.Row{Config: check.Applied{StopSignal: "SIGQUIT", Container: "app"}},
		src:    podsOf{w: kube.Workload{Namespace: "shop", Name: "rweb", Kind: kube.KindRollout}},
		logf:   func(string, ...any) {},
	}
	err := r.readPods(ctx)
	if err == nil || !strings.Contains(err.Error(), "dropped lifecycle.stopSignal SIGQUIT from container app of the pods of Rollout shop/rweb: the cluster's ContainerStopSignals feature gate is off") {
		t.Fatalf("readPods: %v, want the dropped field", err)
	}
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.Signal("SIGQUIT"))}
	r.client = kubefake.Wrap(t, crfake.NewClientBuilder().WithObjects(pod, kubefake.Node("n1")).Build())
	if err := r.readPods(ctx); err != nil {
		t.Fatalf("readPods with the field kept: %v", err)
	}
}
