package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/observe"
	"github.com/rollcheck/rollcheck/internal/proxymetrics"
	"github.com/rollcheck/rollcheck/internal/proxymetrics/scrape"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
	"github.com/rollcheck/rollcheck/timeline"
)

// RunLabel labels the namespaces of one run with Target.RunID.
const RunLabel = "rollcheck.io/run"

// Step names a step of a row, for Progress (timeline.Phase is something else: the phase of a
// pod's termination a failed request is attributed to).
type Step string

// Steps, in the order a row goes through them.
const (
	StepDeploy     Step = "deploy"      // applying the manifests and waiting for the rollout
	StepServing    Step = "serving"     // waiting until the load Service answers
	StepLoad       Step = "load"        // load started, its quiet time before the first disruption
	StepDisruption Step = "disruption"  // a disruption started
	StepSettled    Step = "settled"     // a disruption settled
	StepDone       Step = "done"        // the row is judged
	StepTeardown   Step = "teardown"    // the namespace is being deleted
	StepLoadTicker Step = "load-status" // periodic load counts while disruptions run
)

// Progress is one step of a running row, for a front end to show.
type Progress struct {
	// Variant is the name of the plan's variant (check.Variant.Name).
	Variant string
	Step    Step
	// N and Count number the disruption (StepDisruption, StepSettled).
	N, Count int
	// Load is the load so far.
	Load loadgen.Progress
	// Detail says more (the deleted pod, the namespace, the verdict).
	Detail string
}

// Option configures Run.
type Option func(*runOptions)

type runOptions struct {
	artifacts string
	progress  func(Progress)
}

// WithArtifacts makes Run write its row to dir/rows (as JSON, however the row ended: what
// rollcheck report and compare read) and keep every request in dir/raw: vegeta's own encoding
// (for vegeta report and plot) and the JSON ledger. The row's Artifacts name the raw files.
func WithArtifacts(dir string) Option { return func(o *runOptions) { o.artifacts = dir } }

// WithProgress makes Run call f at each step of the row (from Run's goroutines; f must be
// quick and safe for concurrent use).
func WithProgress(f func(Progress)) Option { return func(o *runOptions) { o.progress = f } }

// stallLimit is how long the load generator may send nothing before the row is a harness
// fault.
const stallLimit = 3 * time.Second

// Run runs one resolved check.Plan (check.Plan.Resolve) on the Target and returns its check.Row: it applies the app (as the check.Variant
// changes it) into a fresh namespace (or the user's Target.RowNamespace) with a load Service of its own, waits until the Service
// answers, starts the constant load and the lifecycle observer, disrupts check.Disruption.Count
// times (each until it settled: the rollout complete and no pod left terminating), runs the
// load for the quiet time (Plan.Quiet), stops it and judges the result against check.Variant.Expect. The namespace is deleted
// before Run returns (in a Target.RowNamespace, what the row applied and started there).
//
// Run never asserts. A row that could not run to the end (a Target without what the plan needs, deploy, serving wait,
// disruption, cluster) is returned with status check.Error and the reason, together with the error;
// a load run that was invalid, stalled or ended before the disruptions did is a row with status
// check.HarnessFault and no error. Only front ends decide what a row means for them.
func Run(ctx context.Context, t Target, res *check.Resolved, opts ...Option) (*check.Row, error) {
	if res == nil {
		return nil, errors.New("engine: no resolved plan (check.Plan.Resolve)")
	}
	var o runOptions
	for _, f := range opts {
		f(&o)
	}
	p := res.Plan()
	r := &runner{t: t, res: res, p: p, o: o, logf: t.Logf}
	r.src = sourceOf(r)
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	r.row = &check.Row{Suite: p.Suite, Repeat: p.Repeat, Started: time.Now(), Config: res.Applied()}
	err := r.run(ctx)
	r.row.Duration = time.Since(r.row.Started)
	if err != nil {
		r.row.Verdict = check.Verdict{Status: check.Error, Reason: err.Error()}
		err = fmt.Errorf("row %s: %w", p.Variant.Name, err)
	}
	if o.artifacts != "" {
		if _, werr := rowfile.Write(o.artifacts, *r.row); werr != nil {
			err = errors.Join(err, fmt.Errorf("row %s: %w", p.Variant.Name, werr))
		}
	}
	return r.row, err
}

type runner struct {
	t Target
	// res is the plan as resolved, p its Plan; in place, both are resolved again with the live
	// Deployment (readLive).
	res  *check.Resolved
	p    check.Plan
	o    runOptions
	logf func(string, ...any)
	row  *check.Row

	client klient.Client
	cs     kubernetes.Interface // the observer's, the load pods' and kube-proxy's metrics' client
	ns     string               // the row's own namespace: the app's too, unless it is checked in place
	dep    *appsv1.Deployment
	// appNS is the app's namespace and svc the Service whose endpoints are observed: the row's
	// namespace and rollcheck's load Service, or, in place, the app's namespace and its own
	// Service, svcName (SERVICE.NS.svc:PORT), which load pods reach at svcAddr (its cluster IP
	// and port).
	appNS, svc, svcName, svcAddr string
	// src is where the app comes from (sourceOf): applied, or live in place.
	src source
	// runID is the run's id on what the row holds (Target.RunID, else an id of the row's own).
	runID string
	// objs are the objects a row in a Target.RowNamespace applies, rendered once (rowObjects).
	objs []check.Object
}

func (r *runner) progress(ph Step, n int, load loadgen.Progress, detail string) {
	if r.o.progress != nil {
		r.o.progress(Progress{Variant: r.p.Variant.Name, Step: ph, N: n, Count: r.p.Disruption.Count, Load: load, Detail: detail})
	}
}

func (r *runner) run(ctx context.Context) (err error) {
	if r.t.RESTConfig == nil {
		return errors.New("target: RESTConfig is required")
	}
	if err := r.src.check(r.t); err != nil {
		return err
	}
	if r.p.Load.Entry == check.EntryNode && (r.t.EntryURL == "" || r.t.EntryNode == "") {
		return errors.New("load entry node: this target names no entry node for the load (kind: set ROLLCHECK_WORKERS to 1 or more; the first worker is the entry)")
	}
	if _, ok := r.t.Cluster.(KubeletRestarter); r.p.Disruption.Kind.Info().RestartsKubelet && !ok {
		return fmt.Errorf("%s: this cluster's front end cannot restart a kubelet (only the kind front end can)", r.p.Disruption.Kind)
	}
	if r.client, r.cs, err = connect(r.t.RESTConfig); err != nil {
		return err
	}
	// A row whose Lease another run took over stops where it was: its error says why first.
	defer func() { err = withLost(ctx, err) }()
	// In place, the workload's Lease is held before anything is read or changed, and released
	// last, after the restore and the teardown.
	ctx, end, err := r.src.open(ctx)
	if err != nil {
		return err
	}
	if end != nil {
		defer func() {
			if eerr := end(context.WithoutCancel(ctx)); eerr != nil {
				err = errors.Join(err, eerr)
			}
		}()
	}
	r.row.Versions = r.versions()
	if r.p.Load.From == check.LoadFromCluster && r.t.LoadImage == "" {
		return errors.New("target: load from the cluster needs Target.LoadImage, the load pod's image")
	}
	if l, ok := r.t.Cluster.(ImageLoader); ok && len(r.p.App.Images) > 0 {
		if err := l.LoadImages(ctx, r.p.App.Images); err != nil {
			return fmt.Errorf("load images %s: %w", strings.Join(r.p.App.Images, ", "), err)
		}
	}
	reset, _ := r.t.Cluster.(Resetter)
	if reset != nil {
		if err := reset.Reset(ctx); err != nil {
			return fmt.Errorf("reset before the row: %w", err)
		}
	}
	nsLabels := maps.Clone(r.t.NamespaceLabels)
	if nsLabels == nil {
		nsLabels = map[string]string{}
	}
	nsLabels[check.PartOfLabel] = check.PartOfValue
	if r.t.RunID != "" {
		nsLabels[RunLabel] = r.t.RunID
	}
	teardown := kube.TeardownNamespace
	switch {
	case r.t.RowNamespace != "":
		// A namespace of the user's, kept: only what rollcheck applied and started there goes.
		r.ns = r.t.RowNamespace
		lctx, clear, err := r.useRowNamespace(ctx)
		if err != nil {
			return err
		}
		ctx = lctx // the rest of the row stops if another run takes the namespace's Lease over
		teardown = func(ctx context.Context, _ klient.Client, _ string) error { return clear(ctx) }
	case r.t.LoadNamespace != "":
		// A namespace of the user's, kept: only the load pods go, a killed run's too.
		r.ns = r.t.LoadNamespace
		teardown = func(ctx context.Context, client klient.Client, ns string) error {
			return kube.DeletePods(ctx, client, ns, labels.SelectorFromSet(loadPodLabels).String())
		}
		if err := teardown(ctx, r.client, r.ns); err != nil {
			return err
		}
	default:
		if r.ns, err = kube.CreateNamespace(ctx, r.client, "rc-"+r.p.Variant.Name, nsLabels); err != nil {
			return err
		}
	}
	defer func() {
		r.progress(StepTeardown, 0, loadgen.Progress{}, r.ns)
		// Teardown runs also when ctx was cancelled (Ctrl-C): nothing rollcheck made is left.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		terr := teardown(tctx, r.client, r.ns)
		if terr == nil && reset != nil {
			terr = reset.Reset(tctx)
		}
		if terr != nil {
			err = errors.Join(err, fmt.Errorf("teardown: %w", terr))
		}
	}()
	// Recorded before anything of the app changes, put back on every path after.
	release, err := r.src.hold(ctx)
	if err != nil {
		return err
	}
	if release != nil {
		defer func() {
			if rerr := release(ctx); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}()
	}
	return r.measure(ctx)
}

// measure deploys the app, waits until it serves, drives the load while the disruptions run,
// and turns what was seen into the row.
func (r *runner) measure(ctx context.Context) error {
	p := r.p
	if err := r.deploy(ctx); err != nil {
		return err
	}
	cs := r.cs
	container := r.res.AppContainer()
	obs, err := observe.Start(ctx, cs, r.appNS, selectorOf(r.dep), r.svc, r.logf, observe.WithAppLogs(container, r.res.FrontContainer()))
	if err != nil {
		return fmt.Errorf("start the lifecycle observer: %w", err)
	}
	defer obs.Stop()

	url := strings.TrimSuffix(r.t.LoadURL, "/") + p.App.Path
	if p.Load.Entry == check.EntryNode {
		url = strings.TrimSuffix(r.t.EntryURL, "/") + p.App.Path
	}
	if p.Load.Through() {
		url = p.Load.URL
	}
	if p.Load.From == check.LoadFromCluster && !p.Load.Through() {
		r.progress(StepServing, 0, loadgen.Progress{}, "from the load pod, at "+r.loadTo())
	} else {
		r.progress(StepServing, 0, loadgen.Progress{}, url)
	}
	if p.Load.From != check.LoadFromCluster { // a load pod waits on its own path
		if err := attack.WaitServing(ctx, r.loadConfig(loadgen.Config{Target: url, Timeout: p.Load.Timeout}), r.servingReplicas(), r.logf); err != nil {
			return err
		}
	}
	// kube-proxy's programming histogram before and after the load: its change is the row's.
	kpBefore, kpErr := scrape.KubeProxy(ctx, cs)
	if kpErr == nil {
		r.row.Versions.KubeProxyMode, _ = scrape.ProxyMode(ctx, cs)
	}
	d, err := r.drive(ctx, cs, url, obs)
	if err != nil {
		return err
	}
	defer d.atk.Stop()
	tl := obs.Stop()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	if d.waitErr != nil && d.loadFault == nil {
		return fmt.Errorf("load: %w", d.waitErr)
	}
	if d.res == nil {
		return fmt.Errorf("load: no result: %w", errors.Join(d.loadFault, d.waitErr))
	}
	// kube-proxy's measured lag, when it has one, is the propagation window's data-plane lag.
	return r.judge(ctx, d, tl, kubeProxyDelta(ctx, cs, kpBefore, kpErr))
}

// workload is what the row's pods belong to: the row's Deployment, or in place the live one or
// the ReplicaSet checked as it runs.
func (r *runner) workload() kube.Workload {
	return r.src.pods()
}

// deploy applies the app's objects into the row's namespace and waits for its rollout.
func (r *runner) deploy(ctx context.Context) error {
	r.progress(StepDeploy, 0, loadgen.Progress{}, r.appNS)
	if err := r.src.apply(ctx); err != nil {
		return err
	}
	if err := kube.WaitWorkload(ctx, r.client, r.workload(), 3*time.Minute); err != nil {
		return fmt.Errorf("deploy: %w%s", err, kube.PodProblems(ctx, r.client, r.appNS, selectorOf(r.dep)))
	}
	if err := r.readPods(ctx); err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	if n := r.row.Nodes; n != nil && n.Entry != "" && n.EntryPods == 0 && (r.p.Disruption.Node == check.DrainEntry || r.row.Config.LocalOnly()) {
		return fmt.Errorf("deploy: the entry node %s runs none of the app's pods (they run on %s): the load would enter where no pod of the app is to lose", n.Entry, strings.Join(n.App, ", "))
	}
	return nil
}

// readPods records what the running pods say of their node and runtime: the container runtime's
// version, and, when the Variant set a stop signal, the effective one the runtime reported. An
// API server without the ContainerStopSignals gate drops lifecycle.stopSignal silently from
// every object it creates (a Deployment's template, the ReplicaSet an Argo Rollout's controller
// makes, a pod): then no running pod of the workload carries it, and the row would measure
// SIGTERM and call it the stop signal's doing, so that is the row's error, whatever the
// workload's kind. Other errors of reading the pods only leave these records out.
func (r *runner) readPods(ctx context.Context) error {
	sig := r.row.Config.StopSignal
	var pods corev1.PodList
	if err := r.client.Resources(r.appNS).List(ctx, &pods, resources.WithLabelSelector(selectorOf(r.dep))); err != nil || len(pods.Items) == 0 {
		if sig != "" {
			return fmt.Errorf("read back lifecycle.stopSignal %s from the pods of %s: %d pods, %v", sig, r.workload(), len(pods.Items), err)
		}
		return nil
	}
	nodes := &check.Nodes{}
	if r.p.Load.Entry == check.EntryNode {
		nodes.Entry = r.t.EntryNode
	}
	for _, p := range pods.Items {
		if n := p.Spec.NodeName; n != "" && !slices.Contains(nodes.App, n) {
			nodes.App = append(nodes.App, n)
		}
		if nodes.Entry != "" && p.Spec.NodeName == nodes.Entry {
			nodes.EntryPods++
		}
	}
	slices.Sort(nodes.App)
	r.row.Nodes = nodes
	p := pods.Items[0]
	if sig != "" {
		i, reported := stopSignalOf(pods.Items, r.row.Config.Container, sig)
		if i < 0 {
			return fmt.Errorf("the API server dropped lifecycle.stopSignal %s from container %s of the pods of %s: the cluster's ContainerStopSignals feature gate is off (rollcheck's kind config turns it on; a cluster created before it must be deleted)", sig, r.row.Config.Container, r.workload())
		}
		p, r.row.StopSignalReported = pods.Items[i], reported
	}
	var node corev1.Node
	if err := r.client.Resources().Get(ctx, p.Spec.NodeName, "", &node); err == nil {
		r.row.Versions.Runtime = node.Status.NodeInfo.ContainerRuntimeVersion
	} else {
		r.logf("%s: the container runtime's version is not recorded: read node %s: %v", r.p.Variant.Name, p.Spec.NodeName, err)
	}
	if sig != "" && r.row.StopSignalReported != sig {
		r.logf("%s: the runtime (%s) reported %q as the effective stop signal of container %s, not the %s the pod asks for: it does not take lifecycle.stopSignal, and sends the image's STOPSIGNAL or SIGTERM",
			r.p.Variant.Name, orNone(r.row.Versions.Runtime), r.row.StopSignalReported, r.row.Config.Container, sig)
	}
	return nil
}

// stopSignalOf finds, among pods, a running one (not terminating) whose container asks for the
// stop signal sig in its spec, and returns its index and the stop signal the runtime reported
// for that container ("" when none); -1 when no running pod asks for it. A pod of an earlier
// revision (a blue-green's, kept a while after its promotion) may lack it: one pod of the new
// revision that has it shows the API server kept the field.
func stopSignalOf(pods []corev1.Pod, container, sig string) (int, string) {
	for i, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Name != container || c.Lifecycle == nil || c.Lifecycle.StopSignal == nil || string(*c.Lifecycle.StopSignal) != sig {
				continue
			}
			reported := ""
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == container && cs.StopSignal != nil {
					reported = string(*cs.StopSignal)
				}
			}
			return i, reported
		}
	}
	return -1, ""
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// judge fills the row from what was driven and observed: the load's summary and timeline, and
// the analysis (internal/analyze) of the ledger, the timeline and the disruptions as they ran;
// it writes the raw files and sets the verdict, a harness fault when the run itself failed.
func (r *runner) judge(ctx context.Context, d *driven, tl timeline.Timeline, kp analyze.KubeProxy) error {
	row, res := r.row, d.res
	derr := d.disruptErr
	switch {
	case d.loadFault != nil:
		row.LoadFault = d.loadFault.Error()
	case derr != nil && res.EndReason != loadgen.EndStopped:
		row.LoadFault = fmt.Sprintf("the load ended (%s) before the disruptions did: %v", res.EndReason, derr)
	}
	in := analyze.Input{Config: row.Config, Load: res, Timeline: tl, Disruptions: records(d.recs), KubeProxy: kp,
		StopSignalReported: row.StopSignalReported, Runtime: row.Versions.Runtime, Fault: row.LoadFault}
	if r.row.Config.LocalOnly() {
		in.EntryNode = r.t.EntryNode
	}
	a := analyze.Row(in)
	row.Summary, row.DNS = a.Summary, res.DNS
	row.LoadStarted, row.Buckets, row.Timeline = res.Started, res.Buckets, &tl
	row.Disruptions, row.Times, row.PodIdentity, row.Explanation = a.Disruptions, a.Times, a.PodIdentity, a.Explanation
	row.Versions.Vegeta = res.VegetaVersion
	if r.o.artifacts != "" {
		var err error
		if row.Artifacts, err = writeRaw(r.o.artifacts, row, res, a.Attribution); err != nil {
			return err
		}
	}
	if derr != nil && row.LoadFault == "" {
		return fmt.Errorf("disruption: %w%s", derr, kube.PodProblems(ctx, r.client, r.appNS, selectorOf(r.dep)))
	}
	row.Verdict = analyze.Verdict(row.Config, a)
	r.progress(StepDone, 0, d.atk.Progress(), fmt.Sprintf("%s: %s", row.Verdict.Status, row.Verdict.Reason))
	return nil
}

// records are the disruptions as they ran, which the analysis counts the requests of.
func records(recs []disrupt.Record) []check.DisruptionResult {
	out := make([]check.DisruptionResult, len(recs))
	for k, rec := range recs {
		out[k] = check.DisruptionResult{Kind: check.DisruptionKind(rec.Kind), N: rec.N, Pod: rec.Pod, Started: rec.Started, Complete: rec.Complete, Settled: rec.Settled,
			KubeletRestarted: rec.KubeletRestarted, KubeletBack: rec.KubeletBack, Drain: rec.Drain}
	}
	return out
}

// connect returns the clients a row talks to the cluster with. A variable, so that the engine's
// own tests can run a whole row on a fake API server.
var connect = func(cfg *rest.Config) (klient.Client, kubernetes.Interface, error) {
	c, err := klient.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("observer client: %w", err)
	}
	return c, cs, nil
}

func selectorOf(d *appsv1.Deployment) string {
	return labels.SelectorFromSet(d.Spec.Selector.MatchLabels).String()
}

// kubeProxyDelta reads kube-proxy's histogram again and returns its change since before.
func kubeProxyDelta(ctx context.Context, cs kubernetes.Interface, before proxymetrics.Histogram, beforeErr error) analyze.KubeProxy {
	if beforeErr != nil {
		return analyze.KubeProxy{Err: beforeErr.Error()}
	}
	after, err := scrape.KubeProxy(ctx, cs)
	if err != nil {
		return analyze.KubeProxy{Err: err.Error()}
	}
	d, err := after.Sub(before)
	if err != nil {
		return analyze.KubeProxy{Err: err.Error()}
	}
	s := d.Summary()
	out := analyze.KubeProxy{Durations: &check.Durations{N: int(s.Count), P50: s.P50, P99: s.P99, Max: s.Max}}
	for _, b := range d.Buckets {
		eb := check.HistogramBucket{UpperBound: b.UpperBound, Count: b.Count}
		if math.IsInf(b.UpperBound, 1) {
			eb.UpperBound, eb.Inf = 0, true
		}
		out.Buckets = append(out.Buckets, eb)
	}
	return out
}

// writeRaw keeps every request: vegeta's own encoding, the JSON ledger and the attribution of
// every failed request.
func writeRaw(dir string, row *check.Row, res *loadgen.Result, attr attribute.Result) (map[string]string, error) {
	raw := filepath.Join(dir, "raw")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		return nil, fmt.Errorf("write raw results: %w", err)
	}
	base := strings.TrimSuffix(rowfile.Name(*row), ".json")
	out := map[string]string{}
	for _, f := range []struct {
		kind, ext string
		write     func(*os.File) error
	}{
		{"vegeta", ".vegeta.bin", func(f *os.File) error { return attack.WriteVegeta(f, res) }},
		{"ledger", ".ledger.json", func(f *os.File) error { return res.WriteJSON(f) }},
		{"attribution", ".attribution.json", func(f *os.File) error {
			e := json.NewEncoder(f)
			e.SetIndent("", "  ")
			return e.Encode(attr)
		}},
	} {
		name := base + f.ext
		file, err := os.Create(filepath.Join(raw, name))
		if err != nil {
			return nil, fmt.Errorf("write raw results: %w", err)
		}
		werr := f.write(file)
		if cerr := file.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write raw results %s: %w", name, werr)
		}
		out[f.kind] = filepath.Join("raw", name)
	}
	return out, nil
}

// versions reads the Kubernetes version (within 10 s: a version is not worth a hung row); the
// Target describes the rest of the cluster.
func (r *runner) versions() check.Versions {
	v := r.t.Versions
	v.Go = runtime.Version()
	v.Rollcheck = Version()
	v.Host = host()
	cfg := rest.CopyConfig(r.t.RESTConfig)
	cfg.Timeout = 10 * time.Second
	if dc, err := discovery.NewDiscoveryClientForConfig(cfg); err == nil {
		if sv, err := dc.ServerVersion(); err == nil {
			v.Kubernetes = sv.GitVersion
		}
	}
	return v
}

// sleep waits d or until ctx ends; it reports whether the whole d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
