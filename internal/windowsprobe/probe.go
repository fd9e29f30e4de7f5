// Package windowsprobe is rollcheck windows measure's probe: the rows that measure a cluster's
// windows (a row per node, the sample app with no preStop answering DrainDelay after SIGTERM,
// one pod deleted again and again under load from a load pod on that node; one more for a gRPC
// round_robin client), the nodes they run on, and the windows file made of their rows. The
// rows run on engine.Run like any other; the CLI maps its flags onto this package.
package windowsprobe

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/frontend"
	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// DrainDelay is how long the probe's app serves after SIGTERM: longer than any routed
// window it measures (a longer one is cut at it).
const DrainDelay = 15 * time.Second

// grpcMethod is the sample app's own gRPC method (internal/sampleapp's App/Sleep).
const grpcMethod = "/rollcheck.app.v1.App/Sleep"

// GRPCPlan is the probe's gRPC row: the sample app serving gRPC (GracefulStop at SIGTERM, no
// preStop), a round_robin client over its headless Service, a graceful delete of one pod deletions
// times. Its RPCs to a deleted pod's address fail until the client resolves again: the client's
// window (deletion → its last RPC to the address), as the matrix's grpc-rr rows measure it.
func GRPCPlan(image string, pull corev1.PullPolicy, deletions int) (check.Plan, error) {
	s := scenario.Scenario{
		App: scenario.Sample{OnSIGTERM: scenario.ShutdownDrain, Protocol: "grpc", GracefulTimeout: 10 * time.Second},
		Variant: check.Variant{Name: "windows-grpc", PreStop: &check.PreStop{None: true}, TerminationGracePeriodSeconds: ptr.To[int64](30),
			Replicas: ptr.To[int32](3), Expect: check.Failures().ByPhase(timeline.PhaseStaleAddress),
			Why: "rollcheck windows measure, gRPC: a round_robin client holds a deleted pod's address until it resolves the headless Service again"},
		Disruption: check.Disruption{Kind: check.DeletePod, Count: deletions},
		// The app's own method, instant (no message), not the health check, which a terminating
		// pod answers NOT_SERVING (as the matrix's grpc-rr-prestop-35s row calls it).
		Load: check.Load{Rate: 100, From: check.LoadFromCluster, Protocol: loadgen.ProtocolGRPC,
			GRPC: check.GRPCLoad{Balancing: loadgen.BalancingRoundRobin, Method: grpcMethod}},
	}
	return samplePlan(s, image, pull)
}

// samplePlan is s's plan with the app's image pulled as pull says.
func samplePlan(s scenario.Scenario, image string, pull corev1.PullPolicy) (check.Plan, error) {
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

// headlessName is the headless Service of the pods of a windows measure row, which its load
// pod asks the cluster's DNS for (the DNS window): the name the matrix's DNS proxies resolve.
const headlessName = proxies.HeadlessServiceName

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
	p.Load.Resolve = headlessName
	return p, nil
}

// Plans are the probe's rows, one per node: the sample app running image (pull policy
// pull: Never when the image was loaded into the nodes, IfNotPresent when pushed), 3 replicas, no
// preStop, answering DrainDelay after SIGTERM, a graceful delete of one pod deletions
// times, load from a load pod (the caller pins it to the row's node), keep-alive off; and a
// headless Service of the pods that the load pod asks the cluster's DNS for (withHeadless).
func Plans(image string, pull corev1.PullPolicy, nodes []string, deletions int) ([]*check.Resolved, error) {
	var plans []*check.Resolved
	for i, node := range nodes {
		s := scenario.Scenario{
			App: scenario.Sample{OnSIGTERM: scenario.ShutdownDrain, DrainDelay: DrainDelay},
			Variant: check.Variant{Name: fmt.Sprintf("windows-%d-%s", i+1, nodeLabel(node)), PreStop: &check.PreStop{None: true},
				TerminationGracePeriodSeconds: ptr.To[int64](30), Replicas: ptr.To[int32](3), Expect: check.Zero(),
				Why: fmt.Sprintf("rollcheck windows measure, node %s: the app answers every request routed to a deleted pod, so its last answer after the deletion is the data plane's window", node)},
			Disruption: check.Disruption{Kind: check.DeletePod, Count: deletions},
			Load:       check.Load{Rate: 100, From: check.LoadFromCluster},
		}
		p, err := samplePlan(s, image, pull)
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

// Nodes are the nodes to measure on: those named, else those running pods of namespace
// of, else every node that takes pods (Ready, schedulable, no NoSchedule or NoExecute taint).
func Nodes(ctx context.Context, cs kubernetes.Interface, named []string, of string) ([]string, error) {
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

// NodeRow is a row of windows measure and the node its load pod ran on.
type NodeRow struct {
	Node string
	Row  check.Row
}

// Windows is the windows file of the rows of windows measure, one per node that gave
// one (of nodes, those asked for), and the gRPC client's row (nil: none): every row's windows
// pooled, and per node those of its row (the control plane, the data plane as that node's kube-proxy
// routes, the DNS window as its load pod was answered); a node whose row measured nothing is
// logged and left out.
func Windows(rowsByNode []NodeRow, grpcRow *check.Row, nodes []string, deletions int, grpc bool, logf func(string, ...any)) (*audit.WindowsFile, error) {
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
	w.Measured.Source = Source(nodes, deletions, grpc, w.Windows.DNS)
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// Source is a windows file's Measured.Source for rows on nodes of deletions each, with
// the gRPC client's row or not, and the DNS window pooled over the rows (nil: none measured).
func Source(nodes []string, deletions int, grpc bool, dns *audit.DNSMeasure) string {
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
		strings.Join(nodes, ", "), deletions, DrainDelay, dnsWords, grpcWords)
}

// Row runs one of the probe's rows (engine.Run: its namespace deleted on every path, its row
// written under rowsDir); nil when it produced no row.
func Row(ctx context.Context, t engine.Target, p *check.Resolved, rowsDir string, logf func(string, ...any)) *check.Row {
	row, err := engine.Run(ctx, t, p, engine.WithArtifacts(rowsDir), engine.WithProgress(frontend.Printer(logf)))
	if err != nil {
		logf("%v", err)
	}
	return row
}

// Probe is the rows of one measure: a row per node, and the gRPC client's row when asked.
type Probe struct {
	nodes     []string
	plans     []*check.Resolved
	grpc      *check.Resolved
	deletions int
}

// New resolves the probe's rows before any work (Plans; GRPCPlan when grpc): the sample app's
// image (pull: Never when loaded into the nodes, IfNotPresent when pushed) on each of nodes,
// deletions graceful deletions each.
func New(image string, pull corev1.PullPolicy, nodes []string, deletions int, grpc bool) (*Probe, error) {
	plans, err := Plans(image, pull, nodes, deletions)
	if err != nil {
		return nil, err
	}
	pr := &Probe{nodes: nodes, plans: plans, deletions: deletions}
	if grpc {
		p, err := GRPCPlan(image, pull, deletions)
		if err == nil {
			pr.grpc, err = p.Resolve()
		}
		if err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// Run runs the probe's rows on t, one at a time, after clearing the rows an earlier measure left
// in rowsDir: each node's with its load pod on that node (the data plane as its kube-proxy
// routes), then the gRPC client's. It starts no row once ctx ended, and returns the rows that
// ran: per node, and the gRPC row (nil: none).
func (pr *Probe) Run(ctx context.Context, t engine.Target, rowsDir string, logf func(string, ...any)) ([]NodeRow, *check.Row) {
	t.Logf = func(string, ...any) {}
	_ = rowfile.Clear(rowsDir)
	var perNode []NodeRow
	for i, p := range pr.plans {
		if ctx.Err() != nil {
			break
		}
		nt := t
		nt.LoadNode = pr.nodes[i]
		logf("node %d/%d %s: %d deletions", i+1, len(pr.nodes), pr.nodes[i], pr.deletions)
		if row := Row(ctx, nt, p, rowsDir, logf); row != nil {
			perNode = append(perNode, NodeRow{Node: pr.nodes[i], Row: *row})
		}
	}
	var grpcRow *check.Row
	if pr.grpc != nil && ctx.Err() == nil {
		logf("gRPC round_robin client: %d deletions", pr.deletions)
		grpcRow = Row(ctx, t, pr.grpc, rowsDir, logf)
	}
	return perNode, grpcRow
}
