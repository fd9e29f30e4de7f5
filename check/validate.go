package check

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/internal/limits"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/loadgen"
)

// clusterScoped are kinds that live outside any namespace: rollcheck applies an app into a
// namespace it owns, so manifests may not hold them.
var clusterScoped = []string{"Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
	"CustomResourceDefinition", "StorageClass", "PriorityClass", "IngressClass", "RuntimeClass",
	"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService", "CSIDriver"}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// MaxRepeat is the most runs of one row a check asks for (Plan.Repeat, a check file's repeat,
// ROLLCHECK_REPEAT).
const MaxRepeat = 20

// ValidName is the rule of every name rollcheck turns into a namespace or a file name (a
// variant's, a check's): 1 to 40 lower-case letters, digits and dashes, a letter or digit at
// each end.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q: want 1-40 lower-case letters, digits and dashes", name)
	}
	return nil
}

// Validate checks the Plan (with its defaults filled) before any cluster work and reports
// every problem at once, on one line. Warnings are things that are allowed but weaken the
// verdict, such as a Deployment without a readiness probe, or a preStop that outlasts the
// grace period. It is Resolve for a caller that wants only the verdict on the plan: what runs a
// plan takes its Resolved.
func (p Plan) Validate() (warnings []string, err error) {
	warnings, _, err = p.WithDefaults().validate()
	return warnings, err
}

// validate is Validate on a plan whose defaults are filled; it also returns the Deployment under
// test as the Variant changes it, when it could be built (nil otherwise, and for an app in place
// whose live Deployment is not read yet).
func (p Plan) validate() (warnings []string, rendered *appsv1.Deployment, err error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.Suite == "" {
		bad("suite: empty")
	}
	dep, derr := p.App.deployment()
	if derr != nil && !errors.Is(derr, errNotRead) {
		errs = append(errs, derr)
	}
	errs = append(errs, p.App.check()...)
	errs = append(errs, p.inPlaceProblems()...)
	if err := ValidName(p.Variant.Name); err != nil {
		bad("variant name %v", err)
	}
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		bad("repeat %d: want 0 (once) to %d", p.Repeat, MaxRepeat)
	}
	errs = append(errs, p.Variant.PreStop.check()...)
	if sig := p.Variant.StopSignal; sig != "" && !stopSignalName.MatchString(sig) {
		bad("stopSignal %q: want a signal name such as SIGQUIT or SIGINT", sig)
	}
	if g := p.Variant.TerminationGracePeriodSeconds; g != nil && (*g < 0 || *g > 600) {
		bad("terminationGracePeriodSeconds %d: want 0 to 600", *g)
	}
	if r := p.Variant.Replicas; r != nil && (*r < 1 || *r > 10) {
		bad("replicas %d: want 1 to 10", *r)
	}
	if err := p.Variant.Expect.Validate(); err != nil {
		errs = append(errs, err)
	}
	kind := p.Disruption.Kind.Info()
	if kind.HostLoad != "" && p.Load.From == LoadFromCluster {
		bad("%s with load from the cluster: %s; send the load from the host", kind.Kind, kind.HostLoad)
	}
	if !slices.Contains(DisruptionKinds, p.Disruption.Kind) {
		bad("disruption %q: want %s", p.Disruption.Kind, orList(DisruptionKinds))
	}
	switch t := p.Disruption.DrainTimeout; {
	case t == 0:
	case !kind.Evicts:
		bad("disruption drainTimeout %s: only for %s, not %s", t, evicting(), p.Disruption.Kind)
	case t < 5*time.Second || t > 10*time.Minute:
		bad("disruption drainTimeout %s: want 5s to 10m", t)
	}
	if b := p.Variant.PDB; b != nil {
		errs = append(errs, b.check()...)
		if own := p.App.budgets(); len(own) > 0 {
			bad("pdb: the manifests hold PodDisruptionBudget %s already; the eviction API refuses a pod that two budgets select: keep one", strings.Join(own, ", "))
		}
		if !kind.Evicts && p.Disruption.Kind != "" {
			warnings = append(warnings, fmt.Sprintf("pdb %s: only evictions (%s) honour a PodDisruptionBudget; %s deletes or replaces pods without asking it, so the budget changes nothing here", b, evicting(), p.Disruption.Kind))
		}
	}
	errs = append(errs, p.entryProblems()...)
	if p.Variant.Expect.DrainBlocked && !kind.Evicts {
		bad("expect drainBlocked: only a %s disruption can be blocked, not %s", evicting(), p.Disruption.Kind)
	}
	if c := p.Disruption.Count; c < 1 || c > 20 {
		bad("disruption count %d: want 1 to 20", c)
	}
	if r := p.Load.Rate; r < 1 || r > 2000 {
		bad("load rate %d req/s: want 1 to 2000", r)
	}
	if f := p.Load.From; f != LoadFromHost && f != LoadFromCluster {
		bad("load from %q: want host or cluster", f)
	}
	switch n := p.Load.Pods; {
	case n < 1 || n > MaxLoadPods:
		bad("load pods %d: want 1 to %d", n, MaxLoadPods)
	case n > 1 && p.Load.From != LoadFromCluster:
		bad("load pods %d: several load pods need load from the cluster", n)
	case n > p.Load.Rate && p.Load.Rate > 0:
		bad("load pods %d for %d req/s: each pod needs at least 1 req/s", n, p.Load.Rate)
	}
	if u := p.Load.URL; u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || pu.User != nil {
			bad("load url %q: want an http(s) URL with a host and no user info, such as http://front/", u)
		}
	}
	switch h := p.Load.Host; {
	case h == "":
	case p.Load.URL == "":
		bad("load host %q: a Host header needs a load url", h)
	case strings.ContainsAny(h, " \t\r\n/\x00"):
		bad("load host %q: want a host name, optionally with a port", h)
	}
	switch h := p.Load.UpstreamHeader; {
	case h == "":
	case p.Load.URL == "":
		bad("load upstreamHeader %q: only a proxy in front (a load url) names an upstream", h)
	case !headerName.MatchString(h):
		bad("load upstreamHeader %q: want an HTTP header name", h)
	}
	if r := p.Load.Resolve; r != "" {
		switch {
		case p.Load.From != LoadFromCluster:
			bad("load resolve %q: the name is asked from a load pod; send the load from the cluster", r)
		case !dnsName.MatchString(strings.TrimSuffix(r, ".")):
			bad("load resolve %q: want a DNS name such as app-headless", r)
		}
	}
	switch rr, rs := p.Load.ResolveRefresh, p.Load.ResolveSetting; {
	case rr == 0 && rs == "":
	case p.Load.Resolve == "":
		bad("load resolveRefresh %s (%q): only a proxy that resolves a name (load resolve) refreshes it", rr, rs)
	case !p.Load.Through():
		bad("load resolveRefresh %s (%q): only a proxy in front (a load url) refreshes what it resolved; without one, load resolve is measured only", rr, rs)
	case rr < 0 && rr != ResolveOnce:
		bad("load resolveRefresh %s: want a positive duration, or ResolveOnce", rr)
	case rr == 0:
		bad("load resolveSetting %q: names the setting of a resolveRefresh, which is not set", rs)
	}
	switch pr := p.Load.Protocol; {
	case pr != "" && !slices.Contains(loadgen.Protocols, pr):
		bad("load protocol %q: want %s", pr, joinProtocols())
	case pr == loadgen.ProtocolGRPC:
		g := p.Load.GRPC
		if g.Method != "" && (!strings.HasPrefix(g.Method, "/") || strings.Count(g.Method, "/") != 2 || strings.HasSuffix(g.Method, "/")) {
			bad("load grpc method %q: want /package.Service/Method", g.Method)
		}
		switch g.Balancing {
		case "", loadgen.BalancingPickFirst:
		case loadgen.BalancingRoundRobin:
			if p.Load.From != LoadFromCluster {
				bad("load grpc balancing round_robin: the client resolves the app's headless Service by the cluster's DNS; send the load from the cluster")
			}
		default:
			bad("load grpc balancing %q: want pick_first or round_robin", g.Balancing)
		}
		if p.Load.URL != "" {
			bad("load url %q: a gRPC load goes to rollcheck's load Service (or its headless twin), not to an address in front", p.Load.URL)
		}
	case !p.Load.GRPC.zero():
		bad("load grpc settings: only for protocol grpc, not %s", cmp.Or(pr, loadgen.ProtocolHTTP1))
	}
	if m := p.Load.Method; m != "GET" && m != "POST" {
		bad("load method %q: want GET or POST", m)
	}
	if d := p.Load.Timeout; d <= 0 || d > 2*time.Minute {
		bad("load timeout %s: want more than 0 and at most 2m", d)
	} else if n := loadgen.InFlight(p.Load.Rate, d); n > loadgen.MaxInFlight {
		bad("load rate %d req/s with timeout %s: an app that stops answering would hold %d requests in flight, more than the load's %d workers; lower the rate or the timeout", p.Load.Rate, d, n, loadgen.MaxInFlight)
	}
	if p.Quiet < 0 || p.Quiet > 5*time.Minute {
		bad("quiet %s: want 0 to 5m", p.Quiet)
	}
	// The Deployment as the variant changes it is checked whenever it can be built (a
	// container declares the port), so that a bad patch is reported with the other problems.
	// The load bound is checked only on an otherwise valid plan: a count or quiet already
	// reported would only make it say the same again.
	if dep != nil && appContainer(dep, p.App) != nil {
		valid := len(errs) == 0
		d, perr := p.Variant.apply(dep, p.App, p.Load)
		if perr != nil {
			errs = append(errs, perr)
		} else {
			rendered = d
			// A Deployment without replicas runs one (the API server's default).
			if r := replicas(d); int(r) < kind.MinReplicas {
				bad("%s needs at least %d replicas, the Deployment has %d", kind.Kind, kind.MinReplicas, r)
			}
			if g := time.Duration(grace(d)) * time.Second; kind.GraceAbove > 0 && g <= kind.GraceAbove {
				bad("%s %s: it needs terminationGracePeriodSeconds above %d, the Deployment has %d", kind.Kind, kind.GraceWhy, int(kind.GraceAbove/time.Second), grace(d))
			}
			c := appContainer(d, p.App)
			if c != nil && c.ReadinessProbe == nil {
				warnings = append(warnings, fmt.Sprintf("Deployment %s: container %s has no readiness probe, so a rollout does not wait for new pods to serve and its verdict says little", d.Name, c.Name))
			}
			ps := preStopOf(c)
			pre, known := ps.Duration()
			switch {
			case c != nil && ps.Sleep > 0 && pre >= time.Duration(grace(d))*time.Second:
				// The API server refuses it (Deployment validation, Kubernetes 1.34): a native
				// sleep must be shorter than the grace period. Say so before any cluster work.
				bad("Deployment %s: container %s's native preStop sleep (%s) must be shorter than terminationGracePeriodSeconds (%ds), as the API server requires; a hook past the grace period needs exec or httpGet", d.Name, c.Name, pre, grace(d))
			case c != nil && known && pre > time.Duration(grace(d))*time.Second:
				warnings = append(warnings, fmt.Sprintf("Deployment %s: container %s's preStop (%s) is longer than terminationGracePeriodSeconds (%ds): the kubelet cuts the hook at the grace period's end and gives SIGTERM only its 2 s minimum before SIGKILL", d.Name, c.Name, pre, grace(d)))
			}
			if lb := p.loadBound(d); valid && lb > loadgen.MaxDuration {
				bad("%d × %s disruptions may take up to %s with a grace period of %ds, longer than the load may run (%s): fewer disruptions or a shorter grace period",
					p.Disruption.Count, p.Disruption.Kind, lb.Round(time.Second), grace(d), loadgen.MaxDuration)
			}
		}
	}
	if len(errs) > 0 {
		return warnings, nil, fmt.Errorf("%s: %w", p.Variant.Name, oneline.Join(errs))
	}
	return warnings, rendered, nil
}

// entryProblems checks the load's entry node, the load Service's externalTrafficPolicy and a
// drain of the entry node together: Local shows only with load from the host entering a node
// that runs the app's pods (kube-proxy short-circuits a pod's or a node's own traffic to every
// endpoint, and a load pod reaches the Service at its cluster address, where the policy does not
// apply); the entry node is the host's; only a drain drains it.
func (p Plan) entryProblems() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch e := p.Load.Entry; {
	case e == "":
	case e != EntryNode:
		bad("load entry %q: want node (or none)", e)
	case p.Load.From != LoadFromHost:
		bad("load entry node: only load from the host enters at a node; a load pod reaches the load Service at its cluster address")
	case p.Load.Through():
		bad("load entry node: the load goes to url %s, not to the load Service's NodePort", p.Load.URL)
	}
	switch etp := p.Variant.ExternalTrafficPolicy; {
	case etp == "" || etp == corev1.ServiceExternalTrafficPolicyCluster:
	case etp != corev1.ServiceExternalTrafficPolicyLocal:
		bad("externalTrafficPolicy %q: want Cluster or Local", etp)
	case p.Load.From != LoadFromHost || p.Load.Through():
		bad("externalTrafficPolicy Local: it applies only to traffic that enters a node from outside the cluster; a load pod (or a proxy in the cluster) is short-circuited to every endpoint and would show Cluster's behaviour: send the load from the host with load entry node")
	case p.Load.Entry != EntryNode:
		bad("externalTrafficPolicy Local needs load entry node: the host's default address may enter at a node that runs no pod of the app (kind's control plane), where every request is dropped")
	}
	switch n := p.Disruption.Node; {
	case n == "":
	case !p.Disruption.Kind.Info().Evicts:
		bad("disruption node %q: only for %s, not %s", n, evicting(), p.Disruption.Kind)
	case n != DrainEntry:
		bad("disruption node %q: want entry (or none: the node with the most ready pods)", n)
	case p.Load.Entry != EntryNode:
		bad("disruption node entry: the load enters at no node of its own; set load entry node")
	}
	return errs
}

// WithDefaults fills the zero fields that have defaults.
func (p Plan) WithDefaults() Plan {
	if p.App.Path == "" {
		p.App.Path = DefaultPath
	}
	if p.App.PodHeader == "" {
		p.App.PodHeader = loadgen.DefaultPodHeader
	}
	if p.Disruption.Count == 0 {
		p.Disruption.Count = DefaultCount
	}
	if p.Disruption.Kind.Info().Evicts && p.Disruption.DrainTimeout == 0 {
		p.Disruption.DrainTimeout = DefaultDrainTimeout
	}
	if p.Load.Rate == 0 {
		p.Load.Rate = DefaultRate
	}
	if p.Load.Method == "" {
		p.Load.Method = "GET"
	}
	if p.Load.From == "" {
		p.Load.From = LoadFromHost
	}
	if p.Load.Pods == 0 {
		p.Load.Pods = 1
	}
	if p.Load.Timeout == 0 {
		p.Load.Timeout = loadgen.DefaultTimeout + p.App.RequestDuration
	}
	if p.Quiet == 0 {
		p.Quiet = DefaultQuiet
	}
	return p
}

// loadBound is how long the load may have to run for this plan with the Deployment d.
func (p Plan) loadBound(d *appsv1.Deployment) time.Duration {
	return limits.Load(p.Quiet, p.App.RequestDuration, p.Load.Timeout, p.Disruption.Count, grace(d), p.Disruption.DrainTimeout)
}

// check validates the budget: exactly one of its two fields, a number of pods or a percentage.
func (b PDB) check() []error {
	var errs []error
	if (b.MinAvailable == nil) == (b.MaxUnavailable == nil) {
		errs = append(errs, errors.New("pdb: set exactly one of minAvailable and maxUnavailable"))
	}
	for name, v := range map[string]*intstr.IntOrString{"minAvailable": b.MinAvailable, "maxUnavailable": b.MaxUnavailable} {
		if v != nil && !validBudgetValue(*v) {
			errs = append(errs, fmt.Errorf("pdb %s %s: want a number of pods (0 or more) or a percentage from 0%% to 100%%", name, v.String()))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

var percent = regexp.MustCompile(`^(100|[1-9]?[0-9])%$`)

func validBudgetValue(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal >= 0
	}
	return percent.MatchString(v.StrVal)
}

// budgets names the PodDisruptionBudgets of the manifests.
func (a App) budgets() []string {
	var names []string
	for _, o := range a.Objects {
		if kindOf(o) == "PodDisruptionBudget" {
			names = append(names, o.GetName())
		}
	}
	return names
}

// manifestPDB is the manifests' own policy/v1 PodDisruptionBudget, as a PDB, when they hold one.
func (a App) manifestPDB() *PDB {
	for _, o := range a.Objects {
		if b, ok := o.(*policyv1.PodDisruptionBudget); ok {
			return &PDB{MinAvailable: b.Spec.MinAvailable, MaxUnavailable: b.Spec.MaxUnavailable}
		}
	}
	return nil
}

// budget is the PodDisruptionBudget of the Variant's PDB in namespace ns: it selects the
// Deployment's pods by its matchLabels, as the load Service does.
func budget(ns string, dep *appsv1.Deployment, b PDB) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{}
	pdb.APIVersion, pdb.Kind = "policy/v1", "PodDisruptionBudget"
	pdb.Name, pdb.Namespace = PDBName, ns
	pdb.Labels = map[string]string{PartOfLabel: PartOfValue}
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: maps.Clone(dep.Spec.Selector.MatchLabels)}
	pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable = b.MinAvailable, b.MaxUnavailable
	return pdb
}

// replicas is the Deployment's replica count, 1 when it sets none (the API server's default).
func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

func grace(d *appsv1.Deployment) int64 {
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		return *g
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// deployment returns the Deployment under test from Objects.
func (a App) deployment() (*appsv1.Deployment, error) {
	var deps []*appsv1.Deployment
	var names []string
	for _, o := range a.Objects {
		if d, ok := o.(*appsv1.Deployment); ok {
			deps = append(deps, d)
			names = append(names, d.Name)
		}
	}
	switch {
	case len(deps) == 0 && a.Namespace != "":
		return nil, fmt.Errorf("deployment %s/%s: %w", a.Namespace, a.Deployment, errNotRead)
	case len(deps) == 0:
		return nil, errors.New("the manifests hold no Deployment (apps/v1)")
	case a.Deployment != "":
		for _, d := range deps {
			if d.Name == a.Deployment {
				return d, nil
			}
		}
		return nil, fmt.Errorf("deployment %q: not in the manifests (they hold %s)", a.Deployment, strings.Join(names, ", "))
	case len(deps) > 1:
		return nil, fmt.Errorf("the manifests hold %d Deployments (%s): name the one under test (deployment:)", len(deps), strings.Join(names, ", "))
	}
	return deps[0], nil
}

// check validates the app's own fields and manifests.
func (a App) check() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !strings.HasPrefix(a.Path, "/") {
		bad("path %q: must start with /", a.Path)
	}
	if a.Port < 1 || a.Port > 65535 {
		bad("port %d: want 1 to 65535", a.Port)
	}
	if a.ReadyDelay < 0 {
		bad("readyDelay %s: want 0 or more", a.ReadyDelay)
	}
	seen := map[string]bool{}
	for _, o := range a.Objects {
		kind := kindOf(o)
		if slices.Contains(clusterScoped, kind) {
			bad("%s %s: cluster-scoped objects are not supported (rollcheck applies the app into a namespace it owns)", kind, o.GetName())
		}
		key := kind + "/" + o.GetName()
		if seen[key] {
			bad("%s %s: appears twice in the manifests", kind, o.GetName())
		}
		seen[key] = true
		if s, ok := o.(*corev1.Service); ok && s.Name == LoadServiceName {
			bad("Service %s: the name is rollcheck's own load Service", s.Name)
		}
	}
	d, err := a.deployment()
	if err != nil {
		return errs
	}
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 {
		bad("Deployment %s: spec.selector.matchLabels is empty (rollcheck's load Service selects the pods by it)", d.Name)
	} else if len(d.Spec.Selector.MatchExpressions) > 0 {
		bad("Deployment %s: spec.selector.matchExpressions cannot be expressed as a Service selector: use matchLabels only", d.Name)
	}
	front := portContainer(d, a.Port)
	switch {
	case a.Container != "" && appContainer(d, a) == nil:
		var names []string
		for _, c := range d.Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		bad("container %q: Deployment %s has no such container (containers: %s)", a.Container, d.Name, strings.Join(names, ", "))
	case a.Container == "" && front != nil && isNative(d, front.Name):
		bad("port %d: declared by native sidecar %s of Deployment %s: name the app's container (container)", a.Port, front.Name, d.Name)
	}
	if front == nil && a.Port > 0 {
		var declared []string
		for _, c := range runningContainers(d) {
			for _, p := range c.Ports {
				declared = append(declared, fmt.Sprintf("%s:%d", c.Name, p.ContainerPort))
			}
		}
		if len(declared) == 0 {
			declared = []string{"none"}
		}
		bad("port %d: no container of Deployment %s declares it (declared: %s)", a.Port, d.Name, strings.Join(declared, ", "))
	}
	for _, c := range allContainers(d) {
		if slices.Contains(a.Images, c.Image) && c.ImagePullPolicy == corev1.PullAlways {
			bad("container %s: imagePullPolicy Always on image %s, which rollcheck loads from the local Docker engine and cannot be pulled: use IfNotPresent or Never", c.Name, c.Image)
		}
	}
	// An image may run in another Deployment of the manifests too: a proxy in front of the app.
	for _, img := range a.Images {
		used := false
		for _, o := range a.Objects {
			if od, ok := o.(*appsv1.Deployment); ok {
				for _, c := range allContainers(od) {
					used = used || c.Image == img
				}
			}
		}
		if !used {
			bad("image %s: no container of the manifests' Deployments runs it", img)
		}
	}
	return errs
}

// kindOf is an object's kind: from its type meta, or its Go type when that is empty.
func kindOf(o Object) string {
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := reflect.TypeOf(o)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func allContainers(d *appsv1.Deployment) []*corev1.Container {
	var cs []*corev1.Container
	for i := range d.Spec.Template.Spec.InitContainers {
		cs = append(cs, &d.Spec.Template.Spec.InitContainers[i])
	}
	for i := range d.Spec.Template.Spec.Containers {
		cs = append(cs, &d.Spec.Template.Spec.Containers[i])
	}
	return cs
}

// stopSignalName is the form of a signal name the API accepts in lifecycle.stopSignal (its
// list is the API server's to check): SIGQUIT, SIGUSR1, SIGRTMIN+3, SIGRTMAX-1.
var stopSignalName = regexp.MustCompile(`^SIG(RTMIN\+[0-9]+|RTMAX-[0-9]+|[A-Z]+[0-9]*)$`)

// appContainer is the app's container: the one App.Container names, else the one that declares
// App.Port. The preStop of a Variant goes to it.
func appContainer(d *appsv1.Deployment, a App) *corev1.Container {
	if a.Container != "" {
		for i := range d.Spec.Template.Spec.Containers {
			if c := &d.Spec.Template.Spec.Containers[i]; c.Name == a.Container {
				return c
			}
		}
		return nil
	}
	if c := portContainer(d, a.Port); c != nil && !isNative(d, c.Name) {
		return c
	}
	return nil
}

// portContainer is the container that declares port, the one the load reaches: one of the
// containers or a native sidecar (an init container with restartPolicy Always).
func portContainer(d *appsv1.Deployment, port int32) *corev1.Container {
	for _, c := range runningContainers(d) {
		for _, p := range c.Ports {
			if p.ContainerPort == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
				return c
			}
		}
	}
	return nil
}

// runningContainers are the pod's containers that run while it serves: its native sidecars,
// then its containers.
func runningContainers(d *appsv1.Deployment) []*corev1.Container {
	var cs []*corev1.Container
	for i := range d.Spec.Template.Spec.InitContainers {
		if c := &d.Spec.Template.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			cs = append(cs, c)
		}
	}
	for i := range d.Spec.Template.Spec.Containers {
		cs = append(cs, &d.Spec.Template.Spec.Containers[i])
	}
	return cs
}

// isNative tells whether the container named name is a native sidecar.
func isNative(d *appsv1.Deployment, name string) bool {
	for _, c := range d.Spec.Template.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// sidecars are the pod's running containers other than the app's, as applied.
func sidecars(d *appsv1.Deployment, a App) []Sidecar {
	app, front := appContainer(d, a), portContainer(d, a.Port)
	var out []Sidecar
	for _, c := range runningContainers(d) {
		if c == app {
			continue
		}
		out = append(out, Sidecar{Name: c.Name, Native: isNative(d, c.Name), Front: c == front, PreStop: preStopOf(c)})
	}
	return out
}

// apply returns a copy of the Deployment with the variant's changes and the pull policy of
// the loaded images; it changes nothing else.
func (v Variant) apply(orig *appsv1.Deployment, a App, l Load) (*appsv1.Deployment, error) {
	d := orig.DeepCopy()
	c := appContainer(d, a)
	if c == nil && a.Container != "" {
		return nil, fmt.Errorf("container %q: Deployment %s has no such container", a.Container, d.Name)
	}
	if c == nil {
		return nil, fmt.Errorf("port %d: no container of Deployment %s declares it", a.Port, d.Name)
	}
	if v.PreStop != nil {
		var scheme corev1.URIScheme // the API's default, HTTP
		if l.Protocol == loadgen.ProtocolHTTP2 {
			scheme = corev1.URISchemeHTTPS
		}
		h := v.PreStop.handler(a.Port, scheme)
		if h == nil {
			if c.Lifecycle != nil {
				c.Lifecycle.PreStop = nil
			}
		} else {
			if c.Lifecycle == nil {
				c.Lifecycle = &corev1.Lifecycle{}
			}
			c.Lifecycle.PreStop = h
		}
	}
	if v.StopSignal != "" {
		if c.Lifecycle == nil {
			c.Lifecycle = &corev1.Lifecycle{}
		}
		c.Lifecycle.StopSignal = ptr.To(corev1.Signal(v.StopSignal))
		if d.Spec.Template.Spec.OS == nil {
			d.Spec.Template.Spec.OS = &corev1.PodOS{Name: corev1.Linux}
		}
	}
	if g := v.TerminationGracePeriodSeconds; g != nil {
		d.Spec.Template.Spec.TerminationGracePeriodSeconds = g
	}
	if r := v.Replicas; r != nil {
		d.Spec.Replicas = r
	}
	if len(v.Patch) > 0 {
		patched, err := strategicPatch(d, v.Patch)
		if err != nil {
			return nil, fmt.Errorf("patch of Deployment %s: %w", d.Name, err)
		}
		d = patched
	}
	for _, c := range allContainers(d) {
		if slices.Contains(a.Images, c.Image) {
			c.ImagePullPolicy = corev1.PullNever
		}
	}
	return d, nil
}

// strategicPatch applies a strategic-merge patch to d, as kubectl patch does, and decodes the
// result strictly: a patch that names a field Deployments do not have is an error.
func strategicPatch(d *appsv1.Deployment, patch []byte) (*appsv1.Deployment, error) {
	orig, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	pj, err := yaml.YAMLToJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("not JSON or YAML: %w", err)
	}
	var asMap map[string]any
	if err := json.Unmarshal(pj, &asMap); err != nil || asMap == nil {
		return nil, errors.New("the patch must be an object")
	}
	out, err := strategicpatch.StrategicMergePatch(orig, pj, appsv1.Deployment{})
	if err != nil {
		return nil, err
	}
	var nd appsv1.Deployment
	if err := yaml.UnmarshalStrict(out, &nd); err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, "json: "); i >= 0 {
			msg = msg[i+len("json: "):]
		}
		return nil, errors.New(msg)
	}
	if nd.Name != d.Name {
		return nil, fmt.Errorf("the patch renames the Deployment to %q", nd.Name)
	}
	return &nd, nil
}

// render is the Deployment under test as the Variant changes it (a copy; the manifests are
// not changed), with imagePullPolicy Never on the containers that run App.Images, for a plan
// whose defaults are filled.
func (p Plan) render() (*appsv1.Deployment, error) {
	orig, err := p.App.deployment()
	if err != nil {
		return nil, err
	}
	return p.Variant.apply(orig, p.App, p.Load)
}

// Applied says what a row of the Plan runs, as the reports show it, also for a plan that does
// not resolve (an error row says what it was to run); Resolved.Applied is the same for one that
// does, without rendering the Deployment again. The Deployment's part (its name, grace period,
// replicas and the app container's preStop) is read back from the Deployment as the Variant
// changes it, so it is the same for the sample app and a user's; it is left zero when that
// Deployment cannot be built.
func (p Plan) Applied() Applied {
	p = p.WithDefaults()
	d, _ := p.render()
	return p.applied(d)
}

// applied is Applied for a plan whose defaults are filled, with d the Deployment under test (nil:
// it could not be built).
func (p Plan) applied(d *appsv1.Deployment) Applied {
	a := Applied{
		Name: p.Variant.Name, Why: p.Variant.Why, OnSIGTERM: p.App.OnSIGTERM, RequestDuration: p.App.RequestDuration, ReadyDelay: p.App.ReadyDelay,
		Patched: len(p.Variant.Patch) > 0, Path: p.App.Path, Rate: p.Load.Rate, Method: p.Load.Method,
		KeepAlive: p.Load.KeepAlive, LoadFrom: p.Load.From, Disruption: p.Disruption.Kind, Count: p.Disruption.Count, Quiet: p.Quiet,
		Expect: p.Variant.Expect,
	}
	a.Namespace = p.App.Namespace
	a.LoadURL, a.LoadHost, a.UpstreamHeader = p.Load.URL, p.Load.Host, p.Load.UpstreamHeader
	a.Resolve, a.ResolveRefresh, a.ResolveSetting = p.Load.Resolve, p.Load.ResolveRefresh, p.Load.ResolveSetting
	if pr := p.Load.Protocol; pr != "" && pr != loadgen.ProtocolHTTP1 {
		a.Protocol = pr
	}
	if p.Load.Protocol == loadgen.ProtocolGRPC {
		g := p.Load.GRPC
		a.GRPC = &g
	}
	a.DrainTimeout, a.DrainNode = p.Disruption.DrainTimeout, p.Disruption.Node
	a.LoadEntry, a.ExternalTrafficPolicy = p.Load.Entry, string(p.Variant.ExternalTrafficPolicy)
	if b := p.Variant.PDB; b != nil {
		c := *b
		a.PDB = &c
	} else if b := p.App.manifestPDB(); b != nil {
		a.PDB, a.PDBFromManifests = b, true
	}
	if p.Load.Pods > 1 {
		a.LoadPods = p.Load.Pods
	}
	if d != nil {
		a.App, a.GraceSeconds, a.Replicas = d.Name, grace(d), int(replicas(d))
		c := appContainer(d, p.App)
		a.PreStop, a.Sidecars = preStopOf(c), sidecars(d, p.App)
		if c != nil {
			a.Container = c.Name
			if c.Lifecycle != nil && c.Lifecycle.StopSignal != nil {
				a.StopSignal = string(*c.Lifecycle.StopSignal)
			}
		}
	}
	return a
}

// zero reports whether g sets nothing.
func (g GRPCLoad) zero() bool {
	return g.Method == "" && len(g.Message) == 0 && g.Balancing == "" && !g.WaitForReady && !g.Retry
}

// joinProtocols is "http1, h2c, http2 or grpc".
func joinProtocols() string {
	s := make([]string, len(loadgen.Protocols))
	for i, p := range loadgen.Protocols {
		s[i] = string(p)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// headlessService is the headless twin of the load Service, for a gRPC client that resolves
// the pods' addresses by DNS and balances over them itself (round robin). It publishes only
// ready pods, as the cluster's DNS does by default.
func headlessService(ns string, dep *appsv1.Deployment, port int32) *corev1.Service {
	svc := loadService(ns, dep, port, 0)
	svc.Name = LoadHeadlessServiceName
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	svc.Spec.Ports[0].Name, svc.Spec.Ports[0].Port = "grpc", port
	return svc
}

// loadService is rollcheck's own Service for the load: it selects the Deployment's pods on
// the app's port, as a NodePort when nodePort is not 0.
func loadService(ns string, dep *appsv1.Deployment, port, nodePort int32) *corev1.Service {
	svc := &corev1.Service{}
	svc.APIVersion, svc.Kind = "v1", "Service"
	svc.Name, svc.Namespace = LoadServiceName, ns
	svc.Labels = map[string]string{PartOfLabel: PartOfValue}
	svc.Spec.Selector = dep.Spec.Selector.MatchLabels
	sp := corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
	if nodePort != 0 {
		svc.Spec.Type = corev1.ServiceTypeNodePort
		sp.NodePort = nodePort
	}
	svc.Spec.Ports = []corev1.ServicePort{sp}
	return svc
}

// dnsName is a DNS name of labels of letters, digits and dashes.
var dnsName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// headerName is an HTTP header field name (RFC 9110's token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// imageRef is an image reference with a tag or a digest: repo:tag, host:port/repo:tag,
// repo@sha256:….
var imageRef = regexp.MustCompile(`^[a-z0-9]+([._-]+[a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$`)

// ValidImage checks that ref is an image reference with a tag or a digest.
func ValidImage(ref string) error {
	if !imageRef.MatchString(ref) {
		return errors.New("want an image reference with a tag (repo:tag)")
	}
	return nil
}

// ValidLoadImage checks a load pod image (rollcheck agent load): an image reference with a tag
// that names one build, never :latest, which Kubernetes pulls on every pod start.
func ValidLoadImage(ref string) error {
	if err := ValidImage(ref); err != nil {
		return err
	}
	if strings.HasSuffix(ref, ":latest") {
		return errors.New("want a tag that names one build, not :latest (pulled on every pod start)")
	}
	return nil
}

// orList is kinds as a list to choose from: "a, b or c".
func orList(kinds []DisruptionKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// evicting is the kinds that take pods through the eviction API (DisruptionInfo.Evicts), as
// the messages name them: "drain-node".
func evicting() string {
	var ks []DisruptionKind
	for _, d := range Disruptions {
		if d.Evicts {
			ks = append(ks, d.Kind)
		}
	}
	return orList(ks)
}
