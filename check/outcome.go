package check

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Expectation is the kind of outcome a Scenario is expected to produce.
type Expectation string

// Expectations.
const (
	// ExpectZero: not one request may fail.
	ExpectZero Expectation = "zero-failures"
	// ExpectAtMost: the failure ratio may not exceed Outcome.MaxRatio.
	ExpectAtMost Expectation = "at-most"
	// ExpectFailures: a negative control; failures must show, and mostly of Outcome.Classes,
	// or the harness has lost its ability to see the mechanism.
	ExpectFailures Expectation = "failures-expected"
	// ExpectBounds: no rule on the whole run's failures; only MinSuccessRatioPerDisruption and
	// MaxDisruptionSeconds, at least one of which is set, judge it.
	ExpectBounds Expectation = "bounds"
)

// Outcome is what a row (a Variant under a Disruption) is expected to produce.
type Outcome struct {
	Kind Expectation `json:"kind"`
	// MaxRatio is the highest failure ratio ExpectAtMost accepts (0.01 is 1 %).
	MaxRatio float64 `json:"maxRatio,omitempty"`
	// Classes are the failure classes the mechanism produces (ExpectFailures); at least half
	// of the failures must be of these classes. Empty: any failure class will do.
	Classes []loadgen.Class `json:"classes,omitempty"`

	// MinSuccessRatioPerDisruption, when set (0 < r <= 1), is also required of every single
	// disruption: the requests in flight between its start and its settling must succeed at least
	// this often, as Kubernetes' own rolling-update disruption test asks (0.95 per rollout).
	MinSuccessRatioPerDisruption float64 `json:"minSuccessRatioPerDisruption,omitempty"`
	// MaxDisruptionSeconds, when set, is also required of the whole run: at most this many
	// one-second windows may hold a failure.
	MaxDisruptionSeconds *int `json:"maxDisruptionSeconds,omitempty"`
	// MinDisruptionsWithFailures is how many disruptions of a negative control must show
	// failures; 0 means most of them (half, rounded up).
	MinDisruptionsWithFailures int `json:"minDisruptionsWithFailures,omitempty"`
	// Phases, for a negative control, are the phases its mechanism produces, the one the row
	// is for first (Mechanism): at least MinPhaseShare of its failures must be attributed to
	// them, or the row fails ("right count, wrong mechanism"); and with several, at least
	// MinMechanismShare must be attributed to the first, or the row fails too: the others are
	// phases the row accepts besides (where the same exit also shows as another phase), and
	// failures mostly of those do not show the mechanism the row is for. Empty: only Classes
	// are checked.
	Phases []timeline.Phase `json:"phases,omitempty"`
	// DrainBlocked, for a drain-node row expected to produce zero failures, says every drain
	// must be blocked: the PodDisruptionBudget refuses the evictions (429) until the drain's
	// timeout, so no pod goes and no request fails. The blocked drain is the row's finding.
	// Without it, a blocked drain fails the row: the pods it was to take away never went.
	DrainBlocked bool `json:"drainBlocked,omitempty"`
}

// MinPhaseShare is the share of a negative control's failures that must be in its expected
// Phases.
const MinPhaseShare = 0.8

// MinMechanismShare is the share of a negative control's failures that must be in the first of
// several Phases (Mechanism, the one the row is for): the others are accepted besides, and a row
// whose failures are nearly all of those has not shown its mechanism, though one of them was.
// The rule: the higher of 25 % and half the lowest share any recorded run of a multi-phase row
// measured (the table of every such row's recorded shares stands beside the matrix,
// matrix.MechanismShares, and its test holds this number to it).
const MinMechanismShare = 0.25

// ByPhase returns the negative control o requiring at least MinPhaseShare of its failures in
// the given phases and, with several, some in the first: the mechanism the row is for (the
// others it accepts besides).
func (o Outcome) ByPhase(phases ...timeline.Phase) Outcome {
	o.Phases = phases
	return o
}

// Mechanism is the phase the negative control o is for: the first of its Phases; "" when it
// names none.
func (o Outcome) Mechanism() timeline.Phase {
	if len(o.Phases) == 0 {
		return ""
	}
	return o.Phases[0]
}

// Zero expects no failure at all.
func Zero() Outcome { return Outcome{Kind: ExpectZero} }

// AtMost expects a failure ratio of at most r.
func AtMost(r float64) Outcome { return Outcome{Kind: ExpectAtMost, MaxRatio: r} }

// Bounds expects only what WithMinSuccessRatioPerDisruption and WithMaxDisruptionSeconds add.
func Bounds() Outcome { return Outcome{Kind: ExpectBounds} }

// WithDrainBlocked returns o (Zero) requiring every drain of a drain-node row to be blocked.
func (o Outcome) WithDrainBlocked() Outcome {
	o.DrainBlocked = true
	return o
}

// WithMinDisruptionsWithFailures returns the negative control o requiring failures in at least
// n of its disruptions (instead of most of them).
func (o Outcome) WithMinDisruptionsWithFailures(n int) Outcome {
	o.MinDisruptionsWithFailures = n
	return o
}

// Failures expects failures, mostly of the given classes.
func Failures(classes ...loadgen.Class) Outcome {
	return Outcome{Kind: ExpectFailures, Classes: classes}
}

// WithMinSuccessRatioPerDisruption returns o requiring ratio of every disruption too.
func (o Outcome) WithMinSuccessRatioPerDisruption(ratio float64) Outcome {
	o.MinSuccessRatioPerDisruption = ratio
	return o
}

// WithMaxDisruptionSeconds returns o allowing at most n one-second windows with a failure.
func (o Outcome) WithMaxDisruptionSeconds(n int) Outcome {
	o.MaxDisruptionSeconds = &n
	return o
}

// Validate checks the Outcome.
func (o Outcome) Validate() error {
	if r := o.MinSuccessRatioPerDisruption; r < 0 || r > 1 || math.IsNaN(r) {
		return fmt.Errorf("expect minSuccessRatioPerDisruption %v: want a ratio between 0 and 1", r)
	}
	if n := o.MaxDisruptionSeconds; n != nil && *n < 0 {
		return fmt.Errorf("expect maxDisruptionSeconds %d: want 0 or more", *n)
	}
	if o.MinDisruptionsWithFailures < 0 || (o.MinDisruptionsWithFailures > 0 && o.Kind != ExpectFailures) {
		return fmt.Errorf("expect minDisruptionsWithFailures %d: only for failures-expected, and not below 0", o.MinDisruptionsWithFailures)
	}
	if len(o.Phases) > 0 && o.Kind != ExpectFailures {
		return errors.New("expect phases: only for failures-expected (a negative control names its mechanism)")
	}
	for i, ph := range o.Phases {
		if !ph.Known() {
			return fmt.Errorf("expect phase %q: want one of %s", ph, phaseList(timeline.Phases))
		}
		if slices.Contains(o.Phases[:i], ph) {
			return fmt.Errorf("expect phase %q: listed twice", ph)
		}
	}
	if o.DrainBlocked && o.Kind != ExpectZero {
		return fmt.Errorf("expect drainBlocked: only with zero failures (a blocked drain takes no pod away), not %s", o.Kind)
	}
	if o.Kind == ExpectFailures && (o.MinSuccessRatioPerDisruption > 0 || o.MaxDisruptionSeconds != nil) {
		return errors.New("expect failures-expected (a negative control) cannot also bound the failures per disruption or the disruption seconds")
	}
	switch o.Kind {
	case ExpectZero:
	case ExpectBounds:
		if o.MinSuccessRatioPerDisruption == 0 && o.MaxDisruptionSeconds == nil {
			return errors.New("expect bounds: set minSuccessRatioPerDisruption or maxDisruptionSeconds")
		}
	case ExpectAtMost:
		if o.MaxRatio <= 0 || o.MaxRatio >= 1 {
			return fmt.Errorf("expect at-most %v: want a ratio between 0 and 1", o.MaxRatio)
		}
	case ExpectFailures:
		for _, c := range o.Classes {
			if !knownFailure(c) {
				return fmt.Errorf("expect failures of class %q: not a failure class (want refused, reset, eof, timeout, goaway, rst_stream, http_4xx, http_5NN, proxy_5NN, grpc_<code> such as grpc_unavailable, or other)", c)
			}
		}
	default:
		return fmt.Errorf("expect %q: want zero-failures, at-most, failures-expected or bounds", o.Kind)
	}
	return nil
}

// String says the expectation in a few words: "0 failures", "≤ 0.50%", "failures (reset|eof)",
// "failures (reset|eof) by pinned-connection", with several phases the row's first and the
// ones it accepts besides after it ("failures by in-flight-cut (also propagation)"), with the per-disruption and disruption-seconds bounds appended ("≤ 1.00%, ≥ 95% per disruption,
// ≤ 2 disruption s"); an ExpectBounds outcome is its bounds alone ("≥ 95% per disruption").
func (o Outcome) String() string {
	s := o.kindString()
	if o.Kind == ExpectBounds {
		s = "" // the bounds below say it all
	}
	if o.MinSuccessRatioPerDisruption > 0 {
		s += fmt.Sprintf(", ≥ %s%% per disruption", strconv.FormatFloat(100*o.MinSuccessRatioPerDisruption, 'f', -1, 64))
	}
	if o.MaxDisruptionSeconds != nil {
		s += fmt.Sprintf(", ≤ %d disruption s", *o.MaxDisruptionSeconds)
	}
	if o.DrainBlocked {
		s += ", drain blocked"
	}
	return strings.TrimPrefix(s, ", ")
}

func (o Outcome) kindString() string {
	switch o.Kind {
	case ExpectZero:
		return "0 failures"
	case ExpectAtMost:
		return fmt.Sprintf("≤ %.2f%%", 100*o.MaxRatio)
	case ExpectFailures:
		s := "failures"
		if len(o.Classes) > 0 {
			s += " (" + classList(o.Classes) + ")"
		}
		if len(o.Phases) > 0 {
			s += " by " + string(o.Mechanism())
		}
		if len(o.Phases) > 1 {
			s += " (also " + phaseList(o.Phases[1:]) + ")"
		}
		return s
	}
	return string(o.Kind)
}

// Status is the verdict of one run.
type Status string

// Statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// HarnessFault: the load run itself was invalid (missed rate, stalled generator, load
	// that ended before the disruptions did), so it says nothing about the app.
	HarnessFault Status = "harness-fault"
	// Error: the row could not be run to the end (deploy, serving wait, disruption, cluster):
	// no verdict on the app; the reason says what failed.
	Error Status = "error"
)

// Verdict is a Status and the reason for it.
type Verdict struct {
	Status Status `json:"status"`
	Reason string `json:"reason"`
}

// Fault is the verdict of a row the harness could not judge as a whole for reason (the load
// stalled or ended early, fewer disruptions ran, the observer was blind to a row judged by
// phase): a harness fault, unless the requests that were sent already break the row's rule.
// A zero-failure or at-most row is judged on the requests actually sent, less only the
// failures of a stall the app did not cause (loadgen.Summary.StallFailed): an app that failed
// them fails, whatever else went wrong, and a second attempt cannot turn that into a pass.
func (o Outcome) Fault(s loadgen.Summary, reason string) Verdict {
	fault := Verdict{HarnessFault, reason}
	judged := s.Failed - s.StallFailed
	if s.Requests == 0 || judged <= 0 {
		return fault
	}
	ratio := float64(judged) / float64(s.Requests)
	counted := fmt.Sprintf("%d of %d requests failed (%.3f%%)", judged, s.Requests, 100*ratio)
	if s.StallFailed > 0 {
		counted += fmt.Sprintf(" besides the %d in flight while the load stalled", s.StallFailed)
	}
	switch {
	case o.Kind == ExpectZero:
		return Verdict{Fail, fmt.Sprintf("%s, expected none; the app failed them whatever the harness did: %s", counted, reason)}
	case o.Kind == ExpectAtMost && ratio > o.MaxRatio:
		return Verdict{Fail, fmt.Sprintf("%s, expected at most %.2f%%; the app failed them whatever the harness did: %s", counted, 100*o.MaxRatio, reason)}
	}
	return fault
}

// JudgedByPhase reports whether o's verdict needs the failures' phases: a negative control
// that names its mechanism. Only such a row becomes a harness fault when the observer was
// blind; every other row is judged on the requests sent.
func (o Outcome) JudgedByPhase() bool { return o.Kind == ExpectFailures && len(o.Phases) > 0 }

// Judge compares a load result, and the results of each disruption, with the expected
// Outcome. An invalid load run is a harness fault unless its failures outside the load's own
// stalls already break the rule (Fault). The per-disruption
// and disruption-seconds bounds apply on top of the Kind's own rule. A negative control
// (ExpectFailures) judged with its disruptions must show failures in most of them (at least
// half, rounded up), not once by chance.
//
// Drains are judged first: a row that expects DrainBlocked passes only when every drain was
// blocked, and any other row fails when one was (the pods it was to take away never went, so
// its count of failures says nothing about them).
func (o Outcome) Judge(s loadgen.Summary, ds ...DisruptionResult) Verdict {
	v := o.judgeKind(s)
	if v.Status != Pass {
		return v
	}
	if dv, judged := o.judgeDrains(v, ds); judged {
		if dv.Status != Pass {
			return dv
		}
		v = dv
	}
	if o.Kind == ExpectFailures && len(ds) > 0 {
		// A negative control that fails once by chance has not shown its mechanism: the
		// failures must show in most of the disruptions.
		with := 0
		for _, d := range ds {
			if d.Failed > 0 {
				with++
			}
		}
		need := (len(ds) + 1) / 2
		if o.MinDisruptionsWithFailures > 0 {
			need = min(o.MinDisruptionsWithFailures, len(ds))
		}
		if with < need {
			return Verdict{Fail, fmt.Sprintf("%s; failures in %d of %d disruptions, expected in at least %d: the mechanism did not show often enough",
				v.Reason, with, len(ds), need)}
		}
		v.Reason += fmt.Sprintf("; failures in %d of %d disruptions", with, len(ds))
	}
	if r := o.MinSuccessRatioPerDisruption; r > 0 {
		if len(ds) == 0 {
			return Verdict{HarnessFault, v.Reason + "; no disruption was recorded to judge its success ratio"}
		}
		w := WorstDisruption(ds)
		if w.Requests == 0 {
			return Verdict{HarnessFault, fmt.Sprintf("%s; %s %d/%d sent no request", v.Reason, w.Kind, w.N, len(ds))}
		}
		if w.SuccessRatio < r {
			return Verdict{Fail, fmt.Sprintf("%s; %s %d/%d: %d of %d requests succeeded (%s%%), expected at least %s%% per disruption",
				v.Reason, w.Kind, w.N, len(ds), w.Requests-w.Failed, w.Requests, pctString(w.SuccessRatio), pctString(r))}
		}
		v.Reason += fmt.Sprintf("; worst disruption %s%%", pctString(w.SuccessRatio))
	}
	if n := o.MaxDisruptionSeconds; n != nil && s.DisruptionSeconds > *n {
		return Verdict{Fail, fmt.Sprintf("%s; %d disruption seconds, expected at most %d", v.Reason, s.DisruptionSeconds, *n)}
	}
	return v
}

// judgeDrains judges the drains of ds (v passed the Kind's rule); judged is false when ds hold
// no drain and the row expects none to be blocked.
func (o Outcome) judgeDrains(v Verdict, ds []DisruptionResult) (Verdict, bool) {
	var drains, blocked []DisruptionResult
	for _, d := range ds {
		if d.Drain != nil {
			drains = append(drains, d)
			if d.Drain.Blocked {
				blocked = append(blocked, d)
			}
		}
	}
	switch {
	case o.DrainBlocked && len(drains) == 0:
		return Verdict{HarnessFault, v.Reason + "; no drain was recorded to judge whether it was blocked"}, true
	case o.DrainBlocked && len(blocked) < len(drains):
		for _, d := range drains {
			if !d.Drain.Blocked {
				return Verdict{Fail, fmt.Sprintf("%s; %s %d/%d was not blocked (%s), expected every drain blocked", v.Reason, d.Kind, d.N, len(ds), d.DrainNote())}, true
			}
		}
	case o.DrainBlocked:
		return Verdict{Pass, fmt.Sprintf("%s; every drain blocked (%s)", v.Reason, BlockedNote(blocked))}, true
	case len(blocked) > 0:
		d := blocked[0]
		return Verdict{Fail, fmt.Sprintf("%s; %s %d/%d: %s: the pods it was to take away never went (expect drainBlocked if that is the finding)", v.Reason, d.Kind, d.N, len(ds), d.DrainNote())}, true
	}
	return v, false
}

// BlockedNote says what blocked drains met: "drain blocked: 24 evictions refused (429) by the
// PodDisruptionBudget over 60 s" (summed over the drains, each bounded by its timeout).
func BlockedNote(ds []DisruptionResult) string {
	refused, n := 0, 0
	var over time.Duration
	for _, d := range ds {
		if d.Drain != nil && d.Drain.Blocked {
			refused += d.Drain.Refused429
			over = max(over, d.Drain.Timeout)
			n++
		}
	}
	s := "drain blocked"
	if n > 1 {
		s = fmt.Sprintf("%d drains blocked", n)
	}
	each := ""
	if n > 1 {
		each = " each"
	}
	return fmt.Sprintf("%s: %d evictions refused (429) by the PodDisruptionBudget over %s%s", s, refused, secondsString(over), each)
}

// DrainNote says what one drain did: "node kind-worker: 3 evictions, 2 refused (429), drained
// in 14.2 s, replacements ready 16.0 s after its start", or, blocked, BlockedNote's words; ""
// for a disruption that is not a drain.
func (d DisruptionResult) DrainNote() string {
	dr := d.Drain
	if dr == nil {
		return ""
	}
	if dr.Blocked {
		return fmt.Sprintf("node %s: %s, %d of %d evictions accepted", dr.Node, BlockedNote([]DisruptionResult{d}), dr.Evictions, len(dr.Pods))
	}
	s := fmt.Sprintf("node %s: %d evictions, %d refused (429)", dr.Node, dr.Evictions, dr.Refused429)
	if t, ok := d.DrainTime(); ok {
		s += ", drained in " + secondsString(t)
	}
	if t, ok := d.ReplacementsAfter(); ok {
		s += ", replacements ready " + secondsString(t) + " after its start"
	}
	return s
}

// DrainTime is how long a drain took, from the disruption's start until the last evicted pod
// was gone; false when the drain was blocked (or the disruption is not a drain).
func (d DisruptionResult) DrainTime() (time.Duration, bool) {
	if d.Drain == nil || d.Drain.Drained.IsZero() {
		return 0, false
	}
	return d.Drain.Drained.Sub(d.Started), true
}

// ReplacementsAfter is how long after the drain's start the Deployment had all its replicas
// ready again; false when nothing was evicted (or the disruption is not a drain).
func (d DisruptionResult) ReplacementsAfter() (time.Duration, bool) {
	if d.Drain == nil || d.Drain.ReplacementsReady.IsZero() {
		return 0, false
	}
	return d.Drain.ReplacementsReady.Sub(d.Started), true
}

// secondsString is "60 s" for whole seconds, else "14.2 s".
func secondsString(t time.Duration) string {
	if t%time.Second == 0 {
		return fmt.Sprintf("%d s", int64(t/time.Second))
	}
	return fmt.Sprintf("%.1f s", t.Seconds())
}

// JudgeMechanism refines a verdict from Judge with the row's failures by phase: a negative
// control with Phases fails when fewer than MinPhaseShare of its failures are in them, or, with
// several, when fewer than MinMechanismShare are in the first (Mechanism, the one the row is
// for), a share the verdict prints; a row that failed
// says which phases broke it. Verdicts other than pass and fail, and rows whose failures
// were not attributed (phases empty), are returned as they are.
func (o Outcome) JudgeMechanism(v Verdict, phases map[timeline.Phase]int) Verdict {
	total := 0
	for _, n := range phases {
		total += n
	}
	if total == 0 || (v.Status != Pass && v.Status != Fail) {
		return v
	}
	if v.Status == Fail {
		v.Reason += "; by phase: " + FormatPhases(phases)
		return v
	}
	if o.Kind != ExpectFailures || len(o.Phases) == 0 {
		return v
	}
	in := 0
	for _, ph := range o.Phases {
		in += phases[ph]
	}
	share := fmt.Sprintf("%d of %d failures are %s", in, total, phaseList(o.Phases))
	if float64(in) < MinPhaseShare*float64(total) {
		return Verdict{Fail, fmt.Sprintf("%s; right count, wrong mechanism: only %s, expected at least %.0f%% (by phase: %s)",
			v.Reason, share, 100*MinPhaseShare, FormatPhases(phases))}
	}
	if len(o.Phases) == 1 {
		v.Reason += "; " + share
		return v
	}
	n := phases[o.Mechanism()]
	mine := fmt.Sprintf("%d of %d failures (%s%%) are %s, the mechanism this row is for (at least %s%%)",
		n, total, strings.TrimSuffix(fmt.Sprintf("%.1f", 100*float64(n)/float64(total)), ".0"), o.Mechanism(), strconv.FormatFloat(100*MinMechanismShare, 'f', -1, 64))
	if float64(n) < MinMechanismShare*float64(total) {
		return Verdict{Fail, fmt.Sprintf("%s; only %s; it accepts %s besides, not instead (by phase: %s)",
			v.Reason, mine, phaseList(o.Phases[1:]), FormatPhases(phases))}
	}
	v.Reason += "; " + share + "; " + mine
	return v
}

// FormatPhases says failures by phase in rule order: "propagation 12, unknown 1".
func FormatPhases(m map[timeline.Phase]int) string {
	var parts []string
	for _, ph := range timeline.Phases {
		if n := m[ph]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", ph, n))
		}
	}
	return strings.Join(parts, ", ")
}

func phaseList(ps []timeline.Phase) string {
	ss := make([]string, len(ps))
	for i, p := range ps {
		ss[i] = string(p)
	}
	return strings.Join(ss, "|")
}

func pctString(r float64) string { return strconv.FormatFloat(100*r, 'f', 2, 64) }

func (o Outcome) judgeKind(s loadgen.Summary) Verdict {
	if !s.Valid {
		return o.Fault(s, "invalid load run: "+s.InvalidReason)
	}
	if s.Requests == 0 {
		return Verdict{HarnessFault, "no request was sent"}
	}
	ratio := fmt.Sprintf("%d of %d requests failed (%.3f%%)", s.Failed, s.Requests, 100*s.FailureRatio)
	switch o.Kind {
	case ExpectBounds:
		return Verdict{Pass, ratio}
	case ExpectZero:
		if s.Failed == 0 {
			return Verdict{Pass, ratio}
		}
		return Verdict{Fail, ratio + ", expected none"}
	case ExpectAtMost:
		if s.FailureRatio <= o.MaxRatio {
			return Verdict{Pass, ratio}
		}
		return Verdict{Fail, fmt.Sprintf("%s, expected at most %.2f%%", ratio, 100*o.MaxRatio)}
	case ExpectFailures:
		if s.Failed == 0 {
			return Verdict{Fail, "no request failed: the negative control did not see the disruption"}
		}
		if len(o.Classes) == 0 {
			return Verdict{Pass, ratio}
		}
		in := 0
		for c, n := range s.Failures {
			if slices.Contains(o.Classes, c) {
				in += n
			}
		}
		share := fmt.Sprintf("%d of %d failures are %s", in, s.Failed, classList(o.Classes))
		if 2*in >= s.Failed {
			return Verdict{Pass, ratio + "; " + share}
		}
		return Verdict{Fail, ratio + "; only " + share + ": not the expected mechanism"}
	}
	return Verdict{Fail, "unknown expectation " + string(o.Kind)}
}

func classList(cs []loadgen.Class) string {
	ss := make([]string, len(cs))
	for i, c := range cs {
		ss[i] = string(c)
	}
	return strings.Join(ss, "|")
}

// knownFailure reports whether c is a failure class loadgen can produce.
func knownFailure(c loadgen.Class) bool {
	switch c {
	case loadgen.ClassRefused, loadgen.ClassReset, loadgen.ClassEOF, loadgen.ClassTimeout, loadgen.ClassHTTP4xx, loadgen.ClassOther,
		loadgen.ClassGoAway, loadgen.ClassStreamReset, loadgen.ClassGRPCNotServing:
		return true
	}
	// Every status code but OK (0) that gRPC names, up to the first it does not (ClassOther).
	for code := uint32(1); loadgen.GRPCClass(code) != loadgen.ClassOther; code++ {
		if loadgen.GRPCClass(code) == c {
			return true
		}
	}
	var code int
	if _, err := fmt.Sscanf(string(c), "http_%d", &code); err == nil {
		return loadgen.HTTP5xxClass(code) == c
	}
	if _, err := fmt.Sscanf(string(c), "proxy_%d", &code); err == nil {
		return loadgen.ProxyClass(code) == c
	}
	return false
}
