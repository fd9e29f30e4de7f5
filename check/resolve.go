package check

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// Resolved is a Plan made ready to run: its defaults filled, validated once, and the Deployment
// under test (as the Variant changes it) rendered once. Plan.Resolve makes one; the engine, tune,
// the command's front ends and the conformance suites take it, and nothing after it validates or
// renders the plan again. A Resolved is not changed once made: each method returns a copy.
//
// An app checked in place (App.Namespace) resolves twice: before its live Deployment is read
// (what the plan alone says; Deployment is nil and Objects an error), and by Live once the
// engine has read it.
type Resolved struct {
	plan     Plan
	warnings []string
	dep      *appsv1.Deployment
	applied  Applied
	// app and front are the app's container and the sidecar in front of it (see AppContainer,
	// FrontContainer).
	app, front string
}

// Resolve fills the Plan's defaults, validates it (every problem at once, on one line, as
// Validate) and renders the Deployment under test. The error is Validate's.
func (p Plan) Resolve() (*Resolved, error) {
	p = p.WithDefaults()
	warnings, dep, err := p.validate()
	if err != nil {
		return nil, err
	}
	r := &Resolved{plan: p, warnings: warnings, dep: dep, applied: p.applied(dep)}
	if dep != nil {
		app, front := appContainer(dep, p.App), portContainer(dep, p.App.Port)
		if app != nil {
			r.app = app.Name
		}
		if app != nil && front != nil && app != front {
			r.front = front.Name
		}
	}
	return r, nil
}

// Live resolves the plan of an app checked in place again with its live Deployment, as read
// from the cluster (for an Argo Rollout's ReplicaSet, its view as a Deployment); the warnings
// are then what the live Deployment adds.
func (r *Resolved) Live(dep *appsv1.Deployment) (*Resolved, error) {
	if !r.plan.InPlace() {
		return nil, errors.New("live Deployment: the plan applies its app; only an app checked in place is read from the cluster")
	}
	p := r.plan
	p.App.Objects = []Object{dep}
	return p.Resolve()
}

// Plan is the plan as resolved: the caller's, with its defaults filled.
func (r *Resolved) Plan() Plan { return r.plan }

// Warnings are what is allowed but weakens the verdict (Validate's warnings).
func (r *Resolved) Warnings() []string { return append([]string(nil), r.warnings...) }

// Deployment is the Deployment under test as the Variant changes it (a copy), with
// imagePullPolicy Never on the containers that run App.Images; nil for an app in place whose
// live Deployment is not read yet.
func (r *Resolved) Deployment() *appsv1.Deployment {
	if r.dep == nil {
		return nil
	}
	return r.dep.DeepCopy()
}

// Applied says what a row of the plan runs, as the reports show it (Plan.Applied).
func (r *Resolved) Applied() Applied { return r.applied }

// AppContainer is the name of the container that declares App.Port in the Deployment as the
// Variant changes it: the one the load reaches, whose preStop a Variant sets and whose logs hold
// the app's lifecycle lines. Empty when there is none (an app in place not read yet).
func (r *Resolved) AppContainer() string { return r.app }

// FrontContainer is the sidecar in front of the app: the container that declares App.Port when
// App.Container names another one (a proxy the load passes through). Empty when the load
// reaches the app's container itself.
func (r *Resolved) FrontContainer() string { return r.front }

// InPlace is Plan.InPlace.
func (r *Resolved) InPlace() bool { return r.plan.InPlace() }

// RunsAlone is Plan.RunsAlone.
func (r *Resolved) RunsAlone() string { return r.plan.RunsAlone() }

// Objects returns what a row of the plan applies into namespace ns: the app's manifests
// unchanged but for their namespace, the Deployment as the Variant changes it, rollcheck's load
// Service (LoadServiceName; a NodePort on nodePort when it is not 0), the app's headless Service
// when the client balances itself, and, when the Variant asks for one, a PodDisruptionBudget of
// the Deployment's pods (PDBName). rollcheck check --dry-run prints them. Each call returns new
// copies.
//
// In place (App.Namespace), ns and nodePort play no part: a row applies, in App.Namespace, the
// Deployment as the Variant changes it (an update of the live one) and the Variant's budget;
// before the live Deployment is read (Live) it is an error.
func (r *Resolved) Objects(ns string, nodePort int32) ([]Object, error) {
	p := r.plan
	if r.dep == nil {
		if p.InPlace() {
			return nil, fmt.Errorf("deployment %s/%s: %w", p.App.Namespace, p.App.Deployment, errNotRead)
		}
		return nil, fmt.Errorf("%s: no Deployment to apply", p.Variant.Name) // validate refuses such a plan
	}
	dep := r.dep.DeepCopy()
	if p.InPlace() {
		dep.Namespace = p.App.Namespace
		objs := []Object{dep}
		if b := p.Variant.PDB; b != nil {
			objs = append(objs, budget(p.App.Namespace, dep, *b))
		}
		return objs, nil
	}
	orig, _ := p.App.deployment()
	var objs []Object
	for _, o := range p.App.Objects {
		if o == Object(orig) {
			continue
		}
		c := o.DeepCopyObject().(Object)
		c.SetNamespace(ns)
		c.SetResourceVersion("")
		objs = append(objs, c)
	}
	dep.Namespace, dep.ResourceVersion = ns, ""
	svc := loadService(ns, dep, p.App.Port, nodePort)
	if nodePort != 0 && p.Variant.ExternalTrafficPolicy != "" {
		svc.Spec.ExternalTrafficPolicy = p.Variant.ExternalTrafficPolicy
	}
	objs = append(objs, dep, svc)
	if r.applied.Balanced() { // the client resolves the app's headless Service itself
		objs = append(objs, headlessService(ns, dep, p.App.Port))
	}
	if b := p.Variant.PDB; b != nil {
		objs = append(objs, budget(ns, dep, *b))
	}
	return objs, nil
}

// Repeated is the same resolved plan as run k of its repeats (Plan.Repeat, 1 to MaxRepeat; 0:
// the only one): what a row's file name and report say of it. Nothing else changes, so nothing
// is validated or rendered again.
func (r *Resolved) Repeated(k int) (*Resolved, error) {
	if k < 0 || k > MaxRepeat {
		return nil, fmt.Errorf("%s: repeat %d: want 0 (once) to %d", r.plan.Variant.Name, k, MaxRepeat)
	}
	c := *r
	c.plan.Repeat = k
	return &c, nil
}
