package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/audit/live"
)

const auditAbout = `Scores every Deployment and StatefulSet of the manifests (or of a cluster, read only, with
--kubeconfig or --context: list calls, examples/rbac/audit.yaml's rights) against a cluster's
measured windows, disrupting nothing: per termination mechanism (propagation, in-flight cut, SIGKILL,
no endpoint, stale addresses, a sidecar that exits first) the failed requests it expects per
rollout (and per node drain) at --rate requests per second per pod, over the measured windows'
distribution, and their upper bound at the windows' p99; the setting that removes them and the
measured window it comes from, the workloads ranked by expected failures per rollout. The
windows come from a windows file (--windows, made by rollcheck windows extract), straight from a
recorded run (--windows-from DIR, its rows/*.json), the cluster read (--measure), or, with none of
these, the windows bundled with rollcheck: a recorded kind run's, which every output names as
such (measure your cluster's for numbers that are its own). Whether an app keeps serving after SIGTERM on
its own is not in manifests: --app-delay says it (a recorded run's rows of the same Deployment
measure it). docs/audit.md says how it predicts. Exit 0 when no workload's expected failures per
rollout or per drain exceed --fail-above, 1 when one does, 2 bad input.`

const windowsAbout = `Writes a windows file (a cluster's measured windows: control plane, kube-proxy programming,
data plane, DNS, request p99; docs/audit.md) from a recorded run: DIR's rows/*.json as rollcheck
check and the suites write them (else DIR/conformance.json), or a conformance.json file. Exit 0 written, 2 bad input (no row
with an explanation).`

// auditFlags are rollcheck audit's flags.
type auditFlags struct {
	Files       multi
	Kubeconfig  string
	Context     string
	Namespace   string
	All         bool
	Windows     string
	WindowsFrom string
	Output      string
	FailAbove   optional[float64]
	Rate        float64
	RequestP99  time.Duration
	// Measure: the windows are measured on the cluster read first (rollcheck windows measure).
	Measure       bool
	ImageRegistry string
	// AppDelay: [WORKLOAD=]DURATION, how long apps keep serving after SIGTERM on their own.
	AppDelay multi
}

func newAuditFlags(fs *flag.FlagSet) *auditFlags {
	f := &auditFlags{}
	fs.Var(&f.Files, "f", "a manifest `FILE`, a DIR of them (its .yaml, .yml and .json files), or a kustomization DIR\n"+
		"(rendered as kubectl kustomize renders it); repeat for several")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "read the workloads from the cluster of this kubeconfig `FILE` instead of manifests (read only: list calls)")
	fs.StringVar(&f.Context, "context", "", "read the workloads from this kubeconfig `CONTEXT` (kubectl's files without --kubeconfig)")
	fs.StringVar(&f.Namespace, "n", "", "with --kubeconfig or --context: the `NAMESPACE` to read (default: default)")
	fs.BoolVar(&f.All, "all-namespaces", false, "with --kubeconfig or --context: read every namespace")
	fs.StringVar(&f.Windows, "windows", "", "the windows `FILE` to score against (rollcheck windows extract writes one)")
	fs.StringVar(&f.WindowsFrom, "windows-from", "", "score against the windows of a recorded run: `DIR` (its rows/*.json) or a conformance.json file")
	fs.StringVar(&f.Output, "o", "table", "output `FORMAT`: table or json")
	fs.Var(&f.FailAbove, "fail-above", "exit 1 when a workload's predicted failures per rollout or per drain exceed `N` (default: never)")
	fs.Float64Var(&f.Rate, "rate", audit.DefaultRate, "the requests per second each pod serves, `REQ/S`, that the predictions are stated at")
	fs.BoolVar(&f.Measure, "measure", false, "with --kubeconfig or --context: measure the cluster's windows first, as rollcheck windows measure does\n"+
		"on the nodes running the namespace's pods (every schedulable node with --all-namespaces): this deploys\n"+
		"rollcheck's probe, in a namespace of its own, deleted after")
	fs.StringVar(&f.ImageRegistry, "image-registry", "", "with --measure: push rollcheck's images to `REGISTRY` (as rollcheck windows measure)")
	fs.DurationVar(&f.RequestP99, "request-p99", 0, "the workloads' request p99, `DURATION` (default: the windows file's, measured at the probe)")
	fs.Var(&f.AppDelay, "app-delay", "`[WORKLOAD=]DURATION`: the app keeps serving this long after SIGTERM on its own (a shutdown delay,\n"+
		"such as Caddy's shutdown_delay), for the named workload (NAME or Kind/ns/name) or every one; repeat for several")
	return f
}

// runAudit runs `rollcheck audit`; it returns the exit code.
func runAudit(ctx context.Context, f *auditFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck audit: "+format+"\n", a...)
		return exitBadInput
	}
	ref := flagsRef(f.Kubeconfig, f.Context)
	switch {
	case len(args) > 0:
		return bad("unexpected arguments %q (manifests go after -f)", args)
	case len(f.Files) == 0 && ref == nil:
		return bad("no manifests: give -f FILE or -f DIR, or --kubeconfig FILE or --context NAME to read a cluster")
	case len(f.Files) > 0 && ref != nil:
		return bad("give manifests (-f) or a cluster (%s), not both", ref.By)
	case ref == nil && (f.Namespace != "" || f.All):
		return bad("-n and --all-namespaces read a cluster: give --kubeconfig FILE or --context NAME")
	case f.Namespace != "" && f.All:
		return bad("give -n NAMESPACE or --all-namespaces, not both")
	case f.Measure && ref == nil:
		return bad("--measure measures the cluster read: give --kubeconfig FILE or --context NAME")
	case f.ImageRegistry != "" && !f.Measure:
		return bad("--image-registry is for --measure")
	case f.Measure && (f.Windows != "" || f.WindowsFrom != ""):
		return bad("give one of --windows FILE, --windows-from DIR and --measure")
	case f.Windows != "" && f.WindowsFrom != "":
		return bad("give one of --windows FILE, --windows-from DIR and --measure")
	case f.Output != "table" && f.Output != "json":
		return bad("-o %q: want table or json", f.Output)
	case !(f.Rate > 0):
		return bad("--rate %v: want requests per second above 0", f.Rate)
	case f.FailAbove.Given && f.FailAbove.Value < 0:
		return bad("--fail-above %v: want 0 or more", f.FailAbove.Value)
	case f.RequestP99 < 0:
		return bad("--request-p99 %s: negative", f.RequestP99)
	}
	delays, err := audit.ParseAppDelays(f.AppDelay)
	if err != nil {
		return bad("%v", err)
	}
	var inv *audit.Inventory
	from := fmt.Sprintf("%q", []string(f.Files))
	if ref != nil {
		inv, from, err = live.ReadCluster(ctx, *ref, f.Namespace, f.All, func(format string, a ...any) {
			fmt.Fprintf(stderr, "rollcheck audit: "+format+"\n", a...)
		})
	} else {
		inv, err = audit.ReadManifests(f.Files...)
	}
	if err != nil {
		return bad("%v", err)
	}
	if len(inv.Workloads) == 0 {
		return bad("no Deployment or StatefulSet in %s", from)
	}
	var win *audit.WindowsFile
	switch {
	case f.Measure:
		var code int
		if win, code = measureForAudit(ctx, f, inv.GRPCHeadless(), stderr); win == nil {
			return code
		}
	case f.Windows != "":
		win, err = audit.ReadWindows(f.Windows)
	case f.WindowsFrom == "":
		// Day one: no window of the user's cluster yet. The report's windows line says whose
		// these are, and so does this line.
		if win, err = audit.Bundled(); err == nil {
			fmt.Fprintf(stderr, "rollcheck audit: no --windows, --windows-from or --measure: scoring against the windows bundled with rollcheck, a recorded kind run's (%s), not your cluster's; measure yours with rollcheck windows measure\n", win.Measured.Host)
		}
	default:
		// The run's rows of a Deployment the manifests hold measure its app's own delay after
		// SIGTERM; --app-delay wins.
		win, err = audit.ExtractRunFor(f.WindowsFrom, inv, delays)
	}
	if err != nil {
		return bad("%v", err)
	}
	rep := audit.Audit(inv, win, audit.Options{Rate: f.Rate, RequestP99: f.RequestP99, AppDelay: delays})
	if f.Output == "json" {
		err = rep.JSON(stdout)
	} else {
		err = rep.Table(stdout)
	}
	if err != nil {
		return bad("%v", err)
	}
	if f.FailAbove.Given && rep.Worst() > f.FailAbove.Value {
		return exitFail
	}
	return exitPass
}

// measureForAudit runs rollcheck windows measure on the cluster audit reads, on the nodes of
// its namespace (every schedulable node with --all-namespaces), with the gRPC row when grpc (a
// workload serves gRPC behind a headless Service), and reads the file it writes; nil and the
// measure's exit code when it wrote none.
func measureForAudit(ctx context.Context, f *auditFlags, grpc bool, stderr io.Writer) (*audit.WindowsFile, int) {
	dir, err := os.MkdirTemp("", "rollcheck-audit-")
	if err != nil {
		fmt.Fprintf(stderr, "rollcheck audit: %v\n", err)
		return nil, exitBadInput
	}
	defer os.RemoveAll(dir)
	mf := &measureFlags{Kubeconfig: f.Kubeconfig, Context: f.Context, ImageRegistry: f.ImageRegistry, Deletions: 6,
		Output: filepath.Join(dir, "windows.json"), GRPC: grpc}
	if !f.All {
		mf.NodesOf = cmp.Or(f.Namespace, "default")
	}
	if code := runWindowsMeasure(ctx, mf, nil, io.Discard, stderr); code != exitPass {
		return nil, code
	}
	win, err := audit.ReadWindows(mf.Output)
	if err != nil {
		fmt.Fprintf(stderr, "rollcheck audit: %v\n", err)
		return nil, exitBadInput
	}
	return win, exitPass
}

// windowsFlags are rollcheck windows extract's flags.
type windowsFlags struct {
	Output  string
	Cluster string
}

func newWindowsFlags(fs *flag.FlagSet) *windowsFlags {
	f := &windowsFlags{}
	windowsOutputFlag(fs, &f.Output)
	fs.StringVar(&f.Cluster, "cluster", "", "the cluster's `NAME` the file records as where the windows were measured (rows do not say it)")
	return f
}

// runWindowsExtract runs `rollcheck windows extract`; it returns the exit code.
func runWindowsExtract(_ context.Context, f *windowsFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck windows extract: "+format+"\n", a...)
		return exitBadInput
	}
	if len(args) != 1 {
		return bad("want one directory or conformance.json, got %d arguments", len(args))
	}
	w, err := audit.ExtractRun(args[0])
	if err != nil {
		return bad("%v", err)
	}
	w.Measured.Cluster = f.Cluster
	if err := writeWindows(w, f.Output, stdout); err != nil {
		return bad("%v", err)
	}
	return exitPass
}

// windowsOutputFlag registers -o, where rollcheck windows writes the windows file.
func windowsOutputFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "o", "", "write the windows file to `FILE` (default: stdout)")
}

// writeWindows writes a windows file to file, or to stdout when file is "".
func writeWindows(w *audit.WindowsFile, file string, stdout io.Writer) error {
	b, err := w.Encode()
	if err != nil {
		return err
	}
	if file == "" {
		_, err = stdout.Write(b)
		return err
	}
	return atomicfile.Write(file, b)
}

const agreementAbout = `Puts rollcheck audit's predictions beside what recorded rows of the built-in matrix measured: each
row of RUN (DIR's rows/*.json, else DIR/conformance.json, or a conformance.json file), its
configuration rendered as the Deployment it ran, audited at its own rate per pod and request p99
against windows measured OUT OF SAMPLE: those of another run (--windows-from OTHER, or a windows
file, --windows), or, for one run, --cross N: its rows dealt into N folds, each audited against the
windows of the others. Windows measured while RUN's rows ran (the same run) are refused unless
--in-sample. Prints the verdicts that agree, each row's expected/measured count ratio, the share
within 2×, and both again counting the rows not predicted as misses (-o markdown, or json). Exit 0
computed, 2 bad input.`

// agreementFlags are rollcheck windows agreement's flags.
type agreementFlags struct {
	Windows     string
	WindowsFrom string
	Cross       int
	InSample    bool
	Output      string
}

func newAgreementFlags(fs *flag.FlagSet) *agreementFlags {
	f := &agreementFlags{}
	fs.StringVar(&f.Windows, "windows", "", "audit against this windows `FILE` (measured on another run)")
	fs.StringVar(&f.WindowsFrom, "windows-from", "", "audit against the windows of another recorded run: `DIR` or a conformance.json file")
	fs.IntVar(&f.Cross, "cross", 0, "one run out of sample: deal its rows into `N` folds, each audited against the windows of the others")
	fs.BoolVar(&f.InSample, "in-sample", false, "allow windows measured on the rows they predict (an in-sample agreement, which flatters the audit)")
	fs.StringVar(&f.Output, "o", "markdown", "output `FORMAT`: markdown or json")
	return f
}

// runWindowsAgreement runs `rollcheck windows agreement`; it returns the exit code.
func runWindowsAgreement(_ context.Context, f *agreementFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck windows agreement: "+format+"\n", a...)
		return exitBadInput
	}
	o := audit.AgreementOptions{Windows: f.Windows, WindowsFrom: f.WindowsFrom, Cross: f.Cross, InSample: f.InSample}
	switch oerr := o.Check(); {
	case len(args) != 1:
		return bad("want one recorded run (DIR or conformance.json) whose rows to predict, got %d arguments", len(args))
	case oerr != nil:
		return bad("%v", oerr)
	case f.Output != "markdown" && f.Output != "json":
		return bad("-o %q: want markdown or json", f.Output)
	}
	r, err := audit.RunAgreement(args[0], o)
	switch {
	case err == nil && f.Output == "json":
		err = r.JSON(stdout)
	case err == nil:
		err = r.Markdown(stdout)
	}
	if err != nil {
		return bad("%v", err)
	}
	return exitPass
}

// windowsCommands are rollcheck windows' subcommands.
var windowsCommands = []command{
	{name: "extract", args: "DIR | conformance.json",
		summary: "write the windows file of a recorded run (DIR/rows/*.json) for rollcheck audit",
		about:   windowsAbout, setup: withFlags(newWindowsFlags, runWindowsExtract)},
	{name: "measure",
		summary: "measure a cluster's windows with rollcheck's own probe (pod deletions on each node) and write the windows file",
		about:   measureAbout, setup: withFlags(newMeasureFlags, runWindowsMeasure)},
	{name: "agreement", args: "RUN",
		summary: "put rollcheck audit's predictions beside a recorded run's rows, with windows measured out of sample",
		about:   agreementAbout, setup: withFlags(newAgreementFlags, runWindowsAgreement)},
}
