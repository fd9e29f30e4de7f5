// Package spec reads rollcheck's check files: YAML in Kubernetes style (apiVersion
// rollcheck.io/v1alpha1, kind Check) that names a user's app (manifests, images, port, path; or
// a Deployment that runs already, checked in place), the load, the disruptions and the variants of the app's configuration to compare, and turns
// them into engine Plans: one per variant and disruption, the rows of the conformance table.
//
// Decoding is strict and case-sensitive, as Kubernetes' own: an unknown, duplicated or miscased
// field is an error, and an explicit zero is validated as a value, not taken for the default. Validation reports every
// problem at once, on one line, before any Docker or cluster work.
package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/manifest"
	"github.com/rollcheck/rollcheck/internal/selfimage"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// APIVersion and Kind of a check file.
const (
	APIVersion = "rollcheck.io/v1alpha1"
	Kind       = "Check"
)

// DefaultDockerfile is the Dockerfile an app.build entry builds when it names none.
const DefaultDockerfile = "Dockerfile"

// Check is a check file.
//
// Every field has a doc comment: docs/check-file.md is generated from them (go generate
// ./internal/refdoc), and a field without one fails its test. A default the code holds in a
// constant is read from the constant; any other default is said in the comment as "(default
// …)".
type Check struct {
	// APIVersion is rollcheck.io/v1alpha1, the only version there is.
	APIVersion string `json:"apiVersion"`
	// Kind is Check.
	Kind string `json:"kind"`
	// Metadata names the check.
	Metadata struct {
		// Name names the check in reports and is the suite of its rows: 1 to 40 lower-case
		// letters, digits and dashes, starting and ending with a letter or digit (a DNS label of
		// at most 40 characters) (default the check file's name without its extension, which
		// must then be such a name: my-check.yaml is my-check, my_check.yaml is refused).
		Name string `json:"name,omitempty"`
	} `json:"metadata,omitempty"`
	// App is the app under test: its manifests, images, port and path.
	App App `json:"app"`
	// Load is the constant load sent while the disruptions run.
	Load LoadSettings `json:"load,omitempty"`
	// Disruptions are how the pods are taken away, each kind at most once: every variant runs
	// under each of them, a row each.
	Disruptions []Disruption `json:"disruptions"`
	// Quiet is the quiet time: how long the load runs before the first disruption and after
	// the last one settled, a Go duration (5s, 1m30s); more than 0.
	Quiet *metav1.Duration `json:"quiet,omitempty"`
	// Settle is quiet's former name: still read, with a warning; refused beside quiet.
	//
	// Deprecated: use quiet.
	Settle *metav1.Duration `json:"settle,omitempty"`
	// Repeat runs every row this many times, 1 to 20 (default 1): the report gives each row's
	// runs, pooled failure ratio with its interval and verdict stability.
	Repeat int `json:"repeat,omitempty"`
	// Variants are the configurations of the app to compare, each with its expected outcome: an
	// as-is variant with only a name and expect checks the manifests unchanged.
	Variants []Variant `json:"variants"`
	// Cluster, when set, is an existing cluster to check on instead of a kind cluster rollcheck
	// creates (rollcheck check --kubeconfig or --context replaces it).
	Cluster *ClusterSettings `json:"cluster,omitempty"`

	// dir is the directory relative paths are resolved against.
	dir string
	// zeros are the fields the file set to an explicit 0 where leaving them out means a
	// default: each a problem Plans reports.
	zeros []string
}

// App is the app under test.
type App struct {
	// Manifests are the app's manifests (paths relative to the check file): YAML or JSON files,
	// directories (their .yaml, .yml and .json files, not their subdirectories) and
	// kustomizations (a directory with a kustomization.yaml, rendered as kubectl kustomize
	// renders it): the Deployment and whatever it needs. Required, unless namespace names where
	// the app already runs.
	Manifests []string `json:"manifests,omitempty"`
	// Deployment names the Deployment under test when the manifests hold several; with
	// namespace, the Deployment there (required then).
	Deployment string `json:"deployment,omitempty"`
	// Rollout, with namespace, names an Argo Rollout there checked in place instead of a
	// Deployment (deployment stays empty then): a variant that changes it writes its pod template
	// and replicas, a new revision that Argo rolls out by the Rollout's own strategy before the row
	// goes on; rollout-restart is Argo's restart (spec.restartAt); it is restored after each row
	// as a Deployment is (docs/in-place.md, "An Argo Rollout").
	Rollout string `json:"rollout,omitempty"`
	// Namespace, when set, is where the app already runs: its Deployment (deployment) is
	// checked in place, as its clients reach it, and manifests, images and build stay empty.
	// Nothing of the app is applied; a variant that changes the Deployment runs only with
	// rollcheck check --in-place, and the Deployment's spec is restored after each row
	// (docs/in-place.md).
	Namespace string `json:"namespace,omitempty"`
	// Service names the app's Service in namespace that the load goes to (in place only), at
	// SERVICE.NAMESPACE.svc from the load pods (default the one Service in namespace whose
	// selector selects the Deployment's pods).
	Service string `json:"service,omitempty"`
	// Images are loaded into rollcheck's kind cluster from the local Docker engine; never into an
	// existing cluster, whose nodes must pull them or hold them already.
	Images []string `json:"images,omitempty"`
	// Build are images built with docker build before the check (and then loaded).
	Build []Build `json:"build,omitempty"`
	// Port is the container port the load is sent to; a container of the Deployment (or a
	// native sidecar) must declare it.
	Port int32 `json:"port"`
	// Path is the request path, starting with "/" (load.url's path replaces it).
	Path string `json:"path,omitempty"`
	// Container names the app's container when the one that declares port is a sidecar in
	// front of it (a proxy): the variants' preStop goes to the app, and the sidecar's exit is
	// timed and blamed for the failures after it.
	Container string `json:"container,omitempty"`
	// PodHeader is the response header in which the app names the pod that answered (the
	// sample app: its POD_NAME from the downward API; over gRPC, the metadata key of this
	// name in lower case). An app that sends none works too: the serving wait, the data-plane
	// propagation, telling a proxy's own 5xx from the app's and matching a failure to the pod
	// that answered it then go without, and the report marks its rows ‡ (docs/reference.md,
	// "What your app can tell rollcheck").
	PodHeader string `json:"podHeader,omitempty"`
}

// Build is one image to build from a directory with a Dockerfile.
type Build struct {
	// Context is the build's context directory (relative to the check file).
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's path relative to context.
	Dockerfile string `json:"dockerfile,omitempty"`
	// Image is the reference the image is tagged with (docker build -t), then loaded into the
	// cluster: a manifest's container names it.
	Image string `json:"image"`
}

// LoadSettings is the constant load.
type LoadSettings struct {
	// Protocol is what the load speaks: http1 (default), h2c (HTTP/2 over cleartext), http2
	// (HTTP/2 over TLS, ALPN h2, the certificate not verified: an app serving TLS with a
	// self-signed certificate is checked as it runs; its readiness probe, in your manifest, says
	// scheme: HTTPS) or grpc (unary RPCs to the app's port).
	Protocol string `json:"protocol,omitempty"`
	// GRPC is how a grpc load calls and balances: method (the standard health check unless
	// named), message (the request in protobuf's wire format, base64), balancing (pick_first:
	// one connection through rollcheck's Service; round_robin: the client resolves a headless
	// Service of the app and picks a pod per RPC; from: cluster), waitForReady and retry.
	GRPC *check.GRPCLoad `json:"grpc,omitempty"`
	// Rate is the requests (RPCs) per second, sent at a constant rate.
	Rate int `json:"rate,omitempty"`
	// Method is GET or POST. With keepAlive, Go's client silently sends a GET again whose
	// reused connection died, which hides those failures (the table marks such rows †): POST
	// shows them.
	Method string `json:"method,omitempty"`
	// KeepAlive reuses connections between requests; off, every request opens its own.
	KeepAlive bool `json:"keepAlive,omitempty"`
	// From is where the load is sent from: host (default) or cluster (a load pod).
	From string `json:"from,omitempty"`
	// Pods is how many load pods share the rate, 1 to 10 (from: cluster only) (default 1).
	Pods int `json:"pods,omitempty"`
	// Entry: node sends the load from the host to the NodePort of one node that runs your pods
	// (on kind, the first worker's), instead of the cluster's default address; needs workers.
	Entry string `json:"entry,omitempty"`
	// Timeout is each request's timeout, a Go duration; more than 0. Short, so that a
	// black-holed request fails in its own second.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// URL sends the load to an address in front of the app instead of rollcheck's own Service:
	// a proxy, an ingress or a gateway (from a load pod, a Service of the manifests by its short
	// name, "http://front/"). Its path replaces app.path.
	URL string `json:"url,omitempty"`
	// Host is the Host header of every request (an ingress rule's host); needs url.
	Host string `json:"host,omitempty"`
	// UpstreamHeader is the response header in which the proxy at url names the pod address it
	// sent each request to (nginx: add_header X-Upstream $upstream_addr always); needs url.
	UpstreamHeader string `json:"upstreamHeader,omitempty"`
	// Resolve is the DNS name the proxy at url resolves to find your pods (a headless Service),
	// which the load pods ask the cluster's DNS for too: the report gives when the DNS stopped
	// answering with each deleted pod's address, and its TTL. Without url (the load goes to
	// rollcheck's Service) the name is asked and its DNS window measured only (the row's
	// explanation, rollcheck windows extract): the recommendation and the verdict do not read
	// it. Needs from: cluster; with app.namespace, a full name (web-headless.shop.svc).
	Resolve string `json:"resolve,omitempty"`
	// ResolveRefresh is how long the proxy at url keeps an answer for resolve before it
	// resolves the name again (nginx: resolver valid=; HAProxy: timeout resolve; Caddy: dynamic
	// refresh), when you know it: the recommendation bounds how long the proxy sends to a
	// deleted pod by the DNS window plus it. Left out, the TTL of the DNS answers stands in, and
	// the recommendation says so. Needs resolve and url.
	ResolveRefresh *metav1.Duration `json:"resolveRefresh,omitempty"`
}

// ClusterSettings name an existing cluster, as kubectl does, by a kubeconfig file, a context of
// it, or both: rollcheck creates no cluster on it, loads no image into it, creates only its own
// namespaces there (and cordons a node a drain row drains, uncordoning it after) and sends load
// from inside only (a load pod).
type ClusterSettings struct {
	// Kubeconfig is the cluster's kubeconfig file (a path relative to the check file), the only
	// file read. Left out, the context is looked up as kubectl does: in the files KUBECONFIG
	// lists, merged, else in ~/.kube/config.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Context is the kubeconfig's context to use; left out, its current context.
	Context string `json:"context,omitempty"`
	// LoadImage is the load pod's image (rollcheck agent load: rollcheck cluster load-image
	// makes one), one the cluster can pull; ROLLCHECK_LOAD_IMAGE overrides it. Left out,
	// rollcheck makes it of its own executable and loads it into a kind cluster's nodes, or
	// pushes it to imageRegistry.
	LoadImage string `json:"loadImage,omitempty"`
	// ImageRegistry is the registry (host[:port][/path], no scheme) rollcheck pushes the load
	// image it makes to, as REGISTRY/rollcheck/load:<tag>, when the cluster is not a kind
	// cluster it can load into; the credentials are those of your Docker config, and plain HTTP
	// is used for localhost and 127.0.0.1 only. --image-registry overrides it.
	ImageRegistry string `json:"imageRegistry,omitempty"`
}

// KubeconfigPath is the cluster section's kubeconfig resolved against the check file's
// directory; empty without a cluster section or a kubeconfig in it.
func (c *Check) KubeconfigPath() string {
	if c.Cluster == nil || c.Cluster.Kubeconfig == "" {
		return ""
	}
	return c.path(c.Cluster.Kubeconfig)
}

// Disruption is one kind of disruption and how many times to repeat it.
type Disruption struct {
	// Kind is what takes the pods away (docs/reference.md, "What a row does").
	Kind check.DisruptionKind `json:"kind"`
	// Count is how many times the disruption is done in a row, each waiting until the
	// Deployment settled.
	Count int `json:"count,omitempty"`
	// DrainTimeout bounds each drain of drain-node, a Go duration: a drain not finished by then
	// is blocked, the node uncordoned.
	DrainTimeout *metav1.Duration `json:"drainTimeout,omitempty"`
	// Node: entry drains the node the load enters at (load entry: node) instead of the node
	// that runs the most ready pods (drain-node only).
	Node string `json:"node,omitempty"`
}

// Variant is the app's Deployment with a change, and what it must achieve.
type Variant struct {
	// Name names the variant in the reports (the row's scenario): 1 to 40 lower-case letters,
	// digits and dashes, starting and ending with a letter or digit; unique in the file.
	Name string `json:"name"`
	// Why says what the variant shows or why it is expected to do what expect says: the HTML
	// timeline shows it above the row's chart, and each row's JSON keeps it (config.why).
	Why string `json:"why,omitempty"`
	// PreStop replaces the app container's preStop hook: {none: true}, {sleep: 5s} (the
	// native sleep action), {exec: [cmd, args...]} or {httpGet: /path}.
	PreStop *PreStop `json:"preStop,omitempty"`
	// StopSignal sets the app container's lifecycle.stopSignal (SIGQUIT, SIGINT, …): Kubernetes
	// 1.33+, alpha behind the ContainerStopSignals gate (on in rollcheck's kind cluster), and a
	// runtime that supports it.
	StopSignal string `json:"stopSignal,omitempty"`
	// TerminationGracePeriodSeconds replaces the pod template's grace period, in seconds
	// (default the manifest's).
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Replicas replaces the Deployment's replicas (default the manifest's).
	Replicas *int32 `json:"replicas,omitempty"`
	// PDB is a PodDisruptionBudget rollcheck creates with the row, selecting the Deployment's
	// pods: {maxUnavailable: 1} or {minAvailable: 50%}, exactly one of the two.
	PDB *PDB `json:"pdb,omitempty"`
	// ExternalTrafficPolicy of rollcheck's load Service: Cluster (default) or Local, which
	// needs load from the host with entry: node.
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
	// Patch is a strategic-merge patch of the Deployment, for anything else (env, args,
	// probes), applied after the fields above and decoded strictly.
	Patch json.RawMessage `json:"patch,omitempty"`
	// Expect is the outcome the variant must produce under every disruption.
	Expect Expect `json:"expect"`
}

// PreStop is a preStop hook; set one field.
type PreStop struct {
	// None removes any preStop hook the manifest has.
	None bool `json:"none,omitempty"`
	// Sleep is Kubernetes' native sleep action, a Go duration in whole seconds, more than 0: no
	// shell or sleep binary needed in the image.
	Sleep *metav1.Duration `json:"sleep,omitempty"`
	// Exec runs this command in the app's container: [cmd, args...].
	Exec []string `json:"exec,omitempty"`
	// HTTPGet is a path the kubelet GETs on the app's port (over HTTPS with load.protocol
	// http2).
	HTTPGet string `json:"httpGet,omitempty"`
}

// PDB is a PodDisruptionBudget of the app's pods: a number of pods or a percentage.
type PDB struct {
	// MinAvailable is how many of the app's pods must stay available: a count or a percentage
	// ("50%").
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable is how many of the app's pods may be unavailable at once: a count or a
	// percentage.
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Expect is a variant's threshold: one of failures (only 0), maxFailureRatio and
// failuresExpected, and optionally minSuccessRatioPerDisruption and maxDisruptionSeconds.
type Expect struct {
	// Failures: 0 means no request may fail. 0 is the only value taken: bound a share with
	// maxFailureRatio.
	Failures *int `json:"failures,omitempty"`
	// MaxFailureRatio bounds the failed share of all requests (0.01 is 1 %).
	MaxFailureRatio *float64 `json:"maxFailureRatio,omitempty"`
	// FailuresExpected makes the variant a negative control: failures must show, mostly of
	// these classes (none listed: any class).
	FailuresExpected *FailuresExpected `json:"failuresExpected,omitempty"`
	// MinSuccessRatioPerDisruption is required of every single disruption's requests.
	MinSuccessRatioPerDisruption *float64 `json:"minSuccessRatioPerDisruption,omitempty"`
	// MaxDisruptionSeconds bounds the one-second windows that hold a failure.
	MaxDisruptionSeconds *int `json:"maxDisruptionSeconds,omitempty"`
	// DrainBlocked, with failures: 0 and a drain-node disruption, expects every drain to be
	// blocked: the PodDisruptionBudget refuses the evictions until the drain's timeout.
	DrainBlocked bool `json:"drainBlocked,omitempty"`
}

// FailuresExpected is a negative control's expectation.
type FailuresExpected struct {
	// Classes are the failure classes most failures must be of (refused, reset, eof, timeout,
	// http_5NN, …; none listed: any class).
	Classes []loadgen.Class `json:"classes,omitempty"`
	// Phases name the mechanism: at least 80 % of the failures must be attributed to these
	// termination phases (docs/reference.md, "Why a request failed").
	// With several, the first is the one the variant is for and at least 25 % of the failures must be in it;
	// the others it accepts besides (check.Outcome.Mechanism).
	Phases []timeline.Phase `json:"phases,omitempty"`
}

// Load reads and strictly decodes a check file. It does not validate it: Plans does.
func Load(path string) (*Check, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("check file: %w", err)
	}
	c, err := Parse(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Metadata.Name == "" {
		c.Metadata.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return c, nil
}

// Parse strictly decodes a check file's contents; dir is the directory relative paths in it
// are resolved against. Strict as Kubernetes' own decoding (sigs.k8s.io/json): keys match
// their field's name exactly (RATE or Load is no field), and an unknown or duplicated key is an
// error; every such key is named at once.
func Parse(data []byte, dir string) (*Check, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, errors.New(cleanYAMLError(err))
	}
	var c Check
	strict, err := sigsjson.UnmarshalStrict(j, &c, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, errors.New(cleanYAMLError(err))
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = cleanYAMLError(e)
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	// An explicit zero is a value like any other, validated by Plans, not the default that
	// leaving the field out gives.
	var given struct {
		Load struct {
			Rate *int `json:"rate"`
			Pods *int `json:"pods"`
		} `json:"load"`
		Repeat      *int `json:"repeat"`
		Disruptions []struct {
			Count *int `json:"count"`
		} `json:"disruptions"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &given); err == nil {
		zero := func(v *int) bool { return v != nil && *v == 0 }
		if zero(given.Load.Rate) {
			c.zeros = append(c.zeros, fmt.Sprintf("load.rate 0: want requests per second above 0 (leave it out for %d)", check.DefaultRate))
		}
		if zero(given.Load.Pods) {
			c.zeros = append(c.zeros, fmt.Sprintf("load.pods 0: want 1 to %d (leave it out for 1)", check.MaxLoadPods))
		}
		if zero(given.Repeat) {
			c.zeros = append(c.zeros, fmt.Sprintf("repeat 0: want 1 to %d (leave it out for 1)", check.MaxRepeat))
		}
		for i, d := range given.Disruptions {
			if zero(d.Count) {
				c.zeros = append(c.zeros, fmt.Sprintf("disruptions[%d].count 0: want 1 or more (leave it out for %d)", i, check.DefaultCount))
			}
		}
	}
	c.dir = dir
	return &c, nil
}

// cleanYAMLError shortens sigs.k8s.io/yaml's nested messages to one line.
func cleanYAMLError(err error) string {
	msg := err.Error()
	for _, p := range []string{"error unmarshaling JSON: while decoding JSON: ", "error converting YAML to JSON: ", "yaml: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	msg = strings.ReplaceAll(msg, "json: ", "")
	return strings.Join(strings.Fields(msg), " ")
}

// Name is the check's name, used as the suite of its rows.
func (c *Check) Name() string {
	if c.Metadata.Name != "" {
		return c.Metadata.Name
	}
	return "check"
}

// Images are the images the check loads into the cluster: those listed and those built.
func (c *Check) Images() []string {
	imgs := slices.Clone(c.App.Images)
	for _, b := range c.App.Build {
		if !slices.Contains(imgs, b.Image) {
			imgs = append(imgs, b.Image)
		}
	}
	return imgs
}

// BuildDir is a Build's context directory, resolved against the check file's directory.
func (c *Check) BuildDir(b Build) string { return c.path(b.Context) }

func (c *Check) path(p string) string {
	if filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

// Plans validates the check and returns its rows resolved (check.Plan.Resolve), variant by
// variant and, within a variant, disruption by disruption. Every problem is reported at once, on
// one line. Warnings are allowed but weaken the verdicts (a Deployment without a readiness
// probe).
func (c *Check) Plans() (plans []*check.Resolved, warnings []string, err error) {
	return c.PlansWith(nil)
}

// PlansWith is Plans with adjust applied to each row's plan before it is resolved: what a front
// end knows that the file does not say (an existing cluster named by a flag, whose load comes
// from load pods and which is loaded no images; the revision of a Rollout a gate checks). adjust
// may be nil.
func (c *Check) PlansWith(adjust func(*check.Plan)) (plans []*check.Resolved, warnings []string, err error) {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if c.APIVersion != APIVersion {
		bad("apiVersion %q: want %s", c.APIVersion, APIVersion)
	}
	if c.Kind != Kind {
		bad("kind %q: want %s", c.Kind, Kind)
	}
	if err := check.ValidName(c.Name()); err != nil {
		bad("metadata.name %v", err)
	}
	inPlace := c.App.Namespace != ""
	var objs []check.Object
	if inPlace {
		if len(c.App.Manifests) > 0 || len(c.App.Images) > 0 || len(c.App.Build) > 0 {
			bad("app.namespace %s: the app runs there already; leave app.manifests, app.images and app.build empty", c.App.Namespace)
		}
		if c.App.Rollout != "" && c.App.Deployment != "" {
			bad("app.deployment %s and app.rollout %s: name one workload", c.App.Deployment, c.App.Rollout)
		}
	} else {
		if c.App.Service != "" {
			bad("app.service %s: only with app.namespace (an app checked where it already runs)", c.App.Service)
		}
		if c.App.Rollout != "" {
			bad("app.rollout %s: only with app.namespace (an Argo Rollout is checked where it runs)", c.App.Rollout)
		}
		var err error
		if objs, err = c.objects(); err != nil {
			bad("%v", err)
		}
	}
	for i, b := range c.App.Build {
		if b.Context == "" || b.Image == "" {
			bad("app.build[%d]: context and image are required", i)
			continue
		}
		df := b.Dockerfile
		if df == "" {
			df = DefaultDockerfile
		}
		if _, err := os.Stat(filepath.Join(c.path(b.Context), df)); err != nil {
			bad("app.build[%d]: no %s in %s", i, df, c.path(b.Context))
		}
	}
	if len(c.Disruptions) == 0 {
		bad("disruptions: none listed")
	}
	if c.Repeat < 0 || c.Repeat > check.MaxRepeat {
		bad("repeat %d: want 1 to %d", c.Repeat, check.MaxRepeat)
	}
	for _, z := range c.zeros {
		bad("%s", z)
	}
	if len(c.Variants) == 0 {
		bad("variants: none listed (an as-is variant with only a name and expect checks the manifests unchanged)")
	}
	seen := map[string]bool{}
	for i, v := range c.Variants {
		if seen[v.Name] {
			bad("variants[%d]: name %q used twice", i, v.Name)
		}
		seen[v.Name] = true
	}
	seenD := map[check.DisruptionKind]bool{}
	for i, d := range c.Disruptions {
		if seenD[d.Kind] {
			bad("disruptions[%d]: %s listed twice", i, d.Kind)
		}
		seenD[d.Kind] = true
	}
	load, lerr := c.Load.engine()
	if lerr != nil {
		bad("%v", lerr)
	}
	if cs := c.Cluster; cs != nil {
		switch {
		case cs.Kubeconfig == "" && cs.Context == "":
			bad("cluster: name the existing cluster by kubeconfig (a file), context (one of KUBECONFIG's files, else of ~/.kube/config) or both")
		case cs.Kubeconfig != "":
			if st, err := os.Stat(c.KubeconfigPath()); err != nil || st.IsDir() {
				bad("cluster.kubeconfig %s: no such file", c.KubeconfigPath())
			}
		}
		if cs.ImageRegistry != "" {
			if err := selfimage.ValidRegistry(cs.ImageRegistry); err != nil {
				bad("cluster.imageRegistry %q: %v", cs.ImageRegistry, err)
			}
		}
		if cs.LoadImage != "" {
			if err := check.ValidLoadImage(cs.LoadImage); err != nil {
				bad("cluster.loadImage %q: %v", cs.LoadImage, err)
			}
		}
		if load.From == check.LoadFromHost {
			bad("load.from host: an existing cluster (cluster:) is loaded from inside only")
		}
		load.From = check.LoadFromCluster
		if len(c.Images()) > 0 {
			warnings = append(warnings, "app.images and app.build are not loaded into an existing cluster (cluster:): it pulls the manifests' images as their pull policies say")
		}
	}
	quiet, qerr, qwarn := c.quiet()
	if qerr != "" {
		bad("%s", qerr)
	}
	if qwarn != "" {
		warnings = append(warnings, qwarn)
	}
	if inPlace && load.From == "" && load.URL == "" {
		load.From = check.LoadFromCluster // no NodePort of rollcheck's reaches an app in place
	}
	app := check.App{Objects: objs, Deployment: c.App.Deployment, Port: c.App.Port, Path: c.App.Path, Container: c.App.Container,
		Images: c.Images(), PodHeader: c.App.PodHeader, Namespace: c.App.Namespace, Service: c.App.Service}
	if inPlace {
		app.Images = nil // said above
	}
	if c.App.Rollout != "" && inPlace {
		app.Deployment, app.Kind = c.App.Rollout, check.KindRollout
	}
	if c.App.Path == "" {
		app.Path = check.DefaultPath
	}
	if app.PodHeader == "" {
		app.PodHeader = loadgen.DefaultPodHeader
	}
	plans, vwarnings, verrs := c.variantPlans(check.Plan{Suite: c.Name(), App: app, Load: load, Quiet: quiet}, objs != nil || inPlace, adjust)
	warnings = append(warnings, vwarnings...)
	errs = append(errs, verrs...)
	if len(errs) > 0 {
		return nil, warnings, errors.New(strings.Join(errs, "; "))
	}
	return plans, warnings, nil
}

// quiet is the check's quiet time (0: the default), from quiet or from its former name,
// settle, which gives a warning; both set, or a value not above 0, is a problem.
func (c *Check) quiet() (d time.Duration, problem, warning string) {
	key, v := "quiet", c.Quiet
	switch {
	case c.Settle != nil && c.Quiet != nil:
		return 0, "settle and quiet: settle is quiet's former name; give quiet only", ""
	case c.Settle != nil:
		key, v = "settle", c.Settle
		warning = "settle: deprecated, now named quiet (the same quiet time): rename it"
	case v == nil:
		return 0, "", ""
	}
	if v.Duration <= 0 {
		return 0, fmt.Sprintf("%s %s: want more than 0", key, v.Duration), warning
	}
	return v.Duration, "", warning
}

// variantPlans builds and validates the rows of every variant under every disruption from the
// base Plan (suite, app, load, quiet time), each adjusted (if adjust is not nil) before it is
// resolved. A problem every variant has is the app's own: said once,
// without a variant's name. manifestsOK is false when the manifests did not decode (their error
// is reported already): the variants are then checked on their own only.
func (c *Check) variantPlans(base check.Plan, manifestsOK bool, adjust func(*check.Plan)) (plans []*check.Resolved, warnings, errs []string) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	type problem struct{ variant, msg string }
	var found []problem
	count := map[string]map[string]bool{}
	valid := 0
	for vi, v := range c.Variants {
		ev, verr := v.engine()
		if verr != nil {
			bad("variants[%d] (%s): %v", vi, v.Name, verr)
			// The rest of the variant is still checked: every problem at once.
			ev.Expect = check.Zero()
		}
		valid++
		for _, d := range c.Disruptions {
			p := base
			p.Variant, p.Disruption = ev, check.Disruption{Kind: d.Kind, Count: d.Count, Node: check.DrainTarget(d.Node)}
			if d.DrainTimeout != nil {
				p.Disruption.DrainTimeout = d.DrainTimeout.Duration
			}
			if !manifestsOK {
				continue // the manifests' own error is reported above
			}
			if adjust != nil {
				adjust(&p)
			}
			res, perr := p.Resolve()
			var ws []string
			if res != nil {
				ws = res.Warnings()
			}
			for _, w := range ws {
				if !slices.Contains(warnings, w) {
					warnings = append(warnings, w)
				}
			}
			if perr != nil {
				for _, m := range problemsOf(perr) {
					if count[m] == nil {
						count[m] = map[string]bool{}
					}
					if !count[m][v.Name] {
						count[m][v.Name] = true
						found = append(found, problem{v.Name, m})
					}
				}
				continue
			}
			if c.Repeat <= 1 {
				plans = append(plans, res)
				continue
			}
			for k := 1; k <= c.Repeat; k++ {
				rk, err := res.Repeated(k) // c.Repeat is within range: checked above
				if err != nil {
					bad("variant %s: %v", v.Name, err)
					break
				}
				plans = append(plans, rk)
			}
		}
	}
	said := map[string]bool{}
	for _, f := range found {
		switch {
		case len(count[f.msg]) == valid && valid > 1:
			if !said[f.msg] {
				said[f.msg] = true
				bad("%s", f.msg)
			}
		default:
			bad("variant %s: %s", f.variant, f.msg)
		}
	}
	return plans, warnings, errs
}

// problemsOf lists the problems of a Plan.Check error, without the variant's name that
// prefixes it.
func problemsOf(err error) []string {
	var u interface{ Unwrap() []error }
	if errors.As(err, &u) {
		var out []string
		for _, e := range u.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	_, msg, _ := strings.Cut(err.Error(), ": ")
	return []string{msg}
}

// objects reads the manifests.
func (c *Check) objects() ([]check.Object, error) {
	if len(c.App.Manifests) == 0 {
		return nil, errors.New("app.manifests: none listed")
	}
	var objs []check.Object
	var errs []string
	for _, m := range c.App.Manifests {
		docs, err := manifest.Read(c.path(m))
		var got []k8s.Object
		if err == nil {
			got, err = manifest.Objects(docs)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("app.manifests: %v", err))
			continue
		}
		for _, o := range got {
			objs = append(objs, o.(check.Object))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return objs, nil
}

func (l LoadSettings) engine() (check.Load, error) {
	out := check.Load{Rate: l.Rate, Method: strings.ToUpper(l.Method), KeepAlive: l.KeepAlive, From: check.LoadFrom(l.From), Pods: l.Pods,
		Entry: check.LoadEntry(l.Entry), URL: l.URL, Host: l.Host, UpstreamHeader: l.UpstreamHeader, Resolve: l.Resolve, Protocol: loadgen.Protocol(l.Protocol)}
	if l.GRPC != nil {
		out.GRPC = *l.GRPC
	}
	if l.Timeout != nil {
		if l.Timeout.Duration <= 0 {
			return out, fmt.Errorf("load.timeout %s: want more than 0", l.Timeout.Duration)
		}
		out.Timeout = l.Timeout.Duration
	}
	if r := l.ResolveRefresh; r != nil {
		if r.Duration <= 0 {
			return out, fmt.Errorf("load.resolveRefresh %s: want more than 0", r.Duration)
		}
		out.ResolveRefresh, out.ResolveSetting = r.Duration, fmt.Sprintf("the proxy's refresh %s (load.resolveRefresh)", r.Duration)
	}
	return out, nil
}

func (v Variant) engine() (check.Variant, error) {
	out := check.Variant{Name: v.Name, Why: v.Why, StopSignal: v.StopSignal, TerminationGracePeriodSeconds: v.TerminationGracePeriodSeconds,
		Replicas: v.Replicas, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicy(v.ExternalTrafficPolicy)}
	if b := v.PDB; b != nil {
		out.PDB = &check.PDB{MinAvailable: b.MinAvailable, MaxUnavailable: b.MaxUnavailable}
	}
	if len(v.Patch) > 0 && string(v.Patch) != "null" {
		out.Patch = v.Patch
	}
	if ps := v.PreStop; ps != nil {
		out.PreStop = &check.PreStop{None: ps.None, Exec: ps.Exec, HTTPGet: ps.HTTPGet}
		if ps.Sleep != nil {
			out.PreStop.Sleep = ps.Sleep.Duration
			if ps.Sleep.Duration == 0 {
				return out, errors.New("preStop sleep 0s: use preStop {none: true} for no hook")
			}
		}
	}
	o, err := v.Expect.outcome()
	out.Expect = o
	return out, err
}

func (e Expect) outcome() (check.Outcome, error) {
	var o check.Outcome
	n := 0
	if e.Failures != nil {
		n++
		if *e.Failures != 0 {
			return o, fmt.Errorf("expect.failures %d: only 0 is supported (bound a share with maxFailureRatio)", *e.Failures)
		}
		o = check.Zero()
	}
	if e.MaxFailureRatio != nil {
		n++
		o = check.AtMost(*e.MaxFailureRatio)
	}
	if e.FailuresExpected != nil {
		n++
		o = check.Failures(e.FailuresExpected.Classes...).ByPhase(e.FailuresExpected.Phases...)
	}
	if n > 1 {
		return o, errors.New("expect: set at most one of failures, maxFailureRatio and failuresExpected")
	}
	if n == 0 {
		if e.MinSuccessRatioPerDisruption == nil && e.MaxDisruptionSeconds == nil {
			return o, errors.New("expect: empty (want failures: 0, maxFailureRatio, failuresExpected, minSuccessRatioPerDisruption or maxDisruptionSeconds)")
		}
		o = check.Bounds()
	}
	if r := e.MinSuccessRatioPerDisruption; r != nil {
		if *r <= 0 {
			return o, fmt.Errorf("expect.minSuccessRatioPerDisruption %v: want more than 0 and at most 1", *r)
		}
		o = o.WithMinSuccessRatioPerDisruption(*r)
	}
	if s := e.MaxDisruptionSeconds; s != nil {
		o = o.WithMaxDisruptionSeconds(*s)
	}
	if e.DrainBlocked {
		o = o.WithDrainBlocked()
	}
	return o, o.Validate()
}
