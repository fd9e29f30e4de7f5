package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
)

// shortPlan is checktest's web plan, short: one rollout restart at 50 req/s, no failure expected.
func shortPlan() check.Plan {
	p := checktest.WebPlan()
	p.App.Images = nil
	p.Variant.Expect = check.Zero()
	p.Load.Rate = 50
	p.Quiet = 500 * time.Millisecond
	p.Disruption.Count = 1
	return p
}

// runIn runs shortPlan, as run does, with its rows in the user's namespace ns.
func (f *fakeRow) runIn(t *testing.T, ns string) (*check.Row, error) {
	t.Helper()
	p := shortPlan()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tgt := Target{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, LoadURL: f.srv.URL, Logf: t.Logf,
		RowNamespace: ns, RunID: "0123456789ab"}
	return Run(ctx, tgt, checktest.Resolve(t, p)[0], WithArtifacts(t.TempDir()))
}

func (f *fakeRow) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := f.cluster.Fake.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// A row in a namespace of the user's (Target.RowNamespace) creates no namespace, deletes first
// what a killed run of rollcheck left there (labelled), leaves the user's own objects, and at
// its end deletes what it applied and started, and its Lease.
func TestRunInRowNamespace(t *testing.T) {
	f := newFakeRow(t, false)
	const ns = "team-a"
	leftover := checktest.Resolve(t, checktest.WebPlan())[0].Deployment()
	leftover.Namespace, leftover.ResourceVersion = ns, ""
	leftover.Labels = map[string]string{RunLabel: "deadbeef0000"}
	leftover.Spec.Template.Labels[RunLabel] = "deadbeef0000"
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}
	// What a killed run of another app left, under names this row does not apply.
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns, Labels: map[string]string{RunLabel: "deadbeef0000"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	otherCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config", Namespace: ns, Labels: map[string]string{RunLabel: "deadbeef0000"}}}
	f.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, mine, leftover, other, otherCM)

	row, err := f.runIn(t, ns)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if row.Verdict.Status != check.Pass {
		t.Errorf("verdict %+v, want pass", row.Verdict)
	}
	f.mu.Lock()
	created := len(f.created)
	f.mu.Unlock()
	if created != 0 {
		t.Errorf("%d namespaces created, want none", created)
	}
	ctx := context.Background()
	var deps appsv1.DeploymentList
	var pods corev1.PodList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	for _, l := range []client.ObjectList{&deps, &pods, &svcs, &cms} {
		if err := f.cluster.Fake.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(deps.Items)+len(pods.Items)+len(svcs.Items) != 0 {
		t.Errorf("left in %s: %d Deployments, %d pods, %d Services; want none", ns, len(deps.Items), len(pods.Items), len(svcs.Items))
	}
	if len(cms.Items) != 1 || cms.Items[0].Name != "settings" {
		t.Errorf("ConfigMaps in %s: %v, want the user's settings, untouched", ns, cms.Items)
	}
	if l, err := f.cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("Leases in %s: %v (%v), want the row's released", ns, l, err)
	}
}

// An object of the row's names that rollcheck did not apply is the user's: the row refuses it and
// changes nothing; so does a pod of the user's that the app's selector matches.
func TestRunInRowNamespaceRefusesTheUsers(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  func(*appsv1.Deployment) client.Object
		want string
	}{
		{"deployment", func(d *appsv1.Deployment) client.Object { return d }, "holds Deployment web, which rollcheck did not apply"},
		{"pod", func(d *appsv1.Deployment) client.Object {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-by-hand", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "x"}}}}
		}, "runs pod web-by-hand, which the app's selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRow(t, false)
			const ns = "team-b"
			users := checktest.Resolve(t, checktest.WebPlan())[0].Deployment()
			users.Namespace, users.ResourceVersion = ns, ""
			f.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, tc.obj(users))
			row, err := f.runIn(t, ns)
			if err == nil || !strings.Contains(err.Error(), tc.want) || row.Verdict.Status != check.Error {
				t.Fatalf("Run: %v (verdict %+v), want an error row: %q", err, row.Verdict, tc.want)
			}
			kept := tc.obj(users.DeepCopy())
			if err := f.cluster.Fake.Get(context.Background(), client.ObjectKeyFromObject(kept), kept); err != nil {
				t.Errorf("the user's %s %s: %v, want it kept", tc.name, kept.GetName(), err)
			}
			if l, err := f.cs.CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
				t.Errorf("Leases in %s: %d (%v), want the row's released", ns, len(l.Items), err)
			}
		})
	}
}

// A rows namespace another live run holds is refused in one line that names that run.
func TestRunInRowNamespaceHeld(t *testing.T) {
	f := newFakeRow(t, false)
	const ns = "team-c"
	f.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	other, err := HoldRowNamespace(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, ns, "feedfacecafe")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Release(context.Background()) }()
	_, err = f.runIn(t, ns)
	if err == nil || !strings.Contains(err.Error(), "feedfacecafe") {
		t.Fatalf("Run: %v, want a refusal naming run feedfacecafe", err)
	}
}

// A row in a namespace of the user's stops, with an error that names the other run, once another
// run took the namespace's Lease over (this one renewed it no more in time), as a row in place
// does; what it applied is still deleted.
func TestRunInRowNamespaceStopsWhenItsLeaseIsLost(t *testing.T) {
	f := newFakeRow(t, false)
	const ns = "team-d"
	f.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	clk := clocktesting.NewFakeClock(time.Now())
	saved := leaseClock
	leaseClock = clk
	t.Cleanup(func() { leaseClock = saved })
	done := make(chan error, 1)
	go func() { _, err := f.runIn(t, ns); done <- err }()
	ctx := context.Background()
	leases := f.cs.CoordinationV1().Leases(ns)
	// Once the row holds the Lease and its renewal waits on the clock, another run takes it over.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the row took no Lease in a minute")
		}
		l, err := leases.Get(ctx, RowsLease, metav1.GetOptions{})
		if err != nil || !clk.HasWaiters() {
			continue
		}
		l.Spec.HolderIdentity = ptr.To("feedfacecafe")
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		break
	}
	clk.Step(time.Minute)
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the row went on after its Lease was lost")
	}
	if want := "rollcheck run feedfacecafe took Lease team-d/rollcheck-rows over"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v, want an error with %q", err, want)
	}
	var deps appsv1.DeploymentList
	if err := f.cluster.Fake.List(ctx, &deps, client.InNamespace(ns)); err != nil || len(deps.Items) != 0 {
		t.Errorf("left in %s: %d Deployments (%v), want none", ns, len(deps.Items), err)
	}
}

// hooks is a Target.Cluster with kind's optional interfaces, counting the engine's calls.
type hooks struct {
	mu     sync.Mutex
	resets int
	loaded []string
}

func (h *hooks) Reset(context.Context) error { h.mu.Lock(); h.resets++; h.mu.Unlock(); return nil }
func (h *hooks) LoadImages(_ context.Context, refs []string) error {
	h.mu.Lock()
	h.loaded = append(h.loaded, refs...)
	h.mu.Unlock()
	return nil
}

// The engine uses what Target.Cluster implements: images loaded before the row, a reset before it
// deploys and after its teardown; without a KubeletRestarter a kubelet-restart row is refused
// before it deploys.
func TestRunUsesTheClustersInterfaces(t *testing.T) {
	f := newFakeRow(t, false)
	h := &hooks{}
	p := shortPlan()
	p.App.Images = []string{checktest.Image}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tgt := Target{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, LoadURL: f.srv.URL, Logf: t.Logf, Cluster: h}
	if _, err := Run(ctx, tgt, checktest.Resolve(t, p)[0], WithArtifacts(t.TempDir())); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.mu.Lock()
	if h.resets != 2 || !slices.Equal(h.loaded, []string{checktest.Image}) {
		t.Errorf("resets %d, images loaded %q; want 2 (before and after the row) and the plan's image", h.resets, h.loaded)
	}
	h.mu.Unlock()
	kr := checktest.WebPlan()
	kr.Disruption.Kind = check.KubeletRestart
	row, err := Run(ctx, tgt, checktest.Resolve(t, kr)[0], WithArtifacts(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "cannot restart a kubelet") || row.Verdict.Status != check.Error {
		t.Errorf("a kubelet restart without a KubeletRestarter: %v, want an error row", err)
	}
}
