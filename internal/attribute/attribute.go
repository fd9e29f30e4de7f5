// Package attribute attributes every failed request of a row to a phase of one pod's
// termination (or start), from the request ledger, the observer's timeline and, where the app
// writes them, its lifecycle lines. The rules are Rules, in the order they are tried, each with
// the evidence it uses and its time tolerance; docs/reference.md's "Why a request failed" is
// made from them for users.
package attribute

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Tolerance is the slack allowed around a precisely known moment (a pod moment stamped on
// receipt of its watch event, an app line's own time): watch delivery and the client's view of
// a closed connection lag the event by tens of milliseconds.
const Tolerance = 250 * time.Millisecond

// DefaultProgrammingLag is how long after the control plane (the endpoint no longer ready in
// the EndpointSlices) the data plane may still route new connections to a pod when kube-proxy's
// own number is unknown: kube-proxy's minSyncPeriod (1 s) plus a sync.
const DefaultProgrammingLag = 2 * time.Second

// StartupWindow is how long after a new pod's endpoint became ready a failure may be blamed on
// that pod not serving yet.
const StartupWindow = 2 * time.Second

// Input is what Attribute reads.
type Input struct {
	// Requests is the load's ledger (every request; only the failed ones are attributed).
	Requests []loadgen.Request
	// Timeline is the observer's timeline of the row.
	Timeline timeline.Timeline
	// Container is the app's container: container exits and app lines of other containers are
	// ignored. Empty: any container.
	Container string
	// Front is a sidecar in front of the app (the container the load reaches, when it is not
	// Container): its own exit and lines make Life.Front, and the sidecar-exit rule. Empty:
	// none. Ignored without Container.
	Front string
	// FrontSpec is what Front's spec says of when the kubelet sends it SIGTERM: the moment the
	// sidecar-exit rule starts from in a pod where Front writes no lines. Zero: not known.
	FrontSpec FrontSpec
	// HeldFor is how long after its deletion the app's container is certainly still accepting
	// when its own lines do not say when it stopped: the native sleep action of its preStop
	// (the kubelet sends SIGTERM only once the sleep ends, at most the grace period). Zero: not
	// known (no preStop, an exec or httpGet hook that may end early, a forced deletion).
	HeldFor time.Duration
	// ProgrammingLag is how long the data plane may lag the control plane (0:
	// DefaultProgrammingLag); the engine passes kube-proxy's measured p99 when it has it.
	ProgrammingLag time.Duration
	// Context is where the rules apply: what the row's configuration says of the load and of
	// the disruption.
	Context
}

// FrontSpec is what the spec of the sidecar in front says of when the kubelet sends it SIGTERM
// (pkg/kubelet runs each container's preStop on its own, then stops that container): a classic
// sidecar when its own preStop ends, the deletion + PreStop (at most the pod's grace period); a
// native one (an init container with restartPolicy Always) only once the app's containers
// exited. The zero value says nothing.
type FrontSpec struct {
	// Known: the spec gives the moment (a classic sidecar whose preStop has a known length: a
	// native sleep, a sleep command, none; or a native sidecar).
	Known bool
	// Native: an init container with restartPolicy Always.
	Native bool
	// PreStop is the length of its own preStop (0: none).
	PreStop time.Duration
}

// Attribution is the phase one failed request is attributed to.
type Attribution struct {
	Seq   uint64         `json:"seq"`
	Phase timeline.Phase `json:"phase"`
	// Pod is the pod whose termination (or start) explains the failure, if any.
	Pod string `json:"pod,omitempty"`
	// Others are the other pods the same rule matched (two pods terminating at once); Pod is
	// the one whose moment is nearest.
	Others []string `json:"others,omitempty"`
	// Container is the container whose end explains the failure when it is not the app's (the
	// sidecar in front, for sidecar-exit).
	Container string `json:"container,omitempty"`
	// Why says the rule and the moments it matched.
	Why string `json:"why"`
}

// Result is the attribution of a row's failed requests.
type Result struct {
	Failed []Attribution             `json:"failed"`
	Counts map[timeline.Phase]int    `json:"counts"`
	Lives  []Life                    `json:"lives"`
	BySeq  map[uint64]timeline.Phase `json:"-"`
}

// Exit is how a pod's process ended, as far as the evidence tells.
type Exit string

// Exits.
const (
	ExitUnknown Exit = ""       // no evidence
	ExitOwn     Exit = "own"    // the process exited by itself (app "exiting" line, exit code other than 137)
	ExitKilled  Exit = "killed" // SIGKILL (exit code 137, or the app's log ended after "sigterm" with no "exiting")
)

// Life is what the timeline tells of one pod: when it started, was deleted, stopped being
// routed, got SIGTERM, closed its listener and exited. A zero time is a moment not seen.
type Life struct {
	Pod           string    `json:"pod"`
	Created       time.Time `json:"created,omitzero"`
	EndpointReady time.Time `json:"endpointReady,omitzero"`
	Deleting      time.Time `json:"deleting,omitzero"`
	// Routed is when the control plane stopped routing new connections to the pod: its
	// endpoint not ready or removed (timeline.Propagation), after Deleting.
	Routed time.Time `json:"routed,omitzero"`
	// End is the app container's end.
	End
	Gone time.Time `json:"gone,omitzero"`
	// IP is the pod's address (timeline.PodAddress): a proxy's named upstream maps to it.
	IP string `json:"ip,omitempty"`
	// LastSent is when the load sent its last request that named this pod: answered by it (the
	// app's pod header) or, through a proxy, sent to its address (Request.Upstream).
	LastSent time.Time `json:"lastSent,omitzero"`
	// LastAnswered is when the pod last answered a request, named as LastSent names it: a
	// window that ends there, at or after the pod stopped serving, was cut by the pod's own end
	// (analyze's censored windows), not ended by the sender.
	LastAnswered time.Time `json:"lastAnswered,omitzero"`
	// Front is the sidecar in front of the app (Input.Front) in this pod: its own end, from its
	// lines and its container status; nil without one.
	Front *Sidecar `json:"front,omitempty"`
}

// End is what the timeline tells of one container's end: its preStop, stop signal, listener
// and exit. A zero time is a moment not seen.
type End struct {
	// PreStop is when its preStop hook started, when the app says so (the sample app's
	// /prestop writes a "prestop" line with phase=start).
	PreStop time.Time `json:"preStop,omitzero"`
	SIGTERM time.Time `json:"sigterm,omitzero"`
	// SIGTERMAgain is the app's second "sigterm" line: a stop signal sent again (a kubelet that
	// restarted and began the termination anew).
	SIGTERMAgain   time.Time `json:"sigtermAgain,omitzero"`
	ListenerClosed time.Time `json:"listenerClosed,omitzero"`
	// The process exited within [ExitFrom, ExitBy]: one moment for an app "exiting" line, a
	// second for a container status (finishedAt has one-second resolution).
	ExitFrom time.Time `json:"exitFrom,omitzero"`
	ExitBy   time.Time `json:"exitBy,omitzero"`
	// ExitExact: the window is one moment, from the app's own "exiting" line.
	ExitExact bool `json:"exitExact,omitempty"`
	// AliveAt is the container's last line of its own (the time the app wrote on it): the
	// process was alive then, so a kill came after it. Zero for an app that writes no lines.
	AliveAt time.Time `json:"aliveAt,omitzero"`
	Exit    Exit      `json:"exit,omitempty"`
	ExitWhy string    `json:"exitWhy,omitempty"`
}

// ExitWindow is how wide the exit window is: 0 for one moment or an exit not seen.
func (e *End) ExitWindow() time.Duration {
	if e.ExitFrom.IsZero() || e.ExitBy.IsZero() {
		return 0
	}
	return e.ExitBy.Sub(e.ExitFrom)
}

// Sidecar is a sidecar container's end, as Life tells the app's.
type Sidecar struct {
	Container string `json:"container"`
	End
	// SpecSIGTERM is when its spec says the kubelet sent it SIGTERM (Input.FrontSpec), in a pod
	// where it wrote no line of its end (a sidecar that writes none); SpecWhy says how the spec
	// gives it. Zero when its lines tell, or the spec does not.
	SpecSIGTERM time.Time `json:"specSigterm,omitzero"`
	SpecWhy     string    `json:"specWhy,omitempty"`
}

// quiet tells whether the sidecar wrote no line of its end: no preStop, SIGTERM, listener or
// exiting line.
func (s *Sidecar) quiet() bool {
	return s.PreStop.IsZero() && s.SIGTERM.IsZero() && s.ListenerClosed.IsZero() && !s.ExitExact
}

// quietStop is when a sidecar that writes no lines is taken to have stopped accepting: at its
// SIGTERM as its spec gives it, unless its container status says it had exited before then (the
// start of its exit window); and how that is known.
func (s *Sidecar) quietStop() (time.Time, string) {
	if !s.ExitBy.IsZero() && s.ExitBy.Before(s.SpecSIGTERM.Add(-Tolerance)) {
		return s.ExitFrom, fmt.Sprintf("its exit window (container status), before the SIGTERM its spec gives at %s; it writes no lines", clock(s.SpecSIGTERM))
	}
	return s.SpecSIGTERM, s.SpecWhy
}

// stopped is the first moment the sidecar may no longer have accepted: its listener's line, or
// the start of its exit window; zero when neither is known.
func (s *Sidecar) stopped() time.Time {
	return earliest(s.ListenerClosed, s.ExitFrom)
}

// WithFront adds the front sidecar's end to each of lives, read from tl as Lives reads the
// app's (its lines and its container's statuses).
func WithFront(lives []Life, tl timeline.Timeline, front string) []Life {
	if front == "" {
		return lives
	}
	fl := map[string]Life{}
	for _, l := range Lives(tl, front) {
		fl[l.Pod] = l
	}
	for i := range lives {
		if f, ok := fl[lives[i].Pod]; ok && f.End != (End{}) {
			lives[i].Front = &Sidecar{Container: front, End: f.End}
		}
	}
	return lives
}

// withFrontSpec gives the front sidecar of each deleted pod where it wrote no line of its end
// its SIGTERM as spec says (Sidecar.SpecSIGTERM), adding the sidecar to a pod where nothing of
// it was seen. graces are the pods' deletion grace periods, as far as known.
func withFrontSpec(lives []Life, front string, spec FrontSpec, graces map[string]time.Duration) []Life {
	if front == "" || !spec.Known {
		return lives
	}
	for i := range lives {
		l := &lives[i]
		if l.Deleting.IsZero() || (l.Front != nil && !l.Front.quiet()) {
			continue
		}
		g, ok := graces[l.Pod]
		at, why := spec.sigterm(l, g, ok)
		if at.IsZero() {
			continue
		}
		if l.Front == nil {
			l.Front = &Sidecar{Container: front}
		}
		l.Front.SpecSIGTERM, l.Front.SpecWhy = at, why+"; it writes no lines"
	}
	return lives
}

// sigterm is when the kubelet sends the sidecar SIGTERM in pod l, by the spec, and how the spec
// says so; zero when it cannot tell (a native sidecar in a pod whose app was not seen exiting).
// grace is the pod's deletion grace period, when known: the preStop gets at most that (a forced
// delete's grace of 0 gives it 1 s).
func (sp FrontSpec) sigterm(l *Life, grace time.Duration, graceKnown bool) (time.Time, string) {
	pre, why := sp.PreStop, "no preStop"
	if pre > 0 {
		why = fmt.Sprintf("after its %s preStop", pre)
	}
	if g := max(grace, time.Second); graceKnown && pre > g {
		pre, why = g, fmt.Sprintf("its %s preStop cut at the grace period's %s", sp.PreStop, g)
	}
	at := l.Deleting.Add(pre)
	if sp.Native {
		if l.ExitFrom.IsZero() {
			return time.Time{}, ""
		}
		if l.ExitFrom.After(at) {
			at = l.ExitFrom
		}
		why = "native, once the app exited (" + why + ")"
	}
	return at, "SIGTERM from its spec: " + why
}

// notAccepting is the first moment the pod is known to refuse new connections: its listener
// closed or its process exited, as the app's own lines tell (a container status is too coarse
// for this); zero when unknown.
func (l *Life) notAccepting() time.Time {
	exit := time.Time{}
	if l.ExitExact {
		exit = l.ExitFrom
	}
	return earliest(l.ListenerClosed, exit)
}

// end is when the pod was certainly gone: the later of its exit and its removal; zero while
// its Pod object was not seen gone (it is still terminating).
func (l *Life) end() time.Time {
	if l.Gone.IsZero() {
		return time.Time{}
	}
	if l.Gone.After(l.ExitBy) {
		return l.Gone
	}
	return l.ExitBy
}

// Lives reads every pod's life from a timeline.
func Lives(tl timeline.Timeline, container string) []Life {
	by := map[string]*Life{}
	get := func(pod string) *Life {
		l := by[pod]
		if l == nil {
			l = &Life{Pod: pod}
			by[pod] = l
		}
		return l
	}
	sawExiting := map[string]bool{}
	sawSIGTERM := map[string]bool{}
	// logEnd and sawStatus: the pod's log end seen, and its container status read, so that the
	// status's lower bound of the exit stands against the log end's assumed one (exitOfStatus).
	logEnd := map[string]time.Time{}
	sawStatus := map[string]bool{}
	for _, e := range tl.Events {
		if e.Pod == "" {
			continue
		}
		l := get(e.Pod)
		switch e.Kind {
		case timeline.PodCreated:
			setFirst(&l.Created, e.Time)
		case timeline.EndpointReady:
			setFirst(&l.EndpointReady, e.Time)
		case timeline.PodDeleting:
			setFirst(&l.Deleting, e.Time)
		case timeline.PodGone:
			setFirst(&l.Gone, e.Time)
		case timeline.PodAddress:
			l.IP = e.Address
		case timeline.AppEvent:
			if container != "" && e.Container != "" && e.Container != container {
				continue
			}
			if e.App == nil {
				continue
			}
			if e.Time.After(l.AliveAt) {
				l.AliveAt = e.Time
			}
			switch e.App.Event {
			case timeline.LineSIGTERM:
				if sawSIGTERM[e.Pod] {
					setFirst(&l.SIGTERMAgain, e.Time)
				}
				setFirst(&l.SIGTERM, e.Time)
				sawSIGTERM[e.Pod] = true
			case timeline.LineListenerClosed:
				setFirst(&l.ListenerClosed, e.Time)
			case timeline.LinePreStop:
				if e.App.Fields["phase"] == timeline.PreStopStart {
					setFirst(&l.PreStop, e.Time)
				}
			case timeline.LineExiting:
				sawExiting[e.Pod] = true
				// The app's own line is the precise exit; a container status may still say
				// how (exit code 137 while exiting).
				l.ExitFrom, l.ExitBy, l.ExitExact = e.Time, e.Time, true
				if l.Exit == ExitUnknown {
					l.Exit, l.ExitWhy = ExitOwn, "app line \"exiting\""
				}
			}
		case timeline.ContainerExited:
			if container != "" && e.Container != "" && e.Container != container {
				continue
			}
			if e.ExitCode != nil {
				if *e.ExitCode == 137 {
					l.Exit = ExitKilled
				} else {
					l.Exit = ExitOwn
				}
				if sawExiting[e.Pod] {
					l.ExitWhy = fmt.Sprintf("app line \"exiting\", exit code %d", *e.ExitCode)
				} else {
					l.ExitWhy = fmt.Sprintf("exit code %d", *e.ExitCode)
				}
			}
			if !sawExiting[e.Pod] {
				// finishedAt is truncated to the second; the status is received after the exit.
				from, by := e.Time.Add(-2*time.Second), e.Time
				if !e.Reported.IsZero() {
					from = e.Reported
					if r := e.Reported.Add(time.Second); r.Before(by) {
						by = r
					}
				}
				// finishedAt is the kubelet's own record of the exit; the log-end bound below
				// assumes the end is seen within 2 s, which a loaded machine can break (a killed
				// app's log end seen 3.05 s after the kill). Where the two disagree, the status
				// stands; where they overlap, the status's start stands too (exitOfStatus).
				l.exitOfStatus(from, by, logEnd[e.Pod])
				sawStatus[e.Pod] = true
			}
		case timeline.AppLogEnded:
			if container != "" && e.Container != "" && e.Container != container {
				continue
			}
			setFirst2(logEnd, e.Pod, e.Time)
			switch {
			case sawExiting[e.Pod]:
			case sawStatus[e.Pod]:
				// The process was gone by the time its log ended: only the window's end moves.
				if !e.Time.Before(l.ExitFrom) && e.Time.Before(l.ExitBy) {
					l.ExitBy = e.Time
				}
			default:
				// The stream ends once the process is gone, and is seen at most 2 s later (as a
				// status is): with four rows at once on 2 cores the end of a killed app's log was
				// seen 1.3 s after the kill, so 1 s, the bound until then, put the exit after
				// the requests it cut (122 of 204 sigkill failures left unknown).
				l.narrowExit(e.Time.Add(-2*time.Second), e.Time, false)
			}
			if l.Exit == ExitUnknown && sawSIGTERM[e.Pod] && !sawExiting[e.Pod] {
				l.Exit, l.ExitWhy = ExitKilled, "app log ended after \"sigterm\" with no \"exiting\""
			}
		}
	}
	for _, p := range tl.Propagation {
		l := get(p.Pod)
		if l.Deleting.IsZero() {
			l.Deleting = p.DeletingAt
		}
		if d := p.Routed(); d >= 0 {
			l.Routed = p.DeletingAt.Add(d)
		}
	}
	out := make([]Life, 0, len(by))
	for _, l := range by {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// deletionGraces are the pods' deletion grace periods, from their deletion events.
func deletionGraces(tl timeline.Timeline) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, e := range tl.Events {
		if e.Kind != timeline.PodDeleting || e.Pod == "" || e.GraceSeconds == nil {
			continue
		}
		if _, seen := out[e.Pod]; !seen {
			out[e.Pod] = time.Duration(*e.GraceSeconds) * time.Second
		}
	}
	return out
}

// exitOfStatus sets the exit window from a container status, [from, by] (finishedAt, to the
// second), once the app's log end (logEnd, if seen) may have narrowed it: the status's start
// stands, and the log end, seen after the process was gone, can only bring the end earlier. The
// log end's own start (its end − 2 s) is an assumption about how soon the end is seen, which a
// loaded node breaks: measured in CI, an app that died at its SIGTERM 08.94 s (the EOFs of the
// requests it cut) had finishedAt 09 s and its log end seen at 11.26 s, 2.32 s later, so the
// window [9.26, 10] put the exit after the requests it cut, and 59 of 196 failures of a negative
// control for in-flight-cut went to startup. A window that cannot hold the status is replaced by
// it, as narrowExit does.
func (e *End) exitOfStatus(from, by, logEnd time.Time) {
	if logEnd.IsZero() || e.ExitBy.IsZero() {
		e.narrowExit(from, by, true)
		return
	}
	if !logEnd.Before(from) && logEnd.Before(by) {
		by = logEnd
	}
	e.ExitFrom, e.ExitBy = from, by
}

// setFirst2 sets m[k] to v unless it is set.
func setFirst2(m map[string]time.Time, k string, v time.Time) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// narrowExit intersects the exit window with [from, by]; when they do not overlap (clocks
// disagree), [from, by] replaces it if it is authoritative (a container status), else the
// window already known stays.
func (e *End) narrowExit(from, by time.Time, authoritative bool) {
	if e.ExitBy.IsZero() || authoritative && (e.ExitBy.Before(from) || e.ExitFrom.After(by)) {
		e.ExitFrom, e.ExitBy = from, by
		return
	}
	if from.Before(e.ExitFrom) {
		from = e.ExitFrom
	}
	if by.After(e.ExitBy) {
		by = e.ExitBy
	}
	if !from.After(by) {
		e.ExitFrom, e.ExitBy = from, by
	}
}

func setFirst(t *time.Time, v time.Time) {
	if t.IsZero() {
		*t = v
	}
}

func earliest(ts ...time.Time) time.Time {
	var e time.Time
	for _, t := range ts {
		if !t.IsZero() && (e.IsZero() || t.Before(e)) {
			e = t
		}
	}
	return e
}

// Attribute attributes every failed request of in.Requests. A request is sent at t0 (its
// Timestamp) and failed at t1 (t0 + Latency). The rules are Rules, tried in their order where
// in.Context says they apply; the first that matches wins, and among several pods the one whose
// moment is nearest (the others are listed). A request that names its pod (an HTTP error from a
// pod) is matched to that pod only. Each Rule's comment says it in full; in one line each:
//
//   - proxy-no-upstream: the proxy in front answered itself and named no upstream: it had no pod to send to
//   - sigkill: in flight when the container was killed at the end of its grace period
//   - goaway: refused by a terminating server's GOAWAY and not sent again
//   - connection-age: cut when the server closed the connection for its age (GOAWAY "max_age")
//   - in-flight-cut: in flight when the process exited on its own
//   - sidecar-exit: a sidecar in front of the app stopped accepting before the app did
//   - proxy-propagation: the proxy in front still sent the request to a pod that no longer accepted
//   - stale-address: a client that balances itself sent to an address it still held after the pod stopped accepting, or held only gone ones
//   - no-local-endpoint: the node the load entered had no local endpoint (externalTrafficPolicy Local)
//   - no-endpoint: the Service had no endpoint left that could take the request
//   - pinned-connection: a kept-alive connection to a terminating pod closed under the request
//   - propagation: sent while the pod no longer accepted connections but could still be routed to
//   - startup: a new pod got traffic before it could serve
//   - steady: no pod was terminating or starting: the app or the harness is broken
//   - unknown: a pod was terminating or starting, but no rule matched
//
// (TestAttributeDocListsRules checks this list against Rules.)
func Attribute(in Input) Result {
	lag := in.ProgrammingLag
	if lag <= 0 {
		lag = DefaultProgrammingLag
	}
	lives := Lives(in.Timeline, in.Container)
	if in.Container != "" {
		lives = WithFront(lives, in.Timeline, in.Front)
		lives = withFrontSpec(lives, in.Front, in.FrontSpec, deletionGraces(in.Timeline))
	}
	named, direct := lastSent(in.Requests, lives)
	ctx := in.Context
	var outs []Outage
	if ctx.outages() {
		outs = Outages(in.Timeline, in.Container)
	}
	for i := range outs {
		outs[i].Drain, outs[i].ScaleToZero = ctx.Drain, ctx.ScaleToZero
	}
	var locals []Outage
	if ctx.LocalEntry != "" {
		locals = LocalOutages(in.Timeline, in.Container, ctx.LocalEntry)
	}
	// A proxy that names pod addresses sends to the pods itself: kube-proxy does not route its
	// requests, so neither its window (propagation) nor the client's kept-alive connections
	// (pinned-connection) explain a failure. One that names a Service address goes through
	// kube-proxy, and both still apply.
	rw := &row{ctx: ctx, lives: lives, outs: outs, locals: locals, direct: (direct && ctx.Proxy) || ctx.Balanced, lag: lag, held: in.HeldFor}
	res := Result{Counts: map[timeline.Phase]int{}, Lives: lives, BySeq: map[uint64]timeline.Phase{}}
	for i := range in.Requests {
		q := &in.Requests[i]
		if q.OK() {
			continue
		}
		a := newRequest(rw, q, named[i]).attribute()
		res.Failed = append(res.Failed, a)
		res.Counts[a.Phase]++
		res.BySeq[a.Seq] = a.Phase
	}
	return res
}

// MaxAgeGoAway is how grpc-go's client error names a GOAWAY that a server sent because the
// connection reached its MaxConnectionAge (grpc-go's server sends the debug data "max_age"):
// "received prior goaway: code: NO_ERROR, debug data: \"max_age\"".
const MaxAgeGoAway = `debug data: "max_age"`

// GracefulGoAway is how grpc-go's client error names the GOAWAY of a grpc-go server's
// GracefulStop. A connection such a server closes later under an RPC names this GOAWAY, not
// the reason of the close: a MaxConnectionAge's grace that ran out while the server drained
// gives no "max_age" then (grpc-go sends one GOAWAY per connection).
const GracefulGoAway = `debug data: "graceful_stop"`

// heldNoReady explains an RPC of a balancing client that went to no address at all (it held no
// ready one) while a pod deleted before it and a pod ready in the Service's EndpointSlices at
// the time say the client's list was stale: the addresses it held were gone pods', the ready
// pod one it had not resolved yet.
func heldNoReady(lives []Life, t0 time.Time) (string, bool) {
	var gone, ready []string
	for i := range lives {
		l := &lives[i]
		if !l.Deleting.IsZero() && !l.Deleting.After(t0) {
			gone = append(gone, l.Pod)
		}
		// Ready at t0: its endpoint turned ready before (a pod there from the start has no such
		// moment) and it was not deleted yet.
		readyAt := !l.EndpointReady.IsZero() && !l.EndpointReady.After(t0)
		if l.EndpointReady.IsZero() && l.Created.IsZero() {
			readyAt = true
		}
		if readyAt && (l.Deleting.IsZero() || l.Deleting.After(t0)) {
			ready = append(ready, l.Pod)
		}
	}
	if len(gone) == 0 || len(ready) == 0 {
		return "", false
	}
	return fmt.Sprintf("the client had no ready address to send to while the Service had ready pods (%s): the addresses it held were of deleted pods (%s), and it had not resolved again",
		strings.Join(ready, ", "), strings.Join(gone, ", ")), true
}

// Outage is a window in which the Service had no endpoint that could take a new connection,
// after a pod's deletion: none ready, none serving while terminating (kube-proxy sends to
// serving terminating endpoints when no endpoint is ready), or those left had closed their
// listener or exited, as the app's lines say. To is zero when the window was still open at the
// timeline's end.
type Outage struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to,omitzero"`
	// Drain says the row drained nodes: the window is a drain's (Context.Drain). ScaleToZero says
	// the app was scaled to zero: the window is the scale's (Context.ScaleToZero).
	Drain       bool `json:"drain,omitempty"`
	ScaleToZero bool `json:"scaleToZero,omitempty"`
	// Node is the node whose own endpoints the window counts (LocalOutages); empty: the
	// Service's, on every node.
	Node string `json:"node,omitempty"`
}

// Outages reads from the timeline the windows in which the Service had no endpoint that could
// take a new connection, from the first pod deletion on (before it, no endpoint only means the
// pods were not seen yet). An endpoint counts while it is ready or serving and its pod has not
// said that its listener closed or that it is exiting (container's lines; any container's when
// container is ""): the control plane marks it not serving only when a readiness probe fails.
func Outages(tl timeline.Timeline, container string) []Outage {
	return outages(tl, container, nil)
}

// LocalOutages reads from the timeline the windows in which node, where the load entered the
// cluster, had no endpoint that could take a new connection (as Outages, counting only the pods
// the timeline places on node: PodScheduled names it), after a pod's deletion. With
// externalTrafficPolicy Local kube-proxy on that node sends external traffic only to its own
// endpoints (the serving terminating ones when none is ready) and drops it when there are none,
// whatever runs on the other nodes. Each window's Node is node.
func LocalOutages(tl timeline.Timeline, container, node string) []Outage {
	where := map[string]string{}
	for _, e := range tl.Events {
		if e.Kind == timeline.PodScheduled && e.Node != "" {
			where[e.Pod] = e.Node
		}
	}
	outs := outages(tl, container, func(pod string) bool { return where[pod] == node })
	for i := range outs {
		outs[i].Node = node
	}
	return outs
}

// outages is Outages over the pods that on accepts (nil: every pod).
func outages(tl timeline.Timeline, container string, on func(pod string) bool) []Outage {
	type state struct{ ready, serving bool }
	eps := map[string]state{}
	closed := map[string]bool{}
	// The pods that ran when the observer started have no endpoint moment of their own (their
	// endpoints are the baseline): their first PodAddress, with no PodCreated before it, says
	// they were there, ready, as a row's pods are before its load starts.
	created, seen := map[string]bool{}, map[string]bool{}
	deleted := false
	var out []Outage
	open := false
	for _, e := range tl.Events {
		switch e.Kind {
		case timeline.PodCreated:
			created[e.Pod] = true
			continue
		case timeline.PodAddress:
			if !created[e.Pod] && !seen[e.Pod] {
				if _, known := eps[e.Pod]; !known {
					eps[e.Pod] = state{ready: true, serving: true}
				}
			}
			seen[e.Pod] = true
			continue
		case timeline.PodDeleting:
			deleted = true
		case timeline.EndpointReady:
			eps[e.Pod] = state{ready: true, serving: true}
		case timeline.EndpointUnready:
			eps[e.Pod] = state{serving: e.Endpoint != nil && e.Endpoint.Serving}
		case timeline.EndpointRemoved:
			delete(eps, e.Pod)
		case timeline.AppEvent:
			if container != "" && e.Container != "" && e.Container != container {
				continue
			}
			if e.App.Is(timeline.LineListenerClosed) || e.App.Is(timeline.LineExiting) {
				closed[e.Pod] = true
			}
		default:
			continue
		}
		up := 0
		for pod, s := range eps {
			if (s.ready || s.serving) && !closed[pod] && (on == nil || on(pod)) {
				up++
			}
		}
		switch {
		case !open && up == 0 && deleted:
			out, open = append(out, Outage{From: e.Time}), true
		case open && up > 0:
			out[len(out)-1].To, open = e.Time, false
		}
	}
	return out
}

// noEndpoint tells whether a request sent at t0 was sent while the Service had no endpoint left
// (from Tolerance before an outage until its end plus the programming lag: kube-proxy programs
// the first endpoint back that much later), and says which outage.
func noEndpoint(outs []Outage, t0 time.Time, lag time.Duration) (string, bool) {
	for _, o := range outs {
		cause := "no pod was ready or serving (the last one had stopped before a replacement was ready)"
		switch {
		case o.Drain:
			cause = "the drain had evicted every replica and no replacement was ready"
		case o.ScaleToZero:
			cause = "the app was scaled to zero and its last pod had stopped serving; none was ready again yet"
		}
		if t0.Before(o.From.Add(-Tolerance)) || (!o.To.IsZero() && t0.After(o.To.Add(lag))) {
			continue
		}
		until := "the end of the run"
		if !o.To.IsZero() {
			until = clock(o.To)
		}
		return fmt.Sprintf("sent while the Service had no endpoint left (%s to %s, + %s programming lag): %s", clock(o.From), until, lag, cause), true
	}
	return "", false
}

// noLocalEndpoint tells whether a request sent at t0 was sent while the node it entered had no
// local endpoint left (as noEndpoint, over LocalOutages' windows), and says which window.
func noLocalEndpoint(outs []Outage, t0 time.Time, lag time.Duration) (string, bool) {
	for _, o := range outs {
		if t0.Before(o.From.Add(-Tolerance)) || (!o.To.IsZero() && t0.After(o.To.Add(lag))) {
			continue
		}
		until := "the end of the run"
		if !o.To.IsZero() {
			until = clock(o.To)
		}
		return fmt.Sprintf("sent while %s, the node the load entered, had no local endpoint left (%s to %s, + %s programming lag): externalTrafficPolicy Local sends external traffic only to that node's pods, and kube-proxy drops it when there are none, whatever runs on the other nodes", o.Node, clock(o.From), until, lag), true
	}
	return "", false
}

// routableUntil is until when the data plane could still route new connections to the pod: the
// moment it stopped being routed (or, not seen, its removal; neither seen, from: only the lag)
// plus the programming lag.
func (l *Life) routableUntil(from time.Time, lag time.Duration) time.Time {
	until := l.Routed
	if until.IsZero() {
		until = l.Gone
	}
	if until.IsZero() {
		until = from
	}
	return until.Add(lag)
}

// quietSidecarExit is the sidecar-exit rule for a front sidecar that wrote no line of its end
// in l, whose SIGTERM its spec gives (Sidecar.SpecSIGTERM); see Attribute.
func quietSidecarExit(q *loadgen.Request, l *Life, cut bool, lag time.Duration) (match, bool) {
	f := l.Front
	t0, t1 := q.Timestamp, q.Timestamp.Add(q.Latency)
	stop, how := f.quietStop()
	if stop.Before(l.Deleting.Add(-Tolerance)) {
		return match{}, false
	}
	// Only a sidecar that went first. The app stopped accepting when its lines say; without
	// them it ran, and is taken to have accepted, until its exit window.
	app := l.notAccepting()
	if app.IsZero() {
		app = l.ExitFrom
	}
	if !app.IsZero() && !stop.Before(app) {
		return match{}, false
	}
	if cut && !f.ExitBy.IsZero() && t0.Before(stop) && !t1.Before(stop.Add(-Tolerance)) && !t1.Before(f.ExitFrom.Add(-Tolerance)) && !t1.After(f.ExitBy.Add(Tolerance)) {
		return match{pod: l.Pod, container: f.Container, dist: absDur(t1.Sub(f.ExitBy)), why: fmt.Sprintf("in flight through sidecar %s of %s when it exited (%s, by %s; stopped accepting at %s, %s)", f.Container, l.Pod, orSeen(f.ExitWhy), clock(f.ExitBy), clock(stop), how)}, true
	}
	// Refused, reset or EOF while the app still accepted: nothing else in the pod owns the port.
	switch q.Class {
	case loadgen.ClassRefused, loadgen.ClassReset, loadgen.ClassEOF:
	default:
		return match{}, false
	}
	until := l.routableUntil(stop, lag)
	if t0.Before(stop.Add(-Tolerance)) || t0.After(until.Add(Tolerance)) || (!app.IsZero() && !t0.Before(app)) {
		return match{}, false
	}
	still := "while the app still accepted"
	if !app.IsZero() {
		still += " (until " + clock(app) + ")"
	}
	return match{pod: l.Pod, container: f.Container, dist: absDur(t0.Sub(stop)), why: fmt.Sprintf("sent after sidecar %s of %s stopped accepting (%s, %s) %s and the pod was still routable (until %s)", f.Container, l.Pod, clock(stop), how, still, clock(until))}, true
}

// inFlightAtExit: sent before the exit window (and before the listener closed, when the app
// says when: a request sent after that was never accepted) and failed within it (± Tolerance).
func inFlightAtExit(l *Life, t0, t1 time.Time) bool {
	// Sent after the listener closed and failed at once: never accepted. One that lasted
	// (Tolerance or more) until the exit was being served: the app accepted it (its line can
	// come a moment before the listener really closes), and the exit cut it.
	if !l.ListenerClosed.IsZero() && !t0.Before(l.ListenerClosed) && t1.Sub(t0) < Tolerance {
		return false
	}
	return t0.Before(l.ExitFrom) && !t1.Before(l.ExitFrom.Add(-Tolerance)) && !t1.After(l.ExitBy.Add(Tolerance))
}

// inFlightAtKill is inFlightAtExit for a killed process, with the kill bounded by evidence
// alone: after the app's last line of its own (AliveAt) and by the end of its exit window. The
// exit window's start assumes a status or a log end is seen within 2 s of the exit, which a
// loaded node breaks: with three rows at once on 2 cores, a process killed at 43.8 s had
// finishedAt 44 s and its log end seen at 46.6 s, so the requests its kill cut ended before the
// window (27 of 62 sigkill failures of a row left unknown). A request sent before the app's
// last line was in flight at any kill after it, and one that failed (cut) from Tolerance after
// that line to the window's end failed at the kill: the process, alive until then, cut nothing
// of its own (it wrote no "exiting"); what it cut at its own lines (a drain closing kept-alive
// connections) fails within Tolerance of them.
func inFlightAtKill(l *Life, t0, t1 time.Time) bool {
	if inFlightAtExit(l, t0, t1) {
		return true
	}
	if l.AliveAt.IsZero() || !l.AliveAt.Before(l.ExitFrom) {
		return false
	}
	if !l.ListenerClosed.IsZero() && !t0.Before(l.ListenerClosed) && t1.Sub(t0) < Tolerance {
		return false
	}
	return t0.Before(l.AliveAt) && !t1.Before(l.AliveAt.Add(Tolerance)) && !t1.After(l.ExitBy.Add(Tolerance))
}

// pinned: keep-alive on and sent after the pod stopped being routed.
func pinned(l *Life, t0 time.Time, keepAlive bool) bool {
	return keepAlive && !l.Routed.IsZero() && t0.After(l.Routed.Add(Tolerance))
}

// busy reports whether any pod was terminating or starting within [from, to].
func busy(lives []Life, from, to time.Time) bool {
	for i := range lives {
		l := &lives[i]
		if !l.Deleting.IsZero() {
			end := l.end()
			if !l.Deleting.After(to) && (end.IsZero() || !end.Before(from)) {
				return true
			}
		}
		if !l.Created.IsZero() {
			ready := l.EndpointReady
			if ready.IsZero() {
				ready = time.Unix(math.MaxInt32, 0)
			}
			if !l.Created.After(to) && !ready.Add(StartupWindow).Before(from) {
				return true
			}
		}
	}
	return false
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func orSeen(why string) string {
	if why == "" {
		return "exit seen"
	}
	return why
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// neverConnected reports whether the request failed while its connection was being made:
// refused, or any error Go's dialer reports ("dial tcp …: connect: …"), so that no server ever
// had it.
func neverConnected(q *loadgen.Request) bool {
	return q.Class == loadgen.ClassRefused || strings.Contains(q.Error, "dial tcp ")
}
