package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

func TestMain(m *testing.M) {
	PollInterval, sweepInterval = time.Millisecond, time.Millisecond
	os.Exit(m.Run())
}

var appLabels = map[string]string{"app": "web"}

func cm(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": value}}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestApplyCreatesThenUpdates(t *testing.T) {
	ctx := context.Background()
	c := kubefake.NewCluster(t, interceptor.Funcs{}, cm("ns", "exists", "old"))
	if err := Apply(ctx, c.Client, cm("ns", "exists", "new"), cm("ns", "fresh", "v")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"exists": "new", "fresh": "v"} {
		var got corev1.ConfigMap
		if err := c.Fake.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Data["k"] != want {
			t.Errorf("%s: data %q, want %q", name, got.Data["k"], want)
		}
	}
}

func TestApplyWrapsTheError(t *testing.T) {
	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
	c := kubefake.NewCluster(t, interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return denied
	}})
	err := Apply(context.Background(), c.Client, cm("ns", "x", "v"))
	wantErr(t, err, "apply *v1.ConfigMap ns/x")
	if !apierrors.IsForbidden(err) {
		t.Errorf("error %v does not wrap the API error", err)
	}
}

func TestRestartDeploymentStampsTheTemplate(t *testing.T) {
	ctx := context.Background()
	d := kubefake.Deployment("ns", "web", 2, appLabels)
	d.Spec.Template.Annotations = map[string]string{"keep": "me"}
	c := kubefake.NewCluster(t, interceptor.Funcs{}, d)
	before := time.Now().UTC()
	if err := RestartDeployment(ctx, c.Client, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	var got appsv1.Deployment
	if err := c.Fake.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
		t.Fatal(err)
	}
	a := got.Spec.Template.Annotations
	at, err := time.Parse(time.RFC3339Nano, a["kubectl.kubernetes.io/restartedAt"])
	if err != nil || at.Before(before) || at.After(time.Now()) || a["keep"] != "me" {
		t.Errorf("template annotations %v (parse: %v), want restartedAt after %s and keep=me", a, err, before)
	}
	if p := c.Patches(); len(p) != 1 || p[0].Type != "application/strategic-merge-patch+json" {
		t.Errorf("patches %+v, want one strategic merge patch", p)
	}
	err = RestartDeployment(ctx, c.Client, "ns", "missing")
	wantErr(t, err, "rollout restart ns/missing")
	if !apierrors.IsNotFound(err) {
		t.Errorf("error %v does not wrap NotFound", err)
	}
}

func TestRolloutComplete(t *testing.T) {
	two := int32(2)
	done := appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	for _, tc := range []struct {
		name   string
		change func(*appsv1.Deployment)
		want   bool
	}{
		{"complete", func(*appsv1.Deployment) {}, true},
		{"spec not observed", func(d *appsv1.Deployment) { d.Generation = 4 }, false},
		{"old replica left", func(d *appsv1.Deployment) { d.Status.Replicas = 3 }, false},
		{"not updated", func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }, false},
		{"not ready", func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, false},
		{"not available", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }, false},
		{"replicas unset means 1", func(d *appsv1.Deployment) { d.Spec.Replicas = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: &two}, Status: done}
			tc.change(d)
			if got := RolloutComplete(d); got != tc.want {
				t.Errorf("RolloutComplete = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReplicaSetComplete(t *testing.T) {
	two := int32(2)
	done := appsv1.ReplicaSetStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	for _, tc := range []struct {
		name   string
		change func(*appsv1.ReplicaSet)
		want   bool
	}{
		{"complete", func(*appsv1.ReplicaSet) {}, true},
		{"spec not observed", func(rs *appsv1.ReplicaSet) { rs.Generation = 4 }, false},
		{"a pod too many", func(rs *appsv1.ReplicaSet) { rs.Status.Replicas = 3 }, false},
		{"not ready", func(rs *appsv1.ReplicaSet) { rs.Status.ReadyReplicas = 1 }, false},
		{"not available", func(rs *appsv1.ReplicaSet) { rs.Status.AvailableReplicas = 1 }, false},
		{"replicas unset means 1", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.ReplicaSetSpec{Replicas: &two}, Status: done}
			tc.change(rs)
			if got := ReplicaSetComplete(rs); got != tc.want {
				t.Errorf("ReplicaSetComplete = %v, want %v", got, tc.want)
			}
		})
	}
}

// WaitWorkload on a ReplicaSet waits for its replicas to be ready, and says how far it got.
func TestWaitWorkloadReplicaSet(t *testing.T) {
	two := int32(2)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d9f", Namespace: "ns", Generation: 1}, Spec: appsv1.ReplicaSetSpec{Replicas: &two},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}}
	c := kubefake.NewCluster(t, interceptor.Funcs{}, rs)
	w := Workload{Namespace: "ns", Name: "web-5d9f", Kind: KindReplicaSet}
	err := WaitWorkload(context.Background(), c.Client, w, 20*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "wait 20ms for ReplicaSet ns/web-5d9f (generation 1 observed 1, replicas 2 ready 1 available 1)") {
		t.Errorf("WaitWorkload on a ReplicaSet with a pod not ready: %v", err)
	}
	if want, complete, err := ReadWorkload(context.Background(), c.Client, w); err != nil || want != 2 || complete {
		t.Errorf("ReadWorkload = %d, %v, %v", want, complete, err)
	}
	rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = 2, 2
	if err := c.Fake.Status().Update(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if err := WaitWorkload(context.Background(), c.Client, w, time.Second); err != nil {
		t.Errorf("WaitWorkload on a ready ReplicaSet: %v", err)
	}
}

func TestWaitRolloutWaitsForTheController(t *testing.T) {
	c := kubefake.NewCluster(t, interceptor.Funcs{}, kubefake.Deployment("ns", "web", 3, appLabels))
	c.Lag = 5 // the first four Gets see generation 1 unobserved
	if err := WaitRollout(context.Background(), c.Client, "ns", "web", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.Fake.List(context.Background(), &pods); err != nil || len(pods.Items) != 3 {
		t.Errorf("%d pods (%v), want the 3 the controller made before the rollout completed", len(pods.Items), err)
	}
}

func TestWaitRolloutTimesOutSayingHowFarItGot(t *testing.T) {
	c := kubefake.NewCluster(t, interceptor.Funcs{}, kubefake.Deployment("ns", "web", 3, appLabels))
	c.Lag = 1 << 30 // the controller never acts
	start := time.Now()
	err := WaitRollout(context.Background(), c.Client, "ns", "web", 30*time.Millisecond)
	wantErr(t, err, "wait 30ms for rollout of ns/web (generation 1 observed 0, replicas 0 updated 0 ready 0 available 0)")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %s for a 30ms timeout", took)
	}
	err = WaitRollout(context.Background(), c.Client, "ns", "missing", time.Second)
	if !apierrors.IsNotFound(err) {
		t.Errorf("missing Deployment: %v, want NotFound at once", err)
	}
}

func TestCreateNamespace(t *testing.T) {
	ctx := context.Background()
	c := kubefake.NewCluster(t, interceptor.Funcs{})
	name, err := CreateNamespace(ctx, c.Client, "rc", map[string]string{"rollcheck": "true"})
	if err != nil {
		t.Fatal(err)
	}
	var ns corev1.Namespace
	if err := c.Fake.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "rc-") || len(name) <= len("rc-") || ns.Labels["rollcheck"] != "true" {
		t.Errorf("namespace %q labels %v, want rc-<random> labelled rollcheck=true", name, ns.Labels)
	}
	c = kubefake.NewCluster(t, interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return errors.New("quota")
	}})
	_, err = CreateNamespace(ctx, c.Client, "rc", nil)
	wantErr(t, err, "create namespace rc-*: quota")
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func service(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// finalized is a Service that a finalizer keeps after its deletion, until it is removed.
func finalized(ns, name string) *corev1.Service {
	s := service(ns, name)
	s.Finalizers = []string{"test/keep"}
	return s
}

// TestTeardownNamespace: the namespace goes first, then its pods with grace 0 and its Services,
// once each (the fake has no namespace controller); it waits for a Service that a finalizer
// keeps until the test's List hook removes it, after a few polls; pods of other namespaces are
// left alone.
func TestTeardownNamespace(t *testing.T) {
	ctx := context.Background()
	lists := 0
	var c *kubefake.Cluster
	c = kubefake.NewCluster(t, interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if _, ok := l.(*corev1.ServiceList); ok {
			if lists++; lists == 3 {
				var s corev1.Service
				if err := c.Fake.Get(ctx, client.ObjectKey{Namespace: "run", Name: "kept"}, &s); err != nil {
					return err
				}
				if s.DeletionTimestamp == nil {
					return fmt.Errorf("the Service kept by its finalizer was not deleted before the third list")
				}
				s.Finalizers = nil
				if err := c.Fake.Update(ctx, &s); err != nil {
					return err
				}
			}
		}
		return cl.List(ctx, l, opts...)
	}}, namespace("run", nil), kubefake.ReadyPod("run", "web-1", appLabels), kubefake.ReadyPod("run", "web-2", appLabels),
		kubefake.ReadyPod("other", "web-1", appLabels), service("run", "web"), finalized("run", "kept"), service("other", "web"))
	if err := TeardownNamespace(ctx, c.Client, "run"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range c.Deletions() {
		grace := "unset"
		if d.GracePeriod != nil {
			grace = time.Duration(*d.GracePeriod * int64(time.Second)).String()
		}
		got = append(got, d.Kind+" "+d.Namespace+"/"+d.Name+" "+grace)
	}
	if want := "Namespace /run unset; Pod run/web-1 0s; Pod run/web-2 0s; Service run/kept unset; Service run/web unset"; strings.Join(got, "; ") != want {
		t.Errorf("deletions %q, want %q", strings.Join(got, "; "), want)
	}
	if lists < 3 {
		t.Errorf("returned after %d Service lists, before the Service was gone", lists)
	}
	if err := c.Fake.Get(ctx, client.ObjectKey{Namespace: "other", Name: "web"}, &corev1.Service{}); err != nil {
		t.Errorf("the other namespace's Service: %v", err)
	}
	if err := c.Fake.Get(ctx, client.ObjectKey{Namespace: "other", Name: "web-1"}, &corev1.Pod{}); err != nil {
		t.Errorf("the other namespace's pod: %v", err)
	}
}

func TestTeardownNamespaceFailures(t *testing.T) {
	foreign := func(ctx context.Context, cl client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if err := cl.List(ctx, l, opts...); err != nil {
			return err
		}
		if pods, ok := l.(*corev1.PodList); ok {
			pods.Items = append(pods.Items, *kubefake.ReadyPod("kube-system", "coredns", nil))
		}
		return nil
	}
	for _, tc := range []struct {
		name, ns string
		list     func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error
		want     string
	}{
		{"empty name", "", nil, "tear down namespace: empty name"},
		{"pod of another namespace", "run", foreign, "listing the pods of namespace run returned pod kube-system/coredns: refusing to delete it"},
		{"Service never goes", "run", nil, "wait until namespace run has no pod (0 left) and no Service (1 left): context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kubefake.NewCluster(t, interceptor.Funcs{List: tc.list}, namespace("run", nil), finalized("run", "web"))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			wantErr(t, TeardownNamespace(ctx, c.Client, tc.ns), tc.want)
			for _, d := range c.Deletions() {
				if d.Kind == "Pod" {
					t.Errorf("deleted pod %s/%s", d.Namespace, d.Name)
				}
			}
		})
	}
}

func TestSweepNamespacesSelectsByLabel(t *testing.T) {
	ctx := context.Background()
	mine := map[string]string{"rollcheck": "true"}
	// A namespace already terminating: the fake keeps it while it has a finalizer.
	leaving := namespace("rc-leaving", mine)
	leaving.Finalizers = []string{"kubernetes"}
	leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	objs := []client.Object{namespace("rc-a", mine), namespace("rc-b", mine), leaving, namespace("default", nil), namespace("rc-c", map[string]string{"rollcheck": "false"})}

	c := kubefake.NewCluster(t, interceptor.Funcs{}, objs...)
	found, err := SweepNamespaces(ctx, c.Client, "rollcheck=true", 30*time.Millisecond)
	wantErr(t, err, "wait 30ms for namespaces rollcheck=true to go (left: rc-leaving)")
	if found != 3 {
		t.Errorf("found %d, want 3", found)
	}
	var deleted []string
	for _, d := range c.Deletions() {
		deleted = append(deleted, d.Name)
	}
	if strings.Join(deleted, " ") != "rc-a rc-b" {
		t.Errorf("deleted %v, want rc-a rc-b (rc-leaving is terminating already, the rest is not selected)", deleted)
	}

	lists := 0
	c = kubefake.NewCluster(t, interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if lists++; lists == 4 { // the namespace controller finishes after a few polls
			var ns corev1.Namespace
			if err := c.Fake.Get(ctx, client.ObjectKey{Name: "rc-leaving"}, &ns); err != nil {
				return err
			}
			ns.Finalizers = nil
			if err := c.Fake.Update(ctx, &ns); err != nil {
				return err
			}
		}
		return cl.List(ctx, l, opts...)
	}}, objs...)
	if found, err := SweepNamespaces(ctx, c.Client, "rollcheck=true", 5*time.Second); err != nil || found != 3 || lists < 4 {
		t.Errorf("found %d, %v after %d lists, want 3, nil after 4", found, err, lists)
	}
	var left corev1.NamespaceList
	if err := c.Fake.List(ctx, &left); err != nil || len(left.Items) != 2 {
		t.Errorf("%d namespaces left (%v), want default and rc-c", len(left.Items), err)
	}
}

func TestPodProblems(t *testing.T) {
	waiting := kubefake.ReadyPod("ns", "a", appLabels)
	waiting.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image not present"}}}}
	crashed := kubefake.ReadyPod("ns", "b", appLabels)
	crashed.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3}}}}
	restarting := kubefake.ReadyPod("ns", "c", appLabels)
	restarting.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 4}}
	pending := kubefake.ReadyPod("ns", "d", appLabels)
	pending.Status.Phase = corev1.PodPending
	pending.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}
	healthy := kubefake.ReadyPod("ns", "e", appLabels)
	healthy.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 1}}
	elsewhere := kubefake.ReadyPod("ns", "f", map[string]string{"app": "db"})
	elsewhere.Status.ContainerStatuses = waiting.Status.ContainerStatuses
	// A pod on a stopped node: the node is named, not ready, with its pods.
	onStopped := kubefake.ReadyPod("ns", "g", appLabels)
	onStopped.Spec.NodeName = "worker2"
	stopped := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker2"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}}}

	c := kubefake.NewCluster(t, interceptor.Funcs{}, waiting, crashed, restarting, pending, healthy, elsewhere, onStopped, stopped)
	got := PodProblems(context.Background(), c.Client, "ns", "app=web")
	want := "; pods: a/app ErrImageNeverPull: image not present; b/init terminated (Error, exit 3); c/app not ready after 4 restarts; d Unschedulable: 0/1 nodes are available; " +
		"node worker2 not ready (NodeStatusUnknown: Kubelet stopped posting node status.), running g"
	if got != want {
		t.Errorf("PodProblems =\n%q, want\n%q", got, want)
	}
	for sel, want := range map[string]string{"app=none": "", "app in (": ""} {
		if got := PodProblems(context.Background(), c.Client, "ns", sel); got != want {
			t.Errorf("PodProblems(%q) = %q, want %q", sel, got, want)
		}
	}
}
