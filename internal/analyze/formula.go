package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
)

// Margins of the recommendation formula (see check.Recommendation).
const (
	// PreStopMargin is added to the routed window before rounding up to the whole second.
	PreStopMargin = time.Second
	// KillMinimum is the kubelet's minimum between SIGTERM and SIGKILL after a preStop hook,
	// which the grace period leaves after the preStop and the requests' p99.
	KillMinimum = 2 * time.Second
	// AssumedProgrammingLag stands in for kube-proxy's programming p99 when it was not measured.
	AssumedProgrammingLag = attribute.DefaultProgrammingLag
	// AssumedKindRouted is the routed time (deletion → the last new connection kube-proxy sends
	// to the pod) that rollcheck init sizes its preStop from before any run has measured one: on
	// rollcheck's kind cluster the control plane takes a deleted pod out of the EndpointSlices
	// within a few hundred milliseconds, and kube-proxy's own programming histogram reads its p99
	// in the bucket below 4 s, so a row there measures a routed time just under 4 s (a run's
	// "Propagation and what to set" table gives the measured one). A cluster with a cloud load
	// balancer in front has a longer path of its own; measure it there.
	AssumedKindRouted = 4 * time.Second
)

// Window is one measured window: how many measures (pods, or a histogram's observations) and
// their 99th percentile.
type Window struct {
	N   int           `json:"n"`
	P99 time.Duration `json:"p99"`
}

// Measured tells whether the window has any measure.
func (w Window) Measured() bool { return w.N > 0 }

// Windows are the measured windows the formula reads (check.PropagationSummary's p99s).
type Windows struct {
	// ControlPlane: deletion → the endpoint not ready in the Service's EndpointSlices.
	ControlPlane Window
	// KubeProxy: kube-proxy's network programming (endpoint change → rules programmed).
	KubeProxy Window
	// DataPlane: deletion → the last request the pod answered through the Service.
	DataPlane Window
	// Proxy: deletion → the last request a proxy in front sent to the pod.
	Proxy Window
	// Client: deletion → the last RPC a client that balances itself sent to the pod's address;
	// ClientNoAddress counts the pods whose window was extended to an RPC that found no address.
	Client          Window
	ClientNoAddress int
	// ClientCut and ProxyCut are the windows, of the client's and the proxy's pods, that the
	// pod's own end cut (censored): the pod answered until it stopped serving (its listener
	// closed, its SIGTERM or preStop's end, its exit), so the sender would have gone on using
	// it, and its window is a lower bound, not the routing window. Client and Proxy then hold
	// only the windows the sender ended itself. Zero when not known (a window file, a row's
	// summary alone): every window counts as measured.
	ClientCut, ProxyCut Window
	// DNS: deletion → the first answer of the cluster's DNS without the pod's address; DNSTTL
	// is the largest TTL answered, in seconds.
	DNS    Window
	DNSTTL uint32
}

// Measured tells whether any window a routed time comes from was measured (kube-proxy's
// programming alone is not one: it only adds to the control plane).
func (w Windows) Measured() bool {
	return w.ControlPlane.Measured() || w.DataPlane.Measured() || w.Proxy.Measured() || w.Client.Measured() || w.DNS.Measured() ||
		w.ProxyCut.Measured() || w.ClientCut.Measured()
}

// FromPropagation is the windows of a row's propagation summary.
func FromPropagation(p check.PropagationSummary) Windows {
	w := Windows{
		ControlPlane: window(p.ControlPlane), DataPlane: window(p.DataPlane),
		Proxy: window(p.Proxy), Client: window(p.Client), ClientNoAddress: p.ClientNoAddress,
		DNS: window(p.DNS), DNSTTL: p.DNSTTL,
	}
	if p.KubeProxy != nil {
		w.KubeProxy = window(*p.KubeProxy)
	}
	return w
}

func window(d check.Durations) Window { return Window{N: d.N, P99: d.P99} }

// Censor splits a sender's window (a row's Client or Proxy summary, whose Samples hold every
// pod's) into the windows the sender ended itself and those the pods' own end cut (cut, each
// one of all's samples): the Windows' Client and ClientCut, or Proxy and ProxyCut.
func Censor(all check.Durations, cut []time.Duration) (measured, censored Window) {
	if len(cut) == 0 {
		return window(all), Window{}
	}
	rest := slices.Clone(all.Samples)
	for _, c := range cut {
		if i := slices.Index(rest, c); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
		}
	}
	return window(check.Summarize(rest)), window(check.Summarize(cut))
}

// Path is what the formula needs to know of the way requests reach the pods, besides which
// windows were measured: a proxy in front that names the pod it sent to, or one that finds
// the pods by DNS and how often it asks again; requests that ride a pinned connection.
type Path struct {
	// Pinned: the requests rode a connection the client held to one pod (check.Applied's
	// PinsConnections: keep-alive, a gRPC channel that does not balance itself), which the pod
	// answered on until it closed it itself: the data plane measures that, not routing.
	Pinned bool
	// UpstreamNamed: the proxy in front names the pod it sent each request to.
	UpstreamNamed bool
	// Resolve: a proxy in front finds the pods by DNS (a headless Service's name). A name the
	// load pods ask for without a proxy in front (check.Load.Resolve without a URL) is measured
	// only: no request of the row takes that path.
	Resolve bool
	// Refresh is how often that proxy resolves again (check.ResolveOnce: never; 0: not
	// known), and RefreshSetting says it in the proxy's words.
	Refresh        time.Duration
	RefreshSetting string
}

// PathOf is the path of a row's requests: by DNS only through a proxy in front that resolves
// (cfg.Through and cfg.Resolve).
func PathOf(cfg check.Applied) Path {
	return Path{Pinned: cfg.PinsConnections(), UpstreamNamed: cfg.UpstreamHeader != "", Resolve: cfg.Through() && cfg.Resolve != "",
		Refresh: cfg.ResolveRefresh, RefreshSetting: cfg.ResolveSetting}
}

// Routed is the routed time a preStop must outlast and where it came from.
type Routed struct {
	Window time.Duration
	// From says which measures gave it, in words.
	From string
	// TTLStoodIn: the DNS answers' TTL counted for a proxy's re-resolve interval not known.
	TTLStoodIn bool
	// Cut is a sender's windows that the pods' own end cut (Windows.ClientCut, ProxyCut) when
	// they reach past Window: lower bounds, said in From and not counted, since the pod
	// answered until it stopped serving; Whose names the window ("the client's window").
	Cut   Window
	Whose string
	// Bound is From without Cut's words: what the routed time came from.
	Bound string
	// AtLeast: nothing the row measured bounds the sender's window, so Window is Cut's lower
	// bound itself (set by the pods' own serving life, its preStop): the recommendation is an
	// "at least", and the row's preStop is not judged by it (Fit "").
	AtLeast bool
}

// Route is the routed window by the path the requests take (check.Recommendation's formula):
// a client that balances itself, its window; a proxy in front with its own list of pods, its
// window; one that finds the pods by DNS, the DNS window + its refresh; else the data plane
// when measured and each request was routed afresh (not over a pinned connection: p.Pinned),
// else the control plane + kube-proxy's programming (measured or assumed). A client's or a
// proxy's window that the pod's own end cut (w.ClientCut, w.ProxyCut) is a lower bound, not
// the routing window: what bounds that path counts instead, and the bound is said (censored).
func Route(w Windows, p Path) Routed {
	lag, lagFrom := AssumedProgrammingLag, fmt.Sprintf("an assumed %s of kube-proxy programming", AssumedProgrammingLag)
	if w.KubeProxy.Measured() {
		lag, lagFrom = w.KubeProxy.P99, fmt.Sprintf("kube-proxy programming p99 %s", ms(w.KubeProxy.P99))
	}
	// The data plane, measured per pod, is the direct measure; kube-proxy's histogram counts
	// every endpoint change of the cluster (new pods, other namespaces), so it only stands in
	// when no pod kept serving after its deletion, or when the requests rode connections
	// pinned to the pods (the data plane then measures the pod's shutdown, not routing).
	switch {
	case w.Client.Measured() || w.ClientCut.Measured():
		// A client that balances itself sends to a pod until it resolves again: its window is
		// the one a preStop must outlast, where the client ended it (not the pod's own end).
		r := Routed{Window: w.Client.P99, From: fmt.Sprintf("the client's window p99 %s (deletion → its last RPC to the pod's address)", ms(w.Client.P99))}
		if w.ClientNoAddress > 0 {
			r.From = fmt.Sprintf("the client's window p99 %s (deletion → its last RPC to the pod's address, or, for %d pod(s), to its last RPC that found no live address: at least that long, since it had not resolved again by then)", ms(w.Client.P99), w.ClientNoAddress)
		}
		return censored(r, w.Client.Measured(), w.ClientCut, "the client's window", "its last RPC to the pod's address")
	case (w.Proxy.Measured() || w.ProxyCut.Measured()) && (p.UpstreamNamed || !p.Resolve):
		// Through a proxy with its own list of pods, its window is the one a preStop must
		// outlast, not kube-proxy's: measured by request where it names its upstream.
		return censored(Routed{Window: w.Proxy.P99, From: proxyWindowFrom(w.Proxy)}, w.Proxy.Measured(), w.ProxyCut, "the proxy's window", "its last request to the pod")
	case p.Resolve:
		// A proxy that finds the pods by DNS sends to their addresses, never through the
		// ClusterIP: kube-proxy's window is not its path. Naming no upstream, its window is
		// known only from answers, which stop when the pod stops accepting; DNS bounds it.
		return dnsRouted(w, p)
	case w.DataPlane.Measured() && !p.Pinned:
		return Routed{Window: w.DataPlane.P99, From: fmt.Sprintf("data plane p99 %s (last answer after deletion)", ms(w.DataPlane.P99))}
	default:
		r := Routed{Window: w.ControlPlane.P99 + lag, From: fmt.Sprintf("control plane p99 %s + %s", ms(w.ControlPlane.P99), lagFrom)}
		if w.DataPlane.Measured() {
			// Over a pinned connection the pod answers until it closes the connection itself
			// (GOAWAY after its preStop, its exit): counting that would make the preStop
			// recommend itself.
			r.From += fmt.Sprintf(" (not the data plane p99 %s: the requests rode a connection pinned to the pod, which kept answering on it until it closed it itself: its shutdown, not routing)", ms(w.DataPlane.P99))
		}
		return r
	}
}

// censored folds a sender's cut windows (cut: Windows.ClientCut or ProxyCut) into r, the routed
// time of what bounds that sender's window (bounded: its windows the sender ended itself, or
// another bound of its path; false when there is none). A cut window is a lower bound, never
// the routing window: the pod answered until it stopped serving, so the sender would have gone
// on using it, and the pod's preStop, not routing, set its length; counting it would make any
// preStop that outlives routing recommend a longer one. Where it reaches past r it is said
// (Cut), not counted; with nothing that bounds the window, it is the routed time as a lower
// bound (AtLeast). One rule for every sender: a client that balances itself, a proxy in front.
func censored(r Routed, bounded bool, cut Window, whose, end string) Routed {
	if !cut.Measured() || bounded && cut.P99 <= r.Window {
		return r
	}
	if !bounded {
		return Routed{Window: cut.P99, AtLeast: true, Cut: cut, Whose: whose,
			From: fmt.Sprintf("%s ≥ %s for %d pod(s) (deletion → %s): the pod answered until it exited, so this is a lower bound of %s; nothing this row measured bounds it", whose, ms(cut.P99), cut.N, end, whose)}
	}
	r.Bound, r.Cut, r.Whose = r.From, cut, whose
	r.From += fmt.Sprintf("; ≥ %s for %d pod(s): the pod answered until it exited, so this is a lower bound of %s, not counted", ms(cut.P99), cut.N, whose)
	return r
}

// proxyWindowFrom says where a routed time from the proxy's window came from.
func proxyWindowFrom(w Window) string {
	return fmt.Sprintf("the proxy's window p99 %s (deletion → its last request to the pod)", ms(w.P99))
}

// dnsRouted bounds how long a proxy that finds the pods by DNS still sends to a deleted pod:
// until the cluster's DNS answers without the pod's address (the DNS window; the control plane
// stands in when it was not measured, since the cluster's DNS answers from the EndpointSlices),
// plus how long the proxy keeps an answer: its refresh, else, not known, the answers' TTL,
// which a proxy that honours it keeps an answer for. The proxy's window, where measured longer
// (from the pods' answers: a lower bound), wins, unless the pod's own end cut it (censored).
func dnsRouted(w Windows, p Path) Routed {
	r := Routed{Window: w.DNS.P99, From: fmt.Sprintf("DNS window p99 %s", ms(w.DNS.P99))}
	if !w.DNS.Measured() {
		r = Routed{Window: w.ControlPlane.P99, From: fmt.Sprintf("control plane p99 %s (no DNS window measured: the cluster's DNS answers from the EndpointSlices)", ms(w.ControlPlane.P99))}
	}
	switch every := p.Refresh; {
	case every == check.ResolveOnce:
		r.From += fmt.Sprintf(", but the proxy never resolves again (%s): after a rollout every address it holds is gone, and no preStop outlasts that", cmp.Or(p.RefreshSetting, "resolved once"))
	case every > 0:
		r.Window += every
		r.From += " + " + cmp.Or(p.RefreshSetting, fmt.Sprintf("the proxy's refresh %s", every))
	case w.DNS.Measured() || w.DNSTTL > 0:
		r.Window += time.Duration(w.DNSTTL) * time.Second
		r.From += fmt.Sprintf(" + DNS TTL %ds (the proxy's own re-resolve interval is not known: the TTL bounds it for a proxy that honours it)", w.DNSTTL)
		r.TTLStoodIn = true
	default:
		r.From += " (the proxy's own re-resolve interval is not known, nor the DNS TTL: not counted)"
	}
	if w.Proxy.Measured() && w.Proxy.P99 > r.Window {
		r = Routed{Window: w.Proxy.P99, From: fmt.Sprintf("%s, longer than %s (%s)", proxyWindowFrom(w.Proxy), ms(r.Window), r.From)}
	}
	// A window from the answers that the pod's own end cut bounds nothing: DNS does.
	return censored(r, true, w.ProxyCut, "the proxy's window", "its last request to the pod")
}

// Settings is the recommendation for a routed window and the requests' p99:
//
//	preStop = routed + 1 s margin, rounded up to the whole second
//	grace   = preStop + request p99 + 2 s, rounded up to the whole second
func Settings(routed, requestP99 time.Duration) (preStop time.Duration, graceSeconds int64) {
	preStop = ceilSecond(routed + PreStopMargin)
	return preStop, Grace(preStop, requestP99)
}

// Grace is the terminationGracePeriodSeconds a preStop and the requests' p99 call for: preStop
// + request p99 + KillMinimum, rounded up to the whole second.
func Grace(preStop, requestP99 time.Duration) int64 {
	return int64(ceilSecond(preStop+requestP99+KillMinimum) / time.Second)
}

// Fit is a configuration's verdict against a recommendation: "headroom" when its preStop
// (plus the app's own delay after SIGTERM, own) and its grace period are both at or above
// it, "short" when one is below, "" when its preStop is not a sleep of known length (known).
func Fit(preStop time.Duration, known bool, own time.Duration, graceSeconds int64, recPreStop time.Duration, recGraceSeconds int64) string {
	switch {
	case !known:
		return ""
	case preStop+own < recPreStop || graceSeconds < recGraceSeconds:
		return "short"
	default:
		return "headroom"
	}
}

func ceilSecond(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
