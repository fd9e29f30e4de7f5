package access

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/rollcheck/rollcheck/check"
)

// Need is what a run's plans need: the required features (Core, and Drain when a plan drains),
// and the create right of every other kind of object their manifests hold (a Secret, a
// ServiceAccount: the list cannot know the user's manifests).
type Need struct {
	Features []Feature
	Objects  []Right
}

// Rights is every required right of n.
func (n Need) Rights() []Right { return append(Of(n.Features...), n.Objects...) }

// PlansNeed works out what plans need; mapper turns the manifests' kinds into resources.
func PlansNeed(plans []*check.Resolved, mapper meta.RESTMapper) (Need, error) {
	n := Need{Features: []Feature{Core}}
	for _, r := range plans {
		if f := Feature(r.Plan().Disruption.Kind.Info().Rights); f != "" && !slices.Contains(n.Features, f) {
			n.Features = append(n.Features, f)
		}
	}
	// Which feature's file grants create on a resource: a kind the plans hold that their
	// features do not grant is named with the file that does, or as the manifests' own.
	grantedBy := map[string]Feature{}
	for _, r := range Rights {
		// The first feature that grants it: the rights of a run that applies its app come before
		// those of a check in place, which are in one namespace of the user's.
		if _, ok := grantedBy[r.Group+"/"+r.Resource]; !ok && r.Subresource == "" && slices.Contains(r.Verbs, "create") {
			grantedBy[r.Group+"/"+r.Resource] = r.Feature
		}
	}
	have := map[string]bool{}
	for _, r := range n.Rights() {
		have[r.Group+"/"+r.Resource] = r.Subresource == "" && slices.Contains(r.Verbs, "create")
	}
	kinds, err := manifestKinds(plans, mapper)
	if err != nil {
		return Need{}, err
	}
	for _, k := range kinds {
		key := k.Group + "/" + k.Resource
		if have[key] {
			continue
		}
		have[key] = true
		f, ok := grantedBy[key]
		if !ok {
			f = AppManifests
		}
		k.Feature, k.Verbs = f, []string{"create"}
		n.Objects = append(n.Objects, k)
	}
	return n, nil
}

// manifestKinds is a right (no feature, no verbs) per kind of object the plans apply, the first
// object of each named in Why; mapper turns the kinds into resources.
func manifestKinds(plans []*check.Resolved, mapper meta.RESTMapper) ([]Right, error) {
	var out []Right
	seen := map[string]bool{}
	for _, r := range plans {
		p := r.Plan()
		objs, err := r.Objects("rollcheck-access-review", 0)
		if err != nil {
			return nil, fmt.Errorf("plan %s: %w", p.Variant.Name, err)
		}
		for _, o := range objs {
			gvk, err := apiutil.GVKForObject(o, scheme.Scheme)
			if err != nil {
				gvk = o.GetObjectKind().GroupVersionKind()
			}
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return nil, fmt.Errorf("plan %s: the cluster does not serve %s %s: %w", p.Variant.Name, gvk.Kind, o.GetName(), err)
			}
			key := m.Resource.Group + "/" + m.Resource.Resource
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Right{Group: m.Resource.Group, Resource: m.Resource.Resource,
				ClusterScoped: m.Scope.Name() == meta.RESTScopeNameRoot,
				Why:           fmt.Sprintf("the app's manifests hold a %s (%s)", gvk.Kind, o.GetName())})
		}
	}
	return out, nil
}

// NamespacedNeed is every required right of plans whose rows apply their app into namespaces
// the user created and named (engine.Target.RowNamespace), bound to each of them: Namespaced's,
// InPlaceDrain's when a plan drains (its node rights cluster-scoped, once), and for each other
// kind of object the manifests hold, create, get, update and delete in each namespace. A
// cluster-scoped kind in the manifests is refused: a namespace of the user's cannot hold it.
func NamespacedNeed(plans []*check.Resolved, namespaces []string, mapper meta.RESTMapper) ([]Right, error) {
	features := []Feature{Namespaced}
	for _, r := range plans {
		if f := InPlaceOf[Feature(r.Plan().Disruption.Kind.Info().Rights)]; f != "" && !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	base := Of(features...)
	granted := map[string]bool{}
	for _, r := range base {
		if r.Subresource == "" && slices.Contains(r.Verbs, "create") {
			granted[r.Group+"/"+r.Resource] = true
		}
	}
	kinds, err := manifestKinds(plans, mapper)
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if granted[k.Group+"/"+k.Resource] {
			continue
		}
		if k.ClusterScoped {
			return nil, fmt.Errorf("%s: a cluster-scoped object cannot be applied into a namespace of yours (--row-namespace); apply it yourself, or run without --row-namespace", strings.TrimPrefix(k.Why, "the app's manifests hold "))
		}
		k.Feature, k.Verbs, k.Namespace = AppManifests, []string{"create", "get", "update", "delete"}, RowNamespace
		base = append(base, k)
	}
	var out []Right
	for i, ns := range namespaces {
		for _, r := range Bind(base, ns, "") {
			if r.ClusterScoped && i > 0 {
				continue // asked once
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Review asks the API server, with one SelfSubjectAccessReview per verb, whether the client's
// user has rights, and returns the checks it was denied, in rights' order. A right of the
// run's own namespaces is asked for every namespace: they do not exist yet.
func Review(ctx context.Context, cs kubernetes.Interface, rights []Right) ([]Check, error) {
	var denied []Check
	for _, c := range Checks(rights) {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: c.Namespace, Verb: c.Verb,
				Group: c.Group, Resource: c.Resource, Subresource: c.Subresource}}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("ask the API server whether this user may %s: %w", c, err)
		}
		if !got.Status.Allowed {
			denied = append(denied, c)
		}
	}
	return denied, nil
}

// Refusal is the one line that says a run may not start: the checks denied, and the manifests
// that grant them.
func Refusal(denied []Check) string {
	var hints []string
	for _, c := range denied {
		if h := Hint(c.Feature); !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	return fmt.Sprintf("this user may not %s: rollcheck needs it before any work; %s grant(s) it (README, \"Least privilege\")",
		joinChecks(denied), joinWords(hints))
}

// Unmeasured is the line that says what a run will not measure without an optional feature's
// rights, and which right would give it.
func Unmeasured(f Feature, denied []Check) string {
	return fmt.Sprintf("%s: not measured: this user may not %s (%s grants it)", f.Measures(), joinChecks(denied), Hint(f))
}

func joinWords(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// InPlaceNeed is every required right of the plans of an app checked where it already runs
// (check.Plan.InPlace), bound to its namespace: InPlace's, InPlaceRollout's for an Argo Rollout, InPlaceBudget's when a variant asks
// for a budget, InPlaceDrain's when a plan drains; and for the load pods, InPlaceLoad's bound to
// loadNS, or, without one (each row creates a namespace of its own), core.yaml's rights on
// namespaces, pods, their logs and proxy, and the list of Services a row's teardown waits on, in
// every namespace.
func InPlaceNeed(plans []*check.Resolved, loadNS string) []Right {
	features, app := []Feature{InPlace}, ""
	add := func(f Feature) {
		if !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	for _, r := range plans {
		p := r.Plan()
		app = p.App.Namespace
		if p.App.Kind == check.KindRollout {
			add(InPlaceRollout)
		}
		if p.Variant.PDB != nil {
			add(InPlaceBudget)
		}
		if f := Feature(p.Disruption.Kind.Info().Rights); f != "" {
			add(InPlaceOf[f])
		}
	}
	if loadNS != "" {
		add(InPlaceLoad)
	}
	out := Bind(Of(features...), app, loadNS)
	if loadNS != "" {
		return out
	}
	for _, r := range Of(Core) {
		switch r.Name() {
		case "namespaces", "pods", "pods/log", "pods/proxy":
			out = append(out, r)
		case "services":
			r.Verbs = []string{"list"}
			out = append(out, r)
		}
	}
	return out
}
