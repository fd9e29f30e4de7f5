package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/internal/selfimage"
	"github.com/rollcheck/rollcheck/internal/windowsprobe"
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
	errs = append(errs, f.probe().Problems()...)
	if f.ImageRegistry != "" {
		if f.Kubeconfig == "" && f.Context == "" {
			errs = append(errs, errors.New("--image-registry is for an existing cluster (--kubeconfig or --context): rollcheck's kind cluster gets the images loaded"))
		} else if err := selfimage.ValidRegistry(f.ImageRegistry); err != nil {
			errs = append(errs, fmt.Errorf("--image-registry %q: %w", f.ImageRegistry, err))
		}
	}
	return oneline.Join(errs)
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
		draft, err := windowsprobe.Plans("rollcheck/app:draft", corev1.PullIfNotPresent, []string{"node"}, f.Deletions)
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
		plans, err := windowsprobe.Plans(image, corev1.PullNever, []string{"node"}, f.Deletions)
		if err != nil {
			logf("%v", err)
			return exitBadInput
		}
		t, err := kindTarget(ctx, cl, slices.ContainsFunc(plans, checkinput.ResolvedFromLoadPods))
		if err != nil {
			logf("%v", err)
			return exitBadInput
		}
		return measureOn(ctx, t, "rollcheck's kind cluster "+cl.Name, image, corev1.PullNever, f, rowsDir, stdout, logf)
	})
}

// probe is what the flags ask of windowsprobe.Measure.
func (f *measureFlags) probe() windowsprobe.Options {
	return windowsprobe.Options{Nodes: f.Nodes, NodesOf: f.NodesOf, Deletions: f.Deletions, GRPC: f.GRPC}
}

// measureOn measures on the Target (windowsprobe.Measure), writes the windows file, and returns
// the exit code.
func measureOn(ctx context.Context, t engine.Target, which, image string, pull corev1.PullPolicy, f *measureFlags, rowsDir string, stdout io.Writer, logf func(string, ...any)) int {
	w, err := windowsprobe.Measure(ctx, t, which, image, pull, f.probe(), rowsDir, logf)
	if err != nil {
		logf("%v", err)
		switch {
		case errors.Is(err, windowsprobe.ErrInterrupted):
			return exitSignal
		case errors.Is(err, windowsprobe.ErrNoWindows):
			return exitFail
		}
		return exitBadInput
	}
	if err := writeWindows(w, f.Output, stdout); err != nil {
		logf("%v", err)
		return exitBadInput
	}
	if f.Output != "" {
		logf("windows of %d node(s): %s", len(w.Nodes), f.Output)
	}
	return exitPass
}
