package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/frontend"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/selfimage"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/spec"
)

// Exit codes of rollcheck check.
const (
	exitPass     = 0 // every row passed
	exitFail     = 1 // a threshold was broken
	exitBadInput = 2 // bad input, or a harness fault or error: no verdict on the app
	exitSignal   = 130
)

const checkAbout = `Checks an app's shutdown configuration under load: every variant of a check file (or the one the
flags describe) under every disruption, on rollcheck's kind cluster (created, or reused when it runs),
or on an existing cluster that --kubeconfig, --context or the check file's cluster section names.
The cluster, in this order: --kubeconfig FILE and --context NAME as kubectl reads them (FILE
alone; else KUBECONFIG's files merged, else ~/.kube/config; the context, else the current one),
which replace the check file's cluster section; else that section (kubeconfig, context: the
same rules); else rollcheck's kind cluster, and then KUBECONFIG and ~/.kube/config are not read:
a KUBECONFIG in your shell never moves a check onto your cluster. A line before the first row
(and --dry-run) says which cluster and context it uses. Rows run in parallel (--parallel), but a row whose load
comes from the host or goes to a URL outside its namespace, or that restarts a kubelet or drains a
node, runs with no other beside it. An app that already runs (a check file's app.namespace, or
--deployment [NS/]NAME without --manifest) is checked in place: nothing of it applied, a variant
that changes its Deployment only with --in-place, its spec restored after each row (docs/in-place.md).
A row the harness could not judge (a harness fault: the load itself was invalid) runs once more;
its first attempt is kept as DIR/rows/ROW.attempt1.json and the reports mark the row
"(retried: reason)". Exit 0 every row passed, 1 a threshold was broken, 2 bad input or a row could not be judged,
130 interrupted.`

// runFlags are the flags rollcheck check and tune share: the check file, where the reports
// go, the cluster, a dry run, and how many rows (probes) run at once.
type runFlags struct {
	File        string
	Artifacts   string
	KeepCluster bool
	DryRun      bool
	// Parallel is --parallel: 0 when not given, for the default (atOnce).
	Parallel int

	fs *flag.FlagSet // where they are registered: was --parallel given?
}

// register registers the shared flags on fs; artifacts is --artifacts' default, and dryRun and
// parallel say what --dry-run and --parallel do.
func (r *runFlags) register(fs *flag.FlagSet, artifacts, dryRun, parallel string) {
	r.fs = fs
	fs.StringVar(&r.File, "f", "", "the check `FILE` (apiVersion rollcheck.io/v1alpha1, kind Check)")
	fs.StringVar(&r.Artifacts, "artifacts", artifacts, "reports `DIR`: every row (DIR/rows), its raw requests (DIR/raw), the reports")
	fs.BoolVar(&r.KeepCluster, "keep-cluster", false, "keep a kind cluster this run created (as "+knobs.EnvKeep+"=1)")
	fs.BoolVar(&r.DryRun, "dry-run", false, dryRun)
	fs.IntVar(&r.Parallel, "parallel", 0, parallel)
}

// atOnce is how many of the plans run at once: --parallel when given (above 1 only when some
// plan may run beside others), else as many plans that may as ROLLCHECK_PROCS allows, the rule
// make e2e's Ginkgo processes follow (knobs.Procs). A plan that must run alone
// (check.Plan.RunsAlone) runs alone either way (schedule).
func (r runFlags) atOnce(plans []check.Plan) (int, error) {
	beside, refuse := 0, ""
	for _, p := range plans {
		if p.RunsAlone() == "" {
			beside++
		} else if refuse == "" {
			refuse = aloneRefusal("every row", p)
		}
	}
	if beside > 0 {
		refuse = ""
	}
	return r.parallel(beside, knobs.MaxProcs, refuse)
}

// aloneRefusal says why --parallel above 1 is refused when what (the rows, the probes) must run
// one at a time because of p: its reason to run alone, and what to change when it is the load
// from the host; "" when p may run beside others.
func aloneRefusal(what string, p check.Plan) string {
	why := p.RunsAlone()
	switch {
	case why == "":
		return ""
	case !fromLoadPods(p):
		return fmt.Sprintf("%s must run alone (%s); set load.from: cluster", what, why)
	}
	return fmt.Sprintf("%s must run alone (%s)", what, why)
}

// parallel is the rule of --parallel, for check's rows and tune's probes: the flag when given
// (1 to most, and 1 when refuse says why no more may run at once), else up to def, as many as
// ROLLCHECK_PROCS allows.
func (r runFlags) parallel(def, most int, refuse string) (int, error) {
	if !flagSet(r.fs, "parallel") {
		procs, err := knobs.Procs(os.Getenv)
		return max(1, min(def, procs)), err
	}
	switch n := r.Parallel; {
	case n < 1 || n > most:
		return 0, fmt.Errorf("--parallel %d: want 1 to %d", n, most)
	case n > 1 && refuse != "":
		return 0, fmt.Errorf("--parallel %d: %s", n, refuse)
	}
	return r.Parallel, nil
}

// fromLoadPods reports whether p's load comes from load pods inside the cluster.
func fromLoadPods(p check.Plan) bool { return p.WithDefaults().Load.From == check.LoadFromCluster }

// resolvedFromLoadPods is fromLoadPods of a resolved plan.
func resolvedFromLoadPods(p *check.Resolved) bool { return fromLoadPods(p.Plan()) }

// planList is each resolved plan's Plan.
func planList(rs []*check.Resolved) []check.Plan {
	out := make([]check.Plan, len(rs))
	for i, r := range rs {
		out[i] = r.Plan()
	}
	return out
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkFlags are rollcheck check's flags: the shared ones, an existing cluster, and the app,
// load, variant and disruptions of the flags-only form (--manifest instead of -f).
type checkFlags struct {
	runFlags
	// adjust is what a front end built on check's input (gate) knows of each plan that the
	// flags and the file do not say, applied before the plan is resolved; nil for check.
	adjust func(*check.Plan)
	// Kubeconfig and Context name an existing cluster (clusterRef).
	Kubeconfig, Context string
	// ImageRegistry is where the load image goes for an existing cluster (--image-registry).
	ImageRegistry string
	// The app.
	Manifests, Images     multi
	Deployment, Container string
	Port                  int
	Path                  string
	// The load.
	Rate            int
	Method, Timeout string
	KeepAlive       bool
	LoadFrom        string
	LoadPods        int
	// The disruptions, and the one variant with its threshold.
	Disruptions      multi
	PreStop          string
	Grace            optional[int]
	MaxFailureRatio  optional[float64]
	MinPerDisruption optional[float64]
	// Output is -o: how the run's rows are printed on stdout (outputMarkdown, outputJSON).
	Output string
	// An app checked where it already runs: -n/--namespace (or --deployment NS/NAME) and
	// --service for the flags-only form; --in-place allows the variants that change its
	// Deployment; --load-namespace keeps its load pods in a namespace of the user's.
	Namespace, Service, LoadNamespace string
	InPlace                           bool
	// RowNamespaces is --row-namespace: on an existing cluster, the namespaces of the user's
	// that the rows apply their app into, one row at a time in each, instead of a namespace each
	// row creates.
	RowNamespaces multi
	// gate: rollcheck gate and serve. Without --kubeconfig, --context or a cluster section the
	// cluster is the pod's own, never rollcheck's kind cluster, and a variant that changes the
	// Deployment is the gate's to refuse (gateInput), in its words.
	gate bool
	// fs is the flag set they were parsed by: which flags were given (fileFields).
	fs *flag.FlagSet
}

// The formats of rollcheck check -o.
const (
	outputMarkdown = "markdown"
	outputJSON     = "json"
)

// rowsOut is where rollcheck check prints the run's rows, and how: stdout, as -o says.
type rowsOut struct {
	w      io.Writer
	format string
	// keep, when set, is given the run once its rows are written (rollcheck gate judges it).
	keep func(report.Run)
}

// print prints the run: the conformance table (Markdown), or the run's JSON, byte for byte
// what conformance.json holds (schema: docs/conformance.schema.json).
func (o rowsOut) print(run report.Run) error {
	if o.keep != nil {
		o.keep(run)
	}
	if o.format == outputJSON {
		return run.WriteJSON(o.w)
	}
	return run.WriteMarkdown(o.w)
}

func newCheckFlags(fs *flag.FlagSet) *checkFlags {
	f := &checkFlags{fs: fs}
	f.register(fs, envOr("ARTIFACTS", "_artifacts"), "check the input and print the objects each variant applies, and stop (no Docker, no cluster)",
		fmt.Sprintf("`N` rows at once, 1 to %d. A row runs alone when it would disturb the rows beside it: load\n"+
			"from the host, load to a URL outside its namespace, a kubelet restart, a node drain; the others\n"+
			"run up to N at once. N > 1 is refused when every row must run alone (default: as many of the\n"+
			"others as %s allows: unless set, %d, or this machine's CPUs when fewer)", knobs.MaxProcs, knobs.EnvProcs, knobs.DefaultProcs))
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "check on the existing cluster of this kubeconfig `FILE`, only this file (KUBECONFIG is not\n"+
		"read), its current context unless --context: no cluster created; the load comes from load pods\n"+
		"whose image "+knobs.EnvLoadImage+" (or cluster.loadImage) names, else one rollcheck makes of itself\n"+
		"(loaded into a kind cluster's nodes, or pushed to --image-registry), the app's images\n"+
		"are the manifests' own, and only the namespaces this run created are deleted; the context's\n"+
		"user must have the rights examples/rbac grants (asked of the API server before any work: a\n"+
		"missing one is exit 2). With --context, replaces the check file's cluster section")
	fs.StringVar(&f.Context, "context", "", "check on the existing cluster of this kubeconfig context `NAME`, as --kubeconfig does: from\n"+
		"--kubeconfig FILE, else from KUBECONFIG's files (a list, merged as kubectl merges it), else\n"+
		"~/.kube/config. Without --kubeconfig, --context or a cluster section the check runs on kind")
	fs.StringVar(&f.ImageRegistry, "image-registry", "", "on an existing cluster: push rollcheck's load image, made of this executable, to `REGISTRY`\n"+
		"(host[:port][/path]; credentials from your Docker config) and run REGISTRY/rollcheck/load:<tag>;\n"+
		"replaces the check file's cluster.imageRegistry. Not needed on kind (rollcheck's own or an existing\n"+
		"one on this machine's Docker): the image is loaded into the nodes")
	fs.Var(&f.Manifests, "manifest", "the app's manifest `FILE` (repeat for several): check one app from flags instead of -f")
	fs.Var(&f.Images, "image", "an image `REF` of the app, loaded into kind from the local Docker engine (repeat)")
	fs.StringVar(&f.Deployment, "deployment", "", "the Deployment under test, when the manifests hold several; without --manifest and -f,\n"+
		"`[NS/]NAME` checks that Deployment where it already runs (in place: nothing applied; -n names NS)")
	fs.StringVar(&f.Namespace, "n", "", "the `NAMESPACE` of the Deployment --deployment checks in place")
	fs.StringVar(&f.Namespace, "namespace", "", "the `NAMESPACE` of the Deployment --deployment checks in place (as -n)")
	fs.StringVar(&f.Service, "service", "", "the app's Service `NAME` the load goes to, in place (default: the one that selects its pods)")
	fs.BoolVar(&f.InPlace, "in-place", false, "allow the variants that change a Deployment checked in place (preStop, grace period,\n"+
		"replicas, patch, a budget, …): its spec is recorded on it (annotation rollcheck.io/restore) and\n"+
		"restored after each row, on errors and Ctrl-C, or by the next run after a killed one. Without it\n"+
		"such a variant is refused before any work; an as-is variant runs either way (docs/in-place.md)")
	fs.StringVar(&f.LoadNamespace, "load-namespace", "", "in place, the load pods run in this `NAMESPACE` of yours, kept (only they are deleted),\n"+
		"instead of a namespace each row creates: with examples/rbac/in-place.yaml and in-place-load.yaml\n"+
		"the run needs no right outside the two namespaces")
	fs.Var(&f.RowNamespaces, "row-namespace", "on an existing cluster, a `NAMESPACE` you created that the rows apply their app into,\n"+
		"instead of a namespace each row creates (repeat, or NS,NS: one row at a time in each); kept, and\n"+
		"only what rollcheck applied and started there is deleted. With examples/rbac/namespaced.yaml in\n"+
		"each, the run needs no ClusterRole")
	fs.StringVar(&f.Container, "container", "", "the app's container, when the port's is a sidecar in front of it")
	fs.IntVar(&f.Port, "port", 0, "the app's container `PORT`")
	fs.StringVar(&f.Path, "path", check.DefaultPath, "request path")
	fs.IntVar(&f.Rate, "rate", 0, fmt.Sprintf("requests per second (default %d)", check.DefaultRate))
	fs.StringVar(&f.Method, "method", "", "GET (default) or POST")
	fs.BoolVar(&f.KeepAlive, "keepalive", false, "reuse connections")
	fs.StringVar(&f.Timeout, "timeout", "", fmt.Sprintf("request timeout (default %s)", loadgen.DefaultTimeout))
	fs.StringVar(&f.LoadFrom, "load-from", "", "where the load comes from: host (default, 127.0.0.1 and the NodePort) or cluster (load pods)")
	fs.IntVar(&f.LoadPods, "load-pods", 0, fmt.Sprintf("load pods sharing the rate, 1 to %d (load from the cluster)", check.MaxLoadPods))
	fs.Var(&f.Disruptions, "disruption", fmt.Sprintf("a disruption, `KIND[=COUNT]`: one of %s, COUNT times\n"+
		"(default %d); repeat for several (default %s)", kindList(), check.DefaultCount, check.RolloutRestart))
	fs.StringVar(&f.PreStop, "prestop-sleep", "", "the variant has a native preStop sleep of this `DURATION` (variant prestop-DURATION; default: as-is)")
	fs.Var(&f.Grace, "grace", "the variant's terminationGracePeriodSeconds, `SECONDS` (default: the manifest's)")
	fs.Var(&f.MaxFailureRatio, "max-failure-ratio", "the failure `RATIO` allowed, 0 to 1 (default: no failed request)")
	fs.Var(&f.MinPerDisruption, "min-success-ratio-per-disruption", "the success `RATIO` each disruption needs, 0 to 1")
	fs.StringVar(&f.Output, "o", outputMarkdown, "print the rows on stdout as `FORMAT`: markdown (the conformance table) or json (the run's JSON,\n"+
		"what conformance.json holds: docs/conformance.schema.json); the progress lines go to stderr either way.\n"+
		"With --dry-run: markdown prints each variant's objects as YAML, json as one JSON array (variant, rows,\n"+
		"objects, or in place what it would change)")
	return f
}

// fileFlags are rollcheck check's flags that describe what a check file describes, with the
// file's field for each: with -f each is refused, never silently dropped. The cluster's flags
// (--kubeconfig, --context, --image-registry) replace the file's cluster section instead, and
// the run's (--in-place, --load-namespace, --parallel, -o, …) apply to either form.
var fileFlags = []struct{ flag, field string }{
	{"image", "app.images"}, {"deployment", "app.deployment"}, {"n", "app.namespace"}, {"namespace", "app.namespace"},
	{"service", "app.service"}, {"container", "app.container"}, {"port", "app.port"}, {"path", "app.path"},
	{"rate", "load.rate"}, {"method", "load.method"}, {"keepalive", "load.keepAlive"}, {"timeout", "load.timeout"},
	{"load-from", "load.from"}, {"load-pods", "load.pods"}, {"disruption", "disruptions"},
	{"prestop-sleep", "a variant's preStop"}, {"grace", "a variant's terminationGracePeriodSeconds"},
	{"max-failure-ratio", "a variant's expect.maxFailureRatio"},
	{"min-success-ratio-per-disruption", "a variant's expect.minSuccessRatioPerDisruption"},
}

// fileFields are the flags of fileFlags given on this command line, each with its field:
// "--rate (load.rate)".
func (f *checkFlags) fileFields() []string {
	if f.fs == nil {
		return nil
	}
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var out []string
	for _, ff := range fileFlags {
		if set[ff.flag] {
			dash := "--"
			if len(ff.flag) == 1 {
				dash = "-"
			}
			out = append(out, fmt.Sprintf("%s%s (%s)", dash, ff.flag, ff.field))
		}
	}
	return out
}

// multi is a flag given several times.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// optional is a number flag that may be left unset: then the input's own value holds.
type optional[T int | float64] struct {
	v   T
	set bool
}

func (o *optional[T]) String() string {
	if !o.set {
		return ""
	}
	return fmt.Sprint(o.v)
}

func (o *optional[T]) Set(s string) error {
	var err error
	want := "a number"
	switch p := any(&o.v).(type) {
	case *int:
		want = "a whole number"
		*p, err = strconv.Atoi(s)
	case *float64:
		*p, err = strconv.ParseFloat(s, 64)
	}
	if err != nil {
		return fmt.Errorf("%q is not %s", s, want)
	}
	o.set = true
	return nil
}

// existingUnless says what names an existing cluster for rollcheck check (kindNote).
const existingUnless = "--context NAME or --kubeconfig FILE (or a check file's cluster section) names an existing one"

// checkInput is what rollcheck check runs, read from its flags and checked.
type checkInput struct {
	check *spec.Check
	plans []*check.Resolved
	// adjust is what the front end knows of each plan that the file does not say (an existing
	// cluster's load from load pods; a gate's Rollout), applied before each plan is resolved.
	adjust    func(*check.Plan)
	existing  *clusterRef // an existing cluster, or nil for kind
	loadImage string      // the load pod's image for an existing cluster
	registry  string      // where it is pushed when rollcheck makes it (--image-registry)
	parallel  int
}

// notLoadedWarning is the line that says, on an existing cluster, that the app's images the
// check names (app.images, app.build, --image) are not loaded: rollcheck loads nothing into a
// cluster it does not own, so its nodes must pull them or hold them already. "" when it names none.
func notLoadedWarning(in *checkInput) string {
	if in.existing == nil || in.check == nil || len(in.check.Images()) == 0 {
		return ""
	}
	return fmt.Sprintf("rollcheck check: warning: %s not loaded: rollcheck loads nothing into a cluster it does not own, so its nodes must pull them or hold them already (a kind cluster you made: kind load docker-image REF --name CLUSTER)", strings.Join(in.check.Images(), ", "))
}

// runCheck runs `rollcheck check`; it returns the exit code.
func runCheck(ctx context.Context, f *checkFlags, args []string, stdout, stderr io.Writer) (code int) {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck check: "+format+"\n", a...)
		return exitBadInput
	}
	if len(args) > 0 {
		return bad("unexpected arguments %q (rollcheck help check)", args)
	}
	in, err := f.input(stderr)
	if err != nil {
		return bad("%v", err)
	}
	if f.DryRun {
		if in.existing != nil {
			_, which, err := in.existing.Resolve()
			if err != nil {
				return bad("%v", err)
			}
			fmt.Fprintf(stderr, "cluster: existing, %s\n", which)
			if len(f.RowNamespaces) > 0 {
				fmt.Fprintf(stderr, "rows: in your namespaces %s, one row at a time in each (kept: only what rollcheck applies and starts there is deleted)\n", strings.Join(f.RowNamespaces, ", "))
			}
			if w := notLoadedWarning(in); w != "" {
				fmt.Fprintln(stderr, w)
			}
		} else {
			fmt.Fprintln(stderr, "cluster: rollcheck's kind cluster")
			if note := kindNote("check", existingUnless); note != "" {
				fmt.Fprintln(stderr, note)
			}
		}
		return dryRunPrint(in.plans, f.Output, f.InPlace, stdout, stderr)
	}
	if in.existing != nil {
		if w := notLoadedWarning(in); w != "" {
			fmt.Fprintln(stderr, w)
		}
		c, err := acquireExisting(ctx, *in.existing, in.loadImage, in.registry, rowPlace{Load: f.LoadNamespace, Rows: f.RowNamespaces}, in.plans, logLine(stderr, "check"))
		if err != nil {
			return bad("%v", err)
		}
		for _, n := range c.Notes() {
			fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", n)
		}
		return checkExisting(ctx, c, in.plans, in.parallel, f.Artifacts, rowsOut{w: stdout, format: f.Output}, logLine(stderr, "check"))
	}

	// The cluster's configuration, then the Docker-side input (images built, then present
	// locally), all before any cluster work.
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	opts.Keep = opts.Keep || f.KeepCluster
	if err := checkImages(ctx, in.check, stderr); err != nil {
		return bad("%v", err)
	}
	if err := ownImagesPreflight(opts, slices.ContainsFunc(in.plans, resolvedFromLoadPods), false); err != nil {
		return bad("%v", err)
	}
	opts.Logf = logLine(stderr, "cluster")
	if note := kindNote("check", existingUnless); note != "" {
		opts.Logf("%s", note)
	}
	if in.registry != "" {
		opts.Logf("image registry %s not used: rollcheck loads its images into its kind cluster's nodes", in.registry)
	}
	return onCluster(ctx, opts, f.Artifacts, "check", stderr, func(cl *cluster.Cluster) int {
		return checkRows(ctx, cl, in.plans, in.parallel, f.LoadNamespace, f.Artifacts, rowsOut{w: stdout, format: f.Output}, logLine(stderr, "check"))
	})
}

// input reads the check (a check file, or the flags-only form), its plans (warnings to
// stderr), the cluster they run on and how many run at once: every problem of the input,
// before any Docker or cluster work.
func (f *checkFlags) input(stderr io.Writer) (*checkInput, error) {
	in := &checkInput{}
	var err error
	switch {
	case f.Output != outputMarkdown && f.Output != outputJSON:
		return nil, fmt.Errorf("-o %q: want %s or %s", f.Output, outputMarkdown, outputJSON)
	case f.File != "" && len(f.Manifests) > 0:
		return nil, errors.New("use -f or --manifest, not both")
	case f.File != "":
		if given := f.fileFields(); len(given) > 0 {
			return nil, fmt.Errorf("with -f the check file says the app, its load, disruptions and variants: %s would not be used; set them in the file, or drop -f", strings.Join(given, ", "))
		}
	case len(f.Manifests) > 0 && (f.Namespace != "" || f.Service != ""):
		return nil, errors.New("-n and --service check a Deployment where it already runs: give --deployment [NS/]NAME without --manifest")
	}
	switch {
	case f.File != "":
		in.check, err = spec.Load(f.File)
	case len(f.Manifests) > 0:
		in.check, err = f.flagsCheck()
	case f.Deployment != "":
		in.check, err = f.inPlaceCheck()
	default:
		return nil, errors.New("nothing to check: give -f CHECK.yaml, --manifest, or --deployment [NS/]NAME for a Deployment that runs already (rollcheck help check)")
	}
	if err != nil {
		return nil, err
	}
	c := in.check
	// --kubeconfig and --context name an existing cluster, else the check file's cluster
	// section does (its load image counts either way), else the run is on kind.
	in.existing, in.loadImage = flagsRef(f.Kubeconfig, f.Context), os.Getenv(knobs.EnvLoadImage)
	if c.Cluster != nil {
		if in.existing == nil {
			in.existing = &clusterRef{Kubeconfig: c.KubeconfigPath(), Context: c.Cluster.Context, By: "the check file's cluster section"}
		}
		if in.loadImage == "" {
			in.loadImage = c.Cluster.LoadImage
		}
	}
	if in.existing == nil && f.gate {
		ref := inClusterRef
		in.existing = &ref
	}
	existing := in.existing != nil
	if existing && c.Load.From == string(check.LoadFromHost) {
		return nil, fmt.Errorf("%s: an existing cluster is loaded from inside only; %s says load.from: host", in.existing.By, c.Name())
	}
	in.adjust = func(p *check.Plan) {
		if existing {
			// Nothing is loaded into a cluster rollcheck does not own: the manifests' images
			// and pull policies are used as they are.
			p.Load.From, p.App.Images = check.LoadFromCluster, nil
		}
		if f.adjust != nil {
			f.adjust(p)
		}
	}
	plans, warnings, err := c.PlansWith(in.adjust)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", w)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Name(), err)
	}
	if in.registry = f.ImageRegistry; in.registry == "" && c.Cluster != nil {
		in.registry = c.Cluster.ImageRegistry
	}
	if in.registry != "" {
		if err := selfimage.ValidRegistry(in.registry); err != nil {
			return nil, fmt.Errorf("image registry %q: %w", in.registry, err)
		}
	}
	if err := f.inPlaceInput(c, plans); err != nil {
		return nil, err
	}
	in.plans = plans
	if in.parallel, err = f.atOnce(planList(plans)); err != nil {
		return nil, err
	}
	if err := f.rowsInput(in); err != nil {
		return nil, err
	}
	return in, nil
}

// rowsInput checks --row-namespace: on an existing cluster only, for an app the rows apply,
// names that a namespace may have, each once, no Pod Security level to label them with, and no
// more rows at once than namespaces (the default is cut to their number).
func (f *checkFlags) rowsInput(in *checkInput) error {
	var names []string
	for _, v := range f.RowNamespaces {
		for _, ns := range strings.Split(v, ",") {
			ns = strings.TrimSpace(ns)
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return fmt.Errorf("--row-namespace %q: not a namespace's name: %s", ns, strings.Join(errs, "; "))
			}
			if slices.Contains(names, ns) {
				return fmt.Errorf("--row-namespace %s: given twice", ns)
			}
			names = append(names, ns)
		}
	}
	f.RowNamespaces = names
	level, _ := knobs.Get(os.Getenv, knobs.EnvPodSecurity)
	switch {
	case len(names) == 0:
		return nil
	case in.existing == nil:
		return fmt.Errorf("--row-namespace %s: only on an existing cluster (%s); on rollcheck's kind cluster each row creates a namespace of its own", names[0], existingUnless)
	case f.gate:
		return fmt.Errorf("--row-namespace %s: the gate checks pods where they run and applies nothing", names[0])
	case in.check.App.Namespace != "":
		return fmt.Errorf("--row-namespace %s: an app checked where it already runs applies nothing; its load pods' namespace is --load-namespace", names[0])
	case level != "":
		return fmt.Errorf("--row-namespace %s: %s=%s labels the namespaces rollcheck creates, and with --row-namespace it creates none: label yours (kubectl label namespace NS pod-security.kubernetes.io/enforce=%s), and unset it", names[0], knobs.EnvPodSecurity, level, level)
	case flagSet(f.fs, "parallel") && f.Parallel > len(names):
		return fmt.Errorf("--parallel %d: one row at a time runs in each --row-namespace, and %d are named", f.Parallel, len(names))
	}
	in.parallel = min(in.parallel, len(names))
	return nil
}

// ownImagesPreflight says, before any cluster work, why rollcheck could not make the images of
// its own a run on its kind cluster makes (the load pod's when loadPods and no prebuilt one is
// named, the sample app's when sampleApp): on a Mac, with no Linux build of it given and no Go
// to build one (cluster.ImagesPreflight). kind's nodes have this machine's architecture.
func ownImagesPreflight(opts cluster.Options, loadPods, sampleApp bool) error {
	if (loadPods && opts.LoadImage == "") || sampleApp {
		return cluster.ImagesPreflight("")
	}
	return nil
}

// checkImages builds the check's images, then makes sure every image it loads is in the local
// Docker engine: the Docker-side input, checked before any cluster work.
func checkImages(ctx context.Context, c *spec.Check, stderr io.Writer) error {
	for _, b := range c.App.Build {
		if err := dockerBuild(ctx, c.BuildDir(b), b, stderr); err != nil {
			return err
		}
	}
	missing, err := cluster.LocalImagesMissing(ctx, c.Images())
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("image %s is not in the local Docker engine (docker images lists what is; build or pull it first)", strings.Join(missing, ", "))
	}
	return nil
}

// onCluster acquires the cluster by the policy every front end follows (cluster.DefaultSetup:
// create or reuse, sweep what earlier runs left) and returns work's exit code on it. Whatever
// happens, it then releases it (cluster.DefaultTeardown: the cluster's logs exported into
// artifacts/cluster-logs unless the code is 0, this run's namespaces waited for, the cluster
// deleted if this run created it and it is not kept); a cleanup that fails raises the code to
// exitBadInput. cmd names the subcommand in its lines.
func onCluster(ctx context.Context, opts cluster.Options, artifacts, cmd string, stderr io.Writer, work func(*cluster.Cluster) int) (code int) {
	r := &cluster.Run{Options: opts, LogsDir: filepath.Join(artifacts, "cluster-logs")}
	defer func() {
		r.Failed = r.Failed || code != exitPass
		if err := r.Teardown(ctx, cluster.DefaultTeardown...); err != nil {
			logLine(stderr, cmd)("cleanup: %v", err)
			code = max(code, exitBadInput)
		}
	}()
	if err := r.Setup(ctx, cluster.DefaultSetup...); err != nil {
		fmt.Fprintf(stderr, "rollcheck %s: %v\n", cmd, err)
		return exitBadInput
	}
	return work(r.Cluster)
}

// checkRows runs every plan on the kind cluster (with the load pod's image when a plan asks for
// load from the cluster).
func checkRows(ctx context.Context, cl *cluster.Cluster, plans []*check.Resolved, parallel int, loadNS, artifacts string, out rowsOut, logf func(string, ...any)) (code int) {
	t, err := kindTarget(ctx, cl, slices.ContainsFunc(plans, resolvedFromLoadPods))
	if err != nil {
		logf("%v", err)
		return exitBadInput
	}
	held, err := inplace.HoldRun(ctx, t.RESTConfig, plans, t.RunID)
	if err != nil {
		logf("%v", err)
		return exitBadInput
	}
	defer releaseHeld(ctx, held, logf, &code)
	t.LoadNamespace = loadNS
	return runRows(ctx, t, plans, parallel, nil, artifacts, out, logf)
}

// kindTarget is the kind cluster's Target: with the load pod's image, built and loaded, when
// loadPods (a plan asks for load from the cluster).
func kindTarget(ctx context.Context, cl *cluster.Cluster, loadPods bool) (engine.Target, error) {
	t := cl.Target()
	if loadPods {
		ref, err := cl.LoadPodImage(ctx)
		if err != nil {
			return t, fmt.Errorf("the load pod's image: %w", err)
		}
		t.LoadImage = ref
	}
	return t, nil
}

// runRows runs every plan on the Target by the front ends' one way (frontend.Rows: up to
// parallel at once, a row that must run alone alone, a harness fault once more, every row and
// the reports written), prints the run (out) and maps its Outcome to the exit code.
func runRows(ctx context.Context, t engine.Target, plans []*check.Resolved, parallel int, rowsNS []string, artifacts string, out rowsOut, logf func(string, ...any)) int {
	run := frontend.Rows(ctx, t, plans, frontend.Options{Parallel: parallel, RowNamespaces: rowsNS, Artifacts: artifacts, Logf: logf, Progress: progressPrinter(logf)})
	if err := out.print(run); err != nil {
		logf("%v", err)
	}
	logf("reports in %s (conformance.md, conformance.json, conformance.junit.xml, timeline.html)", artifacts)
	outcome := frontend.Judge(ctx, run, len(plans))
	if outcome == frontend.Interrupted {
		logf("interrupted: %d of %d rows ran", len(run.Rows), len(plans))
	}
	return exitOf[outcome]
}

// exitOf is the exit code of each Outcome of a run of rows.
var exitOf = map[frontend.Outcome]int{frontend.Pass: exitPass, frontend.Fail: exitFail, frontend.Inconclusive: exitBadInput, frontend.Interrupted: exitSignal}

// progressPrinter shows each step of a row (frontend.ProgressLine), indented under its row.
func progressPrinter(logf func(string, ...any)) func(engine.Progress) {
	return func(p engine.Progress) { logf("  %s", frontend.ProgressLine(p)) }
}

// flagsCheck is the check the flags-only form describes: one app, one variant ("as-is", or
// the preStop sleep and grace period given), the disruptions given (default rollout-restart×3).
func (f *checkFlags) flagsCheck() (*spec.Check, error) {
	c := &spec.Check{APIVersion: spec.APIVersion, Kind: spec.Kind}
	c.Metadata.Name = "check"
	c.App = spec.App{Manifests: f.Manifests, Images: f.Images, Deployment: f.Deployment, Container: f.Container, Port: int32(f.Port), Path: f.Path}
	c.Load = spec.LoadSettings{Rate: f.Rate, Method: f.Method, KeepAlive: f.KeepAlive, From: f.LoadFrom, Pods: f.LoadPods}
	var errs []string
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--timeout %q: %v", f.Timeout, err))
		}
		c.Load.Timeout = &metav1.Duration{Duration: d}
	}
	disruptions := f.Disruptions
	if len(disruptions) == 0 {
		disruptions = multi{string(check.RolloutRestart)}
	}
	for _, d := range disruptions {
		kind, count, _ := strings.Cut(d, "=")
		n := 0
		if count != "" {
			if _, err := fmt.Sscanf(count, "%d", &n); err != nil {
				errs = append(errs, fmt.Sprintf("--disruption %q: count is not a number", d))
			}
		}
		c.Disruptions = append(c.Disruptions, spec.Disruption{Kind: check.DisruptionKind(kind), Count: n})
	}
	v := spec.Variant{Name: "as-is"}
	prestop := f.PreStop
	if prestop != "" {
		d, err := time.ParseDuration(prestop)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--prestop-sleep %q: %v", prestop, err))
		}
		v.Name = "prestop-" + strings.ReplaceAll(prestop, ".", "-")
		v.PreStop = &spec.PreStop{Sleep: &metav1.Duration{Duration: d}}
	}
	if f.Grace.set {
		g := int64(f.Grace.v)
		v.TerminationGracePeriodSeconds = &g
		if prestop == "" {
			v.Name = fmt.Sprintf("grace-%ds", g)
		}
	}
	maxRatio, minPer := f.MaxFailureRatio.v, f.MinPerDisruption.v
	switch {
	case f.MaxFailureRatio.set:
		v.Expect.MaxFailureRatio = &maxRatio
	case !f.MinPerDisruption.set:
		zero := 0
		v.Expect.Failures = &zero
	}
	if f.MinPerDisruption.set {
		v.Expect.MinSuccessRatioPerDisruption = &minPer
	}
	c.Variants = []spec.Variant{v}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return c, nil
}

// dryVariant is one variant of a dry run as -o json prints it: its rows, and the objects it
// would apply (or, in place, what it would change).
type dryVariant struct {
	Variant string         `json:"variant"`
	Rows    []string       `json:"rows"`
	InPlace string         `json:"inPlace,omitempty"`
	Objects []check.Object `json:"objects,omitempty"`
}

// dryRunPrint prints, per variant, the objects the check would apply (in place, what it would
// change, and whether that needs --in-place: inPlaceAllowed): as YAML documents under a comment
// per variant, or with -o json as one JSON array of dryVariant. The rows go to stderr either way.
func dryRunPrint(plans []*check.Resolved, format string, inPlaceAllowed bool, stdout, stderr io.Writer) int {
	var out []*dryVariant
	byName := map[string]*dryVariant{}
	for _, res := range plans {
		p := res.Plan()
		row := fmt.Sprintf("%s×%d", p.Disruption.Kind, p.Disruption.Count)
		fmt.Fprintf(stderr, "row: %s under %s\n", p.Variant.Name, row)
		if v := byName[p.Variant.Name]; v != nil {
			v.Rows = append(v.Rows, row) // the same objects as the variant's first row
			continue
		}
		v := &dryVariant{Variant: p.Variant.Name, Rows: []string{row}}
		byName[p.Variant.Name] = v
		out = append(out, v)
		if p.InPlace() {
			v.InPlace = inPlaceSays(p, inPlaceAllowed) // never empty
			continue
		}
		objs, err := res.Objects("rc-"+p.Variant.Name+"-<random>", 30080)
		if err != nil {
			fmt.Fprintf(stderr, "rollcheck check: %v\n", err)
			return exitBadInput
		}
		for _, o := range objs {
			o.SetManagedFields(nil)
		}
		v.Objects = objs
	}
	if format == outputJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "rollcheck check: %v\n", err)
			return exitBadInput
		}
		return exitPass
	}
	for _, v := range out {
		if v.InPlace != "" {
			fmt.Fprintf(stdout, "# variant %s: %s\n", v.Variant, v.InPlace)
			continue
		}
		fmt.Fprintf(stdout, "# variant %s\n", v.Variant)
		for _, o := range v.Objects {
			b, err := yaml.Marshal(o)
			if err != nil {
				fmt.Fprintf(stderr, "rollcheck check: %v\n", err)
				return exitBadInput
			}
			fmt.Fprintf(stdout, "---\n%s", b)
		}
	}
	return exitPass
}

// dockerBuild builds one image of the check, with a time limit.
func dockerBuild(ctx context.Context, dir string, b spec.Build, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	args := []string{"build", "-q", "-t", b.Image}
	if b.Dockerfile != "" {
		args = append(args, "-f", filepath.Join(dir, b.Dockerfile))
	}
	fmt.Fprintf(stderr, "rollcheck check: docker build %s from %s (up to 15m)\n", b.Image, dir)
	cmd := exec.CommandContext(ctx, "docker", append(args, dir)...)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker build %s from %s: %v: %s", b.Image, dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func logLine(w io.Writer, prefix string) func(string, ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(w, "%s [%s] %s\n", time.Now().UTC().Format("15:04:05"), prefix, fmt.Sprintf(format, a...))
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// kindList is every disruption kind, for --help: "rollout-restart, delete-pod, ...".
func kindList() string {
	ks := make([]string, len(check.DisruptionKinds))
	for i, k := range check.DisruptionKinds {
		ks[i] = string(k)
	}
	return strings.Join(ks, ", ")
}
