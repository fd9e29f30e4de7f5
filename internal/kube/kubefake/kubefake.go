// Package kubefake gives unit tests a klient.Client backed by controller-runtime's fake client,
// and a Deployment controller simulated in the calling goroutine (fake clients run none).
//
// e2e-framework has no constructor for a klient.Client (or its resources.Resources) around a
// given controller-runtime client, so Wrap builds one for an address it never dials and sets
// its unexported client field; it fails loudly if a new e2e-framework renames that field.
package kubefake

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
)

// Wrap returns a klient.Client whose requests go to c. Like e2e-framework's client, it keeps
// one Resources and sets its namespace on each Resources(ns) call.
func Wrap(t testing.TB, c client.Client) klient.Client {
	t.Helper()
	cfg := &rest.Config{Host: "http://127.0.0.1:1"} // never dialled: every request goes to c
	res, err := resources.New(cfg)
	if err != nil {
		t.Fatalf("kubefake: resources.New: %v", err)
	}
	f := reflect.ValueOf(res).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[client.Client]() {
		t.Fatalf("kubefake: e2e-framework's resources.Resources has no field client of type client.Client any more")
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(client.Client(noEmptyFieldSelector{c})))
	return &wrapped{cfg: cfg, res: res}
}

// noEmptyFieldSelector drops the empty field selector e2e-framework's List always passes: the
// API server ignores it, the fake client refuses it.
type noEmptyFieldSelector struct{ client.Client }

func (c noEmptyFieldSelector) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.FieldSelector != nil && o.FieldSelector.Empty() {
		o.FieldSelector = nil
	}
	return c.Client.List(ctx, l, &o)
}

type wrapped struct {
	cfg *rest.Config
	res *resources.Resources
}

func (w *wrapped) RESTConfig() *rest.Config { return w.cfg }

func (w *wrapped) Resources(ns ...string) *resources.Resources {
	switch len(ns) {
	case 0:
		return w.res.WithNamespace("")
	case 1:
		return w.res.WithNamespace(ns[0])
	}
	panic("too many namespaces provided")
}

// Deletion is one Delete request the code under test made.
type Deletion struct {
	Kind, Namespace, Name string
	// GracePeriod is the requested grace period in seconds, nil when none was asked for.
	GracePeriod *int64
}

// Patch is one Patch request the code under test made to a Deployment, with what the
// Deployment's pods were when it arrived.
type Patch struct {
	Deployment, Type, Data string
	PodsBefore             int
}

// Cluster is a fake API server holding Deployments and Pods, with a Deployment controller
// that runs inside the Gets of a Deployment: after Lag Gets that see the Deployment out of
// date (a new generation, or fewer or more live pods than replicas), it replaces the pods
// of an old template, creates or deletes pods to match the replicas, and completes the
// status. When the cluster holds Nodes, a new pod goes to the schedulable one (not cordoned)
// that runs the fewest of the Deployment's pods, the first by name among equals. Evictions
// delete the pod at once (the fake client knows no PodDisruptionBudget). Every request the code under test makes goes through Client; Fake bypasses the
// controller and the records.
type Cluster struct {
	Client klient.Client
	Fake   client.WithWatch
	// Lag is how many Gets of an out-of-date Deployment go by before the controller acts.
	Lag int

	mu        sync.Mutex
	pending   map[string]int
	seq       int
	deletions []Deletion
	patches   []Patch
	evictions []string
}

// NewCluster builds a Cluster holding objs. extra intercepts requests before the controller's
// own interception (nil fields pass through).
func NewCluster(t testing.TB, extra interceptor.Funcs, objs ...client.Object) *Cluster {
	t.Helper()
	return newCluster(t, fake.NewClientBuilder(), extra, objs...)
}

// NewClusterOn is NewCluster on the object store of a client-go fake clientset (its Tracker):
// what Client writes, the clientset's lists and watches see, for code that uses both.
func NewClusterOn(t testing.TB, tracker clienttesting.ObjectTracker, extra interceptor.Funcs, objs ...client.Object) *Cluster {
	t.Helper()
	return newCluster(t, fake.NewClientBuilder().WithObjectTracker(tracker), extra, objs...)
}

func newCluster(t testing.TB, b *fake.ClientBuilder, extra interceptor.Funcs, objs ...client.Object) *Cluster {
	t.Helper()
	c := &Cluster{Lag: 2, pending: map[string]int{}}
	c.Fake = b.WithObjects(objs...).Build()
	controlled := interceptor.NewClient(c.Fake, interceptor.Funcs{Get: c.get, Delete: c.delete, Patch: c.patch, SubResourceCreate: c.subResourceCreate})
	c.Client = Wrap(t, interceptor.NewClient(controlled, extra))
	return c
}

// Deletions returns the Delete requests made so far.
func (c *Cluster) Deletions() []Deletion {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.deletions)
}

// Evictions returns the pods whose eviction reached the fake API server so far (an eviction an
// extra interceptor refused does not), as namespace/name.
func (c *Cluster) Evictions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.evictions)
}

// subResourceCreate records an eviction; the fake client deletes the pod at once.
func (c *Cluster) subResourceCreate(ctx context.Context, cl client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
	if sub == "eviction" {
		c.mu.Lock()
		c.evictions = append(c.evictions, obj.GetNamespace()+"/"+obj.GetName())
		c.mu.Unlock()
	}
	return cl.SubResource(sub).Create(ctx, obj, subObj, opts...)
}

// Patches returns the Patch requests to Deployments made so far.
func (c *Cluster) Patches() []Patch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.patches)
}

func (c *Cluster) delete(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	var o client.DeleteOptions
	o.ApplyOptions(opts)
	kind := strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
	c.mu.Lock()
	c.deletions = append(c.deletions, Deletion{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), GracePeriod: o.GracePeriodSeconds})
	c.mu.Unlock()
	return cl.Delete(ctx, obj, opts...)
}

func (c *Cluster) patch(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return cl.Patch(ctx, obj, p, opts...)
	}
	data, err := p.Data(obj)
	if err != nil {
		return err
	}
	var cur appsv1.Deployment
	if err := cl.Get(ctx, client.ObjectKeyFromObject(d), &cur); err != nil {
		return err
	}
	pods, err := livePods(ctx, cl, &cur)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.patches = append(c.patches, Patch{Deployment: d.Name, Type: string(p.Type()), Data: string(data), PodsBefore: len(pods)})
	c.mu.Unlock()
	if err := cl.Patch(ctx, d, p, opts...); err != nil {
		return err
	}
	d.Generation++ // the API server bumps the generation on a spec change
	return cl.Update(ctx, d)
}

func (c *Cluster) get(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := cl.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return nil
	}
	pods, err := livePods(ctx, cl, d)
	if err != nil {
		return err
	}
	if d.Status.ObservedGeneration >= d.Generation && len(pods) == int(replicas(d)) {
		return nil
	}
	c.mu.Lock()
	c.pending[key.String()]++
	act := c.pending[key.String()] >= c.Lag
	if act {
		delete(c.pending, key.String())
	}
	c.mu.Unlock()
	if !act {
		return nil
	}
	if err := c.Reconcile(ctx, d); err != nil {
		return err
	}
	return cl.Get(ctx, key, obj, opts...)
}

// Reconcile brings d's pods and status up to date at once, as the Deployment controller
// would in time.
func (c *Cluster) Reconcile(ctx context.Context, d *appsv1.Deployment) error {
	pods, err := livePods(ctx, c.Fake, d)
	if err != nil {
		return err
	}
	hash := templateHash(d)
	var keep []corev1.Pod
	for _, p := range pods {
		if p.Labels["pod-template-hash"] == hash && len(keep) < int(replicas(d)) {
			keep = append(keep, p)
			continue
		}
		if err := c.Fake.Delete(ctx, &p); err != nil {
			return err
		}
	}
	for len(keep) < int(replicas(d)) {
		c.mu.Lock()
		c.seq++
		name := fmt.Sprintf("%s-%s-%d", d.Name, hash, c.seq)
		c.mu.Unlock()
		p := ReadyPod(d.Namespace, name, d.Spec.Template.Labels)
		p.Labels["pod-template-hash"] = hash
		if p.Spec.NodeName, err = c.place(ctx, keep); err != nil {
			return err
		}
		if err := c.Fake.Create(ctx, p); err != nil {
			return err
		}
		keep = append(keep, *p)
	}
	n := replicas(d)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	return c.Fake.Status().Update(ctx, d)
}

// place picks the node of a new pod beside pods: the schedulable node that runs the fewest of
// them, the first by name among equals; "" when the cluster holds no schedulable Node.
func (c *Cluster) place(ctx context.Context, pods []corev1.Pod) (string, error) {
	var nodes corev1.NodeList
	if err := c.Fake.List(ctx, &nodes); err != nil {
		return "", err
	}
	best, bestN := "", 0
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		k := 0
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				k++
			}
		}
		if best == "" || k < bestN || (k == bestN && n.Name < best) {
			best, bestN = n.Name, k
		}
	}
	return best, nil
}

// Node returns a schedulable Node.
func Node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// livePods lists d's pods that are not terminating.
func livePods(ctx context.Context, cl client.Client, d *appsv1.Deployment) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := cl.List(ctx, &list, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil }), nil
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func templateHash(d *appsv1.Deployment) string {
	h := fnv.New32a()
	fmt.Fprint(h, d.Spec.Template.Annotations) // fmt prints maps sorted
	return fmt.Sprintf("%08x", h.Sum32())
}

// Deployment returns a Deployment of the given replicas whose pods carry (and are selected
// by) labels, with generation 1 not yet observed: the first Gets make its pods.
func Deployment(ns, name string, n int32, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
}

// ReadyPod returns a running pod whose Ready condition is true.
func ReadyPod(ns, name string, labels map[string]string) *corev1.Pod {
	labels = maps.Clone(labels)
	if labels == nil {
		labels = map[string]string{}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}
