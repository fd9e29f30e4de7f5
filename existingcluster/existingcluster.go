// Package existingcluster gives a Go program or test a cluster rollcheck does not own to run its
// checks on, shaped like kindcluster: Acquire checks everything a run needs before any work and
// holds what the run must hold; Target is what engine.Run takes; Release ends the run's hold and
// waits until nothing the run made is left.
//
// Acquire reads the kubeconfig as kubectl does (WithKubeconfig, WithContext; KUBECONFIG's files
// or ~/.kube/config when no file is named) or the pod's own ServiceAccount (InCluster), and then,
// each a one-line error before anything is written:
//   - the API server must answer within 10 s;
//   - the user must hold every right the plans need, asked of the API server
//     (SelfSubjectAccessReviews; the rights examples/rbac grants); a missing optional right is a
//     note (Notes) that says what the run will not measure;
//   - an app checked in place must be there and fit every plan, and no other live run may hold
//     its Deployment (its Lease, held for the run);
//   - rows in namespaces of the user's (WithRowNamespaces) take each one's Lease, held for the run;
//   - the load pods' image: WithLoadImage's, else one rollcheck makes of its own executable and
//     pushes to WithImageRegistry, or loads into the nodes of a kind cluster of this machine's
//     Docker engine.
//
// Release releases the Leases and, when the rows made namespaces of their own, waits until every
// namespace of the run (labelled engine.RunLabel with its id) is gone; no other namespace is
// touched. Options are functional and default from nothing; FromEnv reads rollcheck's knobs.
package existingcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/inplace"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// Cluster is an existing cluster acquired for a run. Its methods may be called from several
// goroutines.
type Cluster struct {
	target engine.Target
	which  string
	notes  []string
	rows   []string
	logf   func(string, ...any)

	mu       sync.Mutex
	held     []*runlease.Lease
	released bool
}

// Acquire checks, before any work, everything the plans need of the cluster the options name
// (the package's doc lists it) and holds the run's Leases; each failure is one line, and
// whatever Acquire held by then is released. On success the caller must call Release.
func Acquire(ctx context.Context, plans []*check.Resolved, options ...Option) (*Cluster, error) {
	s, err := applyOptions(options)
	if err != nil {
		return nil, err
	}
	by := s.by()
	s.ref.By = by
	cfg, which, err := s.ref.Resolve()
	if err != nil {
		return nil, err
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", by, err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("%s: the API server at %s does not answer: %w", by, cfg.Host, err)
	}
	if len(s.rows) > 0 && slices.ContainsFunc(plans, (*check.Resolved).InPlace) {
		return nil, fmt.Errorf("%s: rows namespaces %s: an app checked in place applies nothing (its load pods' namespace is WithLoadNamespace)", by, strings.Join(s.rows, ", "))
	}
	notes, err := access.ReviewPlans(ctx, probe, plans, s.loadNS, s.rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", by, err)
	}
	if err := inplace.Preflight(ctx, probe, plans); err != nil {
		return nil, fmt.Errorf("%s: %w", by, err)
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	runID := hex.EncodeToString(id)
	c := &Cluster{which: which, notes: notes, rows: s.rows, logf: s.logf}
	fail := func(err error) (*Cluster, error) {
		return nil, errors.Join(fmt.Errorf("%s: %w", by, err), c.releaseLeases(ctx))
	}
	// One run per Deployment: a live Lease of another run is one line here, before any change.
	l, err := inplace.HoldRun(ctx, cfg, plans, runID)
	if err != nil {
		return fail(err)
	}
	if l != nil {
		c.held = append(c.held, l)
	}
	// One run per rows namespace: each one's Lease, held for the run, before anything is touched.
	for _, ns := range s.rows {
		l, err := engine.HoldRowNamespace(ctx, cfg, ns, runID)
		if err != nil {
			return fail(err)
		}
		c.held = append(c.held, l)
	}
	image := s.loadImage
	if image == "" {
		ei, err := cluster.PlanExistingImages(ctx, probe, s.registry)
		if err == nil {
			image, err = ei.LoadImage(ctx, s.logf)
		}
		if err != nil {
			return fail(err)
		}
	}
	c.target = engine.Target{RESTConfig: cfg, LoadImage: image, RunID: runID, NamespaceLabels: knobs.NamespaceLabels(s.podSecurity),
		LoadNamespace: s.loadNS, Versions: check.Versions{Kind: "none (an existing cluster, " + v.GitVersion + ")"}}
	return c, nil
}

// Target is the cluster as engine.Run takes it. With rows namespaces, a row's Target names one of
// them (RowNamespace), one row at a time in each: RowNamespaces lists them.
func (c *Cluster) Target() engine.Target { return c.target }

// Which says which cluster and context it is: `context "staging" (cluster "gke-1", server
// https://…) from KUBECONFIG (/a, /b)`.
func (c *Cluster) Which() string { return c.which }

// Notes say what the run will not measure for want of an optional right, one line each.
func (c *Cluster) Notes() []string { return append([]string(nil), c.notes...) }

// RowNamespaces are the user's namespaces the rows apply their app into (WithRowNamespaces).
func (c *Cluster) RowNamespaces() []string { return append([]string(nil), c.rows...) }

// Release ends the run on the cluster, also after ctx is cancelled (Ctrl-C): when the rows made
// namespaces of their own, it waits (up to 4 minutes) until every one of the run's is gone;
// then it releases the run's Leases (a Lease that cannot be released expires on its own 15 s
// after its last renewal). Releasing twice does nothing.
func (c *Cluster) Release(ctx context.Context) error {
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return nil
	}
	c.released = true
	c.mu.Unlock()
	var errs []error
	switch {
	case len(c.rows) > 0:
		// Each row deleted what it applied and started in a namespace of the user's.
		c.logf("no namespace was created; what the rows applied is gone from %s", strings.Join(c.rows, ", "))
	case c.target.LoadNamespace != "":
		// The load pods ran in a namespace of the user's, each row deleted its own.
		c.logf("no namespace was created; the load pods are gone from %s", c.target.LoadNamespace)
	default:
		errs = append(errs, c.sweep(ctx))
	}
	if err := c.releaseLeases(ctx); err != nil {
		errs = append(errs, fmt.Errorf("%w (a Lease expires %s after its last renewal)", err, runlease.Duration))
	}
	return errors.Join(errs...)
}

// sweep waits until every namespace labelled with the run's id is gone (also after ctx is
// cancelled: Ctrl-C leaves nothing behind).
func (c *Cluster) sweep(ctx context.Context) error {
	client, err := klient.New(c.target.RESTConfig)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 4*time.Minute)
	defer cancel()
	n, err := kube.SweepNamespaces(cctx, client, engine.RunLabel+"="+c.target.RunID, 3*time.Minute)
	if err != nil {
		return fmt.Errorf("the run's namespaces: %w", err)
	}
	c.logf("the run's %d namespace(s) are gone; nothing of it is left in the cluster", n)
	return nil
}

func (c *Cluster) releaseLeases(ctx context.Context) error {
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.mu.Unlock()
	var errs []error
	for _, l := range held {
		errs = append(errs, l.Release(ctx))
	}
	return errors.Join(errs...)
}

// An Option configures Acquire. Options apply in order: a later one overrides what an earlier
// one set, so FromEnv goes first.
type Option func(*settings) error

type settings struct {
	ref                 kubeconfig.Ref
	loadImage, registry string
	loadNS, podSecurity string
	rows                []string
	logf                func(string, ...any)
}

// by is what names the cluster in errors: the description given, else the kubeconfig and context.
func (s settings) by() string {
	if s.ref.By != "" {
		return s.ref.By
	}
	var by []string
	if s.ref.Kubeconfig != "" {
		by = append(by, "kubeconfig "+s.ref.Kubeconfig)
	}
	if s.ref.Context != "" {
		by = append(by, "context "+s.ref.Context)
	}
	if s.ref.InCluster {
		by = append(by, "in-cluster")
	}
	if by == nil {
		return "the current context"
	}
	return strings.Join(by, ", ")
}

func applyOptions(options []Option) (settings, error) {
	s := settings{logf: func(string, ...any) {}}
	var errs []error
	for i, o := range options {
		if o == nil {
			errs = append(errs, fmt.Errorf("option %d is nil", i+1))
			continue
		}
		if err := o(&s); err != nil {
			errs = append(errs, err)
		}
	}
	if s.ref.InCluster && (s.ref.Kubeconfig != "" || s.ref.Context != "") {
		errs = append(errs, errors.New("InCluster and a kubeconfig or context: give one"))
	}
	if s.loadNS != "" && len(s.rows) > 0 {
		errs = append(errs, errors.New("WithLoadNamespace is for an app checked in place, WithRowNamespaces for rows that apply their app: give one"))
	}
	if s.podSecurity != "" && len(s.rows) > 0 {
		errs = append(errs, fmt.Errorf("%s=%s labels the namespaces rollcheck creates, and with rows namespaces it creates none: label yours", knobs.EnvPodSecurity, s.podSecurity))
	}
	if err := oneline.Join(errs); err != nil {
		return s, fmt.Errorf("existing cluster options: %w", err)
	}
	return s, nil
}

// WithKubeconfig reads only this kubeconfig file, as kubectl --kubeconfig does (default:
// KUBECONFIG's files, merged as kubectl merges them, else ~/.kube/config).
func WithKubeconfig(file string) Option {
	return func(s *settings) error { s.ref.Kubeconfig = file; return nil }
}

// WithContext uses this context of the kubeconfig (default: its current context).
func WithContext(name string) Option {
	return func(s *settings) error { s.ref.Context = name; return nil }
}

// InCluster uses the ServiceAccount of the pod the program runs in (rest.InClusterConfig).
func InCluster() Option {
	return func(s *settings) error { s.ref.InCluster = true; return nil }
}

// WithDescription is what names the cluster at the head of Acquire's errors ("--context
// staging"; default: the kubeconfig and context).
func WithDescription(by string) Option {
	return func(s *settings) error { s.ref.By = by; return nil }
}

// WithLoadImage is the load pods' image (rollcheck's own, `rollcheck agent load`), which the
// nodes pull or hold; without it rollcheck makes one of its own executable (WithImageRegistry).
func WithLoadImage(ref string) Option {
	return func(s *settings) error {
		if err := check.ValidLoadImage(ref); err != nil {
			return fmt.Errorf("load pod image %q: %w", ref, err)
		}
		s.loadImage = ref
		return nil
	}
}

// WithImageRegistry is where the load image rollcheck makes of its own executable is pushed
// (host[:port][/path], credentials from the Docker config); not needed on a kind cluster of
// this machine's Docker engine, whose nodes it is loaded into.
func WithImageRegistry(registry string) Option {
	return func(s *settings) error { s.registry = registry; return nil }
}

// WithLoadNamespace runs the load pods of an app checked in place in this namespace of the
// user's, kept (only the load pods are deleted), instead of a namespace each row creates.
func WithLoadNamespace(ns string) Option {
	return func(s *settings) error { s.loadNS = ns; return nil }
}

// WithRowNamespaces has the rows apply their app into these namespaces of the user's, one row at
// a time in each, instead of a namespace each row creates (engine.Target.RowNamespace): with
// examples/rbac/namespaced.yaml bound in each, the run needs no ClusterRole.
func WithRowNamespaces(namespaces ...string) Option {
	return func(s *settings) error {
		s.rows = append([]string(nil), namespaces...)
		return nil
	}
}

// WithPodSecurity labels every namespace the rows create pod-security.kubernetes.io/enforce:
// LEVEL (restricted, baseline or privileged).
func WithPodSecurity(level string) Option {
	return func(s *settings) error { s.podSecurity = level; return nil }
}

// WithLogger receives Acquire's and Release's progress lines (the load image made, the
// namespaces gone).
func WithLogger(logf func(format string, args ...any)) Option {
	return func(s *settings) error {
		if logf != nil {
			s.logf = logf
		}
		return nil
	}
}

// FromEnv reads rollcheck's knobs as the rollcheck command does: every ROLLCHECK_* knob checked
// (a bad one is Acquire's error), ROLLCHECK_LOAD_IMAGE as WithLoadImage and
// ROLLCHECK_POD_SECURITY as WithPodSecurity, when set.
func FromEnv() Option {
	return func(s *settings) error {
		if errs := knobs.Check(os.Getenv, true); len(errs) > 0 {
			return errs[0]
		}
		if ref := os.Getenv(knobs.EnvLoadImage); ref != "" {
			if err := WithLoadImage(ref)(s); err != nil {
				return err
			}
		}
		s.podSecurity, _ = knobs.Get(os.Getenv, knobs.EnvPodSecurity)
		return nil
	}
}
