package attribute

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Context is where the rules apply: what the row's configuration says of the load and of the
// disruption, derived once from it (internal/analyze builds it from check.Applied). Each Rule
// says by it whether it can match in the row at all.
type Context struct {
	// KeepAlive says the load reused connections: the pinned-connection rule applies, and
	// in-flight-cut leaves to it the requests sent after the pod stopped being routed.
	KeepAlive bool
	// Proxy says the load went through a proxy in front of the app (check.Load.URL), which
	// keeps its own list of pods: the proxy-propagation and proxy-no-upstream rules apply, and
	// kube-proxy's window does not bound what it sends to a pod.
	Proxy bool
	// UpstreamNamed says the proxy names the upstream it chose in every answer
	// (check.Load.UpstreamHeader): a request's Upstream maps it to a pod by the pod's address,
	// and a proxy's own answer that names none had no upstream to send to (proxy-no-upstream).
	UpstreamNamed bool
	// Balanced says the client balances over the pods' addresses itself (gRPC round_robin over
	// a headless Service): each RPC names the address it went to (loadgen.Request.Peer), not
	// through kube-proxy, and the client keeps addresses until it resolves again
	// (stale-address).
	Balanced bool
	// Drain says the row's disruptions drained nodes (check.DrainNode), which may evict every
	// replica at once; SingleReplica that the app runs one replica, whose deletion leaves only
	// its replacement. Only in such rows can every endpoint go at once by the configuration, so
	// only there is the no-endpoint rule tried (a window's Why names the drain). ScaleToZero
	// says the row scaled the app to zero replicas (check.ScaleToZero): every endpoint goes, by
	// design, until the app is scaled back.
	Drain, SingleReplica, ScaleToZero bool
	// LocalEntry is the node the load entered the cluster at when the load Service sends
	// external traffic only to that node's endpoints (externalTrafficPolicy Local): the
	// no-local-endpoint rule reads the endpoints of the pods on that node (LocalOutages). Empty:
	// the policy is Cluster, or the load entered at no node of its own.
	LocalEntry string
}

// outages says whether every endpoint of the Service can go at once in the row: the
// no-endpoint rule applies.
func (c Context) outages() bool { return c.Drain || c.SingleReplica || c.ScaleToZero }

// Rule is one attribution rule: the phase it attributes a failed request to, where it applies
// and how it is tried. Attribute tries Rules in their order.
type Rule struct {
	Phase timeline.Phase
	// Doc says the rule in one line (Attribute's doc lists them).
	Doc string
	// Ref is the rule's row of docs/reference.md's table "Why a request failed", which
	// internal/refdoc generates from Rules.
	Ref Ref
	// Applies says whether the rule can match at all in a row of that context; nil: in every
	// row.
	Applies func(Context) bool
	// Pod tries the rule on one pod's life: the pod it blames, how far its moment is from the
	// request (the nearest pod wins) and why. Nil for a rule of the whole Service.
	Pod func(r *request, l *Life) (match, bool)
	// Whole tries the rule on the whole Service, naming no pod, when Pod (if any) matched none:
	// why it matched.
	Whole func(r *request) (string, bool)
}

// Ref is a rule's row of the reference's table: what the rule says, the evidence it reads and
// its time tolerance, for users.
type Ref struct {
	Rule, Evidence, Tolerance string
}

// match is one pod a rule matched, with the distance of its moment from the request.
type match struct {
	pod  string
	dist time.Duration
	why  string
	// container is the container whose end explains the failure when it is not the app's
	// (the sidecar in front).
	container string
}

// row is what the rules read of the whole row: its context and the evidence of its timeline.
type row struct {
	ctx   Context
	lives []Life
	// outs and locals are the windows without an endpoint: the Service's (Outages, in a row
	// where ctx.outages()) and those of the node the load entered (LocalOutages).
	outs, locals []Outage
	// direct says kube-proxy does not route the requests: a proxy that names pod addresses
	// sends to the pods itself, and a client that balances does too.
	direct bool
	// lag is the data plane's programming lag; held is Input.HeldFor.
	lag, held time.Duration
}

// request is one failed request as the rules read it.
type request struct {
	*row
	q *loadgen.Request
	// t0 is when it was sent, t1 when it failed.
	t0, t1 time.Time
	// named is the pod the ledger says it went to (lastSent); empty: none.
	named string
	// cut says it may have been cut: not timed out (nothing answered), not a proxy's own 504
	// (its own timeout: a pod that closes or resets a connection mid-request gets a 502 from
	// the proxy), and its connection was made (refused, or reset while connecting: a client
	// inside the cluster sees these, where docker-proxy's accepted connection hid them; such
	// a request was never accepted by the app, so not in flight).
	cut bool
}

func newRequest(rw *row, q *loadgen.Request, named string) *request {
	return &request{row: rw, q: q, t0: q.Timestamp, t1: q.Timestamp.Add(q.Latency), named: named,
		cut: !q.Class.TimedOut() && q.Class != loadgen.ProxyClass(504) && !neverConnected(q)}
}

// attribute tries the rules on r in their order: the first that matches wins. A pod rule
// blames, among the pods it matches, the one whose moment is nearest (the others are listed);
// a request that names its pod is matched to that pod only.
func (r *request) attribute() Attribution {
	for _, rule := range Rules {
		if rule.Applies != nil && !rule.Applies(r.ctx) {
			continue
		}
		if rule.Pod != nil {
			if a, ok := r.pods(rule); ok {
				return a
			}
		}
		if rule.Whole != nil {
			if why, ok := rule.Whole(r); ok {
				return Attribution{Seq: r.q.Seq, Phase: rule.Phase, Why: why}
			}
		}
	}
	// Not reached: the last rule, unknown, matches every request (TestRules).
	return Attribution{Seq: r.q.Seq, Phase: timeline.PhaseUnknown, Why: "no rule matched"}
}

// pods tries a pod rule on every pod (only the named one, when the request names one).
func (r *request) pods(rule Rule) (Attribution, bool) {
	var ms []match
	for i := range r.lives {
		l := &r.lives[i]
		if r.named != "" && l.Pod != r.named {
			continue
		}
		if m, ok := rule.Pod(r, l); ok {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return Attribution{}, false
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].dist < ms[j].dist })
	a := Attribution{Seq: r.q.Seq, Phase: rule.Phase, Pod: ms[0].pod, Container: ms[0].container, Why: ms[0].why}
	for _, m := range ms[1:] {
		a.Others = append(a.Others, m.pod)
	}
	return a, true
}

// unanswered is the Whole of an outage rule: a request that no pod answered, sent within one of
// the windows the row has (noEndpoint, noLocalEndpoint say which).
func unanswered(windows func(*request) []Outage, within func([]Outage, time.Time, time.Duration) (string, bool)) func(*request) (string, bool) {
	return func(r *request) (string, bool) {
		if r.named != "" {
			return "", false // a pod answered it
		}
		return within(windows(r), r.t0, r.lag)
	}
}

// Rules are the attribution rules, in the order they are tried: the first that matches wins.
// timeline.Phases is their phases in this order, and docs/reference.md's table of phases is
// made from them (tests check both). A new phase is one entry here (and its advice in
// internal/analyze, which a test checks is there).
var Rules = []Rule{
	// The proxy answered 5xx itself (no app pod header) and named no address: it had no pod
	// left to send to. Tried first: no pod rule can explain a request no pod got.
	{
		Phase:   timeline.PhaseProxyNoUpstream,
		Doc:     "the proxy in front answered itself and named no upstream: it had no pod to send to",
		Ref:     Ref{Rule: "through a proxy in front (`load.url`) that names its upstream (`load.upstreamHeader`): the proxy answered 5xx itself (no app pod header) and named no address. Tried first", Evidence: "the answer's headers", Tolerance: "—"},
		Applies: func(c Context) bool { return c.Proxy && c.UpstreamNamed },
		Whole: func(r *request) (string, bool) {
			if !r.q.Class.IsProxy() || isAddress(r.q.Upstream) {
				return "", false
			}
			return fmt.Sprintf("the proxy answered %d itself and named no upstream (%q): it had no pod to send to", r.q.Code, r.q.Upstream), true
		},
	},
	// The pod's process was killed (exit code 137; or its log ended after "sigterm" with no
	// "exiting"), the request was sent before the kill could have happened (t0 before the exit
	// window, or before the app's last line) and failed within the exit window ± Tolerance (or
	// between that line and the window's end), not by timing out (see inFlightAtKill).
	{
		Phase: timeline.PhaseSIGKILL,
		Doc:   "in flight when the container was killed at the end of its grace period",
		Ref:   Ref{Rule: "sent before the kill, failed (not by timeout, nor by a proxy's own 504) when the container was killed at the end of its grace period", Evidence: "exit code 137; or the app's log ended after `sigterm` with no `exiting` (a forced delete removes the Pod before any status says how it ended)", Tolerance: "exit window: `finishedAt` to +1 s (its resolution) or log end −2 s, narrowed by both (where they disagree, `finishedAt` stands); ± 250 ms. On a loaded node the exit is seen later than that: a request sent before the app's last line and failed between that line and the window's end counts too (the kill came after the line)"},
		Pod: func(r *request, l *Life) (match, bool) {
			if !r.cut || l.Exit != ExitKilled || l.ExitBy.IsZero() || !inFlightAtKill(l, r.t0, r.t1) {
				return match{}, false
			}
			return match{pod: l.Pod, dist: absDur(r.t1.Sub(l.ExitBy)), why: fmt.Sprintf("in flight when %s was killed (%s, by %s)", l.Pod, l.ExitWhy, clock(l.ExitBy))}, true
		},
	},
	// An HTTP/2 or gRPC request that failed with class goaway between the pod's deletion
	// (− Tolerance) and its end (+ Tolerance); or a health check the named pod answered
	// NOT_SERVING in that time.
	{
		Phase: timeline.PhaseGoAway,
		Doc:   "refused by a terminating server's GOAWAY and not sent again",
		Ref:   Ref{Rule: "an HTTP/2 or gRPC request that failed with class `goaway` (the server refused the stream, or closed the connection after GOAWAY with the stream unfinished) while a pod was terminating: the client did not send it again; or a health check (the default RPC) that a terminating pod answered NOT_SERVING (`grpc_not_serving`): its health service says so from SIGTERM, before the client has seen its GOAWAY, where a method of the app's own would still be served through a graceful stop", Evidence: "class `goaway`, or `grpc_not_serving` naming the pod; the pod's deletion up to its end", Tolerance: "−250 ms"},
		Pod: func(r *request, l *Life) (match, bool) {
			notServing := r.q.Class == loadgen.ClassGRPCNotServing && r.named == l.Pod
			if (r.q.Class != loadgen.ClassGoAway && !notServing) || l.Deleting.IsZero() || r.t1.Before(l.Deleting.Add(-Tolerance)) {
				return match{}, false
			}
			if e := l.end(); !e.IsZero() && r.t1.After(e.Add(Tolerance)) {
				return match{}, false
			}
			if notServing {
				return match{pod: l.Pod, dist: absDur(r.t1.Sub(l.Deleting)), why: fmt.Sprintf("answered NOT_SERVING by the health service of %s, terminating since %s: the server said it was going away on a connection the client had not left yet (its GOAWAY not seen yet); a method of the app's own would have been served through a graceful stop", l.Pod, clock(l.Deleting))}, true
			}
			return match{pod: l.Pod, dist: absDur(r.t1.Sub(l.Deleting)), why: fmt.Sprintf("refused by the GOAWAY of %s, terminating since %s, and not sent again by the client", l.Pod, clock(l.Deleting))}, true
		},
	},
	// The request (not timed out) failed with an error that names the server's GOAWAY for the
	// connection's age (debug data "max_age": grpc-go's MaxConnectionAge; its
	// MaxConnectionAgeGrace then closed the connection under the RPC). The server's own
	// reason, not a termination: tried before in-flight-cut, which would credit the cut to
	// whichever pod exited nearest. No pod is named.
	{
		Phase: timeline.PhaseConnectionAge,
		Doc:   "cut when the server closed the connection for its age (GOAWAY \"max_age\")",
		Ref:   Ref{Rule: "a request (not timed out) whose error names the server's GOAWAY for the connection's age: gRPC's `MaxConnectionAge` sent GOAWAY and `MaxConnectionAgeGrace` then closed the connection with the RPC still on it, disruption or not. Tried before `in-flight-cut`, which would credit the cut to whichever pod exited nearest; no pod is named. A server that gives no reason with its GOAWAY (grpc-go's gives `max_age`) leaves such cuts to the rules below, or to `steady` when no pod was terminating; so does a grace that runs out while the server already drains for its termination: grpc-go sends one GOAWAY per connection, and the client names the graceful stop's (`in-flight-cut`, whose reason then says the drain did not wait)", Evidence: "the client's error: `debug data: \"max_age\"`", Tolerance: "—"},
		Whole: func(r *request) (string, bool) {
			if !r.cut || !strings.Contains(r.q.Error, MaxAgeGoAway) {
				return "", false
			}
			return "cut when the server closed the connection after its GOAWAY for the connection's age (debug data \"max_age\"): the RPC outlived the server's MaxConnectionAgeGrace", true
		},
	},
	// The same as sigkill with a process that exited on its own (or whose exit is known but not
	// how): the request was in flight when the process exited. For both, a request sent after
	// the app's listener closed and failed at once (within Tolerance) was never accepted: not
	// in flight; nor was one whose connection failed to open (refused, or reset while
	// connecting). One sent after the listener's line that lasted until the exit was being
	// served: in flight. With keep-alive, a request sent after the Service stopped routing new
	// connections to the pod (Routed + Tolerance) rode a kept-alive connection:
	// pinned-connection instead.
	{
		Phase: timeline.PhaseInFlightCut,
		Doc:   "in flight when the process exited on its own",
		Ref:   Ref{Rule: "sent before the process exited on its own (and before its listener closed, when the app says so), failed at the exit; never a request whose connection failed to open, that timed out, or that a proxy in front answered 504 (its own timeout)", Evidence: "app line `exiting`; else an exit code other than 137", Tolerance: "± 250 ms around the exit window"},
		Pod: func(r *request, l *Life) (match, bool) {
			if !r.cut || l.Exit == ExitKilled || l.ExitBy.IsZero() || !inFlightAtExit(l, r.t0, r.t1) || pinned(l, r.t0, r.ctx.KeepAlive) {
				return match{}, false
			}
			why := fmt.Sprintf("in flight when %s exited (%s, by %s)", l.Pod, orSeen(l.ExitWhy), clock(l.ExitBy))
			if strings.Contains(r.q.Error, GracefulGoAway) {
				why += "; the server had sent its graceful stop's GOAWAY, and its drain did not wait for the RPC (a deadline then Stop, the exit, or a MaxConnectionAgeGrace that ran out meanwhile: the client cannot tell which)"
			}
			return match{pod: l.Pod, dist: absDur(r.t1.Sub(l.ExitBy)), why: why}, true
		},
	},
	// The pod has a sidecar in front of the app (Input.Front) that stopped accepting (its
	// listener's line, or the start of its exit window) after the deletion and before the app
	// did: the request was in flight through it when it exited (as in-flight-cut), or was sent
	// after it stopped until the pod stopped being routed plus the programming lag (as
	// propagation). Attributed to that container.
	// A sidecar that wrote no line of its end in the pod (one that writes none), whose SIGTERM
	// its spec gives (Input.FrontSpec: a classic one at the deletion + its own preStop, at most
	// the grace period; a native one once the app exited), is assumed to stop accepting at that
	// SIGTERM, or at the start of its exit window (container status, to the second) if that
	// ended before it: nothing it writes can say otherwise, and it owns the port, so a
	// connection refused, reset or closed (EOF) while the app behind it still accepted is its.
	// The request was in flight through it (sent before that moment, failed from it and within
	// its exit window), or was sent after that moment, refused, reset or EOF, before the app
	// stopped accepting (its lines; without them the start of its exit window) and while the
	// pod was routable as above. Its Why says "SIGTERM from its spec: …; it writes no lines".
	{
		Phase: timeline.PhaseSidecarExit,
		Doc:   "a sidecar in front of the app stopped accepting before the app did",
		Ref:   Ref{Rule: "the pod has a sidecar in front of the app (`app.container`) that stopped accepting after the deletion and before the app did", Evidence: "the sidecar's own lines or its container status; for a sidecar that writes none, its SIGTERM as its spec gives it (a classic one: the deletion + its own preStop, at most the grace period; a native one: once the app exited), where it is assumed to stop accepting (or at its exit window, if that came first): then only refused, reset or EOF sent before the app stopped accepting count, since nothing else in the pod owns the port", Tolerance: "as `in-flight-cut` and `propagation`"},
		Pod: func(r *request, l *Life) (match, bool) {
			f := l.Front
			if f == nil || l.Deleting.IsZero() {
				return match{}, false
			}
			if !f.SpecSIGTERM.IsZero() {
				return quietSidecarExit(r.q, l, r.cut, r.lag)
			}
			stop := f.stopped()
			// Only a sidecar that went first: once the app no longer accepts, its own phases say why.
			if stop.IsZero() || stop.Before(l.Deleting.Add(-Tolerance)) {
				return match{}, false
			}
			if app := l.notAccepting(); !app.IsZero() && !stop.Before(app) {
				return match{}, false
			}
			if r.cut && !f.ExitBy.IsZero() && r.t0.Before(f.ExitFrom) && !r.t1.Before(f.ExitFrom.Add(-Tolerance)) && !r.t1.After(f.ExitBy.Add(Tolerance)) {
				return match{pod: l.Pod, container: f.Container, dist: absDur(r.t1.Sub(f.ExitBy)), why: fmt.Sprintf("in flight through sidecar %s of %s when it exited (%s, by %s)", f.Container, l.Pod, orSeen(f.ExitWhy), clock(f.ExitBy))}, true
			}
			until := l.routableUntil(stop, r.lag)
			if r.t0.Before(stop.Add(-Tolerance)) || r.t0.After(until.Add(Tolerance)) {
				return match{}, false
			}
			return match{pod: l.Pod, container: f.Container, dist: absDur(r.t0.Sub(stop)), why: fmt.Sprintf("sent after sidecar %s of %s stopped accepting (%s) while the app still did and the pod was still routable (until %s)", f.Container, l.Pod, clock(stop), clock(until))}, true
		},
	},
	// Through a proxy: the request was sent after the pod stopped accepting and the proxy sent
	// it to that pod, or, naming none, sent it while the pod was still in the proxy's list
	// (proxyPropagation).
	{
		Phase:   timeline.PhaseProxyPropagation,
		Doc:     "the proxy in front still sent the request to a pod that no longer accepted",
		Ref:     Ref{Rule: "through a proxy in front: the proxy sent the request to a pod that no longer accepted (the request names the pod: its address in the upstream header, or its pod header), or, naming none, sent it while such a pod was still in the proxy's list", Evidence: "listener closed or exit (app lines; else the deletion); the pod's address (its IP on the timeline); the proxy's list: until the last request the ledger shows it sent to the pod, else the pod's removal plus the programming lag", Tolerance: "−250 ms"},
		Applies: func(c Context) bool { return c.Proxy },
		Pod: func(r *request, l *Life) (match, bool) {
			return proxyPropagation(l, r.named, r.t0, r.lag)
		},
	},
	// A client that balances itself: the RPC went to a pod's address (its Peer) after the pod
	// stopped accepting (its lines, else its removal); or, going to no address at all, it was
	// sent after a pod's deletion while another pod was ready (heldNoReady).
	{
		Phase:   timeline.PhaseStaleAddress,
		Doc:     "a client that balances itself sent to an address it still held after the pod stopped accepting, or held only gone ones",
		Ref:     Ref{Rule: "a gRPC client that balances itself (`round_robin`): the RPC went to a pod's address after that pod stopped accepting (its listener closed, its exit, or it was gone); or, going to no address at all, it was sent after a pod's deletion while another pod was ready in the Service: the client held only gone addresses and had not resolved again", Evidence: "the RPC's peer address mapped to the pod by its IP; endpoint ready; the deletions", Tolerance: "−250 ms"},
		Applies: func(c Context) bool { return c.Balanced },
		Pod: func(r *request, l *Life) (match, bool) {
			if r.named == "" {
				return match{}, false
			}
			from := l.notAccepting()
			if from.IsZero() {
				from = l.Gone
			}
			if from.IsZero() || r.t0.Before(from.Add(-Tolerance)) {
				return match{}, false
			}
			return match{pod: l.Pod, dist: absDur(r.t0.Sub(from)), why: fmt.Sprintf("sent to %s's address %s %s after it stopped accepting (%s): the client still held the address", l.Pod, r.q.Peer, r.t0.Sub(from).Round(time.Millisecond), clock(from))}, true
		},
		Whole: func(r *request) (string, bool) {
			if r.named != "" || r.q.Peer != "" {
				return "", false
			}
			return heldNoReady(r.lives, r.t0)
		},
	},
	// externalTrafficPolicy Local: the request, which names no pod, was sent while the node it
	// entered had no endpoint of its own that could take it (noLocalEndpoint).
	{
		Phase:   timeline.PhaseNoLocalEndpoint,
		Doc:     "the node the load entered had no local endpoint (externalTrafficPolicy Local)",
		Ref:     Ref{Rule: "with `externalTrafficPolicy: Local` and the load entering at one node (`load.entry: node`): sent while that node had no endpoint of its own that could take a new connection (as `no-endpoint`, over the pods the timeline places on that node), after a deletion, until one of its pods was ready again plus the programming lag; kube-proxy there drops external traffic (the client times out) though pods on other nodes may be ready; never a request a pod answered. Tried before `no-endpoint`", Evidence: "each pod's node (`pod-scheduled`, recorded for the pods that ran when the observer started too); endpoint ready, not ready (serving, terminating) and removed; app lines `listener_closed`, `exiting`", Tolerance: "−250 ms"},
		Applies: func(c Context) bool { return c.LocalEntry != "" },
		Whole:   unanswered(func(r *request) []Outage { return r.locals }, noLocalEndpoint),
	},
	// In a row that drains nodes, runs one replica or scales to zero (Context.Drain,
	// SingleReplica, ScaleToZero), the request, which names no pod, was sent while the Service
	// had no endpoint that could take it (Outages: none ready, none serving while terminating,
	// or those left closed their listener by their own lines; after a deletion), from
	// Tolerance before that moment until an endpoint was ready again plus the programming lag:
	// a drain had evicted every replica, or the only replica stopped serving before its
	// replacement was ready. It comes before the pod rules below, which would otherwise split
	// the outage between propagation and unknown.
	{
		Phase:   timeline.PhaseNoEndpoint,
		Doc:     "the Service had no endpoint left that could take the request",
		Ref:     Ref{Rule: "in a row that drains nodes, runs one replica or scales to zero: a node drain had evicted every replica, or the only replica stopped serving, and none was ready again: sent while the Service had no endpoint that could take a new connection (none ready, none serving while terminating, or those left had closed their listener by their own lines), until an endpoint was ready again plus kube-proxy's programming p99 (measured; else 2 s); never a request a pod answered", Evidence: "endpoint ready, not ready (serving, terminating) and removed; app lines `listener_closed`, `exiting`", Tolerance: "−250 ms"},
		Applies: Context.outages,
		Whole:   unanswered(func(r *request) []Outage { return r.outs }, noEndpoint),
	},
	// Keep-alive on, the request was sent after the pod stopped being routed and failed (not
	// by timing out) between the pod's deletion and its end: only a connection opened earlier
	// can have carried it there.
	{
		Phase:   timeline.PhasePinnedConnection,
		Doc:     "a kept-alive connection to a terminating pod closed under the request",
		Ref:     Ref{Rule: "keep-alive: sent after the Service stopped routing new connections to the pod, failed while it terminated: only a kept-alive connection takes a request there", Evidence: "endpoint not ready/removed; keep-alive on", Tolerance: "250 ms after routing stopped"},
		Applies: func(c Context) bool { return c.KeepAlive },
		Pod: func(r *request, l *Life) (match, bool) {
			if r.direct || !r.cut || !pinned(l, r.t0, r.ctx.KeepAlive) || l.Deleting.IsZero() || r.t1.Before(l.Deleting.Add(-Tolerance)) {
				return match{}, false
			}
			if e := l.end(); !e.IsZero() && r.t1.After(e.Add(Tolerance)) {
				return match{}, false
			}
			return match{pod: l.Pod, dist: absDur(r.t0.Sub(l.Routed)), why: fmt.Sprintf("sent %s after %s stopped being routed (%s), on a kept-alive connection to it", r.t0.Sub(l.Routed).Round(time.Millisecond), l.Pod, clock(l.Routed))}, true
		},
	},
	// The request was sent while the pod no longer accepted connections (listener closed or
	// process exited; when neither is known, the end of a native preStop sleep (HeldFor), else
	// the deletion) but the data plane could still route new connections to it: up to Routed
	// (or the pod's removal) plus the programming lag (kube-proxy's measured p99, else
	// DefaultProgrammingLag).
	{
		Phase: timeline.PhasePropagation,
		Doc:   "sent while the pod no longer accepted connections but could still be routed to",
		Ref:   Ref{Rule: "sent while the pod no longer accepted connections but could still be routed to", Evidence: "listener closed or exit (app lines; else the deletion) up to the endpoint's removal plus kube-proxy's programming p99 (measured; else 2 s)", Tolerance: "± 250 ms"},
		Pod: func(r *request, l *Life) (match, bool) {
			if r.direct || l.Deleting.IsZero() {
				return match{}, false
			}
			from, what := l.notAccepting(), "not accepting"
			switch {
			case !from.IsZero():
			case r.held > 0:
				// Its preStop's sleep held SIGTERM back: the pod accepted until then, and a
				// request sent before could not find it gone.
				from, what = l.Deleting.Add(r.held), fmt.Sprintf("done with its %s preStop sleep", r.held)
			default:
				from, what = l.Deleting, "deleted"
			}
			until := l.routableUntil(from, r.lag)
			if r.t0.Before(from.Add(-Tolerance)) || r.t0.After(until.Add(Tolerance)) {
				return match{}, false
			}
			return match{pod: l.Pod, dist: absDur(r.t0.Sub(from)), why: fmt.Sprintf("sent while %s was %s (%s) but still routable (until %s)", l.Pod, what, clock(from), clock(until))}, true
		},
	},
	// The request was sent within StartupWindow after a new pod's endpoint became ready
	// (± Tolerance), or named a pod that was not ready yet. A proxy that finds the pods itself
	// does not send to a pod because its endpoint turned ready: only a request that names the
	// new pod is its.
	{
		Phase: timeline.PhaseStartup,
		Doc:   "a new pod got traffic before it could serve",
		Ref:   Ref{Rule: "sent within 2 s of a new pod's endpoint becoming ready (or answered by a pod not yet ready)", Evidence: "endpoint ready", Tolerance: "−250 ms"},
		Pod: func(r *request, l *Life) (match, bool) {
			if l.Created.IsZero() && l.EndpointReady.IsZero() {
				return match{}, false
			}
			if r.named == l.Pod && (l.EndpointReady.IsZero() || r.t0.Before(l.EndpointReady.Add(StartupWindow))) {
				return match{pod: l.Pod, why: fmt.Sprintf("answered by %s before it was ready for %s", l.Pod, StartupWindow)}, true
			}
			if r.direct || l.EndpointReady.IsZero() || r.t0.Before(l.EndpointReady.Add(-Tolerance)) || r.t0.After(l.EndpointReady.Add(StartupWindow)) {
				return match{}, false
			}
			return match{pod: l.Pod, dist: absDur(r.t0.Sub(l.EndpointReady)), why: fmt.Sprintf("sent %s after new pod %s became ready (%s)", r.t0.Sub(l.EndpointReady).Round(time.Millisecond), l.Pod, clock(l.EndpointReady))}, true
		},
	},
	// No pod was terminating (deletion to end) or starting (creation to endpoint ready +
	// StartupWindow) within 2 s of the request.
	{
		Phase: timeline.PhaseSteady,
		Doc:   "no pod was terminating or starting: the app or the harness is broken",
		Ref:   Ref{Rule: "no pod terminating or starting within 2 s: the app or the harness is broken", Evidence: "—", Tolerance: "2 s"},
		Whole: func(r *request) (string, bool) {
			if busy(r.lives, r.t0.Add(-2*time.Second), r.t1.Add(2*time.Second)) {
				return "", false
			}
			return "no pod was terminating or starting within 2 s", true
		},
	},
	// Otherwise: the last rule matches every request.
	{
		Phase: timeline.PhaseUnknown,
		Doc:   "a pod was terminating or starting, but no rule matched",
		Ref:   Ref{Rule: "a pod was terminating or starting, but no rule matched", Evidence: "—", Tolerance: "—"},
		Whole: func(*request) (string, bool) {
			return "a pod was terminating or starting, but no rule matched", true
		},
	},
}
