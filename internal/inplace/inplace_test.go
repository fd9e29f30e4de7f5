package inplace

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// live is the Deployment as a user applied it, with an annotation of kubectl's and a template
// annotation of its own.
func live() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "shop"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example/web:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}},
			},
		},
	}
}

// changed is what a variant and a rollout restart make of the spec: a preStop, a grace period,
// another replica count and kubectl's restartedAt stamp.
func changed(s appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	s = *s.DeepCopy()
	s.Replicas = ptr.To[int32](2)
	s.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45)
	s.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	s.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "2026-11-27T10:00:00Z"
	return s
}

func get(t *testing.T, cs *fake.Clientset) *appsv1.Deployment {
	t.Helper()
	d, err := cs.AppsV1().Deployments("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// same fails unless d is the original: its spec and its annotations (the record gone).
func same(t *testing.T, d, orig *appsv1.Deployment) {
	t.Helper()
	if !equality.Semantic.DeepEqual(d.Spec, orig.Spec) {
		t.Errorf("spec after restore\n got %+v\nwant %+v", d.Spec, orig.Spec)
	}
	if !equality.Semantic.DeepEqual(d.Annotations, orig.Annotations) {
		t.Errorf("annotations after restore %v, want %v", d.Annotations, orig.Annotations)
	}
}

func TestRecordChangeRestore(t *testing.T) {
	ctx := context.Background()
	orig := live()
	cs := fake.NewClientset(orig.DeepCopy())
	if err := Hold(ctx, cs, "shop", "web", Record{Run: "run1", Row: "rc-v-abc", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	held, err := cs.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if held.Annotations[Annotation] == "" || !equality.Semantic.DeepEqual(held.Spec, orig.Spec) {
		t.Fatalf("Hold changed the spec or wrote no record: %+v", held)
	}
	if err := Hold(ctx, cs, "shop", "web", Record{Run: "run2"}); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "run run1 (row rc-v-abc)") {
		t.Errorf("a second Hold: %v, want ErrHeld naming run1", err)
	}
	if err := Change(ctx, cs, "shop", "web", changed(orig.Spec)); err != nil {
		t.Fatal(err)
	}
	if d := get(t, cs); *d.Spec.Replicas != 2 || d.Annotations[Annotation] == "" {
		t.Fatalf("Change did not change the spec or lost the record: %+v", d)
	}
	if _, err := Restore(ctx, cs, "shop", "web", "run2"); err == nil || !strings.Contains(err.Error(), "not this run's") {
		t.Errorf("restore by another run: %v, want a refusal", err)
	}
	r, err := Restore(ctx, cs, "shop", "web", "run1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Record == nil || !r.Changed {
		t.Errorf("restored %+v, want the record and a changed spec", r)
	}
	same(t, get(t, cs), orig)
	if r, err := Restore(ctx, cs, "shop", "web", "run1"); err != nil || r.Record != nil {
		t.Errorf("a second restore: %+v %v, want nothing to do", r, err)
	}
	if err := Change(ctx, cs, "shop", "web", changed(orig.Spec)); err == nil {
		t.Error("Change without a record: no error, want a refusal")
	}
}

// t0 is when the killed run of the tests recorded the Deployment.
var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// A run killed mid-variant (kill -9) leaves the record, its budget and its Lease: while its Lease
// is live the next run is refused and changes nothing; once it expired, the next run takes the
// Lease over, restores and deletes what the dead run left first, and says so in one line; a
// budget of the user's is left.
func TestLeftoverOfAKilledRun(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(t0)
	orig := live()
	ours := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: check.PDBName, Namespace: "shop", Labels: map[string]string{check.PartOfLabel: check.PartOfValue}},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	// The Lease as the killed run left it, renewed last at t0: written here, not held by a
	// Lease of this process, whose renewal loop would renew it when the fake clock steps (a
	// killed run renews no more).
	killed := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName("web"), Namespace: "shop",
		Labels: map[string]string{check.PartOfLabel: check.PartOfValue}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("dead"), LeaseDurationSeconds: ptr.To(int32(runlease.Duration / time.Second)),
			AcquireTime: &metav1.MicroTime{Time: t0}, RenewTime: &metav1.MicroTime{Time: t0}, LeaseTransitions: ptr.To(int32(0))}}
	cs := fake.NewClientset(orig.DeepCopy(), killed)
	if err := Hold(ctx, cs, "shop", "web", Record{Run: "dead", Row: "rc-v-abc", Time: t0}); err != nil {
		t.Fatal(err)
	}
	if err := Change(ctx, cs, "shop", "web", changed(orig.Spec)); err != nil {
		t.Fatal(err)
	}
	if err := CreateBudget(ctx, cs, ours); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	if _, err := HoldLease(ctx, cs, check.App{Namespace: "shop", Deployment: "web"}, "next", runlease.WithClock(clk)); !errors.Is(err, runlease.ErrHeld) ||
		!strings.HasPrefix(err.Error(), "deployment shop/web is held by rollcheck run dead (renewed 10s ago, lease expires in 5s") {
		t.Fatalf("the next run 10 s after the kill: %v, want refused", err)
	}
	if d := get(t, cs); d.Annotations[Annotation] == "" {
		t.Fatal("the refused run removed the record")
	}
	clk.Step(5 * time.Second)
	l, err := HoldLease(ctx, cs, check.App{Namespace: "shop", Deployment: "web"}, "next", runlease.WithClock(clk))
	if err != nil {
		t.Fatalf("the next run once the Lease expired: %v", err)
	}
	defer l.Release(ctx)
	line, rec, err := Leftover(ctx, cs, "shop", "web", l)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Run != "dead" {
		t.Errorf("record %+v, want the dead run's", rec)
	}
	want := "Deployment shop/web restored: run dead (row rc-v-abc) at 2026-11-27T10:00:00Z left it changed and did not restore it (killed?); its spec put back as recorded; PodDisruptionBudget shop/rollcheck-pdb that an earlier run left deleted"
	if line != want {
		t.Errorf("line\n got %q\nwant %q", line, want)
	}
	same(t, get(t, cs), orig)
	if line, rec, err := Leftover(ctx, cs, "shop", "web", l); line != "" || rec != nil || err != nil {
		t.Errorf("nothing left: %q %v, want no line", line, err)
	}
	// The user's own budget of that name is not rollcheck's to delete.
	theirs := ours.DeepCopy()
	theirs.Labels = nil
	cs = fake.NewClientset(orig.DeepCopy(), theirs)
	if deleted, err := DeleteBudget(ctx, cs, "shop"); deleted || err != nil {
		t.Errorf("the user's budget: deleted %v, %v", deleted, err)
	}
}

// A record of a run that held no Lease of the Deployment (a rollcheck before Leases) is restored
// only once it is older than a Lease's duration: until then it may be a live run's.
func TestLeftoverWithoutALease(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(t0.Add(4 * time.Second))
	orig := live()
	cs := fake.NewClientset(orig.DeepCopy())
	if err := Hold(ctx, cs, "shop", "web", Record{Run: "old", Row: "rc-v-abc", Time: t0}); err != nil {
		t.Fatal(err)
	}
	if err := Change(ctx, cs, "shop", "web", changed(orig.Spec)); err != nil {
		t.Fatal(err)
	}
	l, err := HoldLease(ctx, cs, check.App{Namespace: "shop", Deployment: "web"}, "next", runlease.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	_, _, err = Leftover(ctx, cs, "shop", "web", l)
	if !errors.Is(err, ErrLive) || !strings.Contains(err.Error(), "4s old") || !strings.Contains(err.Error(), "or 11s more") {
		t.Fatalf("a record 4 s old without a Lease: %v, want ErrLive", err)
	}
	if d := get(t, cs); d.Annotations[Annotation] == "" || equality.Semantic.DeepEqual(d.Spec, orig.Spec) {
		t.Fatal("the record of a run that may be live was restored")
	}
	clk.Step(11 * time.Second)
	if line, rec, err := Leftover(ctx, cs, "shop", "web", l); err != nil || rec == nil || rec.Run != "old" || line == "" {
		t.Fatalf("15 s old: %q %+v %v, want it restored", line, rec, err)
	}
	same(t, get(t, cs), orig)
}

func TestLeaseName(t *testing.T) {
	if got := LeaseName("web"); got != "rollcheck-web" {
		t.Errorf("LeaseName(web) = %q", got)
	}
	long := strings.Repeat("a", 253)
	if got := LeaseName(long); len(got) > 253 || got == LeaseName(long[:252]+"b") {
		t.Errorf("LeaseName of a 253-character name: %q (%d)", got, len(got))
	}
}

// failing makes the first n updates of Deployments fail with err.
func failing(cs *fake.Clientset, n int, err error) *int {
	calls := 0
	cs.PrependReactor("update", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= n {
			return true, nil, err
		}
		return false, nil, nil
	})
	return &calls
}

// The restore asks again while the API server answers 503 or drops the connection, and after a
// conflict (someone wrote the Deployment meanwhile); and it runs after Ctrl-C, whose context is
// cancelled.
func TestRestoreRetriesAndOutlivesCtrlC(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for name, e := range map[string]error{
		"503":      apierrors.NewServiceUnavailable("the API server is restarting"),
		"conflict": apierrors.NewConflict(gr, "web", errors.New("the object has been modified")),
	} {
		t.Run(name, func(t *testing.T) {
			orig := live()
			cs := fake.NewClientset(orig.DeepCopy())
			if err := Hold(context.Background(), cs, "shop", "web", Record{Run: "r"}); err != nil {
				t.Fatal(err)
			}
			if err := Change(context.Background(), cs, "shop", "web", changed(orig.Spec)); err != nil {
				t.Fatal(err)
			}
			calls := failing(cs, 2, e)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Ctrl-C
			r, err := Restore(ctx, cs, "shop", "web", "r")
			if err != nil || !r.Changed {
				t.Fatalf("restore after two %s answers: %+v %v", name, r, err)
			}
			if *calls != 3 {
				t.Errorf("%d updates, want 3 (two failed, then the restore)", *calls)
			}
			same(t, get(t, cs), orig)
		})
	}
	// A refusal is not asked again: it is said at once.
	orig := live()
	cs := fake.NewClientset(orig.DeepCopy())
	if err := Hold(context.Background(), cs, "shop", "web", Record{Run: "r"}); err != nil {
		t.Fatal(err)
	}
	failing(cs, 100, apierrors.NewForbidden(gr, "web", errors.New("no")))
	start := time.Now()
	if _, err := Restore(context.Background(), cs, "shop", "web", "r"); err == nil || !apierrors.IsForbidden(err) || time.Since(start) > 5*time.Second {
		t.Errorf("a refused restore: %v after %s, want the refusal at once", err, time.Since(start))
	}
}

// The Deployment controller copies the record onto the ReplicaSet it rolls to and never removes
// it: after the restore, the Deployment's own ReplicaSets lose it; another Deployment's keep theirs.
func TestCleanReplicaSets(t *testing.T) {
	ctx := context.Background()
	d := live()
	d.UID = "dep-uid"
	rs := func(name string, owner metav1.Object, annotated bool) *appsv1.ReplicaSet {
		r := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"}}}
		r.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("Deployment"))}
		if annotated {
			r.Annotations[Annotation] = `{"run":"r"}`
		}
		return r
	}
	other := live()
	other.Name, other.UID = "web-canary", "other-uid"
	cs := fake.NewClientset(d, rs("web-1", d, true), rs("web-2", d, true), rs("web-3", d, false), rs("canary-1", other, true))
	n, err := CleanReplicaSets(ctx, cs, d)
	if err != nil || n != 2 {
		t.Fatalf("cleaned %d, %v; want web-1 and web-2", n, err)
	}
	for name, want := range map[string]bool{"web-1": false, "web-2": false, "web-3": false, "canary-1": true} {
		r, err := cs.AppsV1().ReplicaSets("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, has := r.Annotations[Annotation]; has != want || r.Annotations["deployment.kubernetes.io/revision"] != "2" {
			t.Errorf("%s: annotations %v, want the record %v and the revision kept", name, r.Annotations, want)
		}
	}
}

// lost makes the first n updates of Deployments happen but answer with a dropped connection, as
// an API server that wrote the object and died before it answered.
func lost(cs *fake.Clientset, n int) {
	calls := 0
	cs.PrependReactor("update", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls > n {
			return false, nil, nil
		}
		u := a.(k8stesting.UpdateAction)
		if err := cs.Tracker().Update(u.GetResource(), u.GetObject(), u.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewServiceUnavailable("the answer was lost")
	})
}

// A write whose answer was lost is asked again: the record it wrote is this run's own (no
// ErrHeld), and a restore that already happened still says what it restored.
func TestLostAnswers(t *testing.T) {
	ctx := context.Background()
	orig := live()
	cs := fake.NewClientset(orig.DeepCopy())
	lost(cs, 1)
	rec := Record{Run: "r", Row: "rc-v", Time: time.Now().UTC()}
	if err := Hold(ctx, cs, "shop", "web", rec); err != nil {
		t.Fatalf("Hold after a lost answer: %v", err)
	}
	if err := Change(ctx, cs, "shop", "web", changed(orig.Spec)); err != nil {
		t.Fatal(err)
	}
	lost(cs, 1)
	r, err := Restore(ctx, cs, "shop", "web", "r")
	if err != nil || r.Record == nil || !r.Changed {
		t.Errorf("Restore after a lost answer: %+v %v, want the record and a changed spec", r, err)
	}
	same(t, get(t, cs), orig)
}
