package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
)

const auditAbout = `Scores every Deployment and StatefulSet of the manifests (or of a cluster, read only, with
--kubeconfig or --context: list calls, examples/rbac/audit.yaml's rights) against a cluster's
measured windows, disrupting nothing: per termination mechanism (propagation, in-flight cut, SIGKILL,
no endpoint, stale addresses, a sidecar that exits first) the failed requests it predicts per
rollout (and per node drain) at --rate requests per second per pod, the setting that removes them
and the measured window it comes from, the workloads ranked by predicted failures per rollout.
The windows come from a windows file (--windows, made by rollcheck windows extract) or straight
from a recorded run (--windows-from DIR, its rows/*.json). docs/audit.md says how it predicts.
Exit 0 when no workload's predicted failures per rollout or per drain exceed --fail-above, 1 when
one does, 2 bad input.`

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
}

func newAuditFlags(fs *flag.FlagSet) *auditFlags {
	f := &auditFlags{}
	fs.Var(&f.Files, "f", "a manifest `FILE` or a DIR of them (.yaml, .yml, .json; repeat for several)")
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
	case !f.Measure && (f.Windows == "") == (f.WindowsFrom == ""):
		return bad("give exactly one of --windows FILE, --windows-from DIR and --measure")
	case f.Output != "table" && f.Output != "json":
		return bad("-o %q: want table or json", f.Output)
	case !(f.Rate > 0):
		return bad("--rate %v: want requests per second above 0", f.Rate)
	case f.FailAbove.set && f.FailAbove.v < 0:
		return bad("--fail-above %v: want 0 or more", f.FailAbove.v)
	case f.RequestP99 < 0:
		return bad("--request-p99 %s: negative", f.RequestP99)
	}
	var inv *audit.Inventory
	var err error
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
	default:
		win, err = extractWindows(f.WindowsFrom)
	}
	if err != nil {
		return bad("%v", err)
	}
	rep := audit.Audit(inv, win, audit.Options{Rate: f.Rate, RequestP99: f.RequestP99})
	if f.Output == "json" {
		err = rep.JSON(stdout)
	} else {
		err = rep.Table(stdout)
	}
	if err != nil {
		return bad("%v", err)
	}
	if f.FailAbove.set && rep.Worst() > f.FailAbove.v {
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
	cfg, which, err := ref.resolve()
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
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var rows []check.Row
	switch _, rerr := os.Stat(filepath.Join(path, "rows")); {
	case st.IsDir() && rerr == nil:
		rows, err = check.ReadRows(path)
	case st.IsDir():
		path = filepath.Join(path, "conformance.json")
		fallthrough
	default:
		var run report.Run
		run, err = report.ReadRunFile(path)
		rows = run.Rows
	}
	if err != nil {
		return nil, err
	}
	return audit.Extract(rows, filepath.Base(filepath.Clean(path)))
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

// windowsCommands are rollcheck windows' subcommands.
var windowsCommands = []command{
	{name: "extract", args: "DIR | conformance.json",
		summary: "write the windows file of a recorded run (DIR/rows/*.json) for rollcheck audit",
		about:   windowsAbout, setup: withFlags(newWindowsFlags, runWindowsExtract)},
	{name: "measure",
		summary: "measure a cluster's windows with rollcheck's own probe (pod deletions on each node) and write the windows file",
		about:   measureAbout, setup: withFlags(newMeasureFlags, runWindowsMeasure)},
}
