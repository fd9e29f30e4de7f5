package inplace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// rolloutStore is an Argo Rollout (argoproj.io/v1alpha1), read and written as unstructured. Of
// its spec a record keeps and a variant changes what a Deployment's spec says of it: replicas,
// selector, pod template, minReadySeconds (its strategy is Argo's own, and no variant writes
// it); a restore puts the pod template back as it was written (state.Template), and
// spec.restartAt, which its rollout-restart sets.
type rolloutStore struct {
	client   klient.Client
	ns, name string
}

func (r rolloutStore) String() string { return "Rollout " + r.ns + "/" + r.name }

func (r rolloutStore) get(ctx context.Context) (*unstructured.Unstructured, error) {
	u := kube.NewRollout(r.ns, r.name)
	if err := r.client.Resources(r.ns).Get(ctx, r.name, r.ns, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: not found (app.namespace, app.rollout)", r)
		}
		return nil, err
	}
	return u, nil
}

func (r rolloutStore) annotations(ctx context.Context) (map[string]string, error) {
	u, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	return u.GetAnnotations(), nil
}

func (r rolloutStore) update(ctx context.Context, change func(map[string]string, *state) error) error {
	return kube.Retry(ctx, func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := r.get(ctx)
			if err != nil {
				return err
			}
			before, err := rolloutState(u)
			if err != nil {
				return err
			}
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			after := before
			if err := change(ann, &after); err != nil {
				return err
			}
			if err := setRolloutState(u, before, after); err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			u.SetAnnotations(ann)
			return r.client.Resources(r.ns).Update(ctx, u)
		})
	})
}

// rolloutState reads a Rollout's spec as a Deployment's, its pod template as written and its
// restartAt. A Rollout that takes its pod template from another workload (spec.workloadRef) is
// an error: rollcheck reads and changes a Rollout's own template only.
func rolloutState(u *unstructured.Unstructured) (state, error) {
	var st state
	if ref, ok, _ := unstructured.NestedMap(u.Object, "spec", "workloadRef"); ok {
		return st, fmt.Errorf("Rollout %s/%s takes its pod template from %v %v (spec.workloadRef): rollcheck checks a Rollout with a pod template of its own", u.GetNamespace(), u.GetName(), ref["kind"], ref["name"])
	}
	tmpl, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
	if !ok {
		return st, fmt.Errorf("Rollout %s/%s has no spec.template", u.GetNamespace(), u.GetName())
	}
	raw, err := json.Marshal(tmpl)
	if err != nil {
		return st, err
	}
	st.Template = raw
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &st.Spec.Template); err != nil {
		return st, fmt.Errorf("Rollout %s/%s: spec.template: %w", u.GetNamespace(), u.GetName(), err)
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		r := int32(n)
		st.Spec.Replicas = &r
	}
	if sel, ok, _ := unstructured.NestedMap(u.Object, "spec", "selector"); ok {
		st.Spec.Selector = &metav1.LabelSelector{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, st.Spec.Selector); err != nil {
			return st, fmt.Errorf("Rollout %s/%s: spec.selector: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	if n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "minReadySeconds"); ok {
		st.Spec.MinReadySeconds = int32(n)
	}
	st.RestartAt, _, _ = unstructured.NestedString(u.Object, "spec", "restartAt")
	return st, nil
}

// setRolloutState writes what after changed of before on u: the pod template (as written, when
// after carries it: a restore; else the typed one, a variant's), replicas and restartAt. A
// change of anything else a Deployment's spec holds is an error: a Rollout's strategy is not
// a Deployment's.
func setRolloutState(u *unstructured.Unstructured, before, after state) error {
	rest := func(s appsv1.DeploymentSpec) appsv1.DeploymentSpec {
		s.Template, s.Replicas = corev1.PodTemplateSpec{}, nil
		return s
	}
	if !equality.Semantic.DeepEqual(rest(before.Spec), rest(after.Spec)) {
		return fmt.Errorf("the variant would change %s of the Rollout's spec: a variant changes a Rollout's pod template and replicas only", specDiff(rest(before.Spec), rest(after.Spec)))
	}
	switch {
	case after.Template != nil && string(after.Template) != string(before.Template):
		var tmpl map[string]any
		if err := json.Unmarshal(after.Template, &tmpl); err != nil {
			return fmt.Errorf("the recorded spec.template: %w", err)
		}
		if err := unstructured.SetNestedMap(u.Object, tmpl, "spec", "template"); err != nil {
			return err
		}
	case after.Template == nil && !equality.Semantic.DeepEqual(before.Spec.Template, after.Spec.Template):
		tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&after.Spec.Template)
		if err != nil {
			return err
		}
		unstructured.RemoveNestedField(tmpl, "metadata", "creationTimestamp")
		if err := unstructured.SetNestedMap(u.Object, tmpl, "spec", "template"); err != nil {
			return err
		}
	}
	if !equality.Semantic.DeepEqual(before.Spec.Replicas, after.Spec.Replicas) {
		if after.Spec.Replicas == nil {
			unstructured.RemoveNestedField(u.Object, "spec", "replicas")
		} else if err := unstructured.SetNestedField(u.Object, int64(*after.Spec.Replicas), "spec", "replicas"); err != nil {
			return err
		}
	}
	if before.RestartAt != after.RestartAt {
		if after.RestartAt == "" {
			unstructured.RemoveNestedField(u.Object, "spec", "restartAt")
		} else if err := unstructured.SetNestedField(u.Object, after.RestartAt, "spec", "restartAt"); err != nil {
			return err
		}
	}
	return nil
}

// specDiff names the fields of a Deployment's spec in which a and b differ (by JSON name).
func specDiff(a, b appsv1.DeploymentSpec) string {
	ma, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&a)
	mb, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&b)
	var out []string
	for k := range mb {
		if !equality.Semantic.DeepEqual(ma[k], mb[k]) {
			out = append(out, "spec."+k)
		}
	}
	for k := range ma {
		if _, ok := mb[k]; !ok {
			out = append(out, "spec."+k)
		}
	}
	if len(out) == 0 {
		return "the spec"
	}
	return strings.Join(out, ", ")
}

// rolloutView is the Rollout as a Deployment of its name, labels, annotations and UID (which
// owns its ReplicaSets), with st's spec: what a row reads of the workload it checks.
func rolloutView(u *unstructured.Unstructured, st state) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.Name, d.Namespace, d.UID = u.GetName(), u.GetNamespace(), u.GetUID()
	d.Labels, d.Annotations = u.GetLabels(), u.GetAnnotations()
	d.Spec = st.Spec
	return d
}

// rollout is an Argo Rollout checked in place.
type rollout struct {
	cs    kubernetes.Interface
	store rolloutStore
	app   check.App
}

func (r rollout) Pods() kube.Workload {
	return kube.Workload{Namespace: r.app.Namespace, Name: r.app.Deployment, Kind: kube.KindRollout}
}

func (r rollout) Read(ctx context.Context) (*appsv1.Deployment, error) {
	u, err := r.store.get(ctx)
	if err != nil {
		return nil, err
	}
	st, err := rolloutState(u)
	if err != nil {
		return nil, err
	}
	return rolloutView(u, st), nil
}

func (r rollout) Leftover(ctx context.Context, l *runlease.Lease) (string, *Record, error) {
	return leftover(ctx, r.cs, r.store, r.app.Namespace, l, r.Read)
}

func (r rollout) Hold(ctx context.Context, rec Record) error { return hold(ctx, r.store, rec) }

// Change writes the variant's pod template and replicas on the Rollout: a new revision, which
// Argo rolls out by the Rollout's own strategy (its steps, pauses and analyses). The row waits
// for it Healthy (kube.WaitWorkload), and stops on a Rollout Argo gave up (Degraded, aborted).
func (r rollout) Change(ctx context.Context, live *appsv1.Deployment, spec appsv1.DeploymentSpec) error {
	if unchanged(live, spec) {
		return nil
	}
	return change(ctx, r.store, spec)
}

func (r rollout) Restore(ctx context.Context, live *appsv1.Deployment, run string) (string, error) {
	return restoreWorkload(ctx, r.cs, r.store.client, r.store, r.Pods(), live, run)
}
