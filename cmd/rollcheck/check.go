package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/spec"
)

// Exit codes of rollcheck check.
const (
	exitPass     = 0 // every row passed
	exitFail     = 1 // a threshold was broken
	exitBadInput = 2 // bad input, or a harness fault or error: no verdict on the app
	exitSignal   = 130
)

const checkUsage = `usage: rollcheck check -f CHECK.yaml [--kubeconfig FILE] [--parallel N] [--artifacts DIR] [--dry-run]
       rollcheck check --manifest FILE [--manifest FILE...] --image REF [--image REF...] --port N
                       [--deployment NAME] [--container NAME] [--path /] [--disruption KIND[=COUNT]...] [--rate N]
                       [--method GET|POST] [--keepalive] [--timeout 2s] [--load-from host|cluster] [--load-pods N] [--prestop-sleep 5s]
                       [--grace N] [--max-failure-ratio R] [--min-success-ratio-per-disruption R]
                       [--kubeconfig FILE] [--parallel N] [--artifacts DIR] [--dry-run]
Checks an app's shutdown configuration under load on the kind cluster (created or reused as
make e2e does) and exits 0 when every row passed, 1 when a threshold was broken, 2 on bad
input or when a row could not be judged.

With --kubeconfig FILE it checks on that existing cluster instead: it creates no cluster and
loads no image; the load comes from a load pod inside the cluster (ROLLCHECK_LOAD_IMAGE names
its image, which the cluster must be able to run), the app's images are the manifests' own,
and it deletes only the namespaces it created.`

// maxParallel is the most rows rollcheck check runs at once.
const maxParallel = 8

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// check runs `rollcheck check`; it returns the exit code.
func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		file, artifacts, deployment, path, method, timeout, prestop, loadFrom, kubeconfig, container string
		manifests, images, disruptions                                                               multi
		port, rate, grace, parallel, loadPods                                                        int
		keepalive, dryRun                                                                            bool
		maxRatio, minPer                                                                             float64
	)
	fs.StringVar(&file, "f", "", "check file")
	fs.StringVar(&artifacts, "artifacts", envOr("ARTIFACTS", "_artifacts"), "reports directory")
	fs.BoolVar(&dryRun, "dry-run", false, "validate and print the objects, no cluster")
	fs.Var(&manifests, "manifest", "manifest file")
	fs.Var(&images, "image", "image to load from the local Docker engine")
	fs.Var(&disruptions, "disruption", "disruption kind[=count]")
	fs.StringVar(&deployment, "deployment", "", "Deployment under test")
	fs.StringVar(&path, "path", "/", "request path")
	fs.IntVar(&port, "port", 0, "container port")
	fs.StringVar(&container, "container", "", "the app's container, when the port's is a sidecar in front of it")
	fs.IntVar(&rate, "rate", 0, "requests per second")
	fs.StringVar(&method, "method", "", "GET or POST")
	fs.BoolVar(&keepalive, "keepalive", false, "reuse connections")
	fs.StringVar(&timeout, "timeout", "", "request timeout")
	fs.StringVar(&loadFrom, "load-from", "", "host (default) or cluster (a load pod)")
	fs.IntVar(&loadPods, "load-pods", 0, "load pods sharing the rate (load from the cluster)")
	fs.IntVar(&parallel, "parallel", 1, "rows at once (load from the cluster only)")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "an existing cluster's kubeconfig: no kind, no image loaded, load from the cluster")
	fs.StringVar(&prestop, "prestop-sleep", "", "variant with a native preStop sleep")
	fs.IntVar(&grace, "grace", -1, "variant's terminationGracePeriodSeconds")
	fs.Float64Var(&maxRatio, "max-failure-ratio", -1, "allowed failure ratio (default: no failure)")
	fs.Float64Var(&minPer, "min-success-ratio-per-disruption", -1, "required success ratio of each disruption")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck check: "+format+"\n", a...)
		return exitBadInput
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, checkUsage)
			return exitPass
		}
		return bad("%v (rollcheck check -h)", err)
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q (rollcheck check -h)", fs.Args())
	}

	var c *spec.Check
	var err error
	switch {
	case file != "" && len(manifests) > 0:
		return bad("use -f or --manifest, not both")
	case file != "" && (loadFrom != "" || loadPods != 0):
		return bad("--load-from and --load-pods are for --manifest; a check file says load: {from: ..., pods: ...}")
	case file != "" && container != "":
		return bad("--container is for --manifest; a check file says app: {container: ...}")
	case file != "":
		if c, err = spec.Load(file); err != nil {
			return bad("%v", err)
		}
	case len(manifests) > 0:
		if c, err = flagsCheck(manifests, images, disruptions, deployment, path, method, timeout, prestop, port, rate, grace, keepalive, maxRatio, minPer); err != nil {
			return bad("%v", err)
		}
		c.Load.From, c.Load.Pods, c.App.Container = loadFrom, loadPods, container
	default:
		return bad("nothing to check: give -f CHECK.yaml or --manifest (rollcheck check -h)")
	}
	plans, warnings, err := c.Plans()
	for _, w := range warnings {
		fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", w)
	}
	if err != nil {
		return bad("%s: %v", c.Name(), err)
	}
	// The check file's cluster section names an existing cluster; --kubeconfig overrides it.
	loadImage := os.Getenv(knobs.EnvLoadImage)
	if c.Cluster != nil {
		if kubeconfig == "" {
			kubeconfig = c.KubeconfigPath()
		}
		if loadImage == "" {
			loadImage = c.Cluster.LoadImage
		}
	}
	if kubeconfig != "" {
		if c.Load.From == string(check.LoadFromHost) {
			return bad("--kubeconfig: an existing cluster is loaded from inside only; %s says load.from: host", c.Name())
		}
		for i := range plans {
			// Nothing is loaded into a cluster rollcheck does not own: the manifests' images
			// and pull policies are used as they are.
			plans[i].Load.From, plans[i].App.Images = check.LoadFromCluster, nil
		}
	}
	if parallel < 1 || parallel > maxParallel {
		return bad("--parallel %d: want 1 to %d", parallel, maxParallel)
	}
	if parallel > 1 && slices.ContainsFunc(plans, func(p check.Plan) bool { return p.WithDefaults().Load.From != check.LoadFromCluster }) {
		return bad("--parallel %d: rows whose load comes from the host share the NodePort and run one at a time; set load.from: cluster", parallel)
	}
	if dryRun {
		return dryRunPrint(plans, stdout, stderr)
	}
	if kubeconfig != "" {
		t, err := existingTarget(ctx, kubeconfig, loadImage)
		if err != nil {
			return bad("%v", err)
		}
		return checkExisting(ctx, t, plans, parallel, artifacts, stdout, logLine(stderr, "check"))
	}

	// The cluster's configuration, then the Docker-side input (images built, then present
	// locally), all before any cluster work.
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	if err := checkImages(ctx, c, stderr); err != nil {
		return bad("%v", err)
	}
	opts.Logf = logLine(stderr, "cluster")
	return runChecks(ctx, opts, c, plans, parallel, artifacts, stdout, stderr)
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

// runChecks creates or reuses the cluster, runs every plan, writes the reports and decides
// the exit code.
func runChecks(ctx context.Context, opts cluster.Options, c *spec.Check, plans []check.Plan, parallel int, artifacts string, stdout, stderr io.Writer) int {
	return onCluster(ctx, opts, artifacts, "check", stderr, func(cl *cluster.Cluster) int {
		return checkRows(ctx, cl, plans, parallel, artifacts, stdout, logLine(stderr, "check"))
	})
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
func checkRows(ctx context.Context, cl *cluster.Cluster, plans []check.Plan, parallel int, artifacts string, stdout io.Writer, logf func(string, ...any)) int {
	t := cl.Target()
	if slices.ContainsFunc(plans, func(p check.Plan) bool { return p.WithDefaults().Load.From == check.LoadFromCluster }) {
		ref, err := cl.LoadPodImage(ctx)
		if err != nil {
			logf("the load pod's image: %v", err)
			return exitBadInput
		}
		t.LoadImage = ref
	}
	return runRows(ctx, t, plans, parallel, artifacts, stdout, logf)
}

// runRows runs every plan on the Target, writes the rows and the reports and decides the exit
// code.
//
// With parallel > 1 that many rows run at once (each in its own namespace; only rows whose load
// comes from the cluster share nothing, which the caller has checked); the reports list the
// rows by their start.
func runRows(ctx context.Context, t engine.Target, plans []check.Plan, parallel int, artifacts string, stdout io.Writer, logf func(string, ...any)) int {
	t.Logf = func(string, ...any) {} // the progress lines below say what matters
	_ = check.ClearRows(artifacts)
	var (
		mu   sync.Mutex
		rows []check.Row
		wg   sync.WaitGroup
		slot = make(chan struct{}, max(1, parallel))
	)
	for i, p := range plans {
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		logf("row %d/%d: %s under %s×%d", i+1, len(plans), p.Variant.Name, p.Disruption.Kind, p.WithDefaults().Disruption.Count)
		wg.Add(1)
		go func() {
			defer func() { <-slot; wg.Done() }()
			row, err := engine.Run(ctx, t, p, engine.WithArtifacts(artifacts), engine.WithProgress(progressPrinter(logf)))
			if row != nil {
				if _, werr := check.WriteRow(artifacts, *row); werr != nil {
					logf("write row: %v", werr)
				}
				mu.Lock()
				rows = append(rows, *row)
				mu.Unlock()
			}
			if err != nil {
				logf("%v", err)
			}
		}()
	}
	wg.Wait()
	slices.SortStableFunc(rows, func(a, b check.Row) int { return a.Started.Compare(b.Started) })
	run := report.NewRun(rows)
	if _, err := report.WriteAll(artifacts, run); err != nil {
		logf("%v", err)
	}
	if err := run.WriteMarkdown(stdout); err != nil {
		logf("%v", err)
	}
	logf("reports in %s (conformance.md, conformance.json, conformance.junit.xml, timeline.html)", artifacts)
	counts := report.Summarize(run)
	switch {
	case ctx.Err() != nil:
		logf("interrupted: %d of %d rows ran", len(rows), len(plans))
		return exitSignal
	case counts.HarnessFault+counts.Error > 0 || len(rows) < len(plans):
		return exitBadInput
	case counts.Fail+counts.Flaky > 0:
		return exitFail
	}
	return exitPass
}

// progressPrinter shows each step of a row: disruptions, requests and failures so far.
func progressPrinter(logf func(string, ...any)) func(engine.Progress) {
	return func(p engine.Progress) {
		switch p.Step {
		case engine.StepDisruption:
			logf("  %s: disruption %d/%d starts; %d requests, %d failed so far", p.Row, p.N, p.Count, p.Load.Sent, p.Load.Failed)
		case engine.StepSettled:
			pod := "" // the deleted pod, for delete-pod and force-delete
			if p.Detail != "" {
				pod = " (pod " + p.Detail + ")"
			}
			logf("  %s: disruption %d/%d settled%s; %d requests, %d failed so far", p.Row, p.N, p.Count, pod, p.Load.Sent, p.Load.Failed)
		case engine.StepLoadTicker:
			logf("  %s: %d requests, %d failed so far", p.Row, p.Load.Sent, p.Load.Failed)
		case engine.StepTeardown:
			logf("  %s: teardown of namespace %s", p.Row, p.Detail)
		default:
			logf("  %s: %s %s", p.Row, p.Step, p.Detail)
		}
	}
}

// flagsCheck is the check the flags-only form describes: one app, one variant ("as-is", or
// the preStop sleep and grace period given), the disruptions given (default rollout-restart×3).
func flagsCheck(manifests, images, disruptions multi, deployment, path, method, timeout, prestop string,
	port, rate, grace int, keepalive bool, maxRatio, minPer float64) (*spec.Check, error) {
	c := &spec.Check{APIVersion: spec.APIVersion, Kind: spec.Kind}
	c.Metadata.Name = "check"
	c.App = spec.App{Manifests: manifests, Images: images, Deployment: deployment, Port: int32(port), Path: path}
	c.Load = spec.LoadSettings{Rate: rate, Method: method, KeepAlive: keepalive}
	var errs []string
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--timeout %q: %v", timeout, err))
		}
		c.Load.Timeout = &metav1.Duration{Duration: d}
	}
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
	if prestop != "" {
		d, err := time.ParseDuration(prestop)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--prestop-sleep %q: %v", prestop, err))
		}
		v.Name = "prestop-" + strings.ReplaceAll(prestop, ".", "-")
		v.PreStop = &spec.PreStop{Sleep: &metav1.Duration{Duration: d}}
	}
	if grace >= 0 {
		g := int64(grace)
		v.TerminationGracePeriodSeconds = &g
		if prestop == "" {
			v.Name = fmt.Sprintf("grace-%ds", grace)
		}
	}
	switch {
	case maxRatio >= 0:
		v.Expect.MaxFailureRatio = &maxRatio
	case minPer < 0:
		zero := 0
		v.Expect.Failures = &zero
	}
	if minPer >= 0 {
		v.Expect.MinSuccessRatioPerDisruption = &minPer
	}
	c.Variants = []spec.Variant{v}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return c, nil
}

// dryRunPrint prints, per row, the objects the check would apply.
func dryRunPrint(plans []check.Plan, stdout, stderr io.Writer) int {
	done := map[string]bool{}
	for _, p := range plans {
		fmt.Fprintf(stderr, "row: %s under %s×%d\n", p.Variant.Name, p.Disruption.Kind, p.WithDefaults().Disruption.Count)
		if done[p.Variant.Name] {
			continue // the same objects as the variant's first row
		}
		done[p.Variant.Name] = true
		objs, err := p.Objects("rc-"+p.Variant.Name+"-<random>", 30080)
		if err != nil {
			fmt.Fprintf(stderr, "rollcheck check: %v\n", err)
			return exitBadInput
		}
		fmt.Fprintf(stdout, "# variant %s\n", p.Variant.Name)
		for _, o := range objs {
			o.SetManagedFields(nil)
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
