// Package gate is rollcheck's verdict where a release is decided: the verdict of one check of a
// workload where it runs, in the shape the release controllers read (Argo Rollouts' Job and Web
// metric providers, Flagger's webhooks), and a keyed set of checks (Checks) that runs each release's
// check once however often a controller asks. The CLI's gate and serve commands use it.
package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rollcheck/rollcheck/check"
)

// SchemaVersion is the version of Verdict's JSON, its schemaVersion field.
const SchemaVersion = 1

// MessageLimit is the most a container's termination message holds (the kubelet cuts the file
// at 4 KiB): EncodeWithin's limit for the gate Job.
const MessageLimit = 4096

// The states of a check.
const (
	Running = "running" // started, no verdict yet
	Done    = "done"    // Verdict says it
)

// The verdicts.
const (
	Pass = "pass"
	Fail = "fail"
	// Inconclusive: no verdict on the app. A row the harness could not judge, an error, a run
	// cut short. It never counts as a pass.
	Inconclusive = "inconclusive"
)

// A Verdict is one check's answer, what `rollcheck gate` prints and writes as its termination
// message and what `rollcheck serve` answers.
type Verdict struct {
	SchemaVersion int `json:"schemaVersion"`
	// State is Running or Done; Verdict is set when Done.
	State   string `json:"state"`
	Verdict string `json:"verdict,omitempty"`
	// Key is what the check is kept by: "hash:<pod-template hash>" (Argo), "checksum:<…>"
	// (Flagger), or "" for a gate Job's one check.
	Key string `json:"key,omitempty"`
	// Target is the workload checked: "Deployment shop/web".
	Target string `json:"target"`
	// Requests and Failed are over every row; FailureRatio is Failed/Requests (0 with none).
	Requests     int     `json:"requests"`
	Failed       int     `json:"failed"`
	FailureRatio float64 `json:"failureRatio"`
	// ByPhase counts the failed requests by the termination phase they fell in (rollcheck's
	// phases: propagation, in-flight-cut, ...).
	ByPhase map[string]int `json:"byPhase,omitempty"`
	// Rows is each row's own verdict.
	Rows []Row `json:"rows,omitempty"`
	// Recommendation is the preStop and grace period the measured windows ask for, from the
	// first failed row that has one, else the first row that has one.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	// Reason says why, in a line: the first failed row's reason, or why there is no verdict.
	Reason string `json:"reason,omitempty"`
	// Started and Finished bound the check (Finished is zero while it runs).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// A Row is one row of the check: a variant under a disruption.
type Row struct {
	Variant    string `json:"variant"`
	Disruption string `json:"disruption"`
	Count      int    `json:"count"`
	Status     string `json:"status"`
	Requests   int    `json:"requests"`
	Failed     int    `json:"failed"`
	// Attempts is 2 when the first attempt was a harness fault and the row ran again.
	Attempts int    `json:"attempts,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Recommendation is what the measured windows ask for.
type Recommendation struct {
	PreStop      string `json:"preStop"`
	GraceSeconds int64  `json:"terminationGracePeriodSeconds"`
	// Routed is the routed time the preStop must outlast, and From what gave it.
	Routed string `json:"routed,omitempty"`
	From   string `json:"from,omitempty"`
}

// Judge is the Verdict of rows, a check of target that planned planned rows. Any failed row
// fails it, whatever the others did (a harness fault beside a fail does not hide the fail); else
// a row the harness could not judge, an error or a missing row makes it Inconclusive, and
// reason (when set: the run's own error) is said; else it passes.
func Judge(target string, planned int, rows []check.Row, reason string) Verdict {
	v := Verdict{SchemaVersion: SchemaVersion, State: Done, Target: target}
	phases := map[string]int{}
	var failed, unjudged []string
	for _, r := range rows {
		s := r.Summary
		v.Requests += s.Requests
		v.Failed += s.Failed
		row := Row{Variant: r.Config.Name, Disruption: string(r.Config.Disruption), Count: r.Config.Count,
			Status: string(r.Verdict.Status), Requests: s.Requests, Failed: s.Failed, Attempts: r.Attempts, Reason: r.Verdict.Reason}
		v.Rows = append(v.Rows, row)
		if e := r.Explanation; e != nil {
			for ph, n := range e.Phases {
				phases[string(ph)] += n
			}
		}
		if v.Started.IsZero() || (!r.Started.IsZero() && r.Started.Before(v.Started)) {
			v.Started = r.Started
		}
		if end := r.Started.Add(r.Duration); end.After(v.Finished) {
			v.Finished = end
		}
		switch r.Verdict.Status {
		case check.Pass:
		case check.Fail:
			failed = append(failed, rowName(row)+": "+r.Verdict.Reason)
			if v.Recommendation == nil {
				v.Recommendation = recommendationOf(r)
			}
		default:
			unjudged = append(unjudged, rowName(row)+" "+string(r.Verdict.Status)+": "+r.Verdict.Reason)
		}
	}
	if v.Recommendation == nil {
		for _, r := range rows {
			if v.Recommendation = recommendationOf(r); v.Recommendation != nil {
				break
			}
		}
	}
	if len(phases) > 0 {
		v.ByPhase = phases
	}
	if v.Requests > 0 {
		v.FailureRatio = float64(v.Failed) / float64(v.Requests)
	}
	switch {
	case len(failed) > 0:
		v.Verdict, v.Reason = Fail, failed[0]
	case len(unjudged) > 0:
		v.Verdict, v.Reason = Inconclusive, unjudged[0]
	case reason != "":
		v.Verdict, v.Reason = Inconclusive, reason
	case len(rows) < planned || len(rows) == 0:
		v.Verdict, v.Reason = Inconclusive, fmt.Sprintf("%d of %d rows ran", len(rows), planned)
	default:
		v.Verdict = Pass
	}
	return v
}

func rowName(r Row) string { return fmt.Sprintf("%s under %s×%d", r.Variant, r.Disruption, r.Count) }

func recommendationOf(r check.Row) *Recommendation {
	if r.Explanation == nil || r.Explanation.Recommendation == nil {
		return nil
	}
	rec := r.Explanation.Recommendation
	return &Recommendation{PreStop: rec.PreStop.String(), GraceSeconds: rec.GraceSeconds, Routed: rec.Routed.String(), From: rec.RoutedFrom}
}

// ExitCode is the gate Job's exit code for v: 0 pass, 1 fail, 2 no verdict (Inconclusive or
// still running). Argo Rollouts' Job provider takes 0 as a successful measurement and any other
// code as a failed one.
func (v Verdict) ExitCode() int {
	switch {
	case v.State == Done && v.Verdict == Pass:
		return 0
	case v.State == Done && v.Verdict == Fail:
		return 1
	}
	return 2
}

// EncodeWithin is v as one line of JSON of at most limit bytes: what does not fit goes first
// the rows' reasons, then the rows, then the recommendation's source, and last the reason is
// cut; schemaVersion, state, verdict, the counts and byPhase always stay.
func (v Verdict) EncodeWithin(limit int) ([]byte, error) {
	steps := []func(*Verdict){
		func(*Verdict) {},
		func(w *Verdict) {
			w.Rows = append([]Row(nil), w.Rows...)
			for i := range w.Rows {
				w.Rows[i].Reason = ""
			}
		},
		func(w *Verdict) { w.Rows = nil },
		func(w *Verdict) {
			if w.Recommendation != nil {
				r := *w.Recommendation
				r.From = ""
				w.Recommendation = &r
			}
		},
	}
	w := v
	for _, step := range steps {
		step(&w)
		b, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		if len(b) <= limit {
			return b, nil
		}
	}
	// Removing n bytes of the reason removes at least n bytes of its JSON (escapes only grow
	// it), so one cut of the excess and the ellipsis' own bytes fits.
	b, _ := json.Marshal(w)
	if over := len(b) - limit; over > 0 {
		keep := len(w.Reason) - over - len("…")
		for keep > 0 && !utf8.RuneStart(w.Reason[keep]) {
			keep--
		}
		if keep > 0 {
			w.Reason = w.Reason[:keep] + "…"
		} else {
			w.Reason = ""
		}
		b, _ = json.Marshal(w)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("gate verdict: %d bytes, over the limit of %d even without its rows", len(b), limit)
	}
	return b, nil
}

// Markdown is v for a person: its verdict line, its rows as a table and the recommendation.
// Flagger shows a failed webhook's body in its events.
func (v Verdict) Markdown() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "**rollcheck: %s** — %s: %d of %d requests failed (%.3f%%)", strings.ToUpper(v.verdictOrState()), v.Target, v.Failed, v.Requests, 100*v.FailureRatio)
	if v.Reason != "" {
		fmt.Fprintf(&b, "\n\n%s", v.Reason)
	}
	if len(v.ByPhase) > 0 {
		phases := make([]string, 0, len(v.ByPhase))
		for ph := range v.ByPhase {
			phases = append(phases, ph)
		}
		sort.Strings(phases)
		b.WriteString("\n\nFailed by phase:")
		for _, ph := range phases {
			fmt.Fprintf(&b, " %s %d;", ph, v.ByPhase[ph])
		}
		b.Truncate(b.Len() - 1)
	}
	if len(v.Rows) > 0 {
		b.WriteString("\n\n| variant | disruption | verdict | failed | requests |\n|---|---|---|--:|--:|\n")
		for _, r := range v.Rows {
			fmt.Fprintf(&b, "| %s | %s×%d | %s | %d | %d |\n", r.Variant, r.Disruption, r.Count, r.Status, r.Failed, r.Requests)
		}
	}
	if rec := v.Recommendation; rec != nil {
		fmt.Fprintf(&b, "\nRecommended: preStop %s, terminationGracePeriodSeconds %d", rec.PreStop, rec.GraceSeconds)
		if rec.From != "" {
			fmt.Fprintf(&b, " (%s)", rec.From)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (v Verdict) verdictOrState() string {
	if v.State == Done {
		return v.Verdict
	}
	return v.State
}
