package controllers

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/rollcheck/rollcheck/internal/manifest"
)

// Kinds of the objects the controllers' manifests hold that are not namespaced; every other
// kind gets the controller's namespace.
var clusterScoped = []string{"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
	"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService", "PriorityClass"}

const crdKind = "CustomResourceDefinition"

// Objects returns c's install objects, in the order to apply them (applyOrder): its Namespace,
// its CustomResourceDefinitions, then the rest of its module's manifests (Controller.Manifests,
// kustomizations rendered in process) with the controller's namespace, its Deployment last. They are read from c's
// module in the module cache (ModuleDir), the same source Build builds, so that the CRDs and
// RBAC are those of the built version. The Deployment runs image, which must be on the nodes
// already (imagePullPolicy Never: nothing is pulled), with c.Args, and HTTP probes of
// c's health endpoint where the upstream probes exec a program its image has and this one
// does not.
func Objects(ctx context.Context, c Controller, image string, logf func(string, ...any)) ([]k8s.Object, error) {
	dir, err := ModuleDir(ctx, c, logf)
	if err != nil {
		return nil, err
	}
	objs, err := objectsIn(dir, c, image)
	if err != nil {
		return nil, fmt.Errorf("%s's install objects, from %s: %w", c.Title, dir, err)
	}
	return objs, nil
}

// objectsIn is Objects of the module in dir.
func objectsIn(dir string, c Controller, image string) ([]k8s.Object, error) {
	var crds []manifest.Doc
	for _, g := range c.CRDs {
		paths, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil || len(paths) == 0 {
			return nil, fmt.Errorf("no file matches %s (%v)", g, err)
		}
		docs, err := manifest.ReadAll(paths...)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.Kind != crdKind {
				return nil, fmt.Errorf("%s: a %s where CustomResourceDefinitions were expected", d.At, d.Kind)
			}
		}
		crds = append(crds, docs...)
	}
	var rest []manifest.Doc
	for _, p := range c.Manifests {
		docs, err := manifest.Read(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.Kind != crdKind && d.Kind != "Namespace" {
				rest = append(rest, d)
			}
		}
	}
	objs, err := manifest.Objects(append(crds, rest...))
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{}
	ns.APIVersion, ns.Kind, ns.Name = "v1", "Namespace", c.Namespace
	ns.Labels = map[string]string{"app.kubernetes.io/part-of": string(c.Name), "app.kubernetes.io/managed-by": "rollcheck"}
	objs = append([]k8s.Object{ns}, objs...)
	deployments := 0
	for _, o := range objs {
		if err := c.place(o); err != nil {
			return nil, err
		}
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == c.Deployment {
			if err := c.patchDeployment(d, image); err != nil {
				return nil, err
			}
			deployments++
		}
	}
	if deployments != 1 {
		return nil, fmt.Errorf("%d Deployments named %s in %v, want 1", deployments, c.Deployment, c.Manifests)
	}
	slices.SortStableFunc(objs, func(a, b k8s.Object) int { return applyRank(a) - applyRank(b) })
	return objs, nil
}

// applyOrder is the order of kinds to apply, each before those that use it: the namespace, the
// CRDs, the identity and rights the controller runs with and its configuration, then anything
// else, and its Deployment last, so that its pod starts with all of them there.
var applyOrder = []string{"Namespace", crdKind, "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
	"ConfigMap", "Secret", "Service"}

func applyRank(o k8s.Object) int {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if i := slices.Index(applyOrder, kind); i >= 0 {
		return i
	}
	if kind == "Deployment" {
		return len(applyOrder) + 1
	}
	return len(applyOrder)
}

// place gives a namespaced object c's namespace, and a binding's ServiceAccount subjects that
// name none; an object that names another namespace is an error (the table's namespace must be
// the manifests' own).
func (c Controller) place(o k8s.Object) error {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if slices.Contains(clusterScoped, kind) {
		if b, ok := o.(*rbacv1.ClusterRoleBinding); ok {
			return c.placeSubjects(b.Name, b.Subjects)
		}
		return nil
	}
	switch o.GetNamespace() {
	case "":
		o.SetNamespace(c.Namespace)
	case c.Namespace:
	default:
		return fmt.Errorf("%s %s is in namespace %s, want %s", kind, o.GetName(), o.GetNamespace(), c.Namespace)
	}
	if b, ok := o.(*rbacv1.RoleBinding); ok {
		return c.placeSubjects(b.Name, b.Subjects)
	}
	return nil
}

func (c Controller) placeSubjects(binding string, subjects []rbacv1.Subject) error {
	for i, s := range subjects {
		if s.Kind != rbacv1.ServiceAccountKind {
			continue
		}
		switch s.Namespace {
		case "":
			subjects[i].Namespace = c.Namespace
		case c.Namespace:
		default:
			return fmt.Errorf("binding %s: ServiceAccount %s/%s, want namespace %s", binding, s.Namespace, s.Name, c.Namespace)
		}
	}
	return nil
}

// patchDeployment makes d run image, pulled never, with c's arguments and HTTP probes, and
// hardens its container's security context (no privilege escalation, no capabilities, the
// runtime's seccomp profile, a non-root user) where the upstream did not.
func (c Controller) patchDeployment(d *appsv1.Deployment, image string) error {
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(k corev1.Container) bool { return k.Name == c.Deployment })
	if i < 0 {
		return fmt.Errorf("Deployment %s has no container %s", d.Name, c.Deployment)
	}
	k := &d.Spec.Template.Spec.Containers[i]
	k.Image, k.ImagePullPolicy = image, corev1.PullNever
	if c.Args != nil {
		k.Args = slices.Clone(c.Args)
	}
	for _, p := range []*corev1.Probe{k.LivenessProbe, k.ReadinessProbe} {
		if p != nil && p.Exec != nil {
			p.Exec = nil
			p.HTTPGet = &corev1.HTTPGetAction{Path: c.HealthPath, Port: intstr.FromInt32(c.HealthPort)}
		}
	}
	if k.SecurityContext == nil {
		k.SecurityContext = &corev1.SecurityContext{}
	}
	s := k.SecurityContext
	no, yes := false, true
	if s.AllowPrivilegeEscalation == nil {
		s.AllowPrivilegeEscalation = &no
	}
	if s.RunAsNonRoot == nil {
		s.RunAsNonRoot = &yes
	}
	if s.Capabilities == nil {
		s.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
	if s.SeccompProfile == nil {
		s.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	if d.Spec.Template.Labels == nil {
		d.Spec.Template.Labels = map[string]string{}
	}
	d.Spec.Template.Labels["app.kubernetes.io/managed-by"] = "rollcheck"
	return nil
}
