package analyze

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Input is what a row recorded and all that its analysis reads: the engine fills it from what
// it drove and observed, a replay from the row's files (rows/<row>.json, raw/<row>.ledger.json).
type Input struct {
	// Config is the row's configuration as applied (check.Row.Config): the attribution's
	// switches, the recommendation's path and the expected Outcome all come from it.
	Config check.Applied
	// Load is the load's ledger: every request, the DNS answers, when the load started and
	// ended (raw/<row>.ledger.json).
	Load *loadgen.Result
	// Timeline is the observer's timeline of the row.
	Timeline timeline.Timeline
	// Disruptions are the disruptions as they ran: kind, number, pod, moments, drain. Their
	// requests, failures and phases are counted here; counts they carry are ignored.
	Disruptions []check.DisruptionResult
	// KubeProxy is the change of kube-proxy's programming histogram over the row.
	KubeProxy KubeProxy
	// EntryNode is the node the load from the host entered at (check.Row.Nodes.Entry): with
	// externalTrafficPolicy Local, the node whose endpoints the no-local-endpoint rule reads.
	EntryNode string
	// StopSignalReported and Runtime are check.Row.StopSignalReported and Versions.Runtime.
	StopSignalReported, Runtime string
	// Fault is what went wrong with the run itself, as the engine saw it while the row ran
	// (check.Row.LoadFault: the load stalled, lost its pod, or ended before the disruptions
	// did); "" when nothing did.
	Fault string
}

// KubeProxy is the change of kube-proxy's programming histogram over a row, or why there is
// none (check.PropagationSummary's KubeProxy, KubeProxyBuckets and KubeProxyError).
type KubeProxy struct {
	Durations *check.Durations
	Buckets   []check.HistogramBucket
	Err       string
}

// Result is a row's analysis: what check.Row carries of it, the attribution of every failed
// request (raw/<row>.attribution.json) and what the verdict reads besides.
type Result struct {
	Summary loadgen.Summary
	// PodIdentity: the app named the answering pod in at least one response.
	PodIdentity bool
	Disruptions []check.DisruptionResult
	Times       *check.Times
	Explanation *check.Explanation
	Attribution attribute.Result
	// Blind says why the failures' phases cannot be trusted (the observer could not watch the
	// cluster while the load ran); "" when they can.
	Blind string
	// Fault is Input.Fault.
	Fault string
}

// Row analyses one row: every failed request attributed to a phase, each disruption's
// requests counted, the terminations timed, the propagation measured and the recommendation
// with its advice. It reads nothing but in, and of its times only what a row records (the wall
// clock), so that a replay of the row gives what the run gave.
func Row(in Input) Result {
	in = wallClock(in)
	res, tl, cfg := in.Load, in.Timeline, in.Config
	attr := attribute.Attribute(attributeInput(in))
	out := Result{Summary: res.Summary(), Attribution: attr, Blind: blindFailures(tl, res), Fault: in.Fault}
	out.Disruptions = windows(in.Disruptions, res.Requests, attr.BySeq)
	out.Times = check.NewTimes(terminations(attr.Lives, out.Disruptions, tl.Events), out.Disruptions)
	for i := range res.Requests {
		if res.Requests[i].Pod != "" {
			out.PodIdentity = true
			break
		}
	}
	out.Explanation = explain(res.Requests, res.DNS, tl, attr, in.KubeProxy, cfg, out.PodIdentity, out.Times)
	if sig := cfg.StopSignal; sig != "" && in.StopSignalReported != sig && out.Explanation.Recommendation != nil {
		rec := out.Explanation.Recommendation
		rec.Advice += fmt.Sprintf("; the pod asks for stop signal %s, but the runtime (%s) reported %q as the effective one: it does not take lifecycle.stopSignal and sent the image's STOPSIGNAL or SIGTERM; put STOPSIGNAL %s in the image, or run a runtime that supports the field",
			sig, cmp.Or(in.Runtime, "unknown"), in.StopSignalReported, sig)
	}
	return out
}

// Verdict judges an analysed row against cfg.Expect. When the run itself went wrong (r.Fault:
// the load stalled or ended early), fewer disruptions ran than cfg.Count, or the observer was
// blind to the failures of a row judged by phase, the row is a harness fault, unless the
// requests sent already break a zero-failure or at-most rule (check.Outcome.Fault): a failure
// the app caused is never a fault of the harness. Else it is the Outcome's judgement of the
// summary and the disruptions, and of the mechanism by the phases; a row judged on its
// requests says when its phases come from late events.
func Verdict(cfg check.Applied, r Result) check.Verdict {
	switch {
	case r.Fault != "":
		return cfg.Expect.Fault(r.Summary, r.Fault)
	case len(r.Disruptions) != cfg.Count:
		return cfg.Expect.Fault(r.Summary, fmt.Sprintf("%d of %d disruptions ran", len(r.Disruptions), cfg.Count))
	case r.Blind != "" && cfg.Expect.JudgedByPhase():
		return cfg.Expect.Fault(r.Summary, r.Blind)
	}
	v := cfg.Expect.JudgeMechanism(cfg.Expect.Judge(r.Summary, r.Disruptions...), r.Explanation.Phases)
	if r.Blind != "" && v.Status == check.Fail {
		v.Reason += "; its phases come from late events: " + r.Blind
	}
	return v
}

// attributeInput is the attribution's view of a row, every switch derived here once from the
// applied configuration.
func attributeInput(in Input) attribute.Input {
	c := in.Config
	front, _ := c.FrontSidecar()
	a := attribute.Input{Requests: in.Load.Requests, Timeline: in.Timeline, Container: c.Container, Front: front.Name, FrontSpec: frontSpec(c),
		HeldFor: heldFor(c), Context: attributeContext(c, in.EntryNode)}
	if kd := in.KubeProxy.Durations; kd != nil && kd.N > 0 {
		a.ProgrammingLag = kd.P99 + attribute.Tolerance
	}
	return a
}

// attributeContext is where the attribution's rules apply, from the applied configuration:
// entry is the node the load entered at (Input.EntryNode).
func attributeContext(c check.Applied, entry string) attribute.Context {
	ctx := attribute.Context{KeepAlive: c.KeepAlive, Proxy: c.Through(), UpstreamNamed: c.UpstreamHeader != "", Balanced: c.Balanced(),
		Drain: c.Disruption.Info().Evicts, SingleReplica: c.Replicas == 1, ScaleToZero: c.Disruption.Info().Takes == check.TakesAll}
	if c.LocalOnly() {
		ctx.LocalEntry = entry
	}
	return ctx
}

// frontSpec is what the applied spec of the sidecar in front says of when it gets SIGTERM, for
// the attribution of a sidecar that writes no lines: nothing without one, or for a classic one
// whose preStop has no length known without running it.
func frontSpec(c check.Applied) attribute.FrontSpec {
	sc, ok := c.FrontSidecar()
	if !ok {
		return attribute.FrontSpec{}
	}
	pre, known := sc.PreStop.Duration()
	return attribute.FrontSpec{Known: known || sc.Native, Native: sc.Native, PreStop: pre}
}

// terminations are the terminations of the pods deleted during a disruption (between its start
// and the Deployment settling), in order of deletion, every moment from the deletion.
func terminations(lives []attribute.Life, ds []check.DisruptionResult, events []timeline.Event) []check.Termination {
	during := func(t time.Time) bool {
		for _, d := range ds {
			end := d.Complete
			if end.IsZero() {
				end = d.Settled
			}
			if !t.Before(d.Started) && !t.After(end) {
				return true
			}
		}
		return false
	}
	// A moment seen at or before the deletion as this process received it (the kubelet can
	// act before the watch event arrives) is counted as at the deletion: 1 ns, not 0, which
	// means not seen.
	since := func(from, t time.Time) time.Duration {
		if t.IsZero() {
			return 0
		}
		return max(t.Sub(from), time.Nanosecond)
	}
	var out []check.Termination
	deleted := map[string]bool{}
	for _, l := range lives {
		if !l.Deleting.IsZero() && during(l.Deleting) {
			deleted[l.Pod] = true
		}
	}
	for _, l := range lives {
		if !deleted[l.Pod] {
			continue
		}
		t := check.Termination{Pod: l.Pod, Deleting: l.Deleting, SIGTERM: since(l.Deleting, l.SIGTERM), SIGTERMAgain: since(l.Deleting, l.SIGTERMAgain),
			Exit: since(l.Deleting, l.ExitBy), ExitUncertainty: l.ExitWindow(), How: string(l.Exit), Gone: since(l.Deleting, l.Gone), FinalPhase: finalPhase(events, l.Pod)}
		if f := l.Front; f != nil {
			t.Front = &check.SidecarEnd{Container: f.Container, PreStop: since(l.Deleting, f.PreStop), SIGTERM: since(l.Deleting, f.SIGTERM),
				Exit: since(l.Deleting, f.ExitBy), ExitUncertainty: f.ExitWindow(), How: string(f.Exit)}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Deleting.Before(out[j].Deleting) })
	// Each deletion's replacement, one to one and in order of deletion: the pod created nearest
	// the deletion (a rollout creates it just before, a delete or a scale-up just after), not
	// taken by an earlier deletion. A replacement may itself be deleted later in the row.
	taken := map[string]bool{}
	for i := range out {
		t := &out[i]
		var best *attribute.Life
		for j := range lives {
			n := &lives[j]
			if n.Pod == t.Pod || taken[n.Pod] || n.Created.IsZero() || absDur(n.Created.Sub(t.Deleting)) > 30*time.Second {
				continue
			}
			if best == nil || absDur(n.Created.Sub(t.Deleting)) < absDur(best.Created.Sub(t.Deleting)) {
				best = n
			}
		}
		if best == nil {
			continue
		}
		taken[best.Pod] = true
		t.Replacement, t.ReplacementCreated = best.Pod, best.Created.Sub(t.Deleting)
		if !best.EndpointReady.IsZero() {
			t.ReplacementReady = best.EndpointReady.Sub(t.Deleting)
			if t.Exit > 0 {
				t.Overlap = t.Exit - t.ReplacementReady
			}
		}
	}
	return out
}

// finalPhase is the phase of pod's last state, from its pod-gone event.
func finalPhase(events []timeline.Event, pod string) string {
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.Kind == timeline.PodGone && e.Pod == pod {
			return e.PodPhase
		}
	}
	return ""
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// windows counts the requests of each disruption: those that overlap its window (start to
// settled). A request that overlaps two (sent before one settled, ended after the next
// started) counts once, in the one it was sent in, else the first it overlaps.
func windows(recs []check.DisruptionResult, reqs []loadgen.Request, phases map[uint64]timeline.Phase) []check.DisruptionResult {
	out := make([]check.DisruptionResult, len(recs))
	for k, rec := range recs {
		out[k] = check.DisruptionResult{Kind: rec.Kind, N: rec.N, Pod: rec.Pod, Started: rec.Started, Complete: rec.Complete, Settled: rec.Settled,
			KubeletRestarted: rec.KubeletRestarted, KubeletBack: rec.KubeletBack, Drain: rec.Drain}
	}
	for i := range reqs {
		q := &reqs[i]
		k := owner(recs, q)
		if k < 0 {
			continue
		}
		d := &out[k]
		d.Requests++
		if q.OK() {
			continue
		}
		d.Failed++
		if d.Failures == nil {
			d.Failures = map[loadgen.Class]int{}
		}
		d.Failures[q.Class]++
		if ph, ok := phases[q.Seq]; ok {
			if d.Phases == nil {
				d.Phases = map[timeline.Phase]int{}
			}
			d.Phases[ph]++
		}
	}
	for k := range out {
		if d := &out[k]; d.Requests > 0 {
			d.SuccessRatio = float64(d.Requests-d.Failed) / float64(d.Requests)
		}
	}
	return out
}

// owner is the index of the disruption q counts in (see windows), -1 for none: the one whose
// window holds its sending, else the first whose window it overlaps.
func owner(recs []check.DisruptionResult, q *loadgen.Request) int {
	first := -1
	for j := range recs {
		if q.Timestamp.After(recs[j].Settled) || q.Timestamp.Add(q.Latency).Before(recs[j].Started) {
			continue
		}
		if !q.Timestamp.Before(recs[j].Started) {
			return j
		}
		if first < 0 {
			first = j
		}
	}
	return first
}

// blindFailures says why the failures of a row cannot be judged when the observer could not
// watch the cluster while the load ran (an API server restarted): what happened meanwhile was
// seen late, so the phases of the failures are not to be trusted. A row without failures is
// judged on its ledger, which the API server does not carry (load from the host) or whose loss
// is a fault of its own (a load pod's stream). "" when the row can be judged.
func blindFailures(tl timeline.Timeline, res *loadgen.Result) string {
	if res == nil || res.Totals.Failed == 0 {
		return ""
	}
	gaps := tl.GapsWithin(res.Started, res.Ended)
	if len(gaps) == 0 {
		return ""
	}
	s := make([]string, len(gaps))
	for i, g := range gaps {
		s[i] = g.String()
	}
	return fmt.Sprintf("the observer could not watch the cluster while the load ran (%s): %d failed requests, whose phases come from late events", strings.Join(s, "; "), res.Totals.Failed)
}
