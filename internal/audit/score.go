package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/timeline"
)

// DefaultRate is the load each pod serves when none is given (--rate), in requests per second.
const DefaultRate = 100

// Status of a mechanism for a workload.
const (
	// Exposed: the settings leave a window in which requests fail; Predicted counts them.
	Exposed = "exposed"
	// Covered: the settings cover the measured window.
	Covered = "covered"
	// Unknown: the manifests do not say (a hook of unknown length, whether the app drains);
	// Bound is what it costs at worst.
	Unknown = "unknown"
	// Blocked: the disruption cannot proceed (a PodDisruptionBudget that lets no pod go: a drain
	// evicts nothing and waits): no request fails, but the node does not drain.
	Blocked = "blocked"
)

// Disruptions a finding's prediction is per.
const (
	PerRollout = "rollout"
	PerDrain   = "drain"
)

// Options are the load the predictions are stated at, what stands in for the workloads' own
// request latency, and what is known of the apps' own stop.
type Options struct {
	// Rate is the requests per second each pod serves (DefaultRate when 0).
	Rate float64
	// RequestP99 is the workloads' request p99, when known; 0: the windows file's, measured at
	// the probe.
	RequestP99 time.Duration
	// AppDelay is how long the apps keep accepting after SIGTERM on their own (a shutdown
	// delay: Caddy's shutdown_delay, a sleep in a SIGTERM handler), by workload (its ID or its
	// name; "" for every workload not named); nil or absent: not known (the manifests do not
	// say), and the prediction assumes an app that stops accepting at SIGTERM.
	AppDelay map[string]AppDelay
}

// AppDelay is how long an app keeps accepting after SIGTERM on its own, and how that is known
// ("given (--app-delay)", "measured: …").
type AppDelay struct {
	Delay Duration `json:"delay"`
	From  string   `json:"from"`
}

// appDelay is the app delay o knows of w, if any.
func (o Options) appDelay(w *Workload) (AppDelay, bool) {
	for _, k := range []string{w.ID(), w.Name, ""} {
		if d, ok := o.AppDelay[k]; ok {
			return d, true
		}
	}
	return AppDelay{}, false
}

// Finding is one termination mechanism's prediction for a workload.
//
// The prediction is
//
//	expected failures = rate × mean exposed window × pods
//	upper bound       = rate × exposed window at the measured window's p99 × pods
//
// rate the requests per second each pod serves (Options.Rate), exposed the time per pod in
// which requests sent to it fail (below, per mechanism), taken over every measured window (each
// deleted pod's: the mean of max(0, window − what the pod holds)) for the expected count and at
// the window's p99 for the bound, pods the pods the disruption takes (every replica for a
// rollout; for a drain, every replica when all may sit on one node).
type Finding struct {
	// Mechanism is the phase the attribution would put the failures in (timeline.Phases).
	Mechanism timeline.Phase `json:"mechanism"`
	// Per says which disruption the prediction is per: rollout or drain.
	Per string `json:"per"`
	// Status is exposed, covered, unknown or blocked.
	Status string `json:"status"`
	// Exposed is the window per pod in which requests fail at the measured window's p99
	// (exposed), or would at worst (unknown); ExposedMean is its mean over the measured windows
	// (every deleted pod's), the same as Exposed when the windows file holds p99s only.
	Exposed     Duration `json:"exposed"`
	ExposedMean Duration `json:"exposedMean"`
	Pods        int32    `json:"pods"`
	// Predicted is the expected count, rate × ExposedMean × Pods, for an exposed mechanism, 0
	// otherwise; Upper the bound at the window's p99, rate × Exposed × Pods. Bound is that
	// product for an unknown one: what it costs if the unknown goes the wrong way.
	Predicted float64 `json:"predicted"`
	Upper     float64 `json:"upper"`
	Bound     float64 `json:"bound,omitempty"`
	// Why says it in a sentence, Fix names the setting that removes it, Window the measured
	// window it came from; Note what the prediction assumes that the manifests do not say.
	Why    string `json:"why"`
	Fix    string `json:"fix,omitempty"`
	Window string `json:"window"`
	Note   string `json:"note,omitempty"`

	meanSet bool // ExposedMean was taken over the measured windows
}

// Result is a workload scored against the windows.
type Result struct {
	Workload *Workload `json:"workload"`
	// Routed is the routed window of the workload's path (analyze.Route) and where it came
	// from; PreStop and GraceSeconds the recommendation for it (analyze.Settings).
	Routed       Duration `json:"routed"`
	RoutedFrom   string   `json:"routedFrom"`
	PreStop      Duration `json:"preStop"`
	GraceSeconds int64    `json:"terminationGracePeriodSeconds"`
	// Held is how long the front container keeps accepting after the deletion for sure (its
	// preStop sleep, at most the grace period); HeldKnown is false for a hook of unknown length.
	Held      Duration `json:"held"`
	HeldKnown bool     `json:"heldKnown"`
	// AppDelay is how long the app keeps accepting after SIGTERM on its own, when known
	// (Options.AppDelay): it holds the pod that much past its preStop. Nil: not known.
	AppDelay *AppDelay `json:"appDelay,omitempty"`
	// Fit is analyze.Fit of the workload's settings: headroom, short, or "" (not known).
	Fit      string    `json:"fit,omitempty"`
	Findings []Finding `json:"findings"`
	// PredictedPerRollout and PredictedPerDrain sum the exposed findings' expected counts,
	// UpperPerRollout and UpperPerDrain their upper bounds.
	PredictedPerRollout float64 `json:"predictedPerRollout"`
	PredictedPerDrain   float64 `json:"predictedPerDrain"`
	UpperPerRollout     float64 `json:"upperPerRollout"`
	UpperPerDrain       float64 `json:"upperPerDrain"`
}

// Score scores every workload of inv against the windows and ranks them by predicted failures
// per rollout (then per drain, then name).
func Score(inv *Inventory, f *WindowsFile, o Options) []Result {
	out := make([]Result, 0, len(inv.Workloads))
	for _, w := range inv.Workloads {
		out = append(out, ScoreOne(w, f, o))
	}
	slices.SortStableFunc(out, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.PredictedPerRollout, a.PredictedPerRollout), cmp.Compare(b.PredictedPerDrain, a.PredictedPerDrain),
			cmp.Compare(a.Workload.ID(), b.Workload.ID()))
	})
	return out
}

// RequestP99 is the request p99 the grace period must leave, and where it comes from.
func RequestP99(f *WindowsFile, o Options) (time.Duration, string) {
	switch {
	case o.RequestP99 > 0:
		return o.RequestP99, "given (--request-p99)"
	case f.Windows.Request != nil:
		return f.Windows.Request.P99.D(), fmt.Sprintf("the windows file's request p99 at the probe (n %d): the workloads' own is not known", f.Windows.Request.N)
	}
	return 0, "not measured (the windows file has no request p99, and --request-p99 was not given): counted as 0"
}

// ScoreOne scores one workload: every entry of Mechanisms, against what the workload holds for
// sure and the routed window of its path.
func ScoreOne(w *Workload, f *WindowsFile, o Options) Result {
	rate := cmp.Or(o.Rate, DefaultRate)
	s := scoringOf(w, f, o)
	r := Result{Workload: w, Routed: Duration(s.rt.Window), RoutedFrom: s.rt.From, PreStop: Duration(s.pre), GraceSeconds: s.grace,
		Held: Duration(s.held), HeldKnown: s.known}
	own := time.Duration(0)
	if s.delayKnown {
		r.AppDelay = &s.delay
		own = s.delay.Delay.D()
	}
	r.Fit = analyze.Fit(s.held, s.known, own, w.GraceSeconds, s.pre, s.grace)
	if s.front == nil {
		return r // no container: nothing to score
	}
	for _, m := range Mechanisms {
		for _, fd := range m.score(s) {
			fd.Pods = w.Replicas
			if fd.Per == PerDrain && fd.Pods > 1 && w.Spread {
				fd.Pods = 1
			}
			if !fd.meanSet {
				fd.ExposedMean = fd.Exposed // a window known as one length: its mean is itself
			}
			upper := rate * fd.Exposed.D().Seconds() * float64(fd.Pods)
			expected := rate * fd.ExposedMean.D().Seconds() * float64(fd.Pods)
			switch fd.Status {
			case Exposed:
				fd.Predicted, fd.Upper = expected, upper
				if fd.Per == PerRollout {
					r.PredictedPerRollout += expected
					r.UpperPerRollout += upper
				} else {
					r.PredictedPerDrain += expected
					r.UpperPerDrain += upper
				}
			case Unknown:
				fd.Bound = upper
			}
			r.Findings = append(r.Findings, fd)
		}
	}
	return r
}

// scoringOf is what the mechanisms read of w (scoring): the routed window of its path (a Service's,
// or an ingress controller's or gateway's own list), the request p99, the recommendation, and
// what its pods hold for sure.
func scoringOf(w *Workload, f *WindowsFile, o Options) *scoring {
	s := &scoring{w: w, f: f, front: w.container(w.Front)}
	s.p99, s.p99From = RequestP99(f, o)
	// The Service's path: neither a proxy's nor a client's window is its own.
	service := f.Windows
	service.Proxy, service.Client, service.ClientNoAddress = nil, nil, 0
	s.rt, s.rtDist = route(service, analyze.Path{})
	if len(w.Routes) > 0 {
		// An ingress controller or gateway sends to the pods from its own list.
		viaProxy := f.Windows
		viaProxy.Client, viaProxy.ClientNoAddress = nil, 0
		s.rt, s.rtDist = route(viaProxy, analyze.Path{})
		if f.Windows.Proxy == nil {
			s.rt.From += fmt.Sprintf(" (reached through %s, whose own window was not measured: the Service's stands in)", w.Routes[0])
		}
	}
	s.pre, s.grace = analyze.Settings(s.rt.Window, s.p99)
	s.held, s.known = w.held(w.Front)
	// What the pod holds for sure: its preStop, and the app's own delay after SIGTERM where known
	// (up to SIGKILL, at the grace period's end and at least 2 s after the preStop).
	s.at = max(time.Duration(w.GraceSeconds)*time.Second, s.held+analyze.KillMinimum)
	s.accepts = s.held
	if s.delay, s.delayKnown = o.appDelay(w); s.delayKnown {
		s.accepts = min(s.held+s.delay.Delay.D(), s.at)
	}
	s.app, s.appKnown = w.held(w.App)
	return s
}

// NoteAppDelay is what an exposed propagation assumes that the manifests do not say.
const NoteAppDelay = "assumes the app stops accepting at SIGTERM (after its preStop), which the manifests do not say: an app that keeps serving after SIGTERM on its own (a shutdown delay, such as Caddy's shutdown_delay) loses fewer, none when the delay outlasts the routed window; --app-delay says how long it keeps serving"

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// route is the routed window of m by the path p (analyze.Route) and its distribution over the
// measured windows: the same window's samples (a sum's: the control plane's samples and
// kube-proxy's histogram, or an assumed lag; the DNS window's samples and the TTL); none when
// the file kept only that window's p99.
func route(m Measures, p analyze.Path) (analyze.Routed, dist) {
	w := m.Analyze()
	rt := analyze.Route(w, p)
	lag := constDist(analyze.AssumedProgrammingLag)
	if w.KubeProxy.Measured() {
		lag = m.KubeProxy.dist()
	}
	var d dist
	switch {
	case w.Client.Measured():
		d = m.Client.dist()
	case w.Proxy.Measured() && !p.Resolve:
		d = m.Proxy.dist()
	case p.Resolve:
		if m.DNS != nil {
			d = samplesDist(m.DNS.Samples)
		} else {
			d = m.ControlPlane.dist()
		}
		if w.DNS.Measured() || w.DNSTTL > 0 {
			d = d.plus(constDist(time.Duration(w.DNSTTL) * time.Second))
		}
		if w.Proxy.Measured() && w.Proxy.P99 > rt.Window {
			d = m.Proxy.dist()
		}
	case w.DataPlane.Measured() && !p.Pinned:
		d = m.DataPlane.dist()
	default:
		d = m.ControlPlane.dist().plus(lag)
	}
	return rt, d
}

// rolloutFix is the setting that keeps a pod serving through a rollout: a Deployment surges; a
// StatefulSet replaces its pods in place, so only more replicas do.
func rolloutFix(w *Workload) string {
	if w.Kind == "StatefulSet" {
		return "replicas ≥ 2 (a StatefulSet replaces each pod before starting its successor)"
	}
	return "RollingUpdate with maxUnavailable 0 and maxSurge ≥ 1"
}

// held is how long the named container keeps accepting after the deletion for sure: its preStop
// sleep, at most the grace period; a native sidecar's SIGTERM waits for the app containers, so
// it holds at least as long as they do. known is false for a hook of unknown length.
func (w *Workload) held(name string) (time.Duration, bool) {
	c := w.container(name)
	if c == nil {
		return 0, false
	}
	d, known := w.hookLength(name)
	if c.Sidecar == "native" {
		// Its SIGTERM waits for the app containers: it holds as long as the longest of its own
		// sleep and theirs, and at least each of them known.
		all, some := known, known && d > 0
		if !known {
			d = 0
		}
		for _, o := range w.Containers {
			if o.Sidecar == "native" {
				continue
			}
			h, ok := w.held(o.Name)
			if ok {
				d, some = max(d, h), some || h > 0
			}
			all = all && ok
		}
		known = all || some
	}
	return min(d, time.Duration(w.GraceSeconds)*time.Second), known
}

// hookLength is a container's preStop as set (a sleep's length; 0 for none).
func (w *Workload) hookLength(name string) (time.Duration, bool) {
	c := w.container(name)
	if c == nil || !c.PreStop.Known() {
		return 0, false
	}
	return c.PreStop.Sleep.D(), true
}

// readyAtLeast is the least time a replacement takes to be ready: its readiness probe's first
// success (initialDelaySeconds + periodSeconds), or 1 s without a probe.
func (w *Workload) readyAtLeast() time.Duration {
	c := w.container(w.Front)
	if c == nil || c.Readiness == nil {
		return time.Second
	}
	return time.Duration(c.Readiness.InitialDelaySeconds+c.Readiness.PeriodSeconds) * time.Second
}

func drainWhy(w *Workload) string {
	pdb := "no PodDisruptionBudget"
	if w.PDB != nil {
		pdb = fmt.Sprintf("PodDisruptionBudget %s lets %d of %d go at once", w.PDB.Name, w.PDB.Allows, w.Replicas)
	}
	spread := "no spread over nodes"
	if w.Spread {
		spread = "spread over nodes"
	}
	return fmt.Sprintf("replicas %d, %s, %s", w.Replicas, pdb, spread)
}

func holdWords(c *Container, held time.Duration) string {
	if c == nil || c.PreStop.Kind == "none" {
		return "no preStop"
	}
	if c.PreStop.Sleep.D() > held {
		return fmt.Sprintf("preStop %s, cut at the grace period", c.PreStop)
	}
	return "preStop " + c.PreStop.String()
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func ceil(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}
