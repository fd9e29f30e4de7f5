// Package access is the one list of the rights a rollcheck run needs on a cluster, per feature:
// the manifests in examples/rbac are generated from it (Manifests), and a run on a cluster
// rollcheck does not own asks the API server for each right its plans need before any work
// (Review).
package access

import (
	"fmt"
	"strings"
)

// Feature is a part of a run that needs rights of its own.
type Feature string

// The features. Core and Drain are required by the plans that use them; NodeInfo and
// KubeProxyMetrics are optional: without them the run goes on and says what it could not measure.
const (
	// Core is every run: its namespaces, the app's objects, the load pods, the observer.
	Core Feature = "core"
	// NodeInfo reads the node the app runs on, for the container runtime's version a row records.
	NodeInfo Feature = "node-info"
	// KubeProxyMetrics reads kube-proxy's programming histogram and mode through the API
	// server's pod proxy in kube-system.
	KubeProxyMetrics Feature = "kube-proxy-metrics"
	// Drain cordons a node and evicts the app's pods through the eviction API (a disruption
	// kind whose check.DisruptionInfo.Rights names it: drain-node).
	Drain Feature = "drain"
	// Audit reads a cluster's workloads for rollcheck audit (list only: it changes nothing).
	Audit Feature = "audit"
	// InPlace is every run of an app checked where it already runs (check.Plan.InPlace), in its
	// namespace: read it, watch it, disrupt it, record and restore its Deployment.
	InPlace Feature = "in-place"
	// InPlaceBudget creates and deletes the budget a variant asks for in the app's namespace.
	InPlaceBudget Feature = "in-place-budget"
	// InPlaceRollout reads, changes and restores an Argo Rollout checked in place (its
	// namespace only).
	InPlaceRollout Feature = "in-place-rollout"
	// InPlaceDrain drains a node of an app checked in place: its cordon, and evictions in the
	// app's namespace only.
	InPlaceDrain Feature = "in-place-drain"
	// InPlaceLoad runs the load pods in a namespace of the user's, kept (rollcheck check
	// --load-namespace): with it and InPlace a run needs no right outside two namespaces.
	InPlaceLoad Feature = "in-place-load"
	// Namespaced is every run whose rows apply their app into namespaces the user created and
	// named (rollcheck check --row-namespace NS, repeated): a Role in each, no ClusterRole; with
	// it a run needs no right outside those namespaces (a drain adds InPlaceDrain's, bound there).
	Namespaced Feature = "namespaced"
)

// The namespaces of an app checked in place and of its load pods are the user's, named when a
// run starts: the rights hold these placeholders, Bind puts the names in, and the generated
// Roles have no namespace of their own (kubectl apply -n NAMESPACE places them).
const (
	AppNamespace  = "<the app's namespace>"
	LoadNamespace = "<the load namespace>"
	RowNamespace  = "<each rows namespace>"
)

// AppManifests stands for the rights the app's manifests need beyond rollcheck's own objects (a
// Secret, a ServiceAccount of theirs): no generated file grants them.
const AppManifests Feature = "manifests"

// InPlaceOf is, for each feature a disruption kind may need (check.DisruptionInfo.Rights), the
// feature that grants the same to a check in place, in the app's namespace only.
var InPlaceOf = map[Feature]Feature{Drain: InPlaceDrain}

// Features lists the features in the order the manifests hold them.
var Features = []Feature{Core, NodeInfo, KubeProxyMetrics, Drain, Audit, InPlace, InPlaceBudget, InPlaceRollout, InPlaceDrain, InPlaceLoad, Namespaced}

// Optional reports whether a run goes on without f's rights.
func (f Feature) Optional() bool { return f == NodeInfo || f == KubeProxyMetrics }

// Measures is what a run cannot measure without an optional feature's rights.
func (f Feature) Measures() string {
	switch f {
	case NodeInfo:
		return "the container runtime's version of the app's node"
	case KubeProxyMetrics:
		return "kube-proxy's network-programming lag and mode"
	}
	return ""
}

// ProxyNamespace is where kube-proxy's pods run (as internal/proxymetrics reads them).
const ProxyNamespace = "kube-system"

// Right is one rule: verbs on a resource (and subresource) of an API group, in a namespace.
type Right struct {
	Feature     Feature
	Group       string // "" is the core group
	Resource    string
	Subresource string
	Verbs       []string
	// ClusterScoped: the resource has no namespace (namespaces, nodes).
	ClusterScoped bool
	// Namespace is the one namespace the right is needed in (a Role there is enough), or ""
	// for a cluster-scoped resource or the run's own namespaces: those are made per row with
	// generated names, so the right is needed in every namespace (a ClusterRole).
	Namespace string
	// Why says which call needs it.
	Why string
}

// Name is the resource as RBAC and kubectl write it: "pods/eviction".
func (r Right) Name() string {
	if r.Subresource != "" {
		return r.Resource + "/" + r.Subresource
	}
	return r.Resource
}

// Where says where the right is needed, for a line to a user.
func (r Right) Where() string {
	switch {
	case r.Namespace == AppNamespace || r.Namespace == LoadNamespace || r.Namespace == RowNamespace:
		return "in " + strings.Trim(r.Namespace, "<>")
	case r.Namespace != "":
		return "in namespace " + r.Namespace
	case r.Feature == Audit:
		return "in every namespace (for --all-namespaces; with -n NS, in NS is enough)"
	case r.ClusterScoped:
		return "(cluster-scoped)"
	default:
		return "in every namespace (the run's namespaces are made per row)"
	}
}

// Rights is every right a run may need (and rollcheck audit's, read only), found by reading every API call of the engine and the
// packages it calls (internal/kube, internal/observe, internal/disrupt, internal/proxymetrics,
// engine's load pods and clocks) and what check.Resolved.Objects renders. The kind front end's
// own calls (the sweep, the CoreDNS change, the kube-proxy mode check) run with the
// credentials of a cluster rollcheck created, and are not part of it.
var Rights = []Right{
	{Core, "", "namespaces", "", []string{"create", "delete", "list"}, true, "",
		"a namespace per row (labelled with the run), deleted at its end; the run's are listed until they are gone"},
	{Core, "apps", "deployments", "", []string{"create", "get", "update", "patch"}, false, "",
		"the app's Deployment: applied, its rollout waited for, restarted and scaled by patches"},
	{Core, "", "services", "", []string{"create", "get", "list", "update", "delete"}, false, "",
		"rollcheck's load Service and the app's own: applied, read for the cluster address, deleted at teardown"},
	{Core, "", "configmaps", "", []string{"create", "get", "update"}, false, "",
		"the ConfigMaps of the app's manifests (another kind there needs its create too: the run names it)"},
	{Core, "", "pods", "", []string{"create", "get", "list", "watch", "delete"}, false, "",
		"load pods; the observer's watch; the pod deletions a row disrupts with; teardown"},
	{Core, "", "pods", "log", []string{"get"}, false, "",
		"the app's lifecycle lines and the load pods' ledgers, streamed through the API server"},
	{Core, "", "pods", "proxy", []string{"get"}, false, "",
		"each load pod's clock, read through the API server's pod proxy"},
	{Core, "discovery.k8s.io", "endpointslices", "", []string{"list", "watch"}, false, "",
		"the observer's watch of the load Service's endpoints"},
	{Core, "", "events", "", []string{"list", "watch"}, false, "",
		"the observer's watch of the pods' events"},
	{NodeInfo, "", "nodes", "", []string{"get"}, true, "",
		"the container runtime's version of the node the app runs on"},
	{KubeProxyMetrics, "", "pods", "", []string{"list"}, false, ProxyNamespace,
		"the kube-proxy pods (k8s-app=kube-proxy)"},
	{KubeProxyMetrics, "", "pods", "proxy", []string{"get"}, false, ProxyNamespace,
		"kube-proxy's /metrics and /proxyMode through the API server's pod proxy"},
	{Drain, "", "nodes", "", []string{"get", "patch"}, true, "",
		"cordon and uncordon the node that runs the most of the app's pods"},
	{Drain, "", "pods", "eviction", []string{"create"}, false, "",
		"evict the app's pods through the eviction API, which respects their budgets"},
	{Drain, "policy", "poddisruptionbudgets", "", []string{"create", "get", "update"}, false, "",
		"the budget a variant asks for (pdb:), or the app's manifests hold"},
	{Audit, "apps", "deployments", "", []string{"list"}, false, "", "the workloads rollcheck audit scores"},
	{Audit, "apps", "statefulsets", "", []string{"list"}, false, "", "the workloads rollcheck audit scores"},
	{Audit, "", "services", "", []string{"list"}, false, "", "the Services that select them (headless ones too)"},
	{Audit, "policy", "poddisruptionbudgets", "", []string{"list"}, false, "", "the budgets that bound their drains"},
	{Audit, "networking.k8s.io", "ingresses", "", []string{"list"}, false, "", "the Ingresses that lead to them"},
	{Audit, "gateway.networking.k8s.io", "httproutes", "", []string{"list"}, false, "", "the Gateway API routes that lead to them (where the API is served)"},
	{Audit, "gateway.networking.k8s.io", "grpcroutes", "", []string{"list"}, false, "", "the Gateway API routes that lead to them (where the API is served)"},

	{InPlace, "apps", "deployments", "", []string{"get", "update", "patch"}, false, AppNamespace,
		"the Deployment: read, its rollout waited for, recorded and restored (update), restarted and scaled (patch)"},
	{InPlace, "apps", "replicasets", "", []string{"get", "list", "patch"}, false, AppNamespace,
		"the record the Deployment controller copied onto the Deployment's ReplicaSets, removed after the restore; the ReplicaSet of an Argo Rollout's revision that rollcheck gate --rollout checks, read and waited for"},
	{InPlace, "", "pods", "", []string{"get", "list", "watch", "delete"}, false, AppNamespace,
		"the observer's watch of the app's pods; the pod deletions a row disrupts with"},
	{InPlace, "", "pods", "log", []string{"get"}, false, AppNamespace,
		"the app's lifecycle lines"},
	{InPlace, "", "services", "", []string{"get", "list"}, false, AppNamespace,
		"the app's Service the load goes to (app.service, else the one that selects its pods)"},
	{InPlace, "discovery.k8s.io", "endpointslices", "", []string{"list", "watch"}, false, AppNamespace,
		"the observer's watch of the app's Service's endpoints"},
	{InPlace, "", "events", "", []string{"list", "watch"}, false, AppNamespace,
		"the observer's watch of the pods' events"},
	{InPlace, "coordination.k8s.io", "leases", "", []string{"get", "create", "update", "delete"}, false, AppNamespace,
		"the Deployment's Lease (rollcheck-DEPLOYMENT): one run checks it at a time, holding and renewing it, and deletes it at its end"},
	{InPlaceRollout, "argoproj.io", "rollouts", "", []string{"get", "update", "patch"}, false, AppNamespace,
		"the Argo Rollout: read, its rollout waited for, recorded and restored (update), restarted (spec.restartAt) and scaled (patch)"},
	{InPlaceBudget, "policy", "poddisruptionbudgets", "", []string{"create", "get", "delete"}, false, AppNamespace,
		"the budget a variant asks for (pdb:, rollcheck check --in-place): created for the row, deleted after it"},
	{InPlaceDrain, "", "nodes", "", []string{"get", "patch"}, true, "",
		"cordon and uncordon the node that runs the most of the app's pods"},
	{InPlaceDrain, "", "pods", "eviction", []string{"create"}, false, AppNamespace,
		"evict the app's pods through the eviction API, which respects their budgets"},
	{InPlaceLoad, "", "pods", "", []string{"create", "get", "list", "watch", "delete"}, false, LoadNamespace,
		"the load pods, deleted after each row (the namespace is kept)"},
	{InPlaceLoad, "", "pods", "log", []string{"get"}, false, LoadNamespace,
		"the load pods' ledgers, streamed through the API server"},
	{InPlaceLoad, "", "pods", "proxy", []string{"get"}, false, LoadNamespace,
		"each load pod's clock, read through the API server's pod proxy"},

	{Namespaced, "apps", "deployments", "", []string{"create", "get", "list", "update", "patch", "delete"}, false, RowNamespace,
		"the app's Deployment: applied, its rollout waited for, restarted and scaled by patches, deleted at the row's end; those a killed run left, listed and deleted"},
	{Namespaced, "", "services", "", []string{"create", "get", "list", "update", "delete"}, false, RowNamespace,
		"rollcheck's load Service and the app's own: applied, read for the cluster address, deleted at the row's end; those a killed run left, listed and deleted"},
	{Namespaced, "", "configmaps", "", []string{"create", "get", "list", "update", "delete"}, false, RowNamespace,
		"the ConfigMaps of the app's manifests (another kind there needs its create, get, update and delete too: the run names it); those a killed run left, listed and deleted"},
	{Namespaced, "policy", "poddisruptionbudgets", "", []string{"create", "get", "list", "update", "delete"}, false, RowNamespace,
		"the budget a variant asks for (pdb:), or the app's manifests hold, deleted at the row's end; those a killed run left, listed and deleted"},
	{Namespaced, "", "pods", "", []string{"create", "get", "list", "watch", "delete"}, false, RowNamespace,
		"load pods; the observer's watch; the pod deletions a row disrupts with; the row's end (only pods labelled rollcheck.io/run)"},
	{Namespaced, "", "pods", "log", []string{"get"}, false, RowNamespace,
		"the app's lifecycle lines and the load pods' ledgers, streamed through the API server"},
	{Namespaced, "", "pods", "proxy", []string{"get"}, false, RowNamespace,
		"each load pod's clock, read through the API server's pod proxy"},
	{Namespaced, "discovery.k8s.io", "endpointslices", "", []string{"list", "watch"}, false, RowNamespace,
		"the observer's watch of the load Service's endpoints"},
	{Namespaced, "", "events", "", []string{"list", "watch"}, false, RowNamespace,
		"the observer's watch of the pods' events"},
	{Namespaced, "coordination.k8s.io", "leases", "", []string{"get", "create", "update", "delete"}, false, RowNamespace,
		"the namespace's Lease (rollcheck-rows): one run uses it at a time, holding and renewing it, and deletes it at its end"},
}

// Bind returns rights with the placeholders AppNamespace and LoadNamespace replaced by app and
// load ("" for load: in every namespace, where each row creates its own), and RowNamespace by
// app too (a rows namespace holds the app: Namespaced binds there what InPlaceDrain binds to an
// app's namespace).
func Bind(rights []Right, app, load string) []Right {
	out := make([]Right, len(rights))
	for i, r := range rights {
		switch r.Namespace {
		case AppNamespace, RowNamespace:
			r.Namespace = app
		case LoadNamespace:
			r.Namespace = load
		}
		out[i] = r
	}
	return out
}

// Of returns the rights of the given features, in Rights' order.
func Of(features ...Feature) []Right {
	var out []Right
	for _, r := range Rights {
		for _, f := range features {
			if r.Feature == f {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Check is one verb of one right: what a SelfSubjectAccessReview asks.
type Check struct {
	Right
	Verb string
}

// String is the one line a refusal names: "create pods/eviction in every namespace (...)".
func (c Check) String() string {
	res := c.Name()
	if c.Group != "" {
		res += "." + c.Group
	}
	return fmt.Sprintf("%s %s %s", c.Verb, res, c.Where())
}

// Checks splits rights into one Check per verb.
func Checks(rights []Right) []Check {
	var out []Check
	for _, r := range rights {
		for _, v := range r.Verbs {
			out = append(out, Check{Right: r, Verb: v})
		}
	}
	return out
}

// Hint names the manifest that grants a feature's rights, for a line to a user.
func Hint(f Feature) string {
	switch f {
	case AppManifests:
		return "a rule of your own for the kinds your manifests hold (examples/rbac covers rollcheck's own)"
	case InPlace, InPlaceBudget, InPlaceRollout, InPlaceDrain:
		return "examples/rbac/" + manifestFile(f) + " (kubectl apply -n in the app's namespace)"
	case InPlaceLoad:
		return "examples/rbac/" + manifestFile(f) + " (kubectl apply -n in the load namespace)"
	case Namespaced:
		return "examples/rbac/" + manifestFile(f) + " (kubectl apply -n in each rows namespace)"
	}
	return "examples/rbac/" + manifestFile(f)
}

func manifestFile(f Feature) string { return string(f) + ".yaml" }

// joinChecks writes checks on one line.
func joinChecks(cs []Check) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, "; ")
}
