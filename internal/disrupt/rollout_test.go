package disrupt

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

// A Rollout's rollout-restart is Argo's: spec.restartAt, a second ahead; the disruption settles
// once Argo reports the restart over (status.restartedAt), with no new revision. Its scales
// write spec.replicas.
func TestRolloutRestartOfARollout(t *testing.T) {
	restarted := 0
	// Argo, as the Gets see it: a restart asked for is over at once, generation observed.
	argo := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		at, _, _ := unstructured.NestedString(u.Object, "spec", "restartAt")
		if done, _, _ := unstructured.NestedString(u.Object, "status", "restartedAt"); at != "" && done != at {
			restarted++
			_ = unstructured.SetNestedField(u.Object, at, "status", "restartedAt")
			if err := c.Update(ctx, u); err != nil {
				return err
			}
		}
		_ = unstructured.SetNestedField(u.Object, "1", "status", "observedGeneration")
		u.SetGeneration(1)
		return nil
	}}
	objs := []client.Object{kubefake.Rollout("ns", "web", 1)}
	for _, n := range []string{"web-a", "web-b", "web-c"} {
		objs = append(objs, kubefake.ReadyPod("ns", n, appLabels))
	}
	fc := crfake.NewClientBuilder().WithRESTMapper(kubefake.RolloutMapper()).WithObjects(objs...).Build()
	c := kubefake.Wrap(t, interceptor.NewClient(fc, argo))
	tg := Target{Client: c, Namespace: "ns", Deployment: "web", Kind: kube.KindRollout, Selector: "app=web", Timeout: 5 * time.Second, Logf: t.Logf}
	start := time.Now()
	if _, err := Once(context.Background(), tg, RolloutRestart); err != nil {
		t.Fatal(err)
	}
	u := kube.NewRollout("ns", "web")
	if err := fc.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, u); err != nil {
		t.Fatal(err)
	}
	at, _, _ := unstructured.NestedString(u.Object, "spec", "restartAt")
	when, err := time.Parse(time.RFC3339, at)
	if err != nil || when.Before(start.Truncate(time.Second)) || when.After(start.Add(2*time.Second)) || restarted != 1 {
		t.Errorf("spec.restartAt %q (%v), restarts seen %d: want one restart a second ahead of %s", at, err, restarted, start.Format(time.RFC3339))
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "template"); ok {
		t.Errorf("the restart wrote the pod template (a new revision to Argo): %v", u.Object["spec"])
	}
	if err := scale(context.Background(), tg, 2); err != nil {
		t.Fatal(err)
	}
	if err := fc.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, u); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); n != 2 {
		t.Errorf("spec.replicas after scale 2: %d", n)
	}
}
