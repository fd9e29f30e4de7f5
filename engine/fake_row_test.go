package engine

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// fakeRow is a fake cluster (a Deployment controller on controller-runtime's fake client,
// watched through client-go's fake clientset on the same store) and an app on an httptest
// server that answers as the Deployment's live pods, in turn, naming each in the pod header.
type fakeRow struct {
	cluster *kubefake.Cluster
	cs      kubernetes.Interface // client-go's fake on the same store
	srv     *httptest.Server
	// failRollout makes the app answer 503 while a rollout is under way (the Deployment's
	// generation not yet observed), as an app that drops requests when its pods are replaced.
	failRollout bool

	// nsLabels is Target.NamespaceLabels for run; created records each namespace's labels as
	// it was created.
	nsLabels map[string]string

	mu             sync.Mutex
	served, failed int
	pods           map[string]bool
	created        []map[string]string
}

func newFakeRow(t *testing.T, failRollout bool) *fakeRow {
	t.Helper()
	cs := k8sfake.NewClientset()
	f := &fakeRow{failRollout: failRollout, pods: map[string]bool{}, cs: cs}
	// The namespace controller: deleting a namespace deletes what is in it (the fake has none).
	cascade := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if ns, ok := obj.(*corev1.Namespace); ok {
			f.mu.Lock()
			f.created = append(f.created, maps.Clone(ns.Labels))
			f.mu.Unlock()
		}
		return c.Create(ctx, obj, opts...)
	}, Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		if ns, ok := obj.(*corev1.Namespace); ok {
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
				if err := c.DeleteAllOf(ctx, o, client.InNamespace(ns.Name)); err != nil {
					return err
				}
			}
		}
		return c.Delete(ctx, obj, opts...)
	}}
	f.cluster = kubefake.NewClusterOn(t, cs.Tracker(), cascade)
	f.cluster.Lag = 4 // a rollout takes a few of the engine's polls: the load runs through it
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)

	saved := connect
	connect = func(*rest.Config) (klient.Client, kubernetes.Interface, error) { return f.cluster.Client, cs, nil }
	t.Cleanup(func() { connect = saved })
	return f
}

func (f *fakeRow) serve(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var pods corev1.PodList
	if err := f.cluster.Fake.List(ctx, &pods, client.MatchingLabels{"app": "web"}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	var deps appsv1.DeploymentList
	if err := f.cluster.Fake.List(ctx, &deps); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rolling := slices.ContainsFunc(deps.Items, func(d appsv1.Deployment) bool { return d.Status.ObservedGeneration < d.Generation })
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(pods.Items) == 0 {
		http.Error(w, "no pod", http.StatusServiceUnavailable)
		return
	}
	pod := pods.Items[f.served%len(pods.Items)].Name
	f.served++
	f.pods[pod] = true
	w.Header().Set(loadgen.DefaultPodHeader, pod)
	if f.failRollout && rolling {
		f.failed++
		http.Error(w, "rolling", http.StatusServiceUnavailable)
	}
}

// run runs checktest's web plan (three replicas) with two rollout restarts on the fake.
func (f *fakeRow) run(t *testing.T, expect check.Outcome) (*check.Row, []Progress) {
	t.Helper()
	p := checktest.WebPlan()
	p.App.Images = nil
	p.Variant.Expect = expect
	p.Load.Rate = 50
	p.Quiet = 500 * time.Millisecond
	p.Disruption.Count = 2
	var mu sync.Mutex
	var steps []Progress
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tgt := Target{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, LoadURL: f.srv.URL, Logf: t.Logf, NamespaceLabels: f.nsLabels}
	row, err := Run(ctx, tgt, checktest.Resolve(t, p)[0], WithArtifacts(t.TempDir()), WithProgress(func(pr Progress) { mu.Lock(); steps = append(steps, pr); mu.Unlock() }))
	if err != nil {
		t.Fatalf("Run: %v (row %+v)", err, row.Verdict)
	}
	mu.Lock()
	defer mu.Unlock()
	return row, slices.Clone(steps)
}

// The whole path of a row (deploy, wait until it serves, load ∥ rollout restart ∥ observe,
// attribute, judge, tear down) on a fake cluster, with an app that never fails.
func TestRunWholeRowPasses(t *testing.T) {
	f := newFakeRow(t, false)
	row, steps := f.run(t, check.Zero())

	if row.Verdict.Status != check.Pass {
		t.Errorf("verdict %+v, want pass", row.Verdict)
	}
	s := row.Summary
	f.mu.Lock()
	served := f.served
	f.mu.Unlock()
	// The serving wait's probes reached the app too: the row counts the load's requests only.
	if s.Failed != 0 || s.OK != s.Requests || s.Requests < 50 || s.Requests >= served || !s.Valid {
		t.Errorf("summary: %d requests, %d ok, %d failed, valid %v (the app served %d): want a valid load with no failure", s.Requests, s.OK, s.Failed, s.Valid, served)
	}
	if len(row.Disruptions) != 2 {
		t.Errorf("%d disruptions, want 2", len(row.Disruptions))
	}
	for _, d := range row.Disruptions {
		if d.Kind != check.RolloutRestart || d.Requests == 0 || d.Failed != 0 || d.Complete.Before(d.Started) {
			t.Errorf("disruption %+v, want a rollout restart with requests and no failure", d)
		}
	}
	if !row.PodIdentity {
		t.Error("PodIdentity false: the app named its pods")
	}
	if row.Explanation == nil || len(row.Explanation.Phases) != 0 {
		t.Errorf("explanation %+v, want one with no failure phase", row.Explanation)
	}
	// The observer saw the three first pods go and three new ones come.
	gone, created := map[string]bool{}, map[string]bool{}
	for _, e := range row.Timeline.Events {
		switch e.Kind {
		case timeline.PodGone:
			gone[e.Pod] = true
		case timeline.PodCreated:
			created[e.Pod] = true
		}
	}
	if len(gone) != 6 || len(created) != 6 {
		t.Errorf("timeline: %d pods gone, %d created; want each rollout's 3 and 3 (events %v)", len(gone), len(created), row.Timeline.Events)
	}
	for _, a := range []string{"vegeta", "ledger", "attribution"} {
		if row.Artifacts[a] == "" {
			t.Errorf("artifacts %v: no %s file", row.Artifacts, a)
		}
	}
	if row.Versions.Rollcheck == "" || row.Versions.Go == "" || row.Versions.Vegeta == "" {
		t.Errorf("versions %+v: rollcheck, Go and vegeta are the engine's to record", row.Versions)
	}
	var order []Step
	for _, p := range steps {
		if p.Step != StepLoadTicker && (len(order) == 0 || order[len(order)-1] != p.Step) {
			order = append(order, p.Step)
		}
	}
	want := []Step{StepDeploy, StepServing, StepLoad, StepDisruption, StepSettled, StepDisruption, StepSettled, StepDone, StepTeardown}
	if !slices.Equal(order, want) {
		t.Errorf("steps %v, want %v", order, want)
	}
	f.torn(t)
}

// The same path with an app that drops requests while its pods are replaced: every failure
// the app sent is counted, in the disruption, with a phase, and the row fails its Outcome.
func TestRunWholeRowFails(t *testing.T) {
	f := newFakeRow(t, true)
	row, _ := f.run(t, check.Zero())

	f.mu.Lock()
	failed := f.failed
	f.mu.Unlock()
	if failed == 0 {
		t.Fatal("the app failed no request during the rollout: the fake's rollout is too quick to test anything")
	}
	if row.Verdict.Status != check.Fail {
		t.Errorf("verdict %+v, want fail", row.Verdict)
	}
	s := row.Summary
	if s.Failed != failed || s.Failures[loadgen.HTTP5xxClass(503)] != failed || s.OK != s.Requests-failed {
		t.Errorf("summary: %d failed (%v) of %d; the app failed %d with 503", s.Failed, s.Failures, s.Requests, failed)
	}
	inDisruptions := 0
	for _, d := range row.Disruptions {
		if d.Failed == 0 {
			t.Errorf("disruption %d has no failure: the app failed requests in each rollout", d.N)
		}
		inDisruptions += d.Failed
	}
	if len(row.Disruptions) != 2 || inDisruptions != failed {
		t.Errorf("%d disruptions hold %d failures, want 2 holding the app's %d", len(row.Disruptions), inDisruptions, failed)
	}
	inPhases := 0
	for _, n := range row.Explanation.Phases {
		inPhases += n
	}
	if inPhases != failed {
		t.Errorf("phases %v hold %d failures, want every one of the %d", row.Explanation.Phases, inPhases, failed)
	}
	f.torn(t)
}

// torn checks that the row left nothing behind: no namespace, no pod, no Service.
func (f *fakeRow) torn(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var nss corev1.NamespaceList
	var pods corev1.PodList
	var svcs corev1.ServiceList
	for _, l := range []client.ObjectList{&nss, &pods, &svcs} {
		if err := f.cluster.Fake.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if len(nss.Items)+len(pods.Items)+len(svcs.Items) != 0 {
		t.Errorf("left behind: %d namespaces, %d pods, %d Services", len(nss.Items), len(pods.Items), len(svcs.Items))
	}
}

// Target.NamespaceLabels go on the row's namespace with rollcheck's own (which they cannot
// replace): ROLLCHECK_POD_SECURITY's enforce label.
func TestRunLabelsTheNamespace(t *testing.T) {
	f := newFakeRow(t, false)
	f.nsLabels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted", check.PartOfLabel: "someone-else"}
	f.run(t, check.Zero())
	f.mu.Lock()
	defer f.mu.Unlock()
	want := map[string]string{"pod-security.kubernetes.io/enforce": "restricted", check.PartOfLabel: check.PartOfValue}
	if len(f.created) != 1 || !maps.Equal(f.created[0], want) {
		t.Errorf("namespaces created with labels %v, want one with %v", f.created, want)
	}
	if f.nsLabels[check.PartOfLabel] != "someone-else" {
		t.Error("Run changed the Target's labels")
	}
}
