package checkinput

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
	"github.com/rollcheck/rollcheck/internal/selfimage"
	"github.com/rollcheck/rollcheck/spec"
)

// The formats of rollcheck check -o.
const (
	Markdown = "markdown"
	JSON     = "json"
)

// ExistingUnless says what names an existing cluster for rollcheck check (a kind note).
const ExistingUnless = "--context NAME or --kubeconfig FILE (or a check file's cluster section) names an existing one"

// Flags are rollcheck check's input: the shared run flags, an existing cluster, and the app,
// load, variant and disruptions of the flags-only form (--manifest instead of -f).
type Flags struct {
	Run
	// Adjust is what a front end built on check's input (gate) knows of each plan that the
	// flags and the file do not say, applied before the plan is resolved; nil for check.
	Adjust func(*check.Plan)
	// Kubeconfig and Context name an existing cluster (FlagsRef).
	Kubeconfig, Context string
	// ImageRegistry is where the load image goes for an existing cluster (--image-registry).
	ImageRegistry string
	// The app.
	Manifests, Images     Multi
	Deployment, Container string
	// Rollout is --rollout [NS/]NAME: an Argo Rollout checked where it runs, as --deployment
	// checks a Deployment (rollcheck check; the gate's --rollout is gate.Flags').
	Rollout string
	Port    int
	Path    string
	// The load.
	Rate            int
	Method, Timeout string
	KeepAlive       bool
	LoadFrom        string
	LoadPods        int
	// The disruptions, and the one variant with its threshold.
	Disruptions      Multi
	PreStop          string
	Grace            Optional[int]
	MaxFailureRatio  Optional[float64]
	MinPerDisruption Optional[float64]
	// Output is -o: how the run's rows are printed on stdout (Markdown, JSON).
	Output string
	// An app checked where it already runs: -n/--namespace (or --deployment NS/NAME) and
	// --service for the flags-only form; --in-place allows the variants that change its
	// Deployment; --load-namespace keeps its load pods in a namespace of the user's.
	Namespace, Service, LoadNamespace string
	InPlace                           bool
	// RowNamespaces is --row-namespace: on an existing cluster, the namespaces of the user's
	// that the rows apply their app into, one row at a time in each, instead of a namespace each
	// row creates.
	RowNamespaces Multi
	// Gate: rollcheck gate and serve. Without --kubeconfig, --context or a cluster section the
	// cluster is the pod's own, never rollcheck's kind cluster, and a variant that changes the
	// Deployment is the gate's to refuse, in its words.
	Gate bool
}

// Input is what rollcheck check runs, read from its flags and checked.
type Input struct {
	Check *spec.Check
	Plans []*check.Resolved
	// Adjust is what the front end knows of each plan that the file does not say (an existing
	// cluster's load from load pods; a gate's Rollout), applied before each plan is resolved.
	Adjust    func(*check.Plan)
	Existing  *kubeconfig.Ref // an existing cluster, or nil for kind
	LoadImage string          // the load pod's image for an existing cluster
	Registry  string          // where it is pushed when rollcheck makes it (--image-registry)
	Parallel  int
}

// FlagsRef is the cluster --kubeconfig and --context name, or nil when neither is given.
func FlagsRef(kubeconfigFile, context string) *kubeconfig.Ref {
	var by []string
	if kubeconfigFile != "" {
		by = append(by, "--kubeconfig "+kubeconfigFile)
	}
	if context != "" {
		by = append(by, "--context "+context)
	}
	if by == nil {
		return nil
	}
	return &kubeconfig.Ref{Kubeconfig: kubeconfigFile, Context: context, By: strings.Join(by, " ")}
}

// InClusterRef is the cluster of the pod rollcheck runs in, by its ServiceAccount.
var InClusterRef = kubeconfig.Ref{InCluster: true, By: "the pod's ServiceAccount (in-cluster)"}

// NotLoadedWarning is the line that says, on an existing cluster, that the app's images the
// check names (app.images, app.build, --image) are not loaded: rollcheck loads nothing into a
// cluster it does not own, so its nodes must pull them or hold them already. "" when it names none.
func (in *Input) NotLoadedWarning() string {
	if in.Existing == nil || in.Check == nil || len(in.Check.Images()) == 0 {
		return ""
	}
	return fmt.Sprintf("rollcheck check: warning: %s not loaded: rollcheck loads nothing into a cluster it does not own, so its nodes must pull them or hold them already (a kind cluster you made: kind load docker-image REF --name CLUSTER)", strings.Join(in.Check.Images(), ", "))
}

// Read reads the check (a check file, or the flags-only form), its plans (warn is given each
// warning), the cluster they run on and how many run at once: every problem of the input,
// before any Docker or cluster work. It may normalize f (RowNamespaces split at commas).
func (f *Flags) Read(warn func(string)) (*Input, error) {
	in := &Input{}
	var err error
	switch {
	case f.Output != Markdown && f.Output != JSON:
		return nil, fmt.Errorf("-o %q: want %s or %s", f.Output, Markdown, JSON)
	case f.File != "" && len(f.Manifests) > 0:
		return nil, errors.New("use -f or --manifest, not both")
	case f.File != "":
		if given := f.FileFields(); len(given) > 0 {
			return nil, fmt.Errorf("with -f the check file says the app, its load, disruptions and variants: %s would not be used; set them in the file, or drop -f", strings.Join(given, ", "))
		}
	case len(f.Manifests) > 0 && (f.Namespace != "" || f.Service != ""):
		return nil, errors.New("-n and --service check a Deployment where it already runs: give --deployment [NS/]NAME without --manifest")
	}
	switch {
	case f.File != "":
		in.Check, err = spec.Load(f.File)
	case len(f.Manifests) > 0:
		in.Check, err = f.flagsCheck()
	case f.Deployment != "" && f.Rollout != "":
		return nil, errors.New("--deployment and --rollout: name one workload to check where it runs")
	case f.Deployment != "" || f.Rollout != "":
		in.Check, err = f.inPlaceCheck()
	default:
		return nil, errors.New("nothing to check: give -f CHECK.yaml, --manifest, or --deployment [NS/]NAME (--rollout [NS/]NAME) for a Deployment (an Argo Rollout) that runs already (rollcheck help check)")
	}
	if err != nil {
		return nil, err
	}
	c := in.Check
	// --kubeconfig and --context name an existing cluster, else the check file's cluster
	// section does (its load image counts either way), else the run is on kind.
	in.Existing, in.LoadImage = FlagsRef(f.Kubeconfig, f.Context), os.Getenv(knobs.EnvLoadImage)
	if c.Cluster != nil {
		if in.Existing == nil {
			in.Existing = &kubeconfig.Ref{Kubeconfig: c.KubeconfigPath(), Context: c.Cluster.Context, By: "the check file's cluster section"}
		}
		if in.LoadImage == "" {
			in.LoadImage = c.Cluster.LoadImage
		}
	}
	if in.Existing == nil && f.Gate {
		ref := InClusterRef
		in.Existing = &ref
	}
	existing := in.Existing != nil
	if existing && c.Load.From == string(check.LoadFromHost) {
		return nil, fmt.Errorf("%s: an existing cluster is loaded from inside only; %s says load.from: host", in.Existing.By, c.Name())
	}
	in.Adjust = func(p *check.Plan) {
		if existing {
			// Nothing is loaded into a cluster rollcheck does not own: the manifests' images
			// and pull policies are used as they are.
			p.Load.From, p.App.Images = check.LoadFromCluster, nil
		}
		if f.Adjust != nil {
			f.Adjust(p)
		}
	}
	plans, warnings, err := c.PlansWith(in.Adjust)
	for _, w := range warnings {
		warn(w)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Name(), err)
	}
	if in.Registry = f.ImageRegistry; in.Registry == "" && c.Cluster != nil {
		in.Registry = c.Cluster.ImageRegistry
	}
	if in.Registry != "" {
		if err := selfimage.ValidRegistry(in.Registry); err != nil {
			return nil, fmt.Errorf("image registry %q: %w", in.Registry, err)
		}
	}
	if err := f.inPlaceInput(c, plans); err != nil {
		return nil, err
	}
	in.Plans = plans
	if in.Parallel, err = f.AtOnce(Plans(plans)); err != nil {
		return nil, err
	}
	if err := f.rowsInput(in); err != nil {
		return nil, err
	}
	return in, nil
}

// rowsInput checks --row-namespace: on an existing cluster only, for an app the rows apply,
// names that a namespace may have, each once, no Pod Security level to label them with, and no
// more rows at once than namespaces (the default is cut to their number).
func (f *Flags) rowsInput(in *Input) error {
	var names []string
	for _, v := range f.RowNamespaces {
		for _, ns := range strings.Split(v, ",") {
			ns = strings.TrimSpace(ns)
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return fmt.Errorf("--row-namespace %q: not a namespace's name: %s", ns, strings.Join(errs, "; "))
			}
			if slices.Contains(names, ns) {
				return fmt.Errorf("--row-namespace %s: given twice", ns)
			}
			names = append(names, ns)
		}
	}
	f.RowNamespaces = names
	level, _ := knobs.Get(os.Getenv, knobs.EnvPodSecurity)
	switch {
	case len(names) == 0:
		return nil
	case in.Existing == nil:
		return fmt.Errorf("--row-namespace %s: only on an existing cluster (%s); on rollcheck's kind cluster each row creates a namespace of its own", names[0], ExistingUnless)
	case f.Gate:
		return fmt.Errorf("--row-namespace %s: the gate checks pods where they run and applies nothing", names[0])
	case in.Check.App.Namespace != "":
		return fmt.Errorf("--row-namespace %s: an app checked where it already runs applies nothing; its load pods' namespace is --load-namespace", names[0])
	case level != "":
		return fmt.Errorf("--row-namespace %s: %s=%s labels the namespaces rollcheck creates, and with --row-namespace it creates none: label yours (kubectl label namespace NS pod-security.kubernetes.io/enforce=%s), and unset it", names[0], knobs.EnvPodSecurity, level, level)
	case f.given("parallel") && f.Parallel > len(names):
		return fmt.Errorf("--parallel %d: one row at a time runs in each --row-namespace, and %d are named", f.Parallel, len(names))
	}
	in.Parallel = min(in.Parallel, len(names))
	return nil
}

// FileFlags are rollcheck check's flags that describe what a check file describes, with the
// file's field for each: with -f each is refused, never silently dropped. The cluster's flags
// (--kubeconfig, --context, --image-registry) replace the file's cluster section instead, and
// the run's (--in-place, --load-namespace, --parallel, -o, …) apply to either form.
var FileFlags = []struct{ Flag, Field string }{
	{"image", "app.images"}, {"deployment", "app.deployment"}, {"rollout", "app.rollout"}, {"n", "app.namespace"}, {"namespace", "app.namespace"},
	{"service", "app.service"}, {"container", "app.container"}, {"port", "app.port"}, {"path", "app.path"},
	{"rate", "load.rate"}, {"method", "load.method"}, {"keepalive", "load.keepAlive"}, {"timeout", "load.timeout"},
	{"load-from", "load.from"}, {"load-pods", "load.pods"}, {"disruption", "disruptions"},
	{"prestop-sleep", "a variant's preStop"}, {"grace", "a variant's terminationGracePeriodSeconds"},
	{"max-failure-ratio", "a variant's expect.maxFailureRatio"},
	{"min-success-ratio-per-disruption", "a variant's expect.minSuccessRatioPerDisruption"},
}

// FileFields are the flags of FileFlags given on this command line, each with its field:
// "--rate (load.rate)".
func (f *Flags) FileFields() []string {
	var out []string
	for _, ff := range FileFlags {
		if f.given(ff.Flag) {
			dash := "--"
			if len(ff.Flag) == 1 {
				dash = "-"
			}
			out = append(out, fmt.Sprintf("%s%s (%s)", dash, ff.Flag, ff.Field))
		}
	}
	return out
}

// flagsCheck is the check the flags-only form describes: one app, one variant ("as-is", or
// the preStop sleep and grace period given), the disruptions given (default rollout-restart×3).
func (f *Flags) flagsCheck() (*spec.Check, error) {
	c := &spec.Check{APIVersion: spec.APIVersion, Kind: spec.Kind}
	c.Metadata.Name = "check"
	c.App = spec.App{Manifests: f.Manifests, Images: f.Images, Deployment: f.Deployment, Container: f.Container, Port: int32(f.Port), Path: f.Path}
	c.Load = spec.LoadSettings{Rate: f.Rate, Method: f.Method, KeepAlive: f.KeepAlive, From: f.LoadFrom, Pods: f.LoadPods}
	var errs []string
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--timeout %q: %v", f.Timeout, err))
		}
		c.Load.Timeout = &metav1.Duration{Duration: d}
	}
	disruptions := f.Disruptions
	if len(disruptions) == 0 {
		disruptions = Multi{string(check.RolloutRestart)}
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
	prestop := f.PreStop
	if prestop != "" {
		d, err := time.ParseDuration(prestop)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--prestop-sleep %q: %v", prestop, err))
		}
		v.Name = "prestop-" + strings.ReplaceAll(prestop, ".", "-")
		v.PreStop = &spec.PreStop{Sleep: &metav1.Duration{Duration: d}}
	}
	if f.Grace.Given {
		g := int64(f.Grace.Value)
		v.TerminationGracePeriodSeconds = &g
		if prestop == "" {
			v.Name = fmt.Sprintf("grace-%ds", g)
		}
	}
	maxRatio, minPer := f.MaxFailureRatio.Value, f.MinPerDisruption.Value
	switch {
	case f.MaxFailureRatio.Given:
		v.Expect.MaxFailureRatio = &maxRatio
	case !f.MinPerDisruption.Given:
		zero := 0
		v.Expect.Failures = &zero
	}
	if f.MinPerDisruption.Given {
		v.Expect.MinSuccessRatioPerDisruption = &minPer
	}
	c.Variants = []spec.Variant{v}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return c, nil
}
