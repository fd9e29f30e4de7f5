package check

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// inPlacePlan is webPlan's app checked where it runs, in namespace shop, with load pods; read
// says whether the engine has read the live Deployment into its objects yet.
func inPlacePlan(t *testing.T, read bool) Plan {
	t.Helper()
	p := webPlan(t)
	dep := deploymentOf(t, p.App.Objects, "web").DeepCopy()
	dep.Namespace = "shop"
	p.App = App{Namespace: "shop", Deployment: "web", Port: 8080, Path: "/hello"}
	if read {
		p.App.Objects = []Object{dep}
	}
	p.Load.From = LoadFromCluster
	return p
}

// Before the live Deployment is read, a plan in place validates what it can; once it is read,
// Objects are what a row applies in the app's namespace: the Deployment as the variant changes
// it and the variant's budget.
func TestInPlaceObjects(t *testing.T) {
	p := inPlacePlan(t, false)
	unread, err := p.Resolve()
	if err != nil {
		t.Fatalf("an unread plan in place: %v", err)
	}
	if unread.Deployment() != nil || unread.AppContainer() != "" {
		t.Errorf("an unread plan in place has Deployment %v, app container %q", unread.Deployment(), unread.AppContainer())
	}
	if _, err := unread.Objects("", 0); !errors.Is(err, errNotRead) {
		t.Errorf("Objects of an unread plan: %v, want errNotRead", err)
	}
	p = inPlacePlan(t, true)
	p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second}
	p.Variant.PDB = &PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	objs, err := mustResolve(t, p).Objects("rc-ignored", 30080)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects, want the Deployment and the budget", len(objs))
	}
	d, ok := objs[0].(*appsv1.Deployment)
	if !ok || d.Namespace != "shop" || d.Spec.Template.Spec.Containers[0].Lifecycle.PreStop.Sleep == nil {
		t.Errorf("object 0 %+v, want web in shop with the preStop sleep", objs[0])
	}
	if b, ok := objs[1].(*policyv1.PodDisruptionBudget); !ok || b.Namespace != "shop" || b.Name != PDBName || b.Labels[PartOfLabel] != PartOfValue {
		t.Errorf("object 1 %+v, want rollcheck's budget in shop", objs[1])
	}
	if a := p.Applied(); a.Namespace != "shop" || a.App != "web" || a.PreStop.Sleep != 5*time.Second {
		t.Errorf("applied %+v, want web in shop with its preStop", a)
	}
	// Only the live Deployment may be among its objects.
	p.App.Objects = append(p.App.Objects, decodeAll(t, webYAML)...)
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), "manifests: nothing is applied for an app checked in place (namespace shop)") {
		t.Errorf("manifests in place: %v", err)
	}
}

func TestVariantChanges(t *testing.T) {
	if got := (Variant{Name: "as-is", Expect: Zero()}).Changes(); got != nil {
		t.Errorf("as-is changes %v", got)
	}
	v := Variant{PreStop: &PreStop{None: true}, StopSignal: "SIGQUIT", TerminationGracePeriodSeconds: ptr.To[int64](5), Replicas: ptr.To[int32](2),
		Patch: []byte(`{}`), PDB: &PDB{}, ExternalTrafficPolicy: "Local"}
	want := "preStop stopSignal terminationGracePeriodSeconds replicas patch pdb externalTrafficPolicy"
	if got := strings.Join(v.Changes(), " "); got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
}

// A ReplicaSet checked as it runs (an Argo Rollout's revision) is only for an app in place, names
// its owner as KIND/NAME, and takes the as-is variant and pod deletions only.
func TestReplicaSetOf(t *testing.T) {
	p := inPlacePlan(t, true)
	p.App.ReplicaSetOf = "Rollout/web"
	p.Disruption = Disruption{Kind: DeletePod, Count: 3}
	if _, err := p.Validate(); err != nil {
		t.Fatalf("a Rollout's ReplicaSet under delete-pod: %v", err)
	}
	p.Disruption.Kind = ForceDelete
	if _, err := p.Validate(); err != nil {
		t.Fatalf("under force-delete: %v", err)
	}
	for _, c := range []struct {
		change func(*Plan)
		want   string
	}{
		{func(p *Plan) { p.App.ReplicaSetOf = "web" }, `a ReplicaSet of "web": want its owner as KIND/NAME`},
		{func(p *Plan) { p.App.ReplicaSetOf = "Rollout/Web_1" }, `a ReplicaSet of "Rollout/Web_1"`},
		{func(p *Plan) { p.Disruption.Kind = RolloutRestart }, "disruption rollout-restart: the ReplicaSet web of Rollout/web is disrupted only by pod deletions"},
		{func(p *Plan) { p.Disruption.Kind = ScaleDown }, "disruption scale-down: the ReplicaSet web of Rollout/web is disrupted only by pod deletions"},
		{func(p *Plan) { p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second} }, "would change preStop: the ReplicaSet web of Rollout/web is checked as it runs"},
	} {
		q := p
		q.Variant = p.Variant
		c.change(&q)
		if _, err := q.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	q := webPlan(t)
	q.App.ReplicaSetOf = "Rollout/web"
	if _, err := q.Validate(); err == nil || !strings.Contains(err.Error(), "a ReplicaSet of Rollout/web: only for an app checked in place") {
		t.Errorf("not in place: %v", err)
	}
	// The same rule held for service, whose error was dropped before.
	q = webPlan(t)
	q.App.Service = "web"
	if _, err := q.Validate(); err == nil || !strings.Contains(err.Error(), `service "web": only for an app checked in place`) {
		t.Errorf("service not in place: %v", err)
	}
}
