package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/wait"
)

// RolloutGVK is Argo Rollouts' Rollout (argoproj.io/v1alpha1), read and written as unstructured:
// rollcheck depends on no module of Argo's.
var RolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// NewRollout is an empty unstructured Rollout of that name, to Get into or Patch.
func NewRollout(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(RolloutGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// RolloutStatus is what a row reads of a Rollout's status (Argo Rollouts' RolloutStatus fields of
// those names).
type RolloutStatus struct {
	// Generation is the Rollout's metadata.generation; ObservedGeneration its controller's
	// status.observedGeneration, which Argo writes as a string.
	Generation         int64
	ObservedGeneration string
	// Phase is Healthy, Progressing, Paused or Degraded; Message says why, when it is not Healthy.
	Phase, Message string
	// Abort is set when Argo aborted the revision it was rolling to (a failed analysis).
	Abort bool
	// StableRS is the pod-template hash of the stable revision, CurrentPodHash the newest's.
	StableRS, CurrentPodHash string
	// Wanted is spec.replicas (1 when unset); the others are status's counts.
	Wanted, Replicas, Updated, Ready, Available int
	// RestartAt is spec.restartAt, RestartedAt status.restartedAt (empty when unset): Argo sets
	// the second to the first once every pod is newer than it.
	RestartAt, RestartedAt string
}

// RolloutStatusOf reads u's status.
func RolloutStatusOf(u *unstructured.Unstructured) RolloutStatus {
	str := func(f ...string) string { s, _, _ := unstructured.NestedString(u.Object, f...); return s }
	num := func(f ...string) int { n, _, _ := unstructured.NestedInt64(u.Object, f...); return int(n) }
	s := RolloutStatus{
		Generation: u.GetGeneration(), ObservedGeneration: str("status", "observedGeneration"),
		Phase: str("status", "phase"), Message: str("status", "message"),
		StableRS: str("status", "stableRS"), CurrentPodHash: str("status", "currentPodHash"),
		Replicas: num("status", "replicas"), Updated: num("status", "updatedReplicas"),
		Ready: num("status", "readyReplicas"), Available: num("status", "availableReplicas"),
		RestartAt: str("spec", "restartAt"), RestartedAt: str("status", "restartedAt"),
	}
	s.Abort, _, _ = unstructured.NestedBool(u.Object, "status", "abort")
	s.Wanted = 1
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		s.Wanted = int(n)
	}
	return s
}

// Complete reports whether the Rollout is done: its controller saw its newest spec, it is
// Healthy on its newest revision (stable = current), every wanted replica is updated, ready and
// available and none other is left, and a restart it was asked for (spec.restartAt) is over.
func (s RolloutStatus) Complete() bool {
	return s.ObservedGeneration == strconv.FormatInt(s.Generation, 10) && s.Phase == "Healthy" && !s.Abort &&
		s.StableRS != "" && s.StableRS == s.CurrentPodHash &&
		s.Replicas == s.Wanted && s.Updated == s.Wanted && s.Ready == s.Wanted && s.Available == s.Wanted &&
		(s.RestartAt == "" || s.RestartAt == s.RestartedAt)
}

// String is "generation 4 observed 4, Healthy, stable 7d9f current 7d9f, replicas 3 updated 3
// ready 3 available 3" and the controller's message, if any.
func (s RolloutStatus) String() string {
	out := fmt.Sprintf("generation %d observed %s, %s", s.Generation, s.ObservedGeneration, s.Phase)
	if s.Abort {
		out += " (aborted)"
	}
	out += fmt.Sprintf(", stable %s current %s, replicas %d updated %d ready %d available %d", s.StableRS, s.CurrentPodHash, s.Replicas, s.Updated, s.Ready, s.Available)
	if s.Message != "" {
		out += ": " + s.Message
	}
	return out
}

// ErrRolloutDegraded is WaitWorkload's error for a Rollout whose controller will not complete
// its newest spec by itself: Degraded, or its revision aborted (a failed analysis).
var ErrRolloutDegraded = errors.New("its controller gave the revision up")

// degraded says whether s will not complete without someone's action.
func (s RolloutStatus) degraded() bool {
	return s.ObservedGeneration == strconv.FormatInt(s.Generation, 10) && (s.Phase == "Degraded" || s.Abort)
}

// waitRollout waits until the Rollout is Complete, or gives up after timeout saying how far it
// got; a Rollout its controller gave up (Degraded, aborted) ends the wait at once.
func waitRollout(ctx context.Context, client klient.Client, w Workload, timeout time.Duration) error {
	var last RolloutStatus
	var apiErr error
	err := wait.For(Tolerant(func(ctx context.Context) (bool, error) {
		u := NewRollout(w.Namespace, w.Name)
		if err := client.Resources(w.Namespace).Get(ctx, w.Name, w.Namespace, u); err != nil {
			return false, err
		}
		last = RolloutStatusOf(u)
		if last.degraded() {
			return false, ErrRolloutDegraded
		}
		return last.Complete(), nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(timeout), wait.WithInterval(PollInterval))
	if err = WithLastError(err, apiErr); err != nil {
		if last.Phase == "Paused" {
			return fmt.Errorf("wait %s for %s (%s; a pause with no duration waits for a promotion, which rollcheck does not give): %w", timeout, w, last, err)
		}
		return fmt.Errorf("wait %s for %s (%s): %w", timeout, w, last, err)
	}
	return nil
}

// RestartRollout asks Argo Rollouts to restart the Rollout's pods (spec.restartAt, what
// `kubectl argo rollouts restart` sets): its controller evicts the pods older than that time,
// as many at once as its maxUnavailable allows (at least one), without a new revision. It returns
// the time set, which the Rollout's status.restartedAt takes once every pod is newer.
func RestartRollout(ctx context.Context, client klient.Client, ns, name string) (string, error) {
	// The second after now: a pod created within the current second is older than it too (Argo
	// restarts the pods created before restartAt, once restartAt has passed).
	at := time.Now().Add(time.Second).Truncate(time.Second).UTC().Format(time.RFC3339)
	patch := fmt.Sprintf(`{"spec":{"restartAt":%q}}`, at)
	if err := Retry(ctx, func(ctx context.Context) error {
		return client.Resources(ns).Patch(ctx, NewRollout(ns, name), k8s.Patch{PatchType: types.MergePatchType, Data: []byte(patch)})
	}); err != nil {
		return "", fmt.Errorf("restart Rollout %s/%s (spec.restartAt): %w", ns, name, err)
	}
	return at, nil
}
