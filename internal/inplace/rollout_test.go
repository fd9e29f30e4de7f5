package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// rolloutJSON is a Healthy blue-green Rollout as Argo writes it, as JSON: its template holds
// what a typed round trip would write otherwise (no creationTimestamp, a quantity as written).
const rolloutJSON = `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout",
 "metadata":{"name":"rweb","namespace":"shop","uid":"u-rweb","generation":1,"annotations":{"team":"shop"}},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"rweb"}},
  "strategy":{"blueGreen":{"activeService":"rweb","previewService":"rweb-preview"}},
  "template":{"metadata":{"labels":{"app":"rweb"}},"spec":{"containers":[{"name":"rweb","image":"rweb:1",
   "ports":[{"name":"http","containerPort":8080}],"resources":{"requests":{"cpu":"0.02"}}}]}}},
 "status":{"observedGeneration":"1","phase":"Healthy","stableRS":"7d9f","currentPodHash":"7d9f",
  "replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3}}`

func newRollout(t *testing.T, mutate func(map[string]any)) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(rolloutJSON), &u.Object); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(u.Object)
	}
	return u
}

// rolloutClient is a klient.Client over a fake API server that serves Rollouts.
func rolloutClient(t *testing.T, objs ...*unstructured.Unstructured) klient.Client {
	t.Helper()
	b := crfake.NewClientBuilder().WithRESTMapper(kubefake.RolloutMapper())
	for _, o := range objs {
		b = b.WithObjects(o)
	}
	return kubefake.Wrap(t, b.Build())
}

func getRollout(t *testing.T, c klient.Client) *unstructured.Unstructured {
	t.Helper()
	u := kube.NewRollout("shop", "rweb")
	if err := c.Resources("shop").Get(context.Background(), "rweb", "shop", u); err != nil {
		t.Fatal(err)
	}
	return u
}

func rolloutApp() check.App {
	return check.App{Namespace: "shop", Deployment: "rweb", Kind: check.KindRollout}
}

// A Rollout's variant is written on its pod template, and the restore puts the template back as
// it was written (not as a typed round trip would write it), its restartAt too, and removes the
// record; the view a row reads is its spec as a Deployment's.
func TestRolloutHoldChangeRestore(t *testing.T) {
	defer func(d time.Duration) { RestoreWait = d }(RestoreWait)
	RestoreWait = 5 * time.Second
	ctx := context.Background()
	orig := newRollout(t, nil)
	c := rolloutClient(t, orig.DeepCopy())
	wl := WorkloadOf(fake.NewClientset(), c, rolloutApp())
	if got := wl.Pods(); got.String() != "Rollout shop/rweb" {
		t.Errorf("Pods: %s", got)
	}
	view, err := wl.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if view.Name != "rweb" || string(view.UID) != "u-rweb" || *view.Spec.Replicas != 3 || view.Spec.Selector.MatchLabels["app"] != "rweb" ||
		view.Spec.Template.Spec.Containers[0].Image != "rweb:1" {
		t.Fatalf("view: %+v", view)
	}
	if err := wl.Hold(ctx, Record{Run: "run1", Row: "rc-x", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := wl.Hold(ctx, Record{Run: "run2"}); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "Rollout shop/rweb") {
		t.Errorf("a second Hold: %v, want ErrHeld naming the Rollout", err)
	}
	// The variant: a preStop, and 4 replicas.
	spec := *view.Spec.DeepCopy()
	spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	four := int32(4)
	spec.Replicas = &four
	if err := wl.Change(ctx, view, spec); err != nil {
		t.Fatal(err)
	}
	got := getRollout(t, c)
	if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); n != 4 {
		t.Errorf("replicas after the change: %d", n)
	}
	cs, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	if _, ok := cs[0].(map[string]any)["lifecycle"]; !ok {
		t.Errorf("no preStop on the template after the change: %v", cs[0])
	}
	if _, ok, _ := unstructured.NestedMap(got.Object, "spec", "template", "metadata", "creationTimestamp"); ok {
		t.Errorf("the change wrote a creationTimestamp into the template")
	}
	if s, _, _ := unstructured.NestedMap(got.Object, "spec", "strategy"); !equality.Semantic.DeepEqual(s, orig.Object["spec"].(map[string]any)["strategy"]) {
		t.Errorf("the change touched the strategy: %v", s)
	}
	if q, _, _ := unstructured.NestedString(cs[0].(map[string]any), "resources", "requests", "cpu"); q != "20m" && q != "0.02" {
		t.Errorf("cpu request after the change: %q", q)
	}
	// A rollout-restart of the row sets spec.restartAt (Argo's restart).
	if _, err := kube.RestartRollout(ctx, c, "shop", "rweb"); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := unstructured.NestedString(getRollout(t, c).Object, "spec", "restartAt"); at == "" {
		t.Fatal("RestartRollout set no spec.restartAt")
	}
	// Argo's status as the restore's wait sees it: the restart over, Healthy.
	u := getRollout(t, c)
	at, _, _ := unstructured.NestedString(u.Object, "spec", "restartAt")
	_ = unstructured.SetNestedField(u.Object, at, "status", "restartedAt")
	if err := c.Resources("shop").Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	line, err := wl.Restore(ctx, view, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "Rollout shop/rweb restored (spec put back as recorded") {
		t.Errorf("Restore: %q", line)
	}
	after := getRollout(t, c)
	for _, f := range [][]string{{"spec", "template"}, {"spec", "replicas"}, {"spec", "selector"}, {"spec", "strategy"}} {
		a, _, _ := unstructured.NestedFieldNoCopy(after.Object, f...)
		o, _, _ := unstructured.NestedFieldNoCopy(orig.Object, f...)
		ja, _ := json.Marshal(a)
		jo, _ := json.Marshal(o)
		if string(ja) != string(jo) {
			t.Errorf("%s after the restore: %s, want %s", strings.Join(f, "."), ja, jo)
		}
	}
	if _, ok, _ := unstructured.NestedString(after.Object, "spec", "restartAt"); ok {
		t.Errorf("spec.restartAt left after the restore")
	}
	if after.GetAnnotations()[Annotation] != "" || after.GetAnnotations()["team"] != "shop" {
		t.Errorf("annotations after the restore: %v", after.GetAnnotations())
	}
}

// What a Rollout's spec has beyond a Deployment's pod template and replicas is not a variant's to
// change; a Rollout whose template is another workload's is refused when it is read.
func TestRolloutRefusals(t *testing.T) {
	ctx := context.Background()
	c := rolloutClient(t, newRollout(t, nil))
	wl := WorkloadOf(fake.NewClientset(), c, rolloutApp())
	view, err := wl.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := wl.Hold(ctx, Record{Run: "run1", Row: "rc-x", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	spec := *view.Spec.DeepCopy()
	spec.MinReadySeconds = 10
	spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	err = wl.Change(ctx, view, spec)
	if err == nil || !strings.Contains(err.Error(), "spec.minReadySeconds") || !strings.Contains(err.Error(), "spec.strategy") {
		t.Errorf("a change of the strategy: %v, want an error naming spec.minReadySeconds and spec.strategy", err)
	}
	ref := rolloutClient(t, newRollout(t, func(o map[string]any) {
		o["spec"].(map[string]any)["workloadRef"] = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
	}))
	if _, err := WorkloadOf(fake.NewClientset(), ref, rolloutApp()).Read(ctx); err == nil || !strings.Contains(err.Error(), "spec.workloadRef") {
		t.Errorf("a Rollout with a workloadRef: %v", err)
	}
	if _, err := WorkloadOf(fake.NewClientset(), rolloutClient(t), rolloutApp()).Read(ctx); err == nil || !strings.Contains(err.Error(), "Rollout shop/rweb: not found") {
		t.Errorf("no Rollout: %v", err)
	}
}

// A record a killed run left on a Rollout is restored by the next run once that run's Lease is
// gone, and the record Argo copied to the Rollout's ReplicaSets is removed.
func TestRolloutLeftover(t *testing.T) {
	ctx := context.Background()
	c := rolloutClient(t, newRollout(t, nil))
	rs := &appsv1.ReplicaSet{}
	rs.Name, rs.Namespace, rs.Labels = "rweb-7d9f", "shop", map[string]string{"app": "rweb"}
	yes := true
	rs.OwnerReferences = append(rs.OwnerReferences, metaOwner("u-rweb", &yes))
	cs := fake.NewClientset(rs)
	wl := WorkloadOf(cs, c, rolloutApp())
	view, _ := wl.Read(ctx)
	t0 := time.Now().Add(-time.Hour)
	if err := wl.Hold(ctx, Record{Run: "dead", Row: "rc-x", Time: t0}); err != nil {
		t.Fatal(err)
	}
	spec := *view.Spec.DeepCopy()
	spec.Template.Spec.Containers[0].Image = "rweb:2"
	if err := wl.Change(ctx, view, spec); err != nil {
		t.Fatal(err)
	}
	// Argo copied the record to the ReplicaSet.
	rs.Annotations = map[string]string{Annotation: "{}"}
	if _, err := cs.AppsV1().ReplicaSets("shop").Update(ctx, rs, metaUpdate()); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { RestoreWait = d }(RestoreWait)
	RestoreWait = 2 * time.Second
	l, err := HoldLease(ctx, cs, rolloutApp(), "next")
	if err != nil {
		t.Fatal(err)
	}
	if l.Name() != "shop/rollcheck-rollout.rweb" {
		t.Errorf("the Rollout's Lease: %s", l.Name())
	}
	line, rec, err := wl.Leftover(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Run != "dead" || !strings.Contains(line, "Rollout shop/rweb restored: run dead") {
		t.Errorf("Leftover: %q, %+v", line, rec)
	}
	cs0, _, _ := unstructured.NestedSlice(getRollout(t, c).Object, "spec", "template", "spec", "containers")
	if img := cs0[0].(map[string]any)["image"]; img != "rweb:1" {
		t.Errorf("image after the leftover's restore: %v", img)
	}
	got, _ := cs.AppsV1().ReplicaSets("shop").Get(ctx, "rweb-7d9f", metaGet())
	if _, ok := got.Annotations[Annotation]; ok {
		t.Errorf("the record stayed on the ReplicaSet")
	}
}

func metaOwner(uid string, controller *bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "rweb", UID: types.UID(uid), Controller: controller}
}

func metaUpdate() metav1.UpdateOptions { return metav1.UpdateOptions{} }
func metaGet() metav1.GetOptions       { return metav1.GetOptions{} }

// A gate on a revision of a Rollout (its ReplicaSet) holds the Rollout's Lease: while a check in
// place of that Rollout runs (it changes the template, so the revision's pods) the gate is
// refused, one line that names the holder, and so is a second gate of another revision, which
// would take the first one's deletions for its own.
func TestReplicaSetGateHoldsItsRolloutsLease(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	inPlace, err := HoldLease(ctx, cs, rolloutApp(), "check")
	if err != nil {
		t.Fatal(err)
	}
	gate := check.App{Namespace: "shop", Deployment: "rweb-7d9f", ReplicaSetOf: "Rollout/rweb"}
	if _, err := HoldLease(ctx, cs, gate, "gate"); !errors.Is(err, runlease.ErrHeld) || !strings.HasPrefix(err.Error(), "replicaset shop/rweb-7d9f of Rollout/rweb is held by rollcheck run check") ||
		!strings.Contains(err.Error(), "Lease shop/rollcheck-rollout.rweb") {
		t.Fatalf("a gate of the Rollout's revision while a check in place holds it: %v, want refused", err)
	}
	inPlace.Release(ctx)
	l, err := HoldLease(ctx, cs, gate, "gate")
	if err != nil {
		t.Fatalf("the gate once the check released the Rollout: %v", err)
	}
	defer l.Release(ctx)
	if l.Name() != "shop/rollcheck-rollout.rweb" {
		t.Errorf("the gate's Lease: %s, want the Rollout's", l.Name())
	}
	other := check.App{Namespace: "shop", Deployment: "rweb-5c6b", ReplicaSetOf: "Rollout/rweb"}
	if _, err := HoldLease(ctx, cs, other, "gate2"); !errors.Is(err, runlease.ErrHeld) || !strings.HasPrefix(err.Error(), "replicaset shop/rweb-5c6b of Rollout/rweb is held by rollcheck run gate") {
		t.Fatalf("a second gate of the same Rollout: %v, want refused", err)
	}
	if _, err := HoldLease(ctx, cs, rolloutApp(), "check2"); !errors.Is(err, runlease.ErrHeld) {
		t.Fatalf("a check in place of the Rollout while a gate holds it: %v, want refused", err)
	}
}
