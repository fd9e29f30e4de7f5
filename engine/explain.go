package engine

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
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
	Propagation Propagation `json:"propagation"`
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

// Bucket is one cumulative bucket of a histogram: Count observations were at most UpperBound
// seconds (the last bucket's bound is +Inf, written as 0 with Inf set).
type Bucket struct {
	UpperBound float64 `json:"le"`
	Inf        bool    `json:"inf,omitempty"`
	Count      uint64  `json:"count"`
}

// Propagation is endpoint propagation for the pods a row deleted, measured twice.
type Propagation struct {
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
	KubeProxyBuckets []Bucket `json:"kubeProxyBuckets,omitempty"`
}

// Recommendation is "preStop sleep ≥ PreStop, terminationGracePeriodSeconds ≥ GraceSeconds"
// with the inputs it came from, and what it means for the row's own configuration.
//
// The formula (README, "What to set"):
//
//	routed  = data-plane p99 when measured (keep-alive off, the app names its pod, a pod kept
//	          serving after its deletion), else control-plane p99 + kube-proxy programming p99
//	preStop = routed + 1 s margin, rounded up to the whole second (the native sleep action)
//	grace   = preStop + request p99 + 2 s, rounded up to the whole second
//
// The 2 s are the kubelet's minimum between SIGTERM and SIGKILL after a preStop hook, and
// leave the app time to close its listener and exit once the last request is answered.
type Recommendation struct {
	PreStop      time.Duration `json:"preStop"`
	GraceSeconds int64         `json:"terminationGracePeriodSeconds"`
	// Routed is the routed time the preStop must outlast, and RoutedFrom says which measure
	// gave it.
	Routed     time.Duration `json:"routed"`
	RoutedFrom string        `json:"routedFrom"`
	RequestP99 time.Duration `json:"requestP99"`
	// Verdict on the row's own configuration: "headroom" (both at or above the
	// recommendation), "short" (one below it) or "" when the row's preStop is not a sleep of
	// known length.
	Fit string `json:"fit,omitempty"`
	// Advice says it in a sentence: the headroom of a passing row, or the smallest change the
	// numbers call for in a failing one.
	Advice string `json:"advice"`
}

// Margins of the recommendation formula (see Recommendation).
const (
	preStopMargin  = time.Second
	killMinimum    = 2 * time.Second // the kubelet's minimum between SIGTERM and SIGKILL after preStop
	assumedProgLag = attribute.DefaultProgrammingLag
)

// kubeProxyNumbers is the change of kube-proxy's programming histogram over a row, or why
// there is none.
type kubeProxyNumbers struct {
	durations *Durations
	buckets   []Bucket
	err       string
}

// explain builds a row's Explanation from the load's ledger, the timeline, the attribution and
// kube-proxy's numbers.
func explain(reqs []loadgen.Request, tl timeline.Timeline, attr attribute.Result, kp kubeProxyNumbers, cfg Config, identity bool) *Explanation {
	ex := &Explanation{Phases: attr.Counts, Propagation: Propagation{KubeProxy: kp.durations, KubeProxyError: kp.err, KubeProxyBuckets: kp.buckets}}
	if len(ex.Phases) == 0 {
		ex.Phases = nil
	}
	var cp []time.Duration
	for _, p := range tl.Propagation {
		if d := p.Routed(); d >= 0 {
			cp = append(cp, d)
		}
	}
	ex.Propagation.ControlPlane = summarize(cp)
	if identity && !cfg.KeepAlive {
		// With keep-alive a pod answers on connections pinned to it long after the Service
		// stopped routing new ones there: its last answer measures the pinning, not routing.
		ex.Propagation.DataPlane = summarize(dataPlane(reqs, attr.Lives))
	}
	var lat []time.Duration
	for i := range reqs {
		if reqs[i].OK() {
			lat = append(lat, reqs[i].Latency)
		}
	}
	l := summarize(lat)
	ex.RequestP99, ex.RequestMax = l.P99, l.Max // latencies are many: no samples kept
	ex.Recommendation = recommend(ex, cfg)
	return ex
}

// dataPlane measures, per deleted pod, deletion → the last request it answered, for the pods
// that still accepted connections after it (so that the data plane, not the pod, ended their
// traffic).
func dataPlane(reqs []loadgen.Request, lives []attribute.Life) []time.Duration {
	last := map[string]time.Time{}
	for i := range reqs {
		q := &reqs[i]
		if q.OK() && q.Pod != "" && q.Timestamp.After(last[q.Pod]) {
			last[q.Pod] = q.Timestamp
		}
	}
	var out []time.Duration
	for _, l := range lives {
		t, ok := last[l.Pod]
		if l.Deleting.IsZero() || !ok || !t.After(l.Deleting) {
			// No answer to a request sent after the deletion: nothing measured (its later
			// requests may have been cut, as slow requests are by SIGKILL).
			continue
		}
		// The pod must have kept accepting for a while after its last request.
		stop := l.ListenerClosed
		if stop.IsZero() {
			stop = l.ExitFrom
		}
		if stop.IsZero() {
			stop = l.Gone
		}
		if stop.IsZero() || !t.Add(attribute.Tolerance).Before(stop) {
			continue
		}
		out = append(out, t.Sub(l.Deleting))
	}
	return out
}

// Summarize returns the count, p50, p99 (nearest rank) and maximum of ds, with ds sorted as
// Samples: pool the Samples of several rows and summarize them again.
func Summarize(ds []time.Duration) Durations { return summarize(ds) }

// summarize returns the count, p50, p99 (nearest rank) and maximum of ds.
func summarize(ds []time.Duration) Durations {
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

// recommend applies the formula of Recommendation; nil when no deleted pod was seen leaving
// the Service.
func recommend(ex *Explanation, cfg Config) *Recommendation {
	p := ex.Propagation
	if p.ControlPlane.N == 0 && p.DataPlane.N == 0 {
		return nil
	}
	r := &Recommendation{RequestP99: ex.RequestP99}
	lag, lagFrom := assumedProgLag, fmt.Sprintf("an assumed %s of kube-proxy programming", assumedProgLag)
	if p.KubeProxy != nil && p.KubeProxy.N > 0 {
		lag, lagFrom = p.KubeProxy.P99, fmt.Sprintf("kube-proxy programming p99 %s", p.KubeProxy.P99.Round(time.Millisecond))
	}
	// The data plane, measured per pod, is the direct measure; kube-proxy's histogram counts
	// every endpoint change of the cluster (new pods, other namespaces), so it only stands in
	// when no pod kept serving after its deletion.
	switch {
	case p.DataPlane.N > 0:
		r.Routed = p.DataPlane.P99
		r.RoutedFrom = fmt.Sprintf("data plane p99 %s (last answer after deletion)", p.DataPlane.P99.Round(time.Millisecond))
	default:
		r.Routed = p.ControlPlane.P99 + lag
		r.RoutedFrom = fmt.Sprintf("control plane p99 %s + %s", p.ControlPlane.P99.Round(time.Millisecond), lagFrom)
	}
	r.PreStop = ceilSecond(r.Routed + preStopMargin)
	r.GraceSeconds = int64(ceilSecond(r.PreStop+r.RequestP99+killMinimum) / time.Second)
	r.Fit, r.Advice = advise(r, ex, cfg)
	return r
}

func ceilSecond(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

// configuredPreStop is how long the row's preStop sleeps: none is 0; a native sleep, "exec:sleep
// N" and an httpGet with ?sleep=<duration> (the sample app's) are read; anything else is unknown.
func configuredPreStop(s string) (time.Duration, bool) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "none":
		return 0, true
	case "sleep":
		d, err := time.ParseDuration(arg)
		return d, err == nil
	case "exec":
		// "sleep 5", "/bin/sleep 1.5", the sample app's "/app sleep 5s".
		f := strings.Fields(arg)
		if n := len(f); n >= 2 && n <= 3 && path.Base(f[n-2]) == "sleep" {
			if secs, err := strconv.ParseFloat(f[n-1], 64); err == nil {
				return time.Duration(secs * float64(time.Second)), true
			}
			d, err := time.ParseDuration(f[n-1])
			return d, err == nil
		}
	case "httpGet":
		if _, q, ok := strings.Cut(arg, "?"); ok {
			if v, err := url.ParseQuery(q); err == nil && v.Get("sleep") != "" {
				d, err := time.ParseDuration(v.Get("sleep"))
				return d, err == nil
			}
		}
	}
	return 0, false
}

// advise compares the row's configuration with the recommendation and, for failures, names the
// smallest change the dominant phase calls for.
func advise(r *Recommendation, ex *Explanation, cfg Config) (fit, advice string) {
	var parts []string
	pre, known := configuredPreStop(cfg.PreStop)
	if known {
		fit = "headroom"
		if pre < r.PreStop || cfg.GraceSeconds < r.GraceSeconds {
			fit = "short"
		}
		parts = append(parts, fmt.Sprintf("preStop %s vs %s recommended, grace %ds vs %ds", pre, r.PreStop, cfg.GraceSeconds, r.GraceSeconds))
	}
	dominant, n := timeline.Phase(""), 0
	for _, ph := range timeline.Phases {
		if c := ex.Phases[ph]; c > n {
			dominant, n = ph, c
		}
	}
	if cfg.Disruption == ForceDelete {
		parts = append(parts, "a forced delete gives preStop about 1 s and the container 2 s more whatever is set: no setting removes its failures, only the app draining fast")
	}
	switch dominant {
	case "":
		if fit == "short" {
			parts = append(parts, "no failure in this run, but the measured propagation leaves no margin")
		}
	case timeline.PhasePropagation:
		parts = append(parts, fmt.Sprintf("most failures (%d) are propagation: set preStop sleep ≥ %s", n, r.PreStop))
	case timeline.PhaseSIGKILL:
		parts = append(parts, fmt.Sprintf("most failures (%d) were cut by SIGKILL: set terminationGracePeriodSeconds ≥ %d (preStop %s + requests up to %s + 2 s)", n, r.GraceSeconds, r.PreStop, ex.RequestP99.Round(time.Millisecond)))
	case timeline.PhaseInFlightCut:
		parts = append(parts, fmt.Sprintf("most failures (%d) were in flight when the app exited: drain on SIGTERM (finish in-flight requests, e.g. http.Server.Shutdown) instead of exiting", n))
	case timeline.PhasePinnedConnection:
		parts = append(parts, fmt.Sprintf("most failures (%d) rode kept-alive connections to the terminating pod: drain on SIGTERM so that idle connections close and busy ones get Connection: close", n))
	case timeline.PhaseStartup:
		parts = append(parts, fmt.Sprintf("most failures (%d) hit a new pod before it could serve: its readiness probe says ready too early", n))
	case timeline.PhaseSteady:
		parts = append(parts, fmt.Sprintf("most failures (%d) came with no pod terminating or starting: the app or the harness is broken", n))
	default:
		parts = append(parts, fmt.Sprintf("most failures (%d) match no rule (unknown)", n))
	}
	return fit, strings.Join(parts, "; ")
}
