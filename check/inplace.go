package check

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/rollcheck/rollcheck/loadgen"
)

// InPlace reports whether the Plan checks an app where it already runs (App.Namespace): its
// Deployment is read from the cluster, disrupted there and, when the Variant changes it, changed
// there and restored after the row.
func (p Plan) InPlace() bool { return p.App.Namespace != "" }

// Workload names the workload of an app checked in place: "Deployment NS/NAME", "Rollout
// NS/NAME" (Kind), or "ReplicaSet NS/NAME of Rollout/OWNER" (ReplicaSetOf).
func (a App) Workload() string {
	switch {
	case a.ReplicaSetOf != "":
		return fmt.Sprintf("ReplicaSet %s/%s of %s", a.Namespace, a.Deployment, a.ReplicaSetOf)
	case a.Kind == KindRollout:
		return fmt.Sprintf("Rollout %s/%s", a.Namespace, a.Deployment)
	}
	return fmt.Sprintf("Deployment %s/%s", a.Namespace, a.Deployment)
}

// errNotRead is App.deployment's answer for an app checked in place whose live Deployment the
// engine has not read yet: Validate checks what it can without it.
var errNotRead = errors.New("the Deployment is read from the cluster when the row runs")

// Changes lists what the Variant changes of the app's Deployment or its namespace (preStop,
// stopSignal, terminationGracePeriodSeconds, replicas, patch, pdb, externalTrafficPolicy), by
// the check file's field names; none for an as-is variant. In place, a variant that changes
// anything runs only when the user asks for it (rollcheck check --in-place).
func (v Variant) Changes() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(v.PreStop != nil, "preStop")
	add(v.StopSignal != "", "stopSignal")
	add(v.TerminationGracePeriodSeconds != nil, "terminationGracePeriodSeconds")
	add(v.Replicas != nil, "replicas")
	add(len(v.Patch) > 0, "patch")
	add(v.PDB != nil, "pdb")
	add(v.ExternalTrafficPolicy != "", "externalTrafficPolicy")
	return out
}

// inPlaceProblems checks what an app checked in place may not ask for: manifests and images
// (nothing is applied or loaded), rollcheck's own load Service (there is none: the load goes
// to the app's Service or to a URL), and a Deployment it cannot name.
func (p Plan) inPlaceProblems() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	a := p.App
	if !p.InPlace() {
		if a.Service != "" {
			bad("service %q: only for an app checked in place (namespace)", a.Service)
		}
		if a.ReplicaSetOf != "" {
			bad("a ReplicaSet of %s: only for an app checked in place (namespace)", a.ReplicaSetOf)
		}
		if a.Kind != "" {
			bad("a %s: only checked in place (namespace)", a.Kind)
		}
		return errs
	}
	switch a.Kind {
	case "", "Deployment":
	case KindRollout:
		if a.ReplicaSetOf != "" {
			bad("a ReplicaSet of %s names a revision, not a Rollout to check in place", a.ReplicaSetOf)
		}
	default:
		bad("a workload of kind %q: want a Deployment or an Argo Rollout", a.Kind)
	}
	if o := a.ReplicaSetOf; o != "" {
		kind, name, ok := strings.Cut(o, "/")
		if !ok || kind == "" || !dnsSubdomain.MatchString(name) {
			bad("a ReplicaSet of %q: want its owner as KIND/NAME (Rollout/web)", o)
		}
		if ch := p.Variant.Changes(); len(ch) > 0 {
			bad("variant %s would change %s: the ReplicaSet %s of %s is checked as it runs (its one variant is as-is)", p.Variant.Name, strings.Join(ch, ", "), a.Deployment, o)
		}
		if k := p.Disruption.Kind; k != DeletePod && k != ForceDelete {
			bad("disruption %s: the ReplicaSet %s of %s is disrupted only by pod deletions (delete-pod, force-delete): its replicas and pod template are %s's", k, a.Deployment, o, o)
		}
	}
	if !dnsLabel.MatchString(a.Namespace) {
		bad("namespace %q: want a namespace name (a DNS label)", a.Namespace)
	}
	if a.Deployment == "" {
		bad("namespace %s: name the Deployment checked there (deployment, or rollout)", a.Namespace)
	}
	if a.Service != "" && !dnsLabel.MatchString(a.Service) {
		bad("service %q: want a Service name (a DNS label)", a.Service)
	}
	if len(a.Images) > 0 {
		bad("images %s: nothing is loaded for an app checked in place (namespace %s): it runs the images it runs", strings.Join(a.Images, ", "), a.Namespace)
	}
	for _, o := range a.Objects {
		if o.GetNamespace() != a.Namespace || kindOf(o) != "Deployment" || o.GetName() != a.Deployment || len(a.Objects) > 1 {
			bad("manifests: nothing is applied for an app checked in place (namespace %s)", a.Namespace)
			break
		}
	}
	if p.Variant.ExternalTrafficPolicy != "" {
		bad("externalTrafficPolicy %s: an app checked in place has no load Service of rollcheck's to set it on", p.Variant.ExternalTrafficPolicy)
	}
	if p.Load.Protocol == loadgen.ProtocolGRPC && p.Load.GRPC.Balancing == loadgen.BalancingRoundRobin {
		bad("load grpc balancing round_robin: it resolves rollcheck's headless Service, which an app checked in place does not get (nothing is created in namespace %s but a budget a variant asks for)", a.Namespace)
	}
	if h := shortHost(p.Load.URL); h != "" && p.Load.From == LoadFromCluster {
		bad("load url %s: a load pod resolves the short name %s in rollcheck's own namespace, not in %s: write %s.%s.svc (or the address your clients use)", p.Load.URL, h, a.Namespace, h, a.Namespace)
	}
	if r := p.Load.Resolve; r != "" && !strings.Contains(strings.TrimSuffix(r, "."), ".") {
		bad("load resolve %s: a load pod asks for the short name %s in rollcheck's own namespace, not in %s: write %s.%s.svc", r, r, a.Namespace, r, a.Namespace)
	}
	if p.Load.From == LoadFromHost && !p.Load.Through() {
		bad("load from the host: an app checked in place has no NodePort of rollcheck's; send the load from the cluster (load pods, to its Service) or give load url, an address the host reaches (the ingress or load balancer its clients use)")
	}
	return errs
}

// dnsLabel is a DNS label (RFC 1123): what namespaces and Services are named.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// dnsSubdomain is a DNS subdomain (RFC 1123): what most objects (a Rollout) are named.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// shortHost is the host of URL u when it is a short name (no dot, not an address), which a
// load pod resolves in its own namespace; "" otherwise.
func shortHost(u string) string {
	if u == "" || outsideNamespace(u) != "" {
		return ""
	}
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Hostname()
}
