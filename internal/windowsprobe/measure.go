package windowsprobe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/oneline"
)

// Options are what one measure asks of the probe: the nodes (Nodes, else those running the
// pods of namespace NodesOf, else every node that takes pods), Deletions graceful deletions per
// node (1 to 50), and the gRPC client's row (GRPC).
type Options struct {
	Nodes     []string
	NodesOf   string
	Deletions int
	GRPC      bool
}

// Problems are every problem of o (none: nil), each one line, in the order the flags are read.
func (o Options) Problems() []error {
	var errs []error
	if o.Deletions < 1 || o.Deletions > 50 {
		errs = append(errs, fmt.Errorf("--deletions %d: want 1 to 50", o.Deletions))
	}
	if len(o.Nodes) > 0 && o.NodesOf != "" {
		errs = append(errs, errors.New("give --node or --nodes-of, not both"))
	}
	return errs
}

// ErrInterrupted is wrapped in Measure's error when ctx ended before every row ran: no windows
// file is made of the rows that did.
var ErrInterrupted = errors.New("interrupted")

// ErrNoWindows is matched (errors.Is) by Measure's error when the rows ran but no windows file
// could be made of them (no row measured a window).
var ErrNoWindows = errors.New("no windows measured")

// noWindows is Windows' error, matched as ErrNoWindows, its message unchanged.
type noWindows struct{ error }

func (e noWindows) Is(target error) bool { return target == ErrNoWindows }
func (e noWindows) Unwrap() error        { return e.error }

// Measure runs the probe on t (the cluster which names, for the log and the file): it picks the
// nodes (Nodes), resolves the rows (New) with the sample app's image (pull: Never when loaded
// into the nodes, IfNotPresent when pushed), runs them one node at a time (Probe.Run, the rows
// written under rowsDir) and makes the windows file of their rows (Windows), Measured.Cluster
// set to which. Its error wraps ErrInterrupted when ctx ended, ErrNoWindows when no row measured
// a window; any other is bad input or a cluster that could not be read.
func Measure(ctx context.Context, t engine.Target, which, image string, pull corev1.PullPolicy, o Options, rowsDir string, logf func(string, ...any)) (*audit.WindowsFile, error) {
	if err := oneline.Join(o.Problems()); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(t.RESTConfig))
	if err != nil {
		return nil, err
	}
	nodes, err := Nodes(ctx, cs, o.Nodes, o.NodesOf)
	if err != nil {
		return nil, err
	}
	probe, err := New(image, pull, nodes, o.Deletions, o.GRPC)
	if err != nil {
		return nil, err
	}
	logf("measuring %s on %d node(s) (%s): %d deletions each, one node at a time", which, len(nodes), strings.Join(nodes, ", "), o.Deletions)
	perNode, grpcRow := probe.Run(ctx, t, rowsDir, logf)
	if ctx.Err() != nil {
		n := len(perNode)
		if grpcRow != nil {
			n++
		}
		return nil, fmt.Errorf("%w after %d row(s); no windows file written", ErrInterrupted, n)
	}
	w, err := Windows(perNode, grpcRow, nodes, o.Deletions, o.GRPC, logf)
	if err != nil {
		return nil, noWindows{err}
	}
	w.Measured.Cluster = which
	return w, nil
}
