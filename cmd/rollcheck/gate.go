package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/gate"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/report"
)

const gateAbout = `Checks a Deployment where it runs, as it is, or with --rollout NS/NAME --pod-template-hash H
the pods of one revision of an Argo Rollout (its ReplicaSet NAME-H: the preview's or the canary's),
and answers pass or fail: the step of a release controller that decides a promotion (Argo
Rollouts' Job metric provider, Flagger's webhooks through rollcheck serve, Kargo's verification;
docs/gate.md). In a pod, with neither --kubeconfig nor
--context, it runs as the pod's ServiceAccount (in-cluster), and the load pods run the image
` + knobs.EnvLoadImage + ` names (the gate's own: the image is rollcheck's load image). A gate changes
nothing of the workload: its one variant is the Deployment as it runs, and its disruptions only
delete pods (delete-pod, the default, or force-delete): a rollout restart or a scale would change
what the release controller owns and take it for a new revision. Prints the verdict as JSON on
stdout (schemaVersion, state, verdict, failureRatio, byPhase, rows, recommendation) and writes it,
at most 4 KiB, to --termination-log (in a pod: /dev/termination-log, the container's termination
message). Exit 0 pass, 1 fail, 2 no verdict (bad input, a missing right, a row the harness could not
judge, interrupted): Argo's Job provider takes 0 as success and any other code as failure.`

const serveAbout = `Serves rollcheck gate's verdict over HTTP to the release controllers that poll or call it,
for one Deployment checked where it runs, or with --rollout NS/NAME for the revision of an Argo
Rollout that each Argo call names by its hash (its ReplicaSet NAME-H); the flags: as rollcheck
gate's:
  GET  ` + gate.ArgoPath + `?hash=H[&wait=D]  Argo Rollouts' Web metric provider: 200 and the verdict's JSON
       (state running|done, verdict pass|fail|inconclusive); the AnalysisTemplate passes
       podTemplateHashValue as H
  POST ` + gate.FlaggerPath + `             Flagger's webhook payload (name, namespace, phase, checksum): 200 and
       the JSON on a pass, 500 and a Markdown summary on a fail or no verdict, 503 while it runs
       past --max-wait
  GET  ` + gate.HealthPath + `                 200 while it serves
A check is kept by its key (the hash, the checksum): a second poll, a retried AnalysisRun or a
webhook called again gets the same verdict and the app is disrupted once; a verdict that is not
pass or fail is answered and forgotten (the next call checks anew). One check runs at a time. A
request waits for the verdict as long as its caller does (Argo's timeoutSeconds, the webhook's
timeout: set them above the check's length), or --max-wait. Bad input is one line and exit 2
before it listens; it runs until SIGTERM or Ctrl-C, which cancels the running check (restored as
after any run) and exits 0.`

// gateFlags are the flags of rollcheck gate and serve (gate.Flags): check's, but those that would
// change the workload, load it from the host or make a cluster.
type gateFlags struct {
	gate.Flags
	fs             *flag.FlagSet
	TerminationLog string
	// serve's
	Listen  string
	MaxWait time.Duration
}

// gateCheckFlags are the check flags gate and serve take.
var gateCheckFlags = []string{"f", "artifacts", "kubeconfig", "context", "deployment", "n", "namespace", "service",
	"container", "port", "path", "rate", "method", "keepalive", "timeout", "load-pods", "load-namespace", "disruption",
	"max-failure-ratio", "min-success-ratio-per-disruption"}

// gateUsage are the gate's own words for the check flags whose check's words speak of kind or
// of what a gate does not do.
var gateUsage = map[string]string{
	"kubeconfig": "the cluster of this kubeconfig `FILE`, only this file, its current context unless --context\n" +
		"(default: the pod's ServiceAccount, in-cluster); the context's user needs the rights of\n" +
		"examples/rbac/in-place.yaml (and in-place-load.yaml with --load-namespace), asked before any work",
	"context":    "the kubeconfig context `NAME`: of --kubeconfig FILE, else of KUBECONFIG's files, else of ~/.kube/config",
	"deployment": "the Deployment `[NS/]NAME` to check where it runs (-n names NS); nothing of it is applied or changed",
	"disruption": "a disruption, `KIND[=COUNT]`: delete-pod (default) or force-delete, COUNT times; repeat for both",
}

// registerGate registers check's flags that gate and serve take on fs: they are registered on a
// scratch set and copied, so that help lists only these.
func registerGate(fs *flag.FlagSet) *gateFlags {
	scratch := flag.NewFlagSet("", flag.ContinueOnError)
	cf := newCheckFlags(scratch)
	f := &gateFlags{Flags: gate.Flags{Flags: &cf.Flags}}
	for _, name := range gateCheckFlags {
		fl := scratch.Lookup(name)
		usage, ok := gateUsage[name]
		if !ok {
			usage = fl.Usage
		}
		fs.Var(fl.Value, name, usage)
	}
	f.fs, cf.fs = fs, fs // the flags given are asked of fs (registerRun)
	f.Gate = true
	fs.StringVar(&f.Rollout, "rollout", "", "the Argo Rollout `[NS/]NAME` (-n names NS) whose revision to check: the pods of its ReplicaSet\n"+
		"NAME-HASH, as they run (only pod deletions; the load goes to --service, e.g. the preview Service)")
	return f
}

func newGateFlags(fs *flag.FlagSet) *gateFlags {
	f := registerGate(fs)
	fs.StringVar(&f.Hash, "pod-template-hash", "", "with --rollout, the revision's pod-template `HASH` (the AnalysisTemplate's podTemplateHashValue)")
	fs.StringVar(&f.TerminationLog, "termination-log", "", "write the verdict's JSON (at most 4 KiB) to `FILE` (default in a pod: /dev/termination-log)")
	return f
}

func newServeFlags(fs *flag.FlagSet) *gateFlags {
	f := registerGate(fs)
	f.Serve = true
	fs.StringVar(&f.Listen, "listen", ":8080", "the `ADDRESS` to serve on")
	fs.DurationVar(&f.MaxWait, "max-wait", 0, "answer a request running after `DURATION` (default: wait as long as the caller does)")
	return f
}

// gateRun runs the plans of in once on its cluster, as check does on an existing cluster, with
// the reports in artifacts, and judges them. Every problem (a right missing, the Deployment
// gone, a live run holding it) is an Inconclusive verdict that says it.
func gateRun(ctx context.Context, f *gateFlags, in *checkInput, target, artifacts string, stderr io.Writer) gate.Verdict {
	logf := logLine(stderr, "gate")
	started := time.Now().UTC()
	none := func(err error) gate.Verdict {
		v := gate.Judge(target, len(in.Plans), nil, err.Error())
		v.Started, v.Finished = started, time.Now().UTC()
		return v
	}
	c, err := acquireExisting(ctx, *in.Existing, in.LoadImage, in.Registry, rowPlace{Load: f.LoadNamespace}, in.Plans, logf)
	if err != nil {
		return none(err)
	}
	for _, n := range c.Notes() {
		logf("warning: %s", n)
	}
	var run *report.Run
	keep := func(r report.Run) { run = &r }
	// Released before the verdict (checkExisting), so that a release that failed withholds a pass too.
	code := checkExisting(ctx, c, in.Plans, in.Parallel, artifacts, rowsOut{w: stderr, format: outputMarkdown, keep: keep}, logf)
	if run == nil {
		return none(errors.New("the check wrote no run"))
	}
	reason := ""
	if ctx.Err() != nil {
		reason = "interrupted: " + context.Cause(ctx).Error()
	}
	v := gate.Judge(target, len(in.Plans), run.Rows, reason)
	if v.Verdict == gate.Pass && code != exitPass {
		// The rows passed, but the run did not end cleanly (its cleanup): no pass.
		v.Verdict, v.Reason = gate.Inconclusive, fmt.Sprintf("every row passed, but the run ended with exit %d (see the lines above)", code)
	}
	return v
}

// runGate runs rollcheck gate; it returns the exit code of the verdict.
func runGate(ctx context.Context, f *gateFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck gate: "+format+"\n", a...)
		return exitBadInput
	}
	if len(args) > 0 {
		return bad("unexpected arguments %q (rollcheck help gate)", args)
	}
	in, target, err := f.Read(func(w string) { fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", w) })
	if err != nil {
		return bad("%v", err)
	}
	msg := f.TerminationLog
	if msg == "" && in.Existing.InCluster && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		msg = "/dev/termination-log"
	}
	v := gateRun(ctx, f, in, target, f.Artifacts, stderr)
	b, err := v.EncodeWithin(gate.MessageLimit)
	if err != nil {
		return bad("%v", err)
	}
	fmt.Fprintf(stdout, "%s\n", b)
	if msg != "" {
		if err := os.WriteFile(msg, b, 0o644); err != nil {
			fmt.Fprintf(stderr, "rollcheck gate: termination message: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "rollcheck gate: %s: %s (exit %d)%s\n", target, strings.ToUpper(v.Verdict), v.ExitCode(), reasonSuffix(v.Reason))
	return v.ExitCode()
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// keyDir is a key as a directory name: "hash:5d9f" → "hash-5d9f".
var keyDir = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// runServe runs rollcheck serve until ctx ends.
func runServe(ctx context.Context, f *gateFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck serve: "+format+"\n", a...)
		return exitBadInput
	}
	if len(args) > 0 {
		return bad("unexpected arguments %q (rollcheck help serve)", args)
	}
	if f.MaxWait < 0 {
		return bad("--max-wait %s: want 0 or more", f.MaxWait)
	}
	in, target, err := f.Read(func(w string) { fmt.Fprintf(stderr, "rollcheck check: warning: %s\n", w) })
	if err != nil {
		return bad("%v", err)
	}
	// What every check would refuse, said once before it listens: the cluster, the rights. The
	// Deployment and its Service may come later (a release controller makes the canary's
	// Service): a line says what is not there yet, and each check reads them again.
	cfg, which, err := in.Existing.Resolve()
	if err != nil {
		return bad("%v", err)
	}
	if _, err := access.ReviewPlans(ctx, cfg, in.Plans, f.LoadNamespace, nil); err != nil {
		return bad("%s: %v", in.Existing.By, err)
	}
	logf := logLine(stderr, "serve")
	if f.Rollout != "" {
		logf("each call names the revision of %s to check: its ReplicaSet, read then", target)
	} else if err := inplace.Preflight(ctx, cfg, in.Plans); err != nil {
		logf("warning: %v (each check reads them again)", err)
	}
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return bad("--listen %s: %v", f.Listen, err)
	}
	checks := gate.NewChecks(ctx, func(ctx context.Context, key string) gate.Verdict {
		in, target := in, target
		if f.Rollout != "" {
			plans, t, err := f.RevisionPlans(in, key)
			if err != nil {
				logf("check %s of %s: %v", key, target, err)
				return gate.Judge(target, 0, nil, err.Error())
			}
			c := *in
			c.Plans, in, target = plans, &c, t
		}
		dir := filepath.Join(f.Artifacts, keyDir.ReplaceAllString(key, "-")+"-"+time.Now().UTC().Format("20060102T150405Z"))
		logf("check %s of %s: reports in %s", key, target, dir)
		v := gateRun(ctx, f, in, target, dir, stderr)
		logf("check %s of %s: %s%s", key, target, strings.ToUpper(v.Verdict), reasonSuffix(v.Reason))
		if b, err := v.EncodeWithin(gate.MessageLimit); err == nil {
			logf("check %s verdict %s", key, b)
		}
		return v
	})
	srv := &http.Server{Handler: &gate.Handler{Checks: checks, Namespace: in.Plans[0].Plan().App.Namespace, MaxWait: f.MaxWait, Logf: logf},
		ReadHeaderTimeout: 10 * time.Second}
	logf("%s on %s; serving %s (Argo) and %s (Flagger) on %s", target, which, gate.ArgoPath, gate.FlaggerPath, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return bad("%v", err)
	case <-ctx.Done():
	}
	logf("stopping: the running check, if any, is cancelled and restores what it changed")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	checks.Wait()
	return exitPass
}
