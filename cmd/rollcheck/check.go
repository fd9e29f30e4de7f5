package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/frontend"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/loadgen"
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

// runFlags are the flags rollcheck check and tune share (checkinput.Run), and the set they are
// registered on.
type runFlags struct {
	checkinput.Run
	fs *flag.FlagSet // where they are registered: was --parallel given?
}

// register registers the shared flags on fs; artifacts is --artifacts' default, and dryRun and
// parallel say what --dry-run and --parallel do.
func (r *runFlags) register(fs *flag.FlagSet, artifacts, dryRun, parallel string) {
	registerRun(fs, &r.Run, &r.fs, artifacts, dryRun, parallel)
}

// registerRun registers the shared flags of run on fs, and has run.Given ask *set (fs, unless a
// front end moves the flags to a set of its own: gate) which flags were given.
func registerRun(fs *flag.FlagSet, run *checkinput.Run, set **flag.FlagSet, artifacts, dryRun, parallel string) {
	*set = fs
	run.Given = func(name string) bool { return flagSet(*set, name) }
	fs.StringVar(&run.File, "f", "", "the check `FILE` (apiVersion rollcheck.io/v1alpha1, kind Check)")
	fs.StringVar(&run.Artifacts, "artifacts", artifacts, "reports `DIR`: every row (DIR/rows), its raw requests (DIR/raw), the reports")
	fs.BoolVar(&run.KeepCluster, "keep-cluster", false, "keep a kind cluster this run created (as "+knobs.EnvKeep+"=1)")
	fs.BoolVar(&run.DryRun, "dry-run", false, dryRun)
	fs.IntVar(&run.Parallel, "parallel", 0, parallel)
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkFlags are rollcheck check's flags (checkinput.Flags), and the set they are registered on.
type checkFlags struct {
	checkinput.Flags
	// fs is the flag set they were parsed by: which flags were given.
	fs *flag.FlagSet
}

// The formats of rollcheck check -o.
const (
	outputMarkdown = checkinput.Markdown
	outputJSON     = checkinput.JSON
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
	f := &checkFlags{}
	registerRun(fs, &f.Run, &f.fs, envOr("ARTIFACTS", "_artifacts"), "check the input and print the objects each variant applies, and stop (no Docker, no cluster)",
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
	fs.StringVar(&f.Rollout, "rollout", "", "an Argo Rollout `[NS/]NAME` to check where it already runs, as --deployment checks a Deployment:\n"+
		"its variants change its pod template (a new revision, which Argo rolls out by the Rollout's strategy),\n"+
		"rollout-restart is Argo's restart (spec.restartAt); restored after each row (docs/in-place.md)")
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

// multi and optional are the flag values of checkinput.
type (
	multi                     = checkinput.Multi
	optional[T int | float64] = checkinput.Optional[T]
)

// existingUnless says what names an existing cluster for rollcheck check (kindNote).
const existingUnless = checkinput.ExistingUnless

// checkInput is what rollcheck check runs, read from its flags and checked.
type checkInput = checkinput.Input

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
		if in.Existing != nil {
			_, which, err := in.Existing.Resolve()
			if err != nil {
				return bad("%v", err)
			}
			fmt.Fprintf(stderr, "cluster: existing, %s\n", which)
			if len(f.RowNamespaces) > 0 {
				fmt.Fprintf(stderr, "rows: in your namespaces %s, one row at a time in each (kept: only what rollcheck applies and starts there is deleted)\n", strings.Join(f.RowNamespaces, ", "))
			}
			if w := in.NotLoadedWarning(); w != "" {
				fmt.Fprintln(stderr, w)
			}
		} else {
			fmt.Fprintln(stderr, "cluster: rollcheck's kind cluster")
			if note := kindNote("check", existingUnless); note != "" {
				fmt.Fprintln(stderr, note)
			}
		}
		if err := checkinput.DryRun(in.Plans, f.Output, f.InPlace, stdout, stderr); err != nil {
			return bad("%v", err)
		}
		return exitPass
	}
	if in.Existing != nil {
		if w := in.NotLoadedWarning(); w != "" {
			fmt.Fprintln(stderr, w)
		}
		c, err := acquireExisting(ctx, *in.Existing, in.LoadImage, in.Registry, rowPlace{Load: f.LoadNamespace, Rows: f.RowNamespaces}, in.Plans, logLine(stderr, "check"))
		if err != nil {
			return bad("%v", err)
		}
		for _, n := range c.Notes() {
			fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", n)
		}
		return checkExisting(ctx, c, in.Plans, in.Parallel, f.Artifacts, rowsOut{w: stdout, format: f.Output}, logLine(stderr, "check"))
	}

	// The cluster's configuration, then the Docker-side input (images built, then present
	// locally), all before any cluster work.
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	opts.Keep = opts.Keep || f.KeepCluster
	if err := checkinput.Images(ctx, in.Check, stderr); err != nil {
		return bad("%v", err)
	}
	if err := ownImagesPreflight(opts, slices.ContainsFunc(in.Plans, checkinput.ResolvedFromLoadPods), false); err != nil {
		return bad("%v", err)
	}
	opts.Logf = logLine(stderr, "cluster")
	if note := kindNote("check", existingUnless); note != "" {
		opts.Logf("%s", note)
	}
	if in.Registry != "" {
		opts.Logf("image registry %s not used: rollcheck loads its images into its kind cluster's nodes", in.Registry)
	}
	return onCluster(ctx, opts, f.Artifacts, "check", stderr, func(cl *cluster.Cluster) int {
		return checkRows(ctx, cl, in.Plans, in.Parallel, f.LoadNamespace, f.Artifacts, rowsOut{w: stdout, format: f.Output}, logLine(stderr, "check"))
	})
}

// input reads the check, its plans and the cluster they run on (checkinput.Flags.Read), the
// warnings to stderr.
func (f *checkFlags) input(stderr io.Writer) (*checkInput, error) {
	return f.Read(func(w string) { fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", w) })
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
	t, err := kindTarget(ctx, cl, slices.ContainsFunc(plans, checkinput.ResolvedFromLoadPods))
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
	run := frontend.Rows(ctx, t, plans, frontend.Options{Parallel: parallel, RowNamespaces: rowsNS, Artifacts: artifacts, Logf: logf, Progress: frontend.Printer(logf)})
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
