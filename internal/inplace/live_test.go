package inplace

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rollcheck/rollcheck/check"
)

// rolloutRS is the ReplicaSet Argo Rollouts makes for Rollout web's revision 5d9f: the Rollout's
// template with the hash label, owned by the Rollout.
func rolloutRS(owner string) *appsv1.ReplicaSet {
	d := live()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d9f", Namespace: "shop", UID: "rs-uid",
			Labels: map[string]string{"app": "web", "rollouts-pod-template-hash": "5d9f"}},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, MinReadySeconds: 2,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "rollouts-pod-template-hash": "5d9f"}},
			Template: *d.Spec.Template.DeepCopy()},
	}
	rs.Spec.Template.Labels["rollouts-pod-template-hash"] = "5d9f"
	if owner != "" {
		kind, name, _ := strings.Cut(owner, "/")
		rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: kind, Name: name, UID: "owner-uid"}}
	}
	return rs
}

// Live reads a Deployment as it is (no status, no managed fields), and a Rollout's ReplicaSet as a
// Deployment of its name, replicas, selector and template; a ReplicaSet another workload owns, or
// none, is an error that names what was looked for.
func TestLive(t *testing.T) {
	ctx := context.Background()
	d := live()
	d.Status.ReadyReplicas = 3
	cs := fake.NewClientset(d, rolloutRS("Rollout/web"), func() *appsv1.ReplicaSet {
		rs := rolloutRS("Rollout/api")
		rs.Name = "web-0ther"
		return rs
	}())
	got, err := Live(ctx, cs, check.App{Namespace: "shop", Deployment: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Deployment" || got.Status.ReadyReplicas != 0 || *got.Spec.Replicas != 3 {
		t.Errorf("the Deployment read: %+v", got)
	}
	got, err = Live(ctx, cs, check.App{Namespace: "shop", Deployment: "web-5d9f", ReplicaSetOf: "Rollout/web"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Deployment" || got.Name != "web-5d9f" || got.Namespace != "shop" || *got.Spec.Replicas != 3 || got.Spec.MinReadySeconds != 2 ||
		got.Spec.Selector.MatchLabels["rollouts-pod-template-hash"] != "5d9f" || got.Spec.Template.Labels["rollouts-pod-template-hash"] != "5d9f" ||
		got.Spec.Template.Spec.Containers[0].Name != "web" {
		t.Errorf("the ReplicaSet's view: %+v", got)
	}
	for _, c := range []struct {
		app  check.App
		want string
	}{
		{check.App{Namespace: "shop", Deployment: "api"}, "Deployment shop/api: not found"},
		{check.App{Namespace: "shop", Deployment: "web-77c4", ReplicaSetOf: "Rollout/web"}, "ReplicaSet shop/web-77c4 of Rollout/web: not found"},
		{check.App{Namespace: "shop", Deployment: "web-0ther", ReplicaSetOf: "Rollout/web"}, "ReplicaSet shop/web-0ther: owned by Rollout/api, not Rollout/web"},
	} {
		if _, err := Live(ctx, cs, c.app); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Live(%+v): %v, want %q", c.app, err, c.want)
		}
	}
	orphan := rolloutRS("")
	orphan.Name = "web-1"
	cs = fake.NewClientset(orphan)
	if _, err := Live(ctx, cs, check.App{Namespace: "shop", Deployment: "web-1", ReplicaSetOf: "Rollout/web"}); err == nil || !strings.Contains(err.Error(), "owned by nothing, not Rollout/web") {
		t.Errorf("an orphan ReplicaSet: %v", err)
	}
}
