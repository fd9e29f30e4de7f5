package check

import (
	"math"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/timeline"
)

// Explanation says why a row's requests failed and what its numbers call for: every failed
// request attributed to a phase of one pod's termination (or start), endpoint propagation
// measured twice, and the preStop and grace period the measurements recommend.
type Explanation struct {
	// Phases counts the row's failed requests by phase (timeline.Phases); every failed
	// request is in exactly one.
	Phases map[timeline.Phase]int `json:"phases,omitempty"`
	// Propagation is how long the Service kept routing to a deleted pod, by two measures.
	Propagation PropagationSummary `json:"propagation"`
	// RequestP99 is the 99th percentile of the successful requests' latency (the drain time
	// the grace period must leave), RequestMax their maximum.
	RequestP99 time.Duration `json:"requestP99"`
	RequestMax time.Duration `json:"requestMax"`
	// Recommendation is the preStop and grace period the numbers call for; nil when there is
	// nothing to base one on (no pod was deleted, or propagation was not seen).
	Recommendation *Recommendation `json:"recommendation,omitempty"`
}

// Durations summarises a set of measured durations: how many, p50, p99 and the largest.
type Durations struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
	// Samples are the measured durations (per pod), so that runs can be pooled; empty for a
	// histogram's numbers.
	Samples []time.Duration `json:"samples,omitempty"`
}

// HistogramBucket is one cumulative bucket of a histogram: Count observations were at most UpperBound
// seconds (the last bucket's bound is +Inf, written as 0 with Inf set).
type HistogramBucket struct {
	UpperBound float64 `json:"le"`
	Inf        bool    `json:"inf,omitempty"`
	Count      uint64  `json:"count"`
}

// PropagationSummary is endpoint propagation for the pods a row deleted, measured twice
// (timeline.Propagation is one pod's).
type PropagationSummary struct {
	// ControlPlane: per deleted pod, deletion seen → its endpoint is not ready (or removed) in
	// the Service's EndpointSlices.
	ControlPlane Durations `json:"controlPlane"`
	// DataPlane: per deleted pod that still answered after its deletion, deletion seen → the
	// last request it answered (needs the app to name its pod; App.PodHeader). A pod that stops
	// accepting at once (no preStop) gives no measure: it is left out; so does keep-alive load,
	// whose pinned connections outlive routing.
	DataPlane Durations `json:"dataPlane"`
	// KubeProxy is kube-proxy's own kubeproxy_network_programming_duration_seconds over the
	// row (the histogram's change between the row's start and end, summed over every node):
	// endpoint change → rules programmed. Nil when it could not be read; KubeProxyError says why.
	KubeProxy      *Durations `json:"kubeProxy,omitempty"`
	KubeProxyError string     `json:"kubeProxyError,omitempty"`
	// KubeProxyBuckets is that change as histogram buckets, so that runs can be pooled.
	KubeProxyBuckets []HistogramBucket `json:"kubeProxyBuckets,omitempty"`
	// Proxy is the window of the proxy in front (the load through Load.URL): per deleted pod,
	// deletion seen → the last request the proxy sent to it, named by the pod's answer (its pod
	// header) or by the proxy's upstream header. Without an upstream header, a pod that stopped
	// accepting leaves only its last answer, and the window reads short. N is 0 without a proxy.
	Proxy Durations `json:"proxy,omitzero"`
	// ProxyStale counts the deleted pods the proxy still sent requests to after they were gone:
	// its list of pods was stale (a name resolved once, a cached DNS answer), and no preStop
	// covers that.
	ProxyStale int `json:"proxyStale,omitempty"`
	// Client is the window of a client that balances over the pods' addresses itself (gRPC
	// round_robin over a headless Service): per deleted pod, deletion seen → the last RPC the
	// client sent to the pod's address (loadgen.Request.Peer), answered or not: how long it
	// kept the address after the pod began to go. ClientStale counts the deleted pods it still
	// sent to after they were gone. N is 0 for other clients.
	Client      Durations `json:"client,omitzero"`
	ClientStale int       `json:"clientStale,omitempty"`
	// ClientNoAddress counts the deleted pods whose Client window was extended to the client's
	// last RPC that found no live address at all (stale-address, no peer): the client had sent
	// to the pod and still had not resolved again then, so the pod would have had to serve that
	// long; its last RPC to the pod alone ends where the pod stopped accepting.
	ClientNoAddress int `json:"clientNoAddress,omitempty"`
	// DNS is, per deleted pod, deletion seen → the first answer of the cluster's DNS for
	// Load.Resolve without the pod's address, as the load pods asked it; DNSTTL is the largest
	// TTL those answers gave: how long a client that honours it may keep a gone address.
	DNS    Durations `json:"dns,omitzero"`
	DNSTTL uint32    `json:"dnsTTL,omitempty"`
}

// Recommendation is "preStop sleep ≥ PreStop, terminationGracePeriodSeconds ≥ GraceSeconds"
// with the inputs it came from, and what it means for the row's own configuration.
//
// The formula (docs/reference.md, "What to set"):
//
//	routed  = by the path the requests took: a client that balances itself, its window p99;
//	          through a proxy in front (Load.URL) that names its upstream, or finds the pods
//	          neither by DNS, its window p99 (deletion → its last request to the pod); through
//	          one that finds them by DNS (Load.Resolve) and names none, the DNS window p99 +
//	          the proxy's refresh (Load.ResolveRefresh; not known: the answers' TTL), or its
//	          window where that is longer; else (the Service's ClusterIP or NodePort) the
//	          data-plane p99 when measured (the app names its pod, a pod kept serving after
//	          its deletion) and each request was routed afresh (keep-alive off, not gRPC over
//	          one connection: Applied.PinsConnections), else control-plane p99 + kube-proxy
//	          programming p99
//	preStop = routed + 1 s margin, rounded up to the whole second (the native sleep action)
//	grace   = preStop + request p99 + 2 s, rounded up to the whole second
//
// The 2 s are the kubelet's minimum between SIGTERM and SIGKILL after a preStop hook, and
// leave the app time to close its listener and exit once the last request is answered. Over a
// pinned connection the client keeps sending to the old pod until the pod closes it (GOAWAY
// after the preStop): its last answer measures the preStop, not routing, and counting it would
// make any preStop recommend a longer one.
type Recommendation struct {
	PreStop      time.Duration `json:"preStop"`
	GraceSeconds int64         `json:"terminationGracePeriodSeconds"`
	// Routed is the routed time the preStop must outlast, and RoutedFrom says which measures
	// gave it, in words ("DNS window p99 370ms + nginx resolver valid=1s").
	Routed     time.Duration `json:"routed"`
	RoutedFrom string        `json:"routedFrom"`
	// TTLStoodIn says that Routed counts the DNS answers' TTL for the re-resolve interval of
	// the proxy in front, which was not known (Load.ResolveRefresh unset): a bound for a proxy
	// that honours the TTL, and one that resolves sooner needs less.
	TTLStoodIn bool          `json:"ttlStoodIn,omitempty"`
	RequestP99 time.Duration `json:"requestP99"`
	// AppDelay is the app's own delay, pod by pod: SIGTERM → its listener closed, from its
	// lifecycle lines (N is 0 for an app that writes none). An app that keeps accepting after
	// SIGTERM by itself (a shutdown-delay option) does what a preStop sleep does: Fit counts
	// preStop + the smallest AppDelay against PreStop.
	AppDelay Durations `json:"appDelay,omitzero"`
	// Unheard counts the deleted pods SIGKILLed at the grace period's end that never said they
	// got SIGTERM; AppSpeaks says whether the app writes lifecycle lines at all (then their
	// silence means the signal did not reach the app: its PID 1 did not pass it on).
	Unheard   int  `json:"unheard,omitempty"`
	AppSpeaks bool `json:"appSpeaks,omitempty"`
	// Verdict on the row's own configuration: "headroom" (both at or above the
	// recommendation), "short" (one below it) or "" when the row's preStop is not a sleep of
	// known length, or when the routed time is only a lower bound that the pods' own serving
	// set (a sender's window cut by the pod's exit: it cannot judge the preStop that set it).
	Fit string `json:"fit,omitempty"`
	// Advice says it in a sentence: the headroom of a passing row, or the smallest change the
	// numbers call for in a failing one.
	Advice string `json:"advice"`
}

// Summarize returns the count, p50, p99 (nearest rank) and maximum of ds, with ds sorted as
// Samples: pool the Samples of several rows and summarize them again.
func Summarize(ds []time.Duration) Durations {
	if len(ds) == 0 {
		return Durations{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Durations{N: len(s), P50: rank(0.5), P99: rank(0.99), Max: s[len(s)-1], Samples: s}
}
