package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// A clusterRef names an existing cluster as kubectl does: a kubeconfig file (only that file,
// as kubectl --kubeconfig reads it) or kubectl's own files (the list in $KUBECONFIG, merged as
// kubectl merges it, else ~/.kube/config), and a context of it (else its current context). It
// comes from --kubeconfig and --context, or from the check file's cluster section; without
// either rollcheck runs on its own kind cluster and never reads KUBECONFIG or
// ~/.kube/config, so that a KUBECONFIG in the user's shell never moves a check onto the
// user's cluster.
type clusterRef struct {
	Kubeconfig string // a kubeconfig file; "" for kubectl's files
	Context    string // a context; "" for the current context
	By         string // what named it, for messages: "--context staging", "the check file's cluster section"
	// InCluster: the pod's own ServiceAccount (rest.InClusterConfig), for rollcheck gate and
	// serve run in a pod with neither --kubeconfig nor --context.
	InCluster bool
}

// inClusterRef is the cluster of the pod rollcheck runs in, by its ServiceAccount.
var inClusterRef = clusterRef{InCluster: true, By: "the pod's ServiceAccount (in-cluster)"}

// homeKubeconfig is kubectl's default kubeconfig, ~/.kube/config (a variable for tests).
var homeKubeconfig = clientcmd.RecommendedHomeFile

// flagsRef is the cluster --kubeconfig and --context name, or nil when neither is given.
func flagsRef(kubeconfig, context string) *clusterRef {
	var by []string
	if kubeconfig != "" {
		by = append(by, "--kubeconfig "+kubeconfig)
	}
	if context != "" {
		by = append(by, "--context "+context)
	}
	if by == nil {
		return nil
	}
	return &clusterRef{Kubeconfig: kubeconfig, Context: context, By: strings.Join(by, " ")}
}

// rules are client-go's loading rules for r, kubectl's (clientcmd.NewDefaultClientConfigLoadingRules),
// read only: rollcheck never migrates or writes a kubeconfig.
func (r clusterRef) rules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		rules.Precedence = []string{homeKubeconfig}
	}
	rules.ExplicitPath = r.Kubeconfig
	rules.MigrationRules = nil     // no copy of an old ~/.kube/.kubeconfig into ~/.kube/config
	rules.WarnIfAllMissing = false // resolve says it in its own line
	return rules
}

// files says which kubeconfig files r reads: "FILE", "KUBECONFIG (a, b)" or "~/.kube/config"'s path.
func (r clusterRef) files(rules *clientcmd.ClientConfigLoadingRules) string {
	switch {
	case r.Kubeconfig != "":
		return r.Kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		named := slices.DeleteFunc(slices.Clone(rules.Precedence), func(f string) bool { return f == "" })
		return clientcmd.RecommendedConfigPathEnvVar + " (" + strings.Join(named, ", ") + ")"
	}
	return rules.Precedence[0]
}

// resolve reads r's kubeconfig: the client configuration of its context, and one line that
// says which cluster it is: `context "staging" (cluster "gke-1", server https://…) from
// KUBECONFIG (/a, /b)`. It reads local files only, and never falls back to a pod's in-cluster
// configuration: a context that is not there is an error that lists those that are.
func (r clusterRef) resolve() (*rest.Config, string, error) {
	if r.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("no kubeconfig given and not in a pod (%v): give --kubeconfig FILE or --context NAME", err)
		}
		return cfg, fmt.Sprintf("in-cluster, server %s, as %s", cfg.Host, r.By), nil
	}
	rules := r.rules()
	from := r.files(rules)
	if r.Kubeconfig != "" {
		if _, err := os.Stat(r.Kubeconfig); err != nil {
			return nil, "", fmt.Errorf("%s: %w", r.By, err)
		}
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: r.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", r.By, err)
	}
	name := cmp.Or(r.Context, raw.CurrentContext)
	contexts := slices.Sorted(maps.Keys(raw.Contexts))
	kc, ok := raw.Contexts[name]
	switch {
	case len(contexts) == 0:
		return nil, "", fmt.Errorf("%s: no context in %s", r.By, from)
	case name == "":
		return nil, "", fmt.Errorf("%s: %s names no current context: name one with --context (it has %s)", r.By, from, strings.Join(contexts, ", "))
	case !ok:
		return nil, "", fmt.Errorf("%s: no context %q in %s (it has %s)", r.By, name, from, strings.Join(contexts, ", "))
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: context %q of %s: %w", r.By, name, from, err)
	}
	return cfg, fmt.Sprintf("context %q (cluster %q, server %s) from %s", name, kc.Cluster, cfg.Host, from), nil
}

// kindNote is the line a run on rollcheck's kind cluster says when KUBECONFIG is set: that it
// is not read, and what would name an existing cluster instead (unless: "" for a command that
// runs on kind only); "" when KUBECONFIG is not set.
func kindNote(cmd, unless string) string {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		return ""
	}
	note := "KUBECONFIG is set but not read: rollcheck " + cmd + " runs on its own kind cluster"
	if unless != "" {
		note += " unless " + unless
	}
	return note
}

// existingTarget is the Target of a cluster rollcheck does not own, ref's: it checks, before
// any work, that ref's context is there, that the API server answers within 10 s, that the
// context's user has every right the plans need (access.Review), and that the Deployment of an
// app checked in place is there and fits every plan (inPlacePreflight). A missing optional right
// lets the run go on: the lines of notes say what it will not measure. which says which cluster
// and context it is (resolve). The load pod's image is image (ROLLCHECK_LOAD_IMAGE or the check
// file's cluster.loadImage) when named; else rollcheck makes it of its own executable and pushes
// it to registry, or, on a kind cluster of this machine's Docker, loads it into the nodes
// (cluster.PlanExistingImages refuses in one line, before any of that work, when neither can be).
//
// place says where the rows run when not in namespaces they create (--load-namespace,
// --row-namespace). held is the Lease of the Deployment checked in place (holdInPlace), or those
// of the rows namespaces, which the caller releases when the run ends (none for rows that create
// their namespaces).
func existingTarget(ctx context.Context, ref clusterRef, image, registry string, place rowPlace, plans []*check.Resolved, logf func(string, ...any)) (t engine.Target, which string, notes []string, held heldLeases, err error) {
	fail := func(err error) (engine.Target, string, []string, heldLeases, error) {
		return engine.Target{}, "", nil, nil, err
	}
	if errs := knobs.Check(os.Getenv, true); len(errs) > 0 {
		return fail(errs[0])
	}
	if image != "" {
		if err := check.ValidLoadImage(image); err != nil {
			return fail(fmt.Errorf("load pod image %q: %w", image, err))
		}
	}
	cfg, which, err := ref.resolve()
	if err != nil {
		return fail(err)
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", ref.By, err))
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return fail(fmt.Errorf("%s: the API server at %s does not answer: %w", ref.By, cfg.Host, err))
	}
	if notes, err = reviewAccess(ctx, probe, plans, place); err != nil {
		return fail(fmt.Errorf("%s: %w", ref.By, err))
	}
	if err := inPlacePreflight(ctx, probe, plans); err != nil {
		return fail(fmt.Errorf("%s: %w", ref.By, err))
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	runID := hex.EncodeToString(id)
	// One run per Deployment: a live Lease of another run is one line here, before any change.
	l, err := holdInPlace(ctx, cfg, plans, runID)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", ref.By, err))
	}
	if l != nil {
		held = append(held, l)
	}
	// One run per rows namespace: each one's Lease, held for the run, before anything is touched.
	for _, ns := range place.Rows {
		l, err := engine.HoldRowNamespace(ctx, cfg, ns, runID)
		if err != nil {
			return fail(errors.Join(fmt.Errorf("%s: %w", ref.By, err), held.release(ctx)))
		}
		held = append(held, l)
	}
	if image == "" {
		ei, err := cluster.PlanExistingImages(ctx, probe, registry)
		if err == nil {
			image, err = ei.LoadImage(ctx, logf)
		}
		if err != nil {
			return fail(errors.Join(fmt.Errorf("%s: %w", ref.By, err), held.release(ctx)))
		}
	}
	level, _ := knobs.Get(os.Getenv, knobs.EnvPodSecurity)
	return engine.Target{RESTConfig: cfg, LoadImage: image, RunID: runID, NamespaceLabels: knobs.NamespaceLabels(level), LoadNamespace: place.Load,
		Versions: check.Versions{Kind: "none (an existing cluster, " + v.GitVersion + ")"}}, which, notes, held, nil
}

// holdInPlace holds, for the run, the Lease of the Deployment that plans check in place, renewed
// until the caller releases it (every row holds it too, sharing it): a second run is refused
// while this one lives, and a record this run leaves is restored by another only once the Lease
// expired. Nil for plans that apply their app.
func holdInPlace(ctx context.Context, cfg *rest.Config, plans []*check.Resolved, runID string) (*runlease.Lease, error) {
	if len(plans) == 0 || !plans[0].InPlace() || runID == "" {
		return nil, nil // without a run id, each row holds it under an id of its own
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	a := plans[0].Plan().App
	return inplace.HoldLease(ctx, cs, a.Namespace, a.Deployment, runID)
}

// rowPlace is where a run's rows run when they create no namespace of their own: Load, the
// load namespace of an app checked in place (--load-namespace); Rows, the namespaces of the
// user's that rows apply their app into (--row-namespace), one row at a time in each.
type rowPlace struct {
	Load string
	Rows []string
}

// heldLeases are the Leases a run holds for its whole length.
type heldLeases []*runlease.Lease

// release releases them all, after Ctrl-C too (runlease.ReleaseWait bounds each).
func (h heldLeases) release(ctx context.Context) error {
	var errs []error
	for _, l := range h {
		errs = append(errs, l.Release(ctx))
	}
	return errors.Join(errs...)
}

// reviewAccess asks the API server for every right the plans need (access.PlansNeed: the core
// run, drains when a plan drains, the create right of each other kind the manifests hold; for an
// app checked in place access.InPlaceNeed: rights in its namespace and the load namespace; for
// rows in namespaces of the user's access.NamespacedNeed: rights in each) and for the optional
// ones. A required right denied is the error, one line; an optional one is a note.
func reviewAccess(ctx context.Context, cfg *rest.Config, plans []*check.Resolved, place rowPlace) ([]string, error) {
	// A review per verb is some 30 small requests: client-go's default of 5 a second would make
	// them take seconds.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var rights []access.Right
	switch {
	case len(plans) > 0 && plans[0].InPlace():
		rights = access.InPlaceNeed(plans, place.Load)
	case len(place.Rows) > 0:
		if rights, err = access.NamespacedNeed(plans, place.Rows, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))); err != nil {
			return nil, err
		}
	default:
		need, err := access.PlansNeed(plans, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)))
		if err != nil {
			return nil, err
		}
		rights = need.Rights()
	}
	denied, err := access.Review(ctx, cs, rights)
	if err != nil {
		return nil, err
	}
	if len(denied) > 0 {
		return nil, errors.New(access.Refusal(denied))
	}
	var notes []string
	for _, f := range access.Features {
		if !f.Optional() {
			continue
		}
		denied, err := access.Review(ctx, cs, access.Of(f))
		if err != nil {
			return nil, err
		}
		if len(denied) > 0 {
			notes = append(notes, access.Unmeasured(f, denied))
		}
	}
	return notes, nil
}

// checkExisting runs the plans on an existing cluster and then waits until every namespace this
// run created is gone (its own run label: no other namespace is touched); with a load namespace
// of the user's (an app checked in place) or rows namespaces (rowsNS) it created none.
func checkExisting(ctx context.Context, t engine.Target, which string, plans []*check.Resolved, parallel int, rowsNS []string, artifacts string, out rowsOut, logf func(string, ...any)) int {
	logf("existing cluster: %s; no cluster is created; load pods run %s; run %s", which, t.LoadImage, t.RunID)
	code := runRows(ctx, t, plans, parallel, rowsNS, artifacts, out, logf)
	if len(rowsNS) > 0 {
		// Each row deleted what it applied and started in a namespace of the user's: no
		// namespace was created (and this user may not list them).
		logf("no namespace was created; what the rows applied is gone from %s", strings.Join(rowsNS, ", "))
		return code
	}
	if t.LoadNamespace != "" {
		// The load pods ran in a namespace of the user's, each row deleted its own: no namespace
		// was created (and this user may not list them).
		logf("no namespace was created; the load pods are gone from %s", t.LoadNamespace)
		return code
	}
	if err := sweepRun(ctx, t, logf); err != nil {
		logf("cleanup: %v", err)
		code = max(code, exitBadInput)
	}
	return code
}

// sweepRun waits until every namespace labelled with the Target's run is gone (also after
// ctx is cancelled: Ctrl-C leaves nothing behind).
func sweepRun(ctx context.Context, t engine.Target, logf func(string, ...any)) error {
	client, err := klient.New(t.RESTConfig)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 4*time.Minute)
	defer cancel()
	n, err := kube.SweepNamespaces(cctx, client, engine.RunLabel+"="+t.RunID, 3*time.Minute)
	if err == nil {
		logf("the run's %d namespace(s) are gone; nothing of it is left in the cluster", n)
	}
	return err
}

// releaseHeld releases the run's Leases (a Deployment checked in place, the rows namespaces),
// after Ctrl-C too; a release that fails is said and raises *code to exitBadInput (the Lease
// then expires on its own).
func releaseHeld(ctx context.Context, held heldLeases, logf func(string, ...any), code *int) {
	if err := held.release(ctx); err != nil {
		logf("cleanup: %v (a Lease expires %s after its last renewal)", err, runlease.Duration)
		*code = max(*code, exitBadInput)
	}
}
