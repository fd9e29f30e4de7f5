package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/audit/live"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
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

// parseAppDelays reads --app-delay's values: DURATION for every workload, NAME=DURATION for one.
func parseAppDelays(vs []string) (map[string]audit.AppDelay, error) {
	out := map[string]audit.AppDelay{}
	for _, v := range vs {
		name, d, found := strings.Cut(v, "=")
		if !found {
			name, d = "", v
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur < 0 {
			return nil, fmt.Errorf("--app-delay %q: want [WORKLOAD=]DURATION, a duration of 0 or more such as 5s", v)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--app-delay %q: %s given twice", v, cmp.Or(name, "every workload's"))
		}
		out[name] = audit.AppDelay{Delay: audit.Duration(dur), From: "given (--app-delay)"}
	}
	return out, nil
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
	delays, err := parseAppDelays(f.AppDelay)
	if err != nil {
		return bad("%v", err)
	}
	var inv *audit.Inventory
	from := fmt.Sprintf("%q", []string(f.Files))
	if ref != nil {
		inv, from, err = readCluster(ctx, *ref, f.Namespace, f.All, stderr)
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
		if win, code = measureForAudit(ctx, f, grpcHeadless(inv), stderr); win == nil {
			return code
		}
	case f.Windows != "":
		win, err = readWindows(f.Windows)
	case f.WindowsFrom == "":
		// Day one: no window of the user's cluster yet. The report's windows line says whose
		// these are, and so does this line.
		if win, err = audit.Bundled(); err == nil {
			fmt.Fprintf(stderr, "rollcheck audit: no --windows, --windows-from or --measure: scoring against the windows bundled with rollcheck, a recorded kind run's (%s), not your cluster's; measure yours with rollcheck windows measure\n", win.Measured.Host)
		}
	default:
		var rows []check.Row
		if rows, err = readRunRows(f.WindowsFrom); err == nil {
			win, err = audit.Extract(rows, filepath.Base(filepath.Clean(f.WindowsFrom)))
			// The run's rows of a Deployment the manifests hold measure its app's own delay
			// after SIGTERM; --app-delay wins.
			for name, d := range audit.AppDelays(rows, func(a check.Applied) string { return a.App }, f.WindowsFrom) {
				if _, given := delays[name]; !given && slices.ContainsFunc(inv.Workloads, func(w *audit.Workload) bool { return w.Name == name }) {
					delays[name] = d
				}
			}
		}
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
	win, err := readWindows(mf.Output)
	if err != nil {
		fmt.Fprintf(stderr, "rollcheck audit: %v\n", err)
		return nil, exitBadInput
	}
	return win, exitPass
}

// grpcHeadless tells whether a workload of inv serves gRPC behind a headless Service: its
// stale-address prediction wants a gRPC client's window.
func grpcHeadless(inv *audit.Inventory) bool {
	return slices.ContainsFunc(inv.Workloads, func(w *audit.Workload) bool { return w.GRPC() && w.Headless() != "" })
}

// readCluster reads the workloads of a cluster, read only, after asking the API server whether
// this user may list them (examples/rbac/audit.yaml grants it); it says which cluster on stderr.
func readCluster(ctx context.Context, ref clusterRef, ns string, all bool, stderr io.Writer) (*audit.Inventory, string, error) {
	cfg, which, err := ref.Resolve()
	if err != nil {
		return nil, "", err
	}
	if !all && ns == "" {
		ns = metav1.NamespaceDefault
	}
	where := "namespace " + ns
	if all {
		ns, where = metav1.NamespaceAll, "every namespace"
	}
	fmt.Fprintf(stderr, "rollcheck audit: reading %s of %s\n", where, which)
	cfg.Timeout = 30 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	rights := access.Of(access.Audit)
	for i := range rights {
		rights[i].Namespace = ns
	}
	denied, err := access.Review(ctx, cs, rights)
	if err != nil {
		return nil, "", err
	}
	if len(denied) > 0 {
		return nil, "", errors.New(access.Refusal(denied))
	}
	inv, err := live.Read(ctx, cs, dyn, ns)
	return inv, where + " of " + which, err
}

func readWindows(path string) (*audit.WindowsFile, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w, err := audit.DecodeWindows(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// extractWindows is the windows file of a recorded run: a directory's rows/*.json (else its
// conformance.json), or a conformance.json file.
func extractWindows(path string) (*audit.WindowsFile, error) {
	rows, err := readRunRows(path)
	if err != nil {
		return nil, err
	}
	return audit.Extract(rows, filepath.Base(filepath.Clean(path)))
}

// readRunRows is a recorded run's rows: a directory's rows/*.json (else its conformance.json),
// or a conformance.json file.
func readRunRows(path string) ([]check.Row, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var rows []check.Row
	switch _, rerr := os.Stat(filepath.Join(path, "rows")); {
	case st.IsDir() && rerr == nil:
		rows, err = rowfile.Read(path)
	case st.IsDir():
		path = filepath.Join(path, "conformance.json")
		fallthrough
	default:
		var run report.Run
		run, err = report.ReadRunFile(path)
		rows = run.Rows
	}
	return rows, err
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
	w, err := extractWindows(args[0])
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
	given := 0
	for _, set := range []bool{f.Windows != "", f.WindowsFrom != "", f.Cross != 0} {
		if set {
			given++
		}
	}
	switch {
	case len(args) != 1:
		return bad("want one recorded run (DIR or conformance.json) whose rows to predict, got %d arguments", len(args))
	case given != 1:
		return bad("give exactly one of --windows FILE, --windows-from OTHER_RUN and --cross N")
	case f.Cross < 0 || f.Cross == 1:
		return bad("--cross %d: want 2 folds or more", f.Cross)
	case f.Output != "markdown" && f.Output != "json":
		return bad("-o %q: want markdown or json", f.Output)
	}
	rows, err := readRunRows(args[0])
	if err != nil {
		return bad("%v", err)
	}
	inSample := func(what string) int {
		return bad("%s: measured on the rows they predict (in sample, which flatters the audit): give another run's windows (--windows-from OTHER_RUN), --cross N, or --in-sample to compute it anyway", what)
	}
	var table []audit.AgreementRow
	var how string
	switch {
	case f.Cross != 0:
		if table, err = audit.CrossAgreement(rows, f.Cross, filepath.Base(filepath.Clean(args[0]))); err != nil {
			return bad("%v", err)
		}
		how = fmt.Sprintf("the windows of the same run's other rows (%d folds: each row's fold left out of the windows it is audited against, and of the apps' delays measured): **out of sample**", f.Cross)
	case f.WindowsFrom != "":
		if same(f.WindowsFrom, args[0]) && !f.InSample {
			return inSample("the windows of " + f.WindowsFrom + " are the same run's")
		}
		wrows, err := readRunRows(f.WindowsFrom)
		if err != nil {
			return bad("%v", err)
		}
		var win *audit.WindowsFile
		if table, win, err = audit.AgreementBetween(wrows, rows, filepath.Base(filepath.Clean(f.WindowsFrom))); err != nil {
			return bad("%v", err)
		}
		if audit.InSample(win, rows) && !f.InSample {
			return inSample("the windows of " + f.WindowsFrom + " were measured while the rows ran")
		}
		how = fmt.Sprintf("the windows of another run (%s)", win.Measured.Source)
	default:
		win, err := readWindows(f.Windows)
		if err != nil {
			return bad("%v", err)
		}
		if audit.InSample(win, rows) && !f.InSample {
			return inSample("the windows of " + f.Windows + " were measured while the rows ran")
		}
		table = audit.Agreement(rows, win)
		how = fmt.Sprintf("the windows file %s (%s)", f.Windows, win.Measured.Source)
	}
	if f.InSample && (f.Cross == 0) {
		how += ", asked in sample (--in-sample): where the windows were measured on the rows they predict, the figures flatter the audit"
	} else if f.Cross == 0 {
		how += ": **out of sample**"
	}
	if f.Output == "json" {
		b, err := json.MarshalIndent(struct {
			Windows string                 `json:"windows"`
			Summary audit.AgreementSummary `json:"summary"`
			Rows    []audit.AgreementRow   `json:"rows"`
		}{how, audit.Summary(table), table}, "", "  ")
		if err == nil {
			_, err = fmt.Fprintf(stdout, "%s\n", b)
		}
		if err != nil {
			return bad("%v", err)
		}
		return exitPass
	}
	if err := audit.WriteAgreementTable(stdout, table, how); err != nil {
		return bad("%v", err)
	}
	return exitPass
}

// same tells whether two paths name the same run (a directory, or its conformance.json).
func same(a, b string) bool {
	abs := func(p string) string {
		p, _ = filepath.Abs(p)
		if filepath.Base(p) == report.JSONFile {
			p = filepath.Dir(p)
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
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
