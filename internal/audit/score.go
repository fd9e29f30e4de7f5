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

// ScoreOne scores one workload.
func ScoreOne(w *Workload, f *WindowsFile, o Options) Result {
	rate := cmp.Or(o.Rate, DefaultRate)
	p99, p99From := RequestP99(f, o)
	// The Service's path: neither a proxy's nor a client's window is its own.
	service := f.Windows
	service.Proxy, service.Client, service.ClientNoAddress = nil, nil, 0
	rt, rtDist := route(service, analyze.Path{})
	if len(w.Routes) > 0 {
		// An ingress controller or gateway sends to the pods from its own list.
		viaProxy := f.Windows
		viaProxy.Client, viaProxy.ClientNoAddress = nil, 0
		rt, rtDist = route(viaProxy, analyze.Path{})
		if f.Windows.Proxy == nil {
			rt.From += fmt.Sprintf(" (reached through %s, whose own window was not measured: the Service's stands in)", w.Routes[0])
		}
	}
	r := Result{Workload: w, Routed: Duration(rt.Window), RoutedFrom: rt.From}
	pre, grace := analyze.Settings(rt.Window, p99)
	r.PreStop, r.GraceSeconds = Duration(pre), grace
	held, known := w.held(w.Front)
	r.Held, r.HeldKnown = Duration(held), known
	// What the pod holds for sure: its preStop, and the app's own delay after SIGTERM where known
	// (up to SIGKILL, at the grace period's end and at least 2 s after the preStop).
	graceD := time.Duration(w.GraceSeconds) * time.Second
	at := max(graceD, held+analyze.KillMinimum)
	accepts, own := held, time.Duration(0)
	delay, delayKnown := o.appDelay(w)
	if delayKnown {
		r.AppDelay = &delay
		own = delay.Delay.D()
		accepts = min(held+own, at)
	}
	r.Fit = analyze.Fit(held, known, own, w.GraceSeconds, pre, grace)
	front := w.container(w.Front)
	if front == nil {
		return r // no container: nothing to score
	}
	pods := w.Replicas
	add := func(fd Finding) {
		fd.Pods = pods
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
	// mean is the mean of exposed(window) over the measured windows of d, and how it was
	// taken; exposed(p99) when the file kept no distribution of that window.
	mean := func(d dist, p99 time.Duration, exposed func(time.Duration) time.Duration) (Duration, string) {
		if !d.known() {
			return Duration(exposed(p99)), "the windows file holds the window's p99 only: the expected count is the upper bound"
		}
		return Duration(d.mean(exposed)), ""
	}

	// Propagation: requests routed to the pod after its front container stopped accepting.
	// exposed = routed − held (the front's preStop sleep, at most the grace period).
	prop := Finding{Mechanism: timeline.PhasePropagation, Per: PerRollout, Window: rt.From}
	app, appKnown := w.held(w.App)
	if front.Sidecar == "classic" && (!appKnown || app > held) {
		// A classic sidecar in front that stops before the app: the attribution calls it so.
		prop.Mechanism = timeline.PhaseSidecarExit
	}
	switch {
	case !known:
		prop.Status, prop.Exposed = Unknown, Duration(rt.Window)
		prop.Why = fmt.Sprintf("the preStop of %s (%s) has no length the manifests tell: it may end before the routed window %s does", w.Front, front.PreStop, ms(rt.Window))
		prop.Fix = fmt.Sprintf("a native sleep preStop on %s ≥ %s", w.Front, pre)
		if front.Sidecar == "native" {
			prop.Why = fmt.Sprintf("%s, a native sidecar, stops after the app %s, whose preStop (%s) has no length the manifests tell: it may end before the routed window %s does", w.Front, w.App, w.container(w.App).PreStop, ms(rt.Window))
			prop.Fix = fmt.Sprintf("a native sleep preStop on %s or %s ≥ %s", w.App, w.Front, pre)
		}
	case accepts < rt.Window:
		prop.Status, prop.Exposed = Exposed, Duration(rt.Window-accepts)
		var note string
		prop.meanSet = true
		prop.ExposedMean, note = mean(rtDist, rt.Window, func(x time.Duration) time.Duration { return max(0, x-accepts) })
		prop.Why = fmt.Sprintf("%s stops accepting %s after the deletion (%s) while requests are routed to it for %s at the p99", w.Front, ms(accepts), holdWords(front, held), ms(rt.Window))
		prop.Fix = fmt.Sprintf("preStop sleep on %s ≥ %s", w.Front, pre)
		if prop.Mechanism == timeline.PhaseSidecarExit {
			prop.Why += fmt.Sprintf(", and before the app (%s holds %s)", w.App, app)
			prop.Fix += " (or make it a native sidecar: it then stops after the app)"
		}
		if delayKnown {
			prop.Why += fmt.Sprintf(", its preStop and the app's own %s after SIGTERM (%s) counted", delay.Delay, delay.From)
		} else if prop.Mechanism == timeline.PhasePropagation {
			prop.Note = NoteAppDelay
		}
		prop.Note = joinNotes(prop.Note, note)
	case delayKnown && held < rt.Window:
		prop.Status = Covered
		prop.Why = fmt.Sprintf("the app keeps accepting %s after SIGTERM on its own (%s): %s keeps accepting %s after the deletion, past the routed window %s", delay.Delay, delay.From, w.Front, ms(accepts), ms(rt.Window))
	default:
		prop.Status = Covered
		prop.Why = fmt.Sprintf("%s keeps accepting %s after the deletion, past the routed window %s", w.Front, held, ms(rt.Window))
	}
	add(prop)

	// In-flight cut: requests in flight when the app exits on SIGTERM. Whether it drains is
	// not in the manifests; a preStop that outlasts the routed window by the requests' p99
	// leaves none in flight. Exposed at worst: the requests' p99.
	cut := Finding{Mechanism: timeline.PhaseInFlightCut, Per: PerRollout, Window: fmt.Sprintf("%s; request p99 %s, %s", rt.From, ms(p99), p99From)}
	if known && held >= rt.Window+p99 {
		cut.Status = Covered
		cut.Why = fmt.Sprintf("the preStop (%s) outlasts the routed window %s by the request p99 %s: nothing is in flight at SIGTERM", held, ms(rt.Window), ms(p99))
	} else {
		cut.Status, cut.Exposed = Unknown, Duration(p99)
		cut.Why = "whether the app finishes its in-flight requests on SIGTERM is not in the manifests"
		cut.Fix = fmt.Sprintf("drain on SIGTERM (Go: http.Server.Shutdown; gRPC: GracefulStop), or a preStop sleep ≥ %s (routed window + request p99)", ceil(rt.Window+p99))
	}
	add(cut)

	// SIGKILL: the kubelet kills at the grace period's end, and at least 2 s after a preStop
	// (one cut at the grace period's end included): kill = max(grace, held + 2 s). A request
	// accepted by then is cut when it needs longer: the front accepts until min(routed, held),
	// so exposed = min(routed, held) + request p99 − kill, between 0 and the request p99. The
	// recommendation's grace (preStop + request p99 + 2 s) leaves none whatever the routing.
	kill := Finding{Mechanism: timeline.PhaseSIGKILL, Per: PerRollout, Window: fmt.Sprintf("%s; request p99 %s, %s", rt.From, ms(p99), p99From)}
	set, _ := w.hookLength(w.Front)
	wantGrace := max(grace, int64(ceil(set+p99+analyze.KillMinimum)/time.Second))
	cutAt := func(routed time.Duration) time.Duration { return min(max(0, min(routed, accepts)+p99-at), p99) }
	switch cut := min(rt.Window, accepts) + p99 - at; {
	case !known:
		kill.Status, kill.Exposed = Unknown, Duration(p99)
		kill.Why = fmt.Sprintf("grace %ds must hold the preStop of %s (%s, of unknown length) + request p99 %s + 2 s", w.GraceSeconds, w.Front, front.PreStop, ms(p99))
		kill.Fix = "terminationGracePeriodSeconds ≥ the hook's length + request p99 + 2 s"
	case cut > 0:
		kill.Status, kill.Exposed = Exposed, Duration(min(cut, p99))
		kill.meanSet = true
		kill.ExposedMean, kill.Note = mean(rtDist, rt.Window, cutAt)
		kill.Why = fmt.Sprintf("SIGKILL %s after the deletion (grace %ds, preStop %s) cuts requests accepted up to %s after it that take the request p99 %s", ms(at), w.GraceSeconds, held, ms(min(rt.Window, accepts)), ms(p99))
		kill.Fix = fmt.Sprintf("terminationGracePeriodSeconds ≥ %d", wantGrace)
	case w.GraceSeconds < wantGrace:
		kill.Status = Covered
		kill.Why = fmt.Sprintf("grace %ds is below preStop + request p99 + 2 s (%ds), but the last request accepted (%s after the deletion) ends before SIGKILL at %s", w.GraceSeconds, wantGrace, ms(min(rt.Window, accepts)), ms(at))
		kill.Fix = fmt.Sprintf("terminationGracePeriodSeconds ≥ %d, for the margin", wantGrace)
	default:
		kill.Status = Covered
		kill.Why = fmt.Sprintf("grace %ds ≥ preStop %s + request p99 %s + 2 s", w.GraceSeconds, set, ms(p99))
	}
	add(kill)

	// No endpoint: every pod gone before a replacement is ready. exposed ≥ the replacement's
	// time to ready: its readiness probe's initialDelaySeconds + periodSeconds (1 s without a
	// probe), a lower bound (scheduling, pulling and starting not counted).
	ready := w.readyAtLeast()
	if w.Replicas > 0 && w.Strategy.MaxUnavailable >= w.Replicas && w.Strategy.MaxSurge == 0 {
		add(Finding{Mechanism: timeline.PhaseNoEndpoint, Per: PerRollout, Status: Exposed, Exposed: Duration(ready), Window: "the replacement's readiness probe (a lower bound)",
			Why: fmt.Sprintf("the %s strategy takes every pod (%d) before a replacement is ready", w.Strategy.Type, w.Replicas),
			Fix: rolloutFix(w)})
	}
	// A drain evicts gracefully: an evicted pod keeps serving through its preStop, and while no
	// pod is ready kube-proxy sends to the terminating pods that still pass their readiness
	// probe (KEP-1669, Kubernetes 1.28+), so a replacement ready within the preStop leaves no
	// gap: exposed = ready − held.
	drain := Finding{Mechanism: timeline.PhaseNoEndpoint, Per: PerDrain, Window: "the replacement's readiness probe (a lower bound), less the preStop the evicted pods serve through"}
	switch {
	case w.Replicas == 0:
	case w.PDB != nil && w.PDB.Allows == 0:
		// The eviction API refuses every eviction: nothing is evicted, the drain blocks.
		drain.Status = Blocked
		drain.Why = fmt.Sprintf("PodDisruptionBudget %s lets none of the %d pods go: a drain evicts nothing and blocks (until its timeout, or someone deletes the pod), so no request fails but the node does not drain", w.PDB.Name, w.Replicas)
		drain.Fix = "replicas ≥ 2, with a budget that lets one go (maxUnavailable 1)"
		add(drain)
	case w.Replicas == 1 || (w.PDB == nil || w.PDB.Allows >= w.Replicas) && !w.Spread:
		drain.Why = fmt.Sprintf("a node drain may evict every pod at once: %s", drainWhy(w))
		drain.Fix = "replicas ≥ 2 with a PodDisruptionBudget (maxUnavailable 1) and a topology spread over kubernetes.io/hostname"
		switch {
		case !known:
			drain.Status, drain.Exposed = Unknown, Duration(ready)
			drain.Why += fmt.Sprintf("; the evicted pods serve through their preStop (%s, of unknown length) if their replacements are ready by then", front.PreStop)
		case held >= ready:
			drain.Status = Covered
			drain.Why += fmt.Sprintf("; the evicted pods serve through their preStop (%s) while no pod is ready (kube-proxy sends to serving terminating pods), past the replacement's readiness %s (a lower bound: scheduling, pulling and starting not counted)", held, ready)
		default:
			drain.Status, drain.Exposed = Exposed, Duration(ready-held)
		}
		add(drain)
	default:
		drain.Status = Covered
		drain.Why = "a drain leaves a pod serving: " + drainWhy(w)
		add(drain)
	}

	// No local endpoint: traffic from outside entering a drained node, with externalTrafficPolicy
	// Local, goes only to that node's pods; once they stop serving the node drops it until the
	// load balancer's health check (healthCheckNodePort) takes the node out, which is the load
	// balancer's, not in the manifests.
	for _, s := range w.Services {
		if !s.LocalTraffic {
			continue
		}
		add(Finding{Mechanism: timeline.PhaseNoLocalEndpoint, Per: PerDrain, Status: Unknown, Window: "the load balancer's health check of the node (not measured)",
			Why: fmt.Sprintf("Service %s has externalTrafficPolicy Local: traffic from outside entering a drained node goes only to its pods, and once they stop serving (after their preStop) is dropped until the load balancer's health check takes the node out, whose timing is not in the manifests", s.Name),
			Fix: "externalTrafficPolicy Cluster, or a load balancer whose health check of healthCheckNodePort takes a node out within the preStop"})
		break
	}

	// Stale addresses: clients that resolve a headless Service (a balancing gRPC client, a proxy
	// that resolves by DNS) hold a pod's address after its deletion.
	if hs := w.Headless(); hs != "" {
		dnsWin := f.Windows
		dnsWin.Proxy = nil
		path := analyze.Path{Resolve: true}
		if !w.GRPC() || dnsWin.Client == nil {
			dnsWin.Client, dnsWin.ClientNoAddress = nil, 0
		}
		st, stDist := route(dnsWin, path)
		fd := Finding{Mechanism: timeline.PhaseStaleAddress, Per: PerRollout, Window: st.From}
		who := "a client or proxy that resolves it"
		if w.GRPC() {
			who = "a gRPC client that balances over its addresses (round_robin)"
		}
		switch {
		case !known:
			fd.Status, fd.Exposed = Unknown, Duration(st.Window)
			fd.Why = fmt.Sprintf("the headless Service %s: %s holds a deleted pod's address for %s; the preStop's length is not known", hs, who, ms(st.Window))
			fd.Fix = fmt.Sprintf("a native sleep preStop ≥ %s", ceil(st.Window+analyze.PreStopMargin))
		case accepts < st.Window:
			fd.Status, fd.Exposed = Exposed, Duration(st.Window-accepts)
			fd.meanSet = true
			fd.ExposedMean, fd.Note = mean(stDist, st.Window, func(x time.Duration) time.Duration { return max(0, x-accepts) })
			fd.Why = fmt.Sprintf("the headless Service %s: %s holds a deleted pod's address for %s at the p99, longer than the pod keeps accepting (%s)", hs, who, ms(st.Window), ms(accepts))
			fd.Fix = fmt.Sprintf("preStop sleep ≥ %s, and a client that resolves again sooner (its refresh) or retries UNAVAILABLE", ceil(st.Window+analyze.PreStopMargin))
		default:
			fd.Status = Covered
			fd.Why = fmt.Sprintf("the headless Service %s: the pod keeps accepting (%s) past the %s its clients hold its address", hs, ms(accepts), ms(st.Window))
		}
		add(fd)
	}

	// Classic sidecars behind the app that stop before it: what the app needs of them
	// (an outbound proxy, a token agent) is not in the manifests.
	for _, c := range w.Containers {
		if c.Sidecar != "classic" || c.Name == w.Front {
			continue
		}
		h, ok := w.held(c.Name)
		if ok && appKnown && h >= app {
			continue
		}
		add(Finding{Mechanism: timeline.PhaseSidecarExit, Per: PerRollout, Status: Unknown, Window: "the app's preStop",
			Why: fmt.Sprintf("the classic sidecar %s (preStop %s) gets SIGTERM before the app %s is done (preStop %s): whether the app needs it until then is not in the manifests", c.Name, c.PreStop, w.App, w.container(w.App).PreStop),
			Fix: fmt.Sprintf("a preStop sleep on %s at least the app's, or make it a native sidecar (an init container with restartPolicy Always)", c.Name)})
	}
	return r
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
