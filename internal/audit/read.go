package audit

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/internal/manifest"
)

// Inventory is what manifests hold that the audit reads: the workloads and what leads to them.
type Inventory struct {
	Workloads []*Workload
	services  []*corev1.Service
	pdbs      []*policyv1.PodDisruptionBudget
	ingresses []*networkingv1.Ingress
	routes    []*unstructured.Unstructured // HTTPRoutes and GRPCRoutes
}

// ReadManifests reads the manifests at paths (internal/manifest's one rule: a file, a
// directory's files, or a kustomization rendered as kubectl kustomize renders it) and joins the
// workloads with their Services, PDBs and routes. Kinds it does not read are ignored.
func ReadManifests(paths ...string) (*Inventory, error) {
	docs, err := manifest.ReadAll(paths...)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	inv := &Inventory{}
	for _, d := range docs {
		if err := inv.addDoc(d); err != nil {
			return nil, fmt.Errorf("read manifests: %s: %w", d.At, err)
		}
	}
	inv.Join()
	return inv, nil
}

// Add reads the objects of b, YAML documents as in a manifest file (call Join once all are
// added).
func (inv *Inventory) Add(b []byte) error {
	docs, err := manifest.Decode(b, "manifest")
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := inv.addDoc(d); err != nil {
			return fmt.Errorf("%s: %w", d.At, err)
		}
	}
	return nil
}

func (inv *Inventory) addDoc(d manifest.Doc) error {
	tm, doc := d.TypeMeta, d.Data
	group, _, _ := strings.Cut(tm.APIVersion, "/")
	switch {
	case tm.Kind == "Deployment" && tm.APIVersion == "apps/v1":
		return decodeInto(inv, doc, "Deployment", &appsv1.Deployment{})
	case tm.Kind == "StatefulSet" && tm.APIVersion == "apps/v1":
		return decodeInto(inv, doc, "StatefulSet", &appsv1.StatefulSet{})
	case tm.Kind == "Service" && tm.APIVersion == "v1":
		return decodeInto(inv, doc, "Service", &corev1.Service{})
	case tm.Kind == "PodDisruptionBudget" && tm.APIVersion == "policy/v1":
		return decodeInto(inv, doc, "PodDisruptionBudget", &policyv1.PodDisruptionBudget{})
	case tm.Kind == "Ingress" && tm.APIVersion == "networking.k8s.io/v1":
		return decodeInto(inv, doc, "Ingress", &networkingv1.Ingress{})
	case (tm.Kind == "HTTPRoute" || tm.Kind == "GRPCRoute") && group == gatewayGroup:
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", tm.Kind, err)
		}
		inv.AddObject(u)
	}
	return nil
}

// gatewayGroup is the Gateway API's group, whose routes are read as unstructured.
const gatewayGroup = "gateway.networking.k8s.io"

// decodeInto decodes doc into o and adds it.
func decodeInto(inv *Inventory, doc []byte, kind string, o runtime.Object) error {
	if err := yaml.Unmarshal(doc, o); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	inv.AddObject(o)
	return nil
}

// AddObject adds an object read elsewhere (from a cluster): a Deployment, StatefulSet, Service,
// PodDisruptionBudget or Ingress, or an HTTPRoute or GRPCRoute as unstructured; anything else is
// ignored. Call Join once all are added.
func (inv *Inventory) AddObject(o runtime.Object) {
	switch o := o.(type) {
	case *appsv1.Deployment:
		inv.Workloads = append(inv.Workloads, deployment(o))
	case *appsv1.StatefulSet:
		inv.Workloads = append(inv.Workloads, statefulSet(o))
	case *corev1.Service:
		inv.services = append(inv.services, o)
	case *policyv1.PodDisruptionBudget:
		inv.pdbs = append(inv.pdbs, o)
	case *networkingv1.Ingress:
		inv.ingresses = append(inv.ingresses, o)
	case *unstructured.Unstructured:
		if k := o.GetKind(); (k == "HTTPRoute" || k == "GRPCRoute") && o.GroupVersionKind().Group == gatewayGroup {
			inv.routes = append(inv.routes, o)
		}
	}
}

// Join links every workload with the Services, PDBs and routes that select or lead to it, and
// finds the container in front.
func (inv *Inventory) Join() {
	for _, w := range inv.Workloads {
		w.Services, w.Routes, w.PDB = nil, nil, nil
		set := labels.Set(w.labels)
		for _, s := range inv.services {
			if s.Namespace != w.Namespace || len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(set) {
				continue
			}
			svc := Service{Name: s.Name, Headless: s.Spec.ClusterIP == corev1.ClusterIPNone,
				LocalTraffic: s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
					(s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer)}
			for _, p := range s.Spec.Ports {
				if c, port := w.target(p.TargetPort, p.Port); c != "" {
					if !slices.Contains(svc.Targets, c) {
						svc.Targets = append(svc.Targets, c)
					}
					if proto := protocolOf(p.Name, deref(p.AppProtocol)); proto != "" && port.Protocol == "" {
						port.Protocol = proto
					}
				}
			}
			w.Services = append(w.Services, svc)
		}
		w.Front = w.front()
		for _, p := range inv.pdbs {
			if p.Namespace != w.Namespace || p.Spec.Selector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(set) {
				continue
			}
			w.PDB = &PDB{Name: p.Name, Allows: allows(p.Spec, w.Replicas)}
			break
		}
		names := map[string]bool{}
		for _, s := range w.Services {
			names[s.Name] = true
		}
		for _, in := range inv.ingresses {
			if in.Namespace == w.Namespace && ingressLeadsTo(in, names) {
				w.Routes = append(w.Routes, "Ingress/"+in.Name)
			}
		}
		for _, r := range inv.routes {
			if routeNamespace(r) == w.Namespace && routeLeadsTo(r, names) {
				w.Routes = append(w.Routes, r.GetKind()+"/"+r.GetName())
			}
		}
	}
}

// target finds the container and port a Service port leads to: by name or number.
func (w *Workload) target(tp intstr.IntOrString, port int32) (string, *Port) {
	for i := range w.Containers {
		c := &w.Containers[i]
		for j := range c.Ports {
			p := &c.Ports[j]
			switch {
			case tp.Type == intstr.String && tp.StrVal != "" && p.Name == tp.StrVal,
				tp.Type == intstr.Int && tp.IntVal != 0 && p.Number == tp.IntVal,
				tp.Type == intstr.Int && tp.IntVal == 0 && p.Number == port:
				return c.Name, p
			}
		}
	}
	return "", nil
}

// front is the container requests arrive at: the one a Service targets (a ClusterIP one
// first), else the app's.
func (w *Workload) front() string {
	for _, headless := range []bool{false, true} {
		for _, s := range w.Services {
			if s.Headless == headless && len(s.Targets) > 0 {
				return s.Targets[0]
			}
		}
	}
	return w.App
}

// allows is how many of n pods a PDB lets go at once.
func allows(s policyv1.PodDisruptionBudgetSpec, n int32) int32 {
	switch {
	case s.MaxUnavailable != nil:
		return scaled(*s.MaxUnavailable, n, true)
	case s.MinAvailable != nil:
		return max(0, n-scaled(*s.MinAvailable, n, true))
	}
	return n
}

func ingressLeadsTo(in *networkingv1.Ingress, services map[string]bool) bool {
	if b := in.Spec.DefaultBackend; b != nil && b.Service != nil && services[b.Service.Name] {
		return true
	}
	for _, r := range in.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil && services[p.Backend.Service.Name] {
				return true
			}
		}
	}
	return false
}

// routeLeadsTo tells whether a Gateway API route has a backendRef to one of the Services (a
// backendRef's kind defaults to Service, its namespace to the route's).
func routeLeadsTo(r *unstructured.Unstructured, services map[string]bool) bool {
	rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
	for _, rule := range rules {
		m, ok := rule.(map[string]any)
		if !ok {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(m, "backendRefs")
		for _, ref := range refs {
			rm, ok := ref.(map[string]any)
			if !ok {
				continue
			}
			kind, _, _ := unstructured.NestedString(rm, "kind")
			name, _, _ := unstructured.NestedString(rm, "name")
			ns, _, _ := unstructured.NestedString(rm, "namespace")
			if (kind == "" || kind == "Service") && (ns == "" || ns == r.GetNamespace()) && services[name] {
				return true
			}
		}
	}
	return false
}

func routeNamespace(r *unstructured.Unstructured) string { return r.GetNamespace() }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
