package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Object is a Kubernetes object of an app's manifests: typed (a *appsv1.Deployment, a
// *corev1.Service, …) as e2e-framework's decoder or client-go's scheme give them. It is the
// same method set as controller-runtime's client.Object, so either converts to the other.
type Object interface {
	metav1.Object
	runtime.Object
}

// DisruptionKind is how pods are taken away while the load runs; what each does and asks of a
// plan is its entry of Disruptions (DisruptionKind.Info).
type DisruptionKind string

// Disruption kinds (a new one is an entry of Disruptions too).
const (
	RolloutRestart DisruptionKind = "rollout-restart" // kubectl rollout restart: roll every pod
	DeletePod      DisruptionKind = "delete-pod"      // delete one pod gracefully
	ForceDelete    DisruptionKind = "force-delete"    // delete one pod with grace period 0
	ScaleDown      DisruptionKind = "scale-down"      // scale down by one, then back up
	// ScaleToZero scales the Deployment to 0 replicas, waits until every pod is gone, then scales
	// it back and waits until it settled: every endpoint of the Service terminates at once, and
	// nothing answers from the last pod's exit until the first new one is ready (no-endpoint).
	ScaleToZero DisruptionKind = "scale-to-zero"
	// KubeletRestart deletes one pod gracefully and, KubeletRestartAfter later, while it
	// terminates, restarts the kubelet of its node: only a front end that can do that (kind)
	// runs it (an engine.Target whose Cluster is an engine.KubeletRestarter).
	KubeletRestart DisruptionKind = "kubelet-restart"
	// DrainNode drains the app off one node as kubectl drain does, through the eviction API
	// (policy/v1), so that PodDisruptionBudgets decide how many pods may go at once: it cordons
	// the node that runs the most ready pods of the app (or the one Disruption.Node names),
	// evicts every pod of the app on it
	// (retrying an eviction a budget refuses with 429 every DrainRetry), waits until they are
	// gone, uncordons the node and waits until the Deployment settled. Only the app's pods are
	// evicted: other pods on the node stay. A drain that does not finish within
	// Disruption.DrainTimeout is blocked: the node is uncordoned and the row goes on.
	DrainNode DisruptionKind = "drain-node"
)

// DrainRetry is how long a drain-node disruption waits before asking again for an eviction
// that a PodDisruptionBudget refused (429 Too Many Requests): kubectl drain's 5 s.
const DrainRetry = 5 * time.Second

// DefaultDrainTimeout is how long a drain-node disruption may take to evict the app's pods on
// the node and see them gone before it counts as blocked (Disruption.DrainTimeout).
const DefaultDrainTimeout = 60 * time.Second

// KubeletRestartAfter is how long after the deletion a kubelet-restart disruption restarts the
// kubelet: inside the grace period of any Deployment it may run on (Validate asks for more).
const KubeletRestartAfter = 3 * time.Second

// Defaults for the fields a Plan may leave zero.
const (
	DefaultCount = 3
	DefaultRate  = 100
	DefaultQuiet = 3 * time.Second
	DefaultPath  = "/"
	// LoadServiceName is the Service rollcheck creates, next to the user's own, to send the
	// load to the Deployment's pods.
	LoadServiceName = "rollcheck-load"
	// LoadHeadlessServiceName is the headless Service rollcheck adds, beside the load Service,
	// for a gRPC load that balances round robin: the client resolves it to the pods' addresses.
	LoadHeadlessServiceName = "rollcheck-load-headless"
	// PartOfLabel marks every namespace rollcheck creates (value PartOfValue), so that a later
	// run can sweep what a killed one left behind.
	PartOfLabel = "app.kubernetes.io/part-of"
	PartOfValue = "rollcheck"
)

// KindRollout is App.Kind for an Argo Rollout checked in place.
const KindRollout = "Rollout"

// App is the application under test: the user's manifests (or the sample app's), as objects
// to apply into a fresh namespace, and how to reach it.
type App struct {
	// Objects are the manifests: exactly one Deployment (or several, with Deployment naming
	// the one under test) and whatever it needs (ConfigMaps, Secrets, Services,
	// ServiceAccounts). Namespaced objects only; their namespace is replaced by the row's own.
	Objects []Object
	// Deployment names the Deployment under test; empty when Objects hold only one. In place
	// (Namespace set) it is required: the Deployment of that name in Namespace.
	Deployment string
	// Namespace, when set, is where the app already runs: the Deployment named Deployment there
	// is checked in place. Nothing of the app is applied; Objects and Images are empty in the
	// Plan a front end builds, and the engine reads the live Deployment into Objects before it
	// validates the Plan again (InPlace). Empty: the manifests are applied into a fresh
	// namespace.
	Namespace string
	// ReplicaSetOf, in place, says that Deployment names a ReplicaSet, not a Deployment: one
	// revision of a workload rollcheck does not change, owned by the object it names as
	// KIND/NAME (an Argo Rollout's, "Rollout/web", whose ReplicaSet of pod-template hash H is
	// web-H). Its pods are checked as they run: its one variant is as-is and its disruptions
	// only delete pods (delete-pod, force-delete), since a change of the ReplicaSet or its
	// pod template would be the owner's to undo. Not a field of check files (rollcheck gate
	// --rollout sets it). Empty: Deployment is a Deployment.
	ReplicaSetOf string `json:"-"`
	// Kind, in place, is the kind of the workload Deployment names: empty (or "Deployment") for
	// a Deployment, KindRollout for an Argo Rollout (argoproj.io/v1alpha1, a check file's
	// app.rollout). A Rollout's variants change its pod template and replicas (a new revision,
	// which its controller rolls out by its own strategy before the row goes on), its
	// rollout-restart is Argo's own (spec.restartAt: the pods evicted, no new revision), and it is
	// restored as a Deployment is.
	Kind string `json:"-"`
	// Service names the app's own Service in Namespace that the load goes to (in place only).
	// Empty: the one Service there whose selector selects the Deployment's pods.
	Service string
	// Port is the container port the load is sent to; a container of the Deployment (or a
	// native sidecar: an init container with restartPolicy Always) must declare it.
	Port int32
	// Container names the app's container: the one whose preStop a Variant sets, whose
	// termination the rows time and whose logs may hold lifecycle lines. Empty: the container
	// that declares Port. When it names another container than Port's, that one is a sidecar
	// in front of the app (a proxy): its termination is timed too, and failures after it
	// stopped accepting are attributed to it (timeline.PhaseSidecarExit).
	Container string
	// Path is the request path, starting with "/" (default "/").
	Path string
	// Images are loaded into the cluster from the local Docker engine (an engine.Target whose Cluster is an engine.ImageLoader);
	// the containers that run them get imagePullPolicy Never.
	Images []string
	// PodHeader is the response header naming the pod that answered (the sample app sends
	// X-Pod-Name). Empty: loadgen's default, X-Pod-Name; an app that sends none works too,
	// and the reports say that identity is missing.
	PodHeader string
	// OnSIGTERM says what the app does on SIGTERM, when known (the sample app): for reports.
	OnSIGTERM string
	// RequestDuration is how long the app takes to answer, when known: the load's timeout and
	// the quiet time add it.
	RequestDuration time.Duration
	// ReadyDelay is how long a new pod of the app takes after its start to report ready (a
	// warm-up), when known (the sample app's --ready-delay): for reports.
	ReadyDelay time.Duration
}

// Variant is the app's Deployment with a change: the configuration being benchmarked. Nil
// fields leave the manifest as it is.
type Variant struct {
	// Name is a short identifier: lower-case letters, digits and dashes.
	Name string
	// Why explains the expectation (shown in reports).
	Why     string
	PreStop *PreStop
	// StopSignal sets the app container's lifecycle.stopSignal ("SIGQUIT"): the signal the
	// runtime sends instead of the image's STOPSIGNAL or SIGTERM (Kubernetes 1.33+, alpha behind
	// the ContainerStopSignals feature gate, which rollcheck's kind config turns on; the runtime
	// must support it too). The pod's spec.os.name is set to linux when unset, as the API
	// requires. Empty: as the manifest says.
	StopSignal string
	// TerminationGracePeriodSeconds replaces the pod template's.
	TerminationGracePeriodSeconds *int64
	Replicas                      *int32
	// PDB, when set, is a PodDisruptionBudget rollcheck creates with the row (named PDBName),
	// selecting the Deployment's pods: what a drain-node disruption's evictions must respect.
	// The manifests may hold their own budget instead, never both (the eviction API refuses a
	// pod that two budgets select).
	PDB *PDB
	// ExternalTrafficPolicy is the externalTrafficPolicy of rollcheck's load Service (a
	// NodePort): Cluster (empty: the API's default) lets every node forward to any ready pod;
	// Local sends the traffic that enters a node from outside the cluster only to pods on that
	// node, and kube-proxy drops it while the node has none (a cloud load balancer stops
	// sending to such a node only through its health check of the Service's
	// healthCheckNodePort). Traffic from a pod or from the node itself is short-circuited to
	// every endpoint, so Local shows only with load from the host entering one node
	// (Load.Entry EntryNode).
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy
	// Patch is a strategic-merge patch (JSON) applied to the Deployment after the fields
	// above: env, args, probes, anything else.
	Patch []byte
	// Expect is the outcome the variant must produce.
	Expect Outcome
}

// Load is the constant-rate load sent while the disruptions run.
type Load struct {
	// Rate in requests per second (default 100).
	Rate int
	// Method is GET (default) or POST. With keep-alive on, Go's client silently retries a GET
	// whose reused connection died; a POST shows what happens to requests on pinned
	// connections.
	Method    string
	KeepAlive bool
	// Timeout per request (default loadgen's 2 s, plus App.RequestDuration).
	Timeout time.Duration
	// From is where the load comes from (default LoadFromHost).
	From LoadFrom
	// Entry is where the load from the host enters the cluster: empty, the address the Target
	// gives for the load Service's NodePort (kind: the control plane's, which runs no pod of the
	// app with workers); EntryNode, the NodePort of one node that runs the app's pods, which the
	// Target names (engine.Target.EntryNode; kind: the first worker's, mapped to its own
	// loopback port). Load from the host only.
	Entry LoadEntry
	// Pods is how many load pods share the rate when the load comes from the cluster, each
	// sending its share (default 1, at most MaxLoadPods): for a rate one pod cannot hold.
	Pods int
	// URL is where the load goes when it is not rollcheck's load Service: an address in front of
	// the app, such as a proxy, an ingress or a gateway ("http://front/",
	// "http://ingress.example.internal/shop"). Its path replaces App.Path. From a load pod it is
	// resolved in the row's namespace, so a Service of the app's manifests is reached by its
	// short name; from the host it must be an address the host reaches. Empty: the load Service.
	// A load sent to a URL is through a proxy: a 5xx answer without the app's pod header, when
	// the app's answers carry it, is the proxy's own (loadgen.ProxyClass).
	URL string
	// Host is the Host header of every request (an ingress rule's host). Empty: the URL's.
	Host string
	// UpstreamHeader is the response header in which the proxy at URL names the upstream
	// address (pod ip:port) it sent each request to (nginx: $upstream_addr; HAProxy: %si:%sp;
	// Caddy: {rp.upstream.hostport}): it maps a request to a pod even when the pod's answer
	// never arrived. Empty: requests are matched to pods by the app's pod header only.
	UpstreamHeader string
	// Resolve is a DNS name the proxy at URL resolves to find the pods (a headless Service of the
	// app, by its short name), which the load pods ask the cluster's DNS for too, four times a
	// second: the row then says when the DNS stopped answering with each deleted pod's address,
	// and the TTL it gave. Without a URL (the load goes to rollcheck's load Service) it is
	// measured only: the row carries the DNS window (Explanation's DNS, DNSTTL), which no proxy
	// of the row's path resolves, so the recommendation and the verdict do not read it. Load
	// from the cluster only; for an app checked in place, a full name (NAME.NAMESPACE.svc): the
	// load pods ask from a namespace of rollcheck's. Empty: not asked.
	Resolve string
	// ResolveRefresh is how long the proxy at URL keeps what it resolved for Resolve before it
	// resolves the name again (nginx's resolver valid=, HAProxy's timeout resolve, Caddy's
	// dynamic upstreams' refresh), ResolveOnce for a proxy that resolves it only at its start;
	// ResolveSetting names that setting in the proxy's own words ("nginx resolver valid=1s").
	// The recommendation bounds how long such a proxy sends to a deleted pod by the DNS window
	// plus ResolveRefresh, when the proxy names no upstream to measure it by. Zero: not known
	// (a proxy of your own): the TTL of the DNS answers stands in, and the recommendation says
	// so. Needs Resolve and URL.
	ResolveRefresh time.Duration
	ResolveSetting string
	// Protocol is what the load speaks (default loadgen.ProtocolHTTP1): loadgen.ProtocolH2C
	// (HTTP/2 over cleartext), loadgen.ProtocolHTTP2 (over TLS) or loadgen.ProtocolGRPC (unary
	// RPCs of GRPC.Method to the app's port; App.Path plays no part).
	Protocol loadgen.Protocol
	// GRPC is how the gRPC client calls and balances (Protocol grpc only).
	GRPC GRPCLoad
}

// GRPCLoad is how the gRPC load calls the app and picks a pod for each RPC.
type GRPCLoad struct {
	// Method is the full method of every RPC, "/package.Service/Method". Empty:
	// loadgen.DefaultGRPCMethod, the standard health check, which any server that registers it
	// answers without its protos being known.
	Method string `json:"method,omitempty"`
	// Message is the request, in protobuf's wire format (in a check file, base64). Empty: an
	// empty message, which the health check takes.
	Message []byte `json:"message,omitempty"`
	// Balancing is loadgen.BalancingPickFirst (default): one connection to rollcheck's load
	// Service, whose ClusterIP kube-proxy pins to one pod for the connection's life; or
	// loadgen.BalancingRoundRobin: the client resolves a headless Service of the app
	// (LoadHeadlessServiceName) by DNS and picks a pod address per RPC, keeping the addresses
	// until it resolves again. Round robin needs load from the cluster.
	Balancing loadgen.Balancing `json:"balancing,omitempty"`
	// WaitForReady makes an RPC wait for a ready connection (up to its timeout) instead of
	// failing at once when none is.
	WaitForReady bool `json:"waitForReady,omitempty"`
	// Retry gives the client a retry policy (service config) for UNAVAILABLE.
	Retry bool `json:"retry,omitempty"`
}

// String is "pick_first", "round_robin+waitForReady+retry" or with a method,
// "round_robin /pkg.Svc/M".
func (g GRPCLoad) String() string {
	s := string(g.Balancing)
	if s == "" {
		s = string(loadgen.BalancingPickFirst)
	}
	if g.WaitForReady {
		s += "+waitForReady"
	}
	if g.Retry {
		s += "+retry"
	}
	if g.Method != "" && g.Method != loadgen.DefaultGRPCMethod {
		s += " " + g.Method
	}
	return s
}

// ResolveOnce is Load.ResolveRefresh of a proxy that resolves the name once, at its start, and
// never again (nginx's static upstream block): no preStop outlasts what it holds.
const ResolveOnce time.Duration = -1

// Through reports whether the load goes to an address in front of the app (URL) rather than to
// rollcheck's load Service.
func (l Load) Through() bool { return l.URL != "" }

// MaxLoadPods is the most load pods one row runs.
const MaxLoadPods = 10

// LoadFrom is where a row's load is sent from.
type LoadFrom string

// LoadEntry is where a row's load from the host enters the cluster (Load.Entry).
type LoadEntry string

// EntryNode: the load from the host enters at the NodePort of the Target's entry node.
const EntryNode LoadEntry = "node"

// Load sources.
const (
	// LoadFromHost: the test process, through the NodePort kind maps to 127.0.0.1 (and so, on
	// kind, through docker-proxy: a refused backend reaches the client as EOF or reset).
	LoadFromHost LoadFrom = "host"
	// LoadFromCluster: a load pod in the row's namespace, to the load Service's cluster address,
	// its ledger streamed back through the API server (loadgen/attack's Serve and Follow): the path
	// a client inside the cluster takes.
	LoadFromCluster LoadFrom = "cluster"
)

// Disruption is what is done to the pods, and how often; each one settles before the next.
type Disruption struct {
	Kind  DisruptionKind
	Count int // default 3
	// DrainTimeout bounds each drain of drain-node (default DefaultDrainTimeout): its
	// evictions, retried while a budget refuses them, and the wait until the evicted pods are
	// gone. A drain that does not finish within it is blocked (DisruptionResult.Blocked).
	// drain-node only.
	DrainTimeout time.Duration
	// Node is the node a drain-node disruption drains: empty, the node that runs the most ready
	// pods of the app; DrainEntry, the node where the load enters (Load.Entry EntryNode).
	// drain-node only.
	Node DrainTarget
}

// DrainTarget picks the node a drain-node disruption drains (Disruption.Node).
type DrainTarget string

// DrainEntry drains the node where the row's load enters the cluster (Load.Entry EntryNode).
const DrainEntry DrainTarget = "entry"

// PDB is a PodDisruptionBudget of the app's pods: exactly one of MinAvailable and
// MaxUnavailable, each a number of pods or a percentage of the replicas ("50%"), as the
// policy/v1 API takes them.
type PDB struct {
	MinAvailable   *intstr.IntOrString `json:"minAvailable,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// PDBName is the name of the PodDisruptionBudget a Variant's PDB creates.
const PDBName = "rollcheck-pdb"

// String is "maxUnavailable=1" or "minAvailable=50%".
func (b PDB) String() string {
	switch {
	case b.MinAvailable != nil:
		return "minAvailable=" + b.MinAvailable.String()
	case b.MaxUnavailable != nil:
		return "maxUnavailable=" + b.MaxUnavailable.String()
	}
	return "none"
}

// Plan is what one row runs (a row, Row, is what one run of a Plan found: a line of the
// conformance table): the app as a variant changes it, under one disruption and one load.
type Plan struct {
	// Suite groups rows in the reports (the built-in matrix uses the disruption's suite; a
	// spec file its own name).
	Suite      string
	App        App
	Variant    Variant
	Disruption Disruption
	Load       Load
	// Quiet is the quiet time: how long the load runs before the first disruption and after
	// the last one settled (default DefaultQuiet).
	Quiet time.Duration
	// Repeat numbers this run when the same row is run several times (1-based; 0: once). It
	// is copied into the Row, whose file name it keeps apart from the other runs'.
	Repeat int
}

// Versions records what a result was measured with.
type Versions struct {
	Rollcheck  string `json:"rollcheck"`
	Go         string `json:"go"`
	Vegeta     string `json:"vegeta"`
	Kubernetes string `json:"kubernetes"`
	Kind       string `json:"kind"`
	// Runtime is the container runtime of the app's pods' node ("containerd://2.1.4").
	Runtime     string `json:"runtime,omitempty"`
	NodeImage   string `json:"nodeImage"`
	ImageSource string `json:"nodeImageSource"` // upstream | offline
	// KubeProxyMode is the mode kube-proxy said it runs in (iptables, nftables, ipvs); empty
	// when it could not be asked.
	KubeProxyMode string `json:"kubeProxyMode,omitempty"`
	// Host is the machine that ran the row ("8 cores, 15.5 GiB, Debian GNU/Linux 12 (bookworm)
	// amd64, kernel 6.1.0-18-amd64"): the test process's, and a kind cluster's too.
	Host string `json:"host,omitempty"`
}

// Applied says what a row ran, as the reports show it: the Deployment's shutdown
// configuration as it was applied (read back from the rendered Deployment, so it is the same
// for the sample app and a user's), the load and the disruption.
type Applied struct {
	Name string `json:"name"`
	Why  string `json:"why,omitempty"`
	// App is the Deployment under test.
	App string `json:"app"`
	// Namespace is where the app ran when it was checked in place (App.Namespace): the live
	// Deployment there, not one applied by the row; empty otherwise.
	Namespace string `json:"namespace,omitempty"`
	// Container is the app's container.
	Container string `json:"container,omitempty"`
	// PreStop is the app container's preStop hook as applied (None when it has none).
	PreStop PreStop `json:"preStop"`
	// StopSignal is the app container's lifecycle.stopSignal as applied, if any.
	StopSignal string `json:"stopSignal,omitempty"`
	// Sidecars are the pod's other long-running containers as applied: classic ones and
	// native ones (init containers with restartPolicy Always).
	Sidecars []Sidecar `json:"sidecars,omitempty"`
	// OnSIGTERM is what the app does on SIGTERM, when known.
	OnSIGTERM       string        `json:"onSIGTERM,omitempty"`
	GraceSeconds    int64         `json:"terminationGracePeriodSeconds"`
	RequestDuration time.Duration `json:"requestDuration,omitempty"`
	// ReadyDelay is the app's warm-up before it reports ready, when known (App.ReadyDelay).
	ReadyDelay time.Duration `json:"readyDelay,omitempty"`
	Replicas   int           `json:"replicas"`
	// Patched is true when the variant applied a strategic-merge patch.
	Patched   bool   `json:"patched,omitempty"`
	Path      string `json:"path"`
	Rate      int    `json:"rate"`
	Method    string `json:"method"`
	KeepAlive bool   `json:"keepAlive"`
	// LoadFrom is where the load came from; empty in rows written before it was a dimension
	// (they came from the host).
	LoadFrom LoadFrom `json:"loadFrom,omitempty"`
	// LoadPods is how many load pods shared the rate, when more than one did.
	LoadPods int `json:"loadPods,omitempty"`
	// LoadURL is where the load went when it was not rollcheck's load Service (Load.URL), with
	// its Host header; empty: the load Service.
	LoadURL  string `json:"loadURL,omitempty"`
	LoadHost string `json:"loadHost,omitempty"`
	// Protocol is Load.Protocol ("" for HTTP/1.1), GRPC its gRPC settings (grpc only).
	Protocol loadgen.Protocol `json:"protocol,omitempty"`
	GRPC     *GRPCLoad        `json:"grpc,omitempty"`
	// UpstreamHeader is Load.UpstreamHeader: the header in which the proxy named the pod
	// address it chose; empty: requests were matched to pods by the app's answers and in time.
	UpstreamHeader string `json:"upstreamHeader,omitempty"`
	// Resolve is Load.Resolve: the name the proxy resolved to find the pods (without LoadURL, a
	// name the load pods asked for, measured only); ResolveRefresh and ResolveSetting say how
	// long the proxy kept an answer (zero: not known).
	Resolve        string        `json:"resolve,omitempty"`
	ResolveRefresh time.Duration `json:"resolveRefresh,omitempty"`
	ResolveSetting string        `json:"resolveSetting,omitempty"`
	// PDB is the PodDisruptionBudget that selected the app's pods: the Variant's, or the
	// manifests' own (PDBFromManifests); nil: none.
	PDB              *PDB           `json:"pdb,omitempty"`
	PDBFromManifests bool           `json:"pdbFromManifests,omitempty"`
	Disruption       DisruptionKind `json:"disruption"`
	Count            int            `json:"count"`
	// DrainTimeout is Disruption.DrainTimeout (drain-node only).
	DrainTimeout time.Duration `json:"drainTimeout,omitempty"`
	// DrainNode is Disruption.Node: which node a drain picked (empty: the one with the most
	// ready pods of the app).
	DrainNode DrainTarget `json:"drainNode,omitempty"`
	// LoadEntry is Load.Entry: where the load from the host entered (empty: the Target's
	// default address).
	LoadEntry LoadEntry `json:"loadEntry,omitempty"`
	// ExternalTrafficPolicy is the load Service's, as applied (empty: Cluster, the default).
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
	// Quiet is Plan.Quiet, the load time before the first disruption and after the last. Rows
	// written before it had this name hold it under "settle", which rollcheck report still reads.
	Quiet  time.Duration `json:"quiet"`
	Expect Outcome       `json:"expect"`
}

// Sidecar is a container of the pod besides the app's, as applied.
type Sidecar struct {
	Name string `json:"name"`
	// Native: an init container with restartPolicy Always, which the kubelet stops only after
	// the app's containers have exited; otherwise a classic one, stopped with them.
	Native bool `json:"native,omitempty"`
	// Front: it declares the port the load is sent to, so requests pass through it.
	Front   bool    `json:"front,omitempty"`
	PreStop PreStop `json:"preStop"`
}

// FrontSidecar is the sidecar in front of the app (the one that declares the load's port), if
// the pod has one.
func (c Applied) FrontSidecar() (Sidecar, bool) {
	for _, s := range c.Sidecars {
		if s.Front {
			return s, true
		}
	}
	return Sidecar{}, false
}

// String is "proxy(native,front,preStop=sleep 5s)".
func (s Sidecar) String() string {
	kind := "classic"
	if s.Native {
		kind = "native"
	}
	if s.Front {
		kind += ",front"
	}
	return fmt.Sprintf("%s(%s,preStop=%s)", s.Name, kind, s.PreStop)
}

// DisruptionResult is one disruption as it happened, and the requests in flight between its
// start and its settling (sent before it settled, answered or failed after it started).
type DisruptionResult struct {
	Kind DisruptionKind `json:"kind"`
	N    int            `json:"n"` // 1-based
	// Pod is the pod deleted (delete-pod, force-delete), empty otherwise.
	Pod     string    `json:"pod,omitempty"`
	Started time.Time `json:"started"`
	// Complete is when the Deployment had settled again (rollout complete, no pod terminating
	// or left over); Settled when the next disruption could start (after a forced delete, the
	// wait for the kubelet's kill too). Complete − Started is the disruption's duration.
	Complete time.Time `json:"complete,omitzero"`
	Settled  time.Time `json:"settled"`
	// KubeletRestarted is when the kubelet restart was asked for and KubeletBack when the
	// kubelet ran again (kubelet-restart).
	KubeletRestarted time.Time `json:"kubeletRestarted,omitzero"`
	KubeletBack      time.Time `json:"kubeletBack,omitzero"`
	// Drain is what a drain-node disruption did; nil for the other kinds.
	Drain        *Drain                `json:"drain,omitempty"`
	Requests     int                   `json:"requests"`
	Failed       int                   `json:"failed"`
	SuccessRatio float64               `json:"successRatio"`
	Failures     map[loadgen.Class]int `json:"failures,omitempty"`
	// Phases counts this disruption's failed requests by phase (see Explanation).
	Phases map[timeline.Phase]int `json:"phases,omitempty"`
}

// Drain is what one drain-node disruption did: the node it cordoned, the evictions the API
// accepted and refused, and when the drain's moments came. A zero time is a moment not reached.
type Drain struct {
	Node string `json:"node"`
	// Pods are the app's pods on the node when the drain began: the ones it evicts.
	Pods []string `json:"pods"`
	// Evictions counts the evictions the API accepted; Refused429 the ones it refused with 429
	// Too Many Requests (a PodDisruptionBudget allowed no disruption then), each retried
	// DrainRetry later.
	Evictions  int `json:"evictions"`
	Refused429 int `json:"refused429"`
	// Drained is when the last evicted pod was gone (drain time: Drained − the disruption's
	// Started); zero when the drain was blocked.
	Drained time.Time `json:"drained,omitzero"`
	// Uncordoned is when the node was schedulable again.
	Uncordoned time.Time `json:"uncordoned,omitzero"`
	// ReplacementsReady is when the Deployment had all its replicas ready again, none of them an
	// evicted pod; zero when nothing was evicted.
	ReplacementsReady time.Time `json:"replacementsReady,omitzero"`
	// Blocked: the drain did not finish within Timeout (Disruption.DrainTimeout); the node was
	// uncordoned and the row went on.
	Blocked bool          `json:"blocked,omitempty"`
	Timeout time.Duration `json:"timeout"`
}

// Row is the result of one Plan: one variant under one disruption.
type Row struct {
	Suite  string  `json:"suite"`
	Config Applied `json:"config"`
	// Repeat numbers the run of a row that is repeated (1-based); 0 for a row run once.
	Repeat int `json:"repeat,omitempty"`
	// Attempts is how many times the row was run to get this result: 2 when the first attempt
	// was a harness fault (or, in tune, an error) and the row was run once more; 0 for one
	// attempt. The first attempt's row is kept beside this one (its file name ends in .attempt1.json).
	Attempts int `json:"attempts,omitempty"`
	// Retried is the first attempt's reason (its Verdict.Reason, or its error) when the row was
	// run again; empty otherwise.
	Retried  string          `json:"retried,omitempty"`
	Started  time.Time       `json:"started"`
	Duration time.Duration   `json:"duration"`
	Summary  loadgen.Summary `json:"summary"`
	// Disruptions are the disruptions as they happened, each with its own requests.
	Disruptions []DisruptionResult `json:"disruptions,omitempty"`
	// LoadFault is what went wrong with the run itself while the row ran, as the engine saw it
	// (the load stalled or lost its pod, or ended before the disruptions did); empty when
	// nothing did. The verdict is judged with it (Outcome.Fault), and so is a replay.
	LoadFault string  `json:"loadFault,omitempty"`
	Verdict   Verdict `json:"verdict"`
	// PodIdentity is true when the app named the answering pod (App.PodHeader) in at least
	// one response; false: per-pod views of the reports are missing.
	PodIdentity bool `json:"podIdentity"`
	// Buckets is the load timeline (100 ms buckets from LoadStarted).
	Buckets []loadgen.Bucket `json:"buckets,omitempty"`
	// LoadStarted is when the load started: Buckets are offsets from it. Zero means Started.
	LoadStarted time.Time `json:"loadStarted,omitzero"`
	// Timeline is the lifecycle of the pods and endpoints during the run.
	Timeline *timeline.Timeline `json:"timeline,omitempty"`
	// Explanation attributes the failed requests to phases, measures propagation and
	// recommends a preStop and grace period; nil for a row that did not run its load.
	Explanation *Explanation `json:"explanation,omitempty"`
	// Times are what the configuration costs in time: each deleted pod's termination and each
	// disruption's duration; nil for a row that did not run its load.
	Times *Times `json:"times,omitempty"`
	// DNS is what the cluster's DNS answered for Load.Resolve during the load, as the load pods
	// asked it: the first answer and each change.
	DNS []loadgen.DNSAnswer `json:"dns,omitempty"`
	// StopSignalReported is the effective stop signal the runtime reported for the app's
	// container (its status's stopSignal, ContainerStopSignals), read once the row's pods run,
	// when the Variant set one: empty when the runtime reported none, which means it does not
	// take lifecycle.stopSignal and sends the image's STOPSIGNAL or SIGTERM.
	StopSignalReported string `json:"stopSignalReported,omitempty"`
	// LoadClocks are the load pods' clocks against the test process's, for load from the
	// cluster: the requests' times are stamped by the pod, the lifecycle's by this process.
	LoadClocks []LoadClock `json:"loadClocks,omitempty"`
	// Nodes says where the row ran: the nodes of the app's pods once deployed, and of each load
	// pod, so that a reader sees whether the load crossed nodes; nil when not read.
	Nodes *Nodes `json:"nodes,omitempty"`
	// Artifacts are paths relative to the artifacts directory (raw vegeta results, ledger).
	Artifacts map[string]string `json:"artifacts,omitempty"`
	Versions  Versions          `json:"versions"`
}

// Nodes is where a row's pods ran.
type Nodes struct {
	// App are the nodes of the app's pods once it was deployed, sorted, each once.
	App []string `json:"app"`
	// Load are the load pods' nodes, one per load pod ("pod@node"); empty for load from the host.
	Load []string `json:"load,omitempty"`
	// Entry is the node the load from the host entered at (Load.Entry EntryNode), and
	// EntryPods how many of the app's pods ran on it once deployed.
	Entry     string `json:"entry,omitempty"`
	EntryPods int    `json:"entryPods,omitempty"`
}

// Crossed says whether every load pod ran on a node that ran none of the app's pods (so every
// request crossed nodes); false for load from the host.
func (n *Nodes) Crossed() bool {
	if n == nil || len(n.Load) == 0 {
		return false
	}
	for _, l := range n.Load {
		_, node, _ := strings.Cut(l, "@")
		if slices.Contains(n.App, node) {
			return false
		}
	}
	return true
}

// String is "app on a, b; load rollcheck-load@c (crosses nodes)".
func (n *Nodes) String() string {
	if n == nil {
		return "not read"
	}
	s := "app on " + strings.Join(n.App, ", ")
	if len(n.Load) == 0 {
		if n.Entry != "" {
			return fmt.Sprintf("%s; load from the host, entering at %s (%d of the app's pods there)", s, n.Entry, n.EntryPods)
		}
		return s + "; load from the host"
	}
	s += "; load " + strings.Join(n.Load, ", ")
	if n.Crossed() {
		return s + " (every request crosses nodes)"
	}
	return s
}

// LoadClock is one load pod's clock measured against the test process's: Offset is the pod's
// time minus the test process's, within ±Uncertainty (half the fastest of Samples round trips
// through the API server's pod proxy). Applied says whether the pod's request times were moved
// by −Offset before attribution: not where the pod and the test process share one clock (kind,
// whose nodes are containers on this machine), where the measure only confirms it.
type LoadClock struct {
	Pod         string        `json:"pod"`
	Offset      time.Duration `json:"offset"`
	Uncertainty time.Duration `json:"uncertainty"`
	Samples     int           `json:"samples"`
	Applied     bool          `json:"applied"`
	// Error says why the clock could not be read; the times are then taken as they are.
	Error string `json:"error,omitempty"`
}

// WorstDisruption returns the disruption with the lowest success ratio (the first among
// equals); the zero DisruptionResult when ds is empty.
func WorstDisruption(ds []DisruptionResult) DisruptionResult {
	var w DisruptionResult
	for i, d := range ds {
		if i == 0 || d.SuccessRatio < w.SuccessRatio {
			w = d
		}
	}
	return w
}
