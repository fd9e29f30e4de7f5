package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/inplace"
)

// inPlaceRow puts checktest's web app in namespace shop of the fake, with a Service of the
// user's, as kubectl apply would, and returns the Deployment as applied and the in-place plan of
// it (load to the fake's app server, as to an ingress).
func inPlaceRow(t *testing.T, f *fakeRow) (*appsv1.Deployment, check.Plan) {
	t.Helper()
	ctx := context.Background()
	p := checktest.WebPlan()
	dep := p.App.Objects[0].(*appsv1.Deployment).DeepCopy()
	dep.Namespace = "shop"
	dep.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.ServiceSpec{
		ClusterIP: "10.96.0.10", Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, dep, svc} {
		if err := f.cluster.Fake.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.cluster.Reconcile(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if err := f.cluster.Fake.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	p.App = check.App{Namespace: "shop", Deployment: "web", Port: 8080, Path: "/hello"}
	p.Load = check.Load{Rate: 50, From: check.LoadFromHost, URL: f.srv.URL + "/hello"}
	p.Quiet = 500 * time.Millisecond
	p.Disruption.Count = 1
	p.Variant = check.Variant{Name: "as-is", Expect: check.Zero()}
	return dep, p
}

// runInPlace runs p on the fake until it ends or cancel says so (given the progress so far).
func runInPlace(t *testing.T, p check.Plan, cancelAt func(Progress) bool) (*check.Row, []Progress, error) {
	return runInPlaceOn(t, Target{}, p, cancelAt)
}

// runInPlaceOn is runInPlace on tgt's LoadNamespace.
func runInPlaceOn(t *testing.T, tgt Target, p check.Plan, cancelAt func(Progress) bool) (*check.Row, []Progress, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var steps []Progress
	tgt.RESTConfig, tgt.RunID, tgt.Logf = &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, "run1", t.Logf
	row, err := Run(ctx, tgt, checktest.Resolve(t, p)[0], WithProgress(func(pr Progress) {
		mu.Lock()
		steps = append(steps, pr)
		mu.Unlock()
		if cancelAt != nil && cancelAt(pr) {
			cancel()
		}
	}))
	mu.Lock()
	defer mu.Unlock()
	return row, steps, err
}

// unchanged fails unless the Deployment in shop is as the user applied it: its spec (no preStop
// of the variant, no restartedAt of the rollout restart) and its annotations (no record), and
// unless no budget of rollcheck's is left there.
func unchanged(t *testing.T, f *fakeRow, orig *appsv1.Deployment) {
	t.Helper()
	ctx := context.Background()
	var got appsv1.Deployment
	if err := f.cluster.Fake.Get(ctx, client.ObjectKeyFromObject(orig), &got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Spec, orig.Spec) {
		t.Errorf("the Deployment's spec after the row\n got %+v\nwant %+v", got.Spec, orig.Spec)
	}
	if !equality.Semantic.DeepEqual(got.Annotations, orig.Annotations) {
		t.Errorf("the Deployment's annotations after the row %v, want %v", got.Annotations, orig.Annotations)
	}
	var pdb policyv1.PodDisruptionBudget
	if err := f.cluster.Fake.Get(ctx, client.ObjectKey{Namespace: "shop", Name: check.PDBName}, &pdb); !apierrors.IsNotFound(err) {
		t.Errorf("rollcheck's budget is left in shop (%v)", err)
	}
}

// An as-is row in place: nothing applied into the app's namespace, the load to the address in
// front, the app's own Service observed, and after the rollout restart the Deployment as it was.
func TestRunInPlaceAsIs(t *testing.T) {
	f := newFakeRow(t, false)
	orig, p := inPlaceRow(t, f)
	row, steps, err := runInPlace(t, p, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if row.Verdict.Status != check.Pass || row.Config.App != "web" || row.Config.Namespace != "shop" || row.Config.Replicas != 3 {
		t.Errorf("row %+v %+v, want a pass of web's 3 replicas", row.Verdict, row.Config)
	}
	if n := len(f.cluster.Patches()); n != 1 {
		t.Errorf("%d patches, want the rollout restart's", n)
	}
	unchanged(t, f, orig)
	// The restore comes before the teardown of the row's own namespace.
	if n := len(steps); n < 2 || steps[n-2].Step != StepRestore || !strings.Contains(steps[n-2].Detail, "Deployment shop/web restored (spec put back as recorded, rolled out)") || steps[n-1].Step != StepTeardown {
		t.Errorf("steps %+v, want the restore, then the teardown", steps)
	}
}

// A variant that changes the Deployment (a preStop, a budget) is applied in place and undone on
// Ctrl-C mid-variant; a run killed before its restore leaves the record, which the next row puts
// back first, saying so.
func TestRunInPlaceRestoresOnCtrlCAndAfterAKill(t *testing.T) {
	f := newFakeRow(t, false)
	orig, p := inPlaceRow(t, f)
	p.Variant = check.Variant{Name: "prestop-5s", PreStop: &check.PreStop{Sleep: 5 * time.Second},
		PDB: &check.PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}, Expect: check.Zero()}
	var during appsv1.Deployment
	row, _, err := runInPlace(t, p, func(pr Progress) bool {
		if pr.Step != StepLoad {
			return false
		}
		if err := f.cluster.Fake.Get(context.Background(), client.ObjectKeyFromObject(orig), &during); err != nil {
			t.Error(err)
		}
		return true
	})
	if err == nil || row.Verdict.Status != check.Error {
		t.Errorf("a cancelled row: %v %+v, want an error row", err, row.Verdict)
	}
	if c := during.Spec.Template.Spec.Containers[0]; c.Lifecycle == nil || c.Lifecycle.PreStop.Sleep == nil || during.Annotations[inplace.Annotation] == "" {
		t.Errorf("during the row the Deployment had no preStop sleep or no record: %+v", during)
	}
	unchanged(t, f, orig)

	// kill -9 after the change: the record, the budget and the row's namespace stay; the next row
	// restores and deletes them first.
	ctx := context.Background()
	deadNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rc-x", Labels: map[string]string{check.PartOfLabel: check.PartOfValue, RunLabel: "dead"}}}
	if err := f.cluster.Fake.Create(ctx, deadNS); err != nil {
		t.Fatal(err)
	}
	if err := inplace.Hold(ctx, f.cs, "shop", "web", inplace.Record{Run: "dead", Row: "rc-x", Time: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if err := inplace.Change(ctx, f.cs, "shop", "web", during.Spec); err != nil {
		t.Fatal(err)
	}
	read := p // the plan as the engine reads it: the live Deployment in its objects
	read.App.Objects = []check.Object{orig}
	objs, err := checktest.Resolve(t, read)[0].Objects("", 0)
	if err == nil {
		err = inplace.CreateBudget(ctx, f.cs, objs[1].(*policyv1.PodDisruptionBudget))
	}
	if err != nil {
		t.Fatal(err)
	}
	p.Variant = check.Variant{Name: "as-is", Expect: check.Zero()}
	row, steps, err := runInPlace(t, p, nil)
	if err != nil || row.Verdict.Status != check.Pass {
		t.Fatalf("the next run: %v %+v", err, row.Verdict)
	}
	if first := steps[0]; first.Step != StepRestore || !strings.Contains(first.Detail, "Deployment shop/web restored: run dead (row rc-x) at 2026-11-27T10:00:00Z left it changed") ||
		!strings.Contains(first.Detail, "PodDisruptionBudget shop/rollcheck-pdb that an earlier run left deleted") {
		t.Errorf("first step %+v, want the leftover's restore in one line", first)
	}
	if second := steps[1]; second.Step != StepRestore || second.Detail != "1 namespace(s) of run dead deleted" {
		t.Errorf("second step %+v, want the dead run's namespace deleted", second)
	}
	if err := f.cluster.Fake.Get(ctx, client.ObjectKeyFromObject(deadNS), deadNS); !apierrors.IsNotFound(err) {
		t.Errorf("the dead run's namespace: %v, want it gone", err)
	}
	unchanged(t, f, orig)
}

// With a load namespace of the user's, a row creates no namespace and keeps that one; a plan
// that applies its app may not use one.
func TestRunInPlaceKeepsTheLoadNamespace(t *testing.T) {
	f := newFakeRow(t, false)
	orig, p := inPlaceRow(t, f)
	ctx := context.Background()
	if err := f.cluster.Fake.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rc-load"}}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.created = nil
	f.mu.Unlock()
	if _, _, err := runInPlaceOn(t, Target{LoadNamespace: "rc-load"}, p, nil); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	created := len(f.created)
	f.mu.Unlock()
	var ns corev1.Namespace
	if err := f.cluster.Fake.Get(ctx, client.ObjectKey{Name: "rc-load"}, &ns); err != nil || created != 0 {
		t.Errorf("the load namespace: %v; %d namespaces created, want none", err, created)
	}
	unchanged(t, f, orig)
	applied := checktest.WebPlan()
	applied.Load.From = check.LoadFromCluster
	if _, _, err := runInPlaceOn(t, Target{LoadNamespace: "rc-load", LoadImage: "rollcheck-load:1"}, applied, nil); err == nil || !strings.Contains(err.Error(), "LoadNamespace is only for an app checked in place") {
		t.Errorf("a plan that applies its app with a load namespace: %v, want a refusal", err)
	}
}

// Load pods send to the app's Service at its cluster address (no DNS), which the lines name by
// its DNS name.
func TestReadAppFindsTheServiceAddress(t *testing.T) {
	f := newFakeRow(t, false)
	_, p := inPlaceRow(t, f)
	res := checktest.Resolve(t, p)[0]
	r := &runner{res: res, p: res.Plan(), row: &check.Row{}, client: f.cluster.Client, cs: f.cs, logf: t.Logf}
	l := &live{r: r, wl: inplace.WorkloadOf(f.cs, f.cluster.Client, p.App)}
	if err := l.readApp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if addr, err := r.serviceAddress(context.Background(), f.cs); err != nil || addr != "10.96.0.10:80" || r.svc != "web" {
		t.Errorf("address %q (%v), Service %q; want 10.96.0.10:80 of web", addr, err, r.svc)
	}
	if got, want := r.loadTo(), "the app's Service web.shop.svc:80 at its cluster address 10.96.0.10:80"; got != want {
		t.Errorf("loadTo %q, want %q", got, want)
	}
}

// A second run started while another holds the Deployment (its Lease live, its variant's change
// and record on the Deployment) is refused before it changes anything; once that run's Lease
// expired (kill -9: renewed no more), the next row restores what it left. A row's Lease is
// released after the row, an error's too.
func TestRunInPlaceOneRunPerDeployment(t *testing.T) {
	f := newFakeRow(t, false)
	orig, p := inPlaceRow(t, f)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0.Add(5 * time.Second))
	saved := leaseClock
	leaseClock = clk
	t.Cleanup(func() { leaseClock = saved })
	// The other run, as its process left it: its Lease renewed at t0, its record and its change.
	if _, err := f.cs.CoordinationV1().Leases("shop").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "rollcheck-web", Namespace: "shop"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &metav1.MicroTime{Time: t0}, RenewTime: &metav1.MicroTime{Time: t0}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := inplace.Hold(ctx, f.cs, "shop", "web", inplace.Record{Run: "other", Row: "rc-x", Time: t0}); err != nil {
		t.Fatal(err)
	}
	theirs := orig.Spec.DeepCopy()
	theirs.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45)
	if err := inplace.Change(ctx, f.cs, "shop", "web", *theirs); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.created = nil
	f.mu.Unlock()

	_, _, err := runInPlace(t, p, nil)
	want := "deployment shop/web is held by rollcheck run other (renewed 5s ago, lease expires in 10s; Lease shop/rollcheck-web): wait for it or let its lease expire"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a row while another run holds the Deployment: %v, want %q", err, want)
	}
	var during appsv1.Deployment
	if err := f.cluster.Fake.Get(ctx, client.ObjectKeyFromObject(orig), &during); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(during.Spec, *theirs) || !strings.Contains(during.Annotations[inplace.Annotation], `"run":"other"`) {
		t.Errorf("the refused row changed the other run's Deployment: %+v", during)
	}
	f.mu.Lock()
	created := len(f.created)
	f.mu.Unlock()
	if created != 0 {
		t.Errorf("the refused row created %d namespace(s)", created)
	}

	clk.Step(10 * time.Second) // the other run's Lease expires
	row, steps, err := runInPlace(t, p, nil)
	if err != nil || row.Verdict.Status != check.Pass {
		t.Fatalf("the row once the Lease expired: %v %+v", err, row.Verdict)
	}
	if first := steps[0]; first.Step != StepRestore || !strings.Contains(first.Detail, "restored: run other (row rc-x)") {
		t.Errorf("first step %+v, want the other run's leftover restored", first)
	}
	unchanged(t, f, orig)
	leaseGone := func(when string) {
		t.Helper()
		if l, err := f.cs.CoordinationV1().Leases("shop").Get(ctx, "rollcheck-web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the Deployment's Lease is left (%v, %v)", when, l, err)
		}
	}
	leaseGone("after the row")

	// An error after the Lease was taken (no Service for the load) releases it too.
	if err := f.cluster.Fake.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runInPlace(t, p, nil); err == nil {
		t.Fatal("a row without the app's Service: no error")
	}
	leaseGone("after a row's error")
}
