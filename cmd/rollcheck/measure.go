package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/internal/selfimage"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

const measureAbout = `Measures a cluster's windows with rollcheck's own probe and writes the windows file rollcheck
audit reads: on each node (every schedulable one, or --node, or the nodes running the pods of
--nodes-of NS), a row in a namespace of its own (created, and deleted on every path, Ctrl-C
included) runs the sample app (rollcheck's own image, made of this executable: loaded into a kind
cluster's nodes or pushed to --image-registry) with 3 replicas and no preStop, answering 15 s
after SIGTERM (so that every request routed to a deleted pod is answered and its last answer
dates the routing), under load from a load pod on that node (100 req/s, a new connection per
request, the app naming its pod; the load pod also asks the cluster's DNS for a headless Service
of the pods 4 times a second), and deletes one of its pods --deletions times. The rows are
rollcheck check's (engine.Run); the file holds their windows pooled (control plane, kube-proxy
programming where its metrics can be read, data plane through the Service, the DNS window of the
headless Service with its TTL, the request p99 at the probe) and per node (the data plane as that
node's kube-proxy routes, the DNS window as the load pod on that node was answered); with --grpc,
one more row measures a gRPC round_robin client's window over a headless Service.
On rollcheck's kind cluster without --kubeconfig or --context. Exit 0 written, 1 when no row
measured a window, 2 bad input or a cleanup that failed, 130 interrupted.`

// measureDrainDelay is how long the probe's app serves after SIGTERM: longer than any routed
// window it measures (a longer one is cut at it).
const measureDrainDelay = 15 * time.Second

// measureFlags are rollcheck windows measure's flags.
type measureFlags struct {
	Kubeconfig, Context, ImageRegistry string
	Output                             string
	Deletions                          int
	Nodes                              multi
	NodesOf                            string
	Rows                               string
	GRPC                               bool
}

func newMeasureFlags(fs *flag.FlagSet) *measureFlags {
	f := &measureFlags{}
	windowsOutputFlag(fs, &f.Output)
	fs.IntVar(&f.Deletions, "deletions", 6, "pod deletions per node, `N` (1 to 50)")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "measure the existing cluster of this kubeconfig `FILE` (as rollcheck check --kubeconfig; default: rollcheck's kind cluster)")
	fs.StringVar(&f.Context, "context", "", "measure the existing cluster of this kubeconfig context `NAME` (as rollcheck check --context)")
	fs.StringVar(&f.ImageRegistry, "image-registry", "", "on an existing cluster that is not kind on this machine: push rollcheck's app and load images to `REGISTRY`")
	fs.Var(&f.Nodes, "node", "measure on this node `NAME` (repeat; default: every schedulable node)")
	fs.StringVar(&f.NodesOf, "nodes-of", "", "measure on the nodes running the pods of this `NAMESPACE` (your workloads)")
	fs.BoolVar(&f.GRPC, "grpc", false, "also measure a gRPC round_robin client's window over a headless Service (one more row: the sample\n"+
		"app serving gRPC, no preStop, stopping gracefully at SIGTERM; its RPCs fail until the client resolves again),\n"+
		"which rollcheck audit's stale-address uses for gRPC workloads behind a headless Service")
	fs.StringVar(&f.Rows, "rows", "", "keep the rows in `DIR` (rows/*.json: rollcheck windows extract and rollcheck report read them; default: a temporary directory, removed)")
	return f
}

// check checks the flags before any work: every problem at once.
func (f *measureFlags) check(args []string) error {
	var errs []error
	if len(args) > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", args))
	}
	if f.Deletions < 1 || f.Deletions > 50 {
		errs = append(errs, fmt.Errorf("--deletions %d: want 1 to 50", f.Deletions))
	}
	if len(f.Nodes) > 0 && f.NodesOf != "" {
		errs = append(errs, errors.New("give --node or --nodes-of, not both"))
	}
	if f.ImageRegistry != "" {
		if f.Kubeconfig == "" && f.Context == "" {
			errs = append(errs, errors.New("--image-registry is for an existing cluster (--kubeconfig or --context): rollcheck's kind cluster gets the images loaded"))
		} else if err := selfimage.ValidRegistry(f.ImageRegistry); err != nil {
			errs = append(errs, fmt.Errorf("--image-registry %q: %w", f.ImageRegistry, err))
		}
	}
	return oneline.Join(errs)
}

// grpcProbeMethod is the sample app's own gRPC method (internal/sampleapp's App/Sleep).
const grpcProbeMethod = "/rollcheck.app.v1.App/Sleep"

// grpcPlan is the probe's gRPC row: the sample app serving gRPC (GracefulStop at SIGTERM, no
// preStop), a round_robin client over its headless Service, a graceful delete of one pod deletions
// times. Its RPCs to a deleted pod's address fail until the client resolves again: the client's
// window (deletion → its last RPC to the address), as the matrix's grpc-rr rows measure it.
func grpcPlan(image string, pull corev1.PullPolicy, deletions int) (check.Plan, error) {
	s := scenario.Scenario{
		App: scenario.Sample{OnSIGTERM: scenario.ShutdownDrain, Protocol: "grpc", GracefulTimeout: 10 * time.Second},
		Variant: check.Variant{Name: "windows-grpc", PreStop: &check.PreStop{None: true}, TerminationGracePeriodSeconds: ptr.To[int64](30),
			Replicas: ptr.To[int32](3), Expect: check.Failures().ByPhase(timeline.PhaseStaleAddress),
			Why: "rollcheck windows measure, gRPC: a round_robin client holds a deleted pod's address until it resolves the headless Service again"},
		Disruption: check.Disruption{Kind: check.DeletePod, Count: deletions},
		// The app's own method, instant (no message), not the health check, which a terminating
		// pod answers NOT_SERVING (as the matrix's grpc-rr-prestop-35s row calls it).
		Load: check.Load{Rate: 100, From: check.LoadFromCluster, Protocol: loadgen.ProtocolGRPC,
			GRPC: check.GRPCLoad{Balancing: loadgen.BalancingRoundRobin, Method: grpcProbeMethod}},
	}
	return probePlan(s, image, pull)
}

// probePlan is s's plan with the app's image pulled as pull says.
func probePlan(s scenario.Scenario, image string, pull corev1.PullPolicy) (check.Plan, error) {
	p, err := s.Plan("windows", image)
	if err != nil {
		return check.Plan{}, err
	}
	for _, o := range p.App.Objects {
		if d, ok := o.(*appsv1.Deployment); ok {
			for i := range d.Spec.Template.Spec.Containers {
				d.Spec.Template.Spec.Containers[i].ImagePullPolicy = pull
			}
		}
	}
	if pull != corev1.PullNever {
		p.App.Images = nil // pushed: pulled by the nodes, not loaded
	}
	return p, nil
}

// measureHeadless is the headless Service of the pods of a windows measure row, which its load
// pod asks the cluster's DNS for (the DNS window): the name the matrix's DNS proxies resolve.
const measureHeadless = proxies.HeadlessServiceName

// withHeadless adds to p a headless Service selecting its Deployment's ready pods on the app's
// port (one A record per ready pod, as the cluster's DNS publishes them by default) and has the
// load pods ask the cluster's DNS for it four times a second (check.Load.Resolve without a URL:
// the row's DNS window, measured only; the load still goes to rollcheck's load Service).
func withHeadless(p check.Plan) (check.Plan, error) {
	var d *appsv1.Deployment // a variant does not change the selector: the manifests' is the one
	for _, o := range p.App.Objects {
		if dep, ok := o.(*appsv1.Deployment); ok && dep.Name == p.App.Deployment {
			d = dep
		}
	}
	if d == nil || d.Spec.Selector == nil {
		return check.Plan{}, fmt.Errorf("%s: no Deployment %s with a selector among the app's objects", p.Variant.Name, p.App.Deployment)
	}
	svc := proxies.HeadlessService(proxies.AppRef{Selector: d.Spec.Selector.MatchLabels, Port: p.App.Port})
	p.App.Objects = append(slices.Clip(p.App.Objects), svc)
	p.Load.Resolve = measureHeadless
	return p, nil
}

// measurePlans are the probe's rows, one per node: the sample app running image (pull policy
// pull: Never when the image was loaded into the nodes, IfNotPresent when pushed), 3 replicas, no
// preStop, answering measureDrainDelay after SIGTERM, a graceful delete of one pod deletions
// times, load from a load pod (the caller pins it to the row's node), keep-alive off; and a
// headless Service of the pods that the load pod asks the cluster's DNS for (withHeadless).
func measurePlans(image string, pull corev1.PullPolicy, nodes []string, deletions int) ([]*check.Resolved, error) {
	var plans []*check.Resolved
	for i, node := range nodes {
		s := scenario.Scenario{
			App: scenario.Sample{OnSIGTERM: scenario.ShutdownDrain, DrainDelay: measureDrainDelay},
			Variant: check.Variant{Name: fmt.Sprintf("windows-%d-%s", i+1, nodeLabel(node)), PreStop: &check.PreStop{None: true},
				TerminationGracePeriodSeconds: ptr.To[int64](30), Replicas: ptr.To[int32](3), Expect: check.Zero(),
				Why: fmt.Sprintf("rollcheck windows measure, node %s: the app answers every request routed to a deleted pod, so its last answer after the deletion is the data plane's window", node)},
			Disruption: check.Disruption{Kind: check.DeletePod, Count: deletions},
			Load:       check.Load{Rate: 100, From: check.LoadFromCluster},
		}
		p, err := probePlan(s, image, pull)
		if err == nil {
			p, err = withHeadless(p)
		}
		var r *check.Resolved
		if err == nil {
			r, err = p.Resolve()
		}
		if err != nil {
			return nil, err
		}
		plans = append(plans, r)
	}
	return plans, nil
}

var notLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// nodeLabel is a node's name as part of a row's name: lower-case letters, digits and dashes, at
// most 30 characters.
func nodeLabel(node string) string {
	s := strings.Trim(notLabel.ReplaceAllString(strings.ToLower(node), "-"), "-")
	if len(s) > 30 {
		s = strings.TrimRight(s[:30], "-")
	}
	if s == "" {
		s = "node"
	}
	return s
}

// measureNodes are the nodes to measure on: those named, else those running pods of namespace
// of, else every node that takes pods (Ready, schedulable, no NoSchedule or NoExecute taint).
func measureNodes(ctx context.Context, cs kubernetes.Interface, named []string, of string) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the nodes: %w", err)
	}
	if len(named) > 0 {
		for _, n := range named {
			if !slices.ContainsFunc(list.Items, func(x corev1.Node) bool { return x.Name == n }) {
				return nil, fmt.Errorf("--node %s: the cluster has no such node", n)
			}
		}
		return named, nil
	}
	if of != "" {
		pods, err := cs.CoreV1().Pods(of).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list the pods of %s: %w", of, err)
		}
		var nodes []string
		for _, p := range pods.Items {
			if n := p.Spec.NodeName; n != "" && !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("--nodes-of %s: no pod of that namespace runs on a node", of)
		}
		slices.Sort(nodes)
		return nodes, nil
	}
	nodes := schedulableNodes(list.Items)
	if len(nodes) == 0 {
		return nil, errors.New("no node takes pods (Ready, schedulable, without a NoSchedule or NoExecute taint): name one with --node")
	}
	return nodes, nil
}

// schedulableNodes are the names of the nodes that take pods: Ready, not cordoned, without a
// NoSchedule or NoExecute taint.
func schedulableNodes(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		})
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		})
		if ready && !n.Spec.Unschedulable && !tainted {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// runWindowsMeasure runs `rollcheck windows measure`; it returns the exit code.
func runWindowsMeasure(ctx context.Context, f *measureFlags, args []string, stdout, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rollcheck windows measure: "+format+"\n", a...)
		return exitBadInput
	}
	if err := f.check(args); err != nil {
		return bad("%v", err)
	}
	logf := logLine(stderr, "windows")
	rowsDir := f.Rows
	if rowsDir == "" {
		dir, err := os.MkdirTemp("", "rollcheck-windows-")
		if err != nil {
			return bad("%v", err)
		}
		defer os.RemoveAll(dir)
		rowsDir = dir
	}
	if ref := flagsRef(f.Kubeconfig, f.Context); ref != nil {
		// The rights are asked for with the plans' objects before any image is made.
		draft, err := measurePlans("rollcheck/app:draft", corev1.PullIfNotPresent, []string{"node"}, f.Deletions)
		if err != nil {
			return bad("%v", err)
		}
		c, err := acquireExisting(ctx, *ref, os.Getenv(knobs.EnvLoadImage), f.ImageRegistry, rowPlace{}, draft, logf) // its plans apply their app: no Lease
		if err != nil {
			return bad("%v", err)
		}
		t, which := c.Target(), c.Which()
		for _, n := range c.Notes() {
			logf("warning: %s", n)
		}
		ei, err := cluster.PlanExistingImages(ctx, t.RESTConfig, f.ImageRegistry)
		if err != nil {
			return bad("%v", err)
		}
		image, err := ei.Image(ctx, selfimage.App, logf)
		if err != nil {
			return bad("%v", err)
		}
		pull := corev1.PullNever // loaded into a kind cluster's nodes
		if f.ImageRegistry != "" {
			pull = corev1.PullIfNotPresent
		}
		code := measureOn(ctx, t, which, image, pull, f, rowsDir, stdout, logf)
		// Every namespace of this run is gone before the command returns (engine.Run deletes
		// each row's; this waits for them, and for any a cancelled row left).
		if err := c.Release(ctx); err != nil {
			logf("cleanup: %v", err)
			code = max(code, exitBadInput)
		}
		return code
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		return bad("%v", err)
	}
	if err := ownImagesPreflight(opts, false, true); err != nil {
		return bad("%v", err)
	}
	opts.Logf = logLine(stderr, "cluster")
	return onCluster(ctx, opts, rowsDir, "windows measure", stderr, func(cl *cluster.Cluster) int {
		image, err := cl.BuildAppImage(ctx)
		if err != nil {
			logf("the app's image: %v", err)
			return exitBadInput
		}
		plans, err := measurePlans(image, corev1.PullNever, []string{"node"}, f.Deletions)
		if err != nil {
			logf("%v", err)
			return exitBadInput
		}
		t, err := kindTarget(ctx, cl, slices.ContainsFunc(plans, resolvedFromLoadPods))
		if err != nil {
			logf("%v", err)
			return exitBadInput
		}
		return measureOn(ctx, t, "rollcheck's kind cluster "+cl.Name, image, corev1.PullNever, f, rowsDir, stdout, logf)
	})
}

// measureOn runs a row per node on the Target, one at a time, and writes the windows file.
func measureOn(ctx context.Context, t engine.Target, which, image string, pull corev1.PullPolicy, f *measureFlags, rowsDir string, stdout io.Writer, logf func(string, ...any)) int {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(t.RESTConfig))
	if err != nil {
		logf("%v", err)
		return exitBadInput
	}
	nodes, err := measureNodes(ctx, cs, f.Nodes, f.NodesOf)
	if err != nil {
		logf("%v", err)
		return exitBadInput
	}
	plans, err := measurePlans(image, pull, nodes, f.Deletions)
	if err != nil {
		logf("%v", err)
		return exitBadInput
	}
	logf("measuring %s on %d node(s) (%s): %d deletions each, one node at a time", which, len(nodes), strings.Join(nodes, ", "), f.Deletions)
	t.Logf = func(string, ...any) {}
	_ = check.ClearRows(rowsDir)
	var perNode []nodeRow
	for i, p := range plans {
		if ctx.Err() != nil {
			break
		}
		nt := t
		nt.LoadNode = nodes[i] // the load pod on this node: the data plane as its kube-proxy routes
		logf("node %d/%d %s: %d deletions", i+1, len(nodes), nodes[i], f.Deletions)
		if row := probeRow(ctx, nt, p, rowsDir, logf); row != nil {
			perNode = append(perNode, nodeRow{Node: nodes[i], Row: *row})
		}
	}
	var grpcRow *check.Row
	if f.GRPC && ctx.Err() == nil {
		p, err := grpcPlan(image, pull, f.Deletions)
		var r *check.Resolved
		if err == nil {
			r, err = p.Resolve()
		}
		if err != nil {
			logf("%v", err)
			return exitBadInput
		}
		logf("gRPC round_robin client: %d deletions", f.Deletions)
		grpcRow = probeRow(ctx, t, r, rowsDir, logf)
	}
	if ctx.Err() != nil {
		n := len(perNode)
		if grpcRow != nil {
			n++
		}
		logf("interrupted after %d row(s); no windows file written", n)
		return exitSignal
	}
	w, err := measuredWindows(perNode, grpcRow, nodes, f, logf)
	if err != nil {
		logf("%v", err)
		return exitFail
	}
	w.Measured.Cluster = which
	if err := writeWindows(w, f.Output, stdout); err != nil {
		logf("%v", err)
		return exitBadInput
	}
	if f.Output != "" {
		logf("windows of %d node(s): %s", len(w.Nodes), f.Output)
	}
	return exitPass
}

// nodeRow is a row of windows measure and the node its load pod ran on.
type nodeRow struct {
	Node string
	Row  check.Row
}

// measuredWindows is the windows file of the rows of windows measure, one per node that gave
// one (of nodes, those asked for), and the gRPC client's row (nil: none): every row's windows
// pooled, and per node those of its row (the control plane, the data plane as that node's kube-proxy
// routes, the DNS window as its load pod was answered); a node whose row measured nothing is
// logged and left out.
func measuredWindows(rowsByNode []nodeRow, grpcRow *check.Row, nodes []string, f *measureFlags, logf func(string, ...any)) (*audit.WindowsFile, error) {
	var rows []check.Row
	var perNode []audit.NodeMeasures
	for _, p := range rowsByNode {
		rows = append(rows, p.Row)
		if w, err := audit.Extract([]check.Row{p.Row}, p.Node); err == nil {
			perNode = append(perNode, audit.NodeMeasures{Node: p.Node, Windows: w.Windows})
		} else {
			logf("node %s: %v", p.Node, err)
		}
	}
	if grpcRow != nil {
		rows = append(rows, *grpcRow)
	}
	w, err := audit.Extract(rows, "rollcheck windows measure")
	if err != nil {
		return nil, err
	}
	w.Nodes = perNode
	w.Measured.Source = measureSource(nodes, f.Deletions, f.GRPC, w.Windows.DNS)
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// measureSource is a windows file's Measured.Source for rows on nodes of deletions each, with
// the gRPC client's row or not, and the DNS window pooled over the rows (nil: none measured).
func measureSource(nodes []string, deletions int, grpc bool, dns *audit.DNSMeasure) string {
	dnsWords := fmt.Sprintf("the DNS window of a headless Service of the pods (deletion → the first DNS answer without the pod's address, asked %d times a second from the load pod on each node)",
		time.Second/loadgen.ResolveEvery)
	if dns != nil {
		dnsWords += fmt.Sprintf(", TTL %d s", dns.TTLSeconds)
	} else {
		dnsWords += ": not measured (no answer dropped a deleted pod's address)"
	}
	grpcWords := "no gRPC client window (--grpc measures one)"
	if grpc {
		grpcWords = "a gRPC round_robin client's window over a headless Service (one more row)"
	}
	return fmt.Sprintf("rollcheck windows measure: a row per node (%s), each %d graceful deletions of one of 3 pods of the sample app (no preStop, answering %s after SIGTERM) under 100 req/s from a load pod on that node, a new connection per request; %s; %s",
		strings.Join(nodes, ", "), deletions, measureDrainDelay, dnsWords, grpcWords)
}

// probeRow runs one of the probe's rows (engine.Run: its namespace deleted on every path) and
// writes it under rowsDir; nil when it produced no row.
func probeRow(ctx context.Context, t engine.Target, p *check.Resolved, rowsDir string, logf func(string, ...any)) *check.Row {
	row, err := engine.Run(ctx, t, p, engine.WithArtifacts(rowsDir), engine.WithProgress(progressPrinter(logf)))
	if err != nil {
		logf("%v", err)
	}
	if row != nil {
		if _, werr := check.WriteRow(rowsDir, *row); werr != nil {
			logf("write row: %v", werr)
		}
	}
	return row
}
