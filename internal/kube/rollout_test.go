package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

func healthyRollout() *unstructured.Unstructured { return kubefake.Rollout("shop", "rweb", 4) }

func TestArgoRolloutComplete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"healthy", func(*unstructured.Unstructured) {}, true},
		{"spec not observed", func(u *unstructured.Unstructured) { u.SetGeneration(5) }, false},
		{"progressing", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Progressing", "status", "phase")
		}, false},
		{"a new revision not yet stable", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "5c8e", "status", "currentPodHash")
		}, false},
		{"the old revision's pods still there", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(6), "status", "replicas")
		}, false},
		{"a restart asked for, not over", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "2026-11-30T10:00:00Z", "spec", "restartAt")
		}, false},
		{"a restart over", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "2026-11-30T10:00:00Z", "spec", "restartAt")
			_ = unstructured.SetNestedField(u.Object, "2026-11-30T10:00:00Z", "status", "restartedAt")
		}, true},
		{"replicas unset: one", func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, "spec", "replicas")
			for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
				_ = unstructured.SetNestedField(u.Object, int64(1), "status", f)
			}
		}, true},
	} {
		u := healthyRollout()
		tc.change(u)
		if got := RolloutStatusOf(u).Complete(); got != tc.want {
			t.Errorf("%s: Complete %v, want %v (%s)", tc.name, got, tc.want, RolloutStatusOf(u))
		}
	}
}

// A Rollout its controller gave up ends the wait at once, saying so; one paused without a
// duration waits until the timeout, and the error says that rollcheck does not promote.
func TestWaitRollout(t *testing.T) {
	mapper := kubefake.RolloutMapper()
	degraded := healthyRollout()
	_ = unstructured.SetNestedField(degraded.Object, "Degraded", "status", "phase")
	_ = unstructured.SetNestedField(degraded.Object, true, "status", "abort")
	_ = unstructured.SetNestedField(degraded.Object, "RolloutAborted: metric rollcheck assessed Failed", "status", "message")
	c := kubefake.Wrap(t, crfake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(degraded).Build())
	w := Workload{Namespace: "shop", Name: "rweb", Kind: KindRollout}
	start := time.Now()
	err := WaitWorkload(context.Background(), c, w, time.Minute)
	if !errors.Is(err, ErrRolloutDegraded) || !strings.Contains(err.Error(), "RolloutAborted") || time.Since(start) > 10*time.Second {
		t.Errorf("a degraded Rollout: %v after %s", err, time.Since(start))
	}
	paused := healthyRollout()
	_ = unstructured.SetNestedField(paused.Object, "Paused", "status", "phase")
	c = kubefake.Wrap(t, crfake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(paused).Build())
	if err := WaitWorkload(context.Background(), c, w, 600*time.Millisecond); err == nil || !strings.Contains(err.Error(), "which rollcheck does not give") {
		t.Errorf("a paused Rollout: %v", err)
	}
	c = kubefake.Wrap(t, crfake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(healthyRollout()).Build())
	if err := WaitWorkload(context.Background(), c, w, time.Second); err != nil {
		t.Errorf("a healthy Rollout: %v", err)
	}
	if n, complete, err := ReadWorkload(context.Background(), c, w); n != 3 || !complete || err != nil {
		t.Errorf("ReadWorkload: %d %v %v", n, complete, err)
	}
}
