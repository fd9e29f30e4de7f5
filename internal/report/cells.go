package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// cells is one row of the conformance table, as plain text (not yet escaped).
type cells struct {
	Scenario   string
	Disruption string
	Requests   string
	Failures   string
	Phases     string
	FailurePct string
	// Termination is deletion → exit over the deleted pods; DisruptTime each disruption's
	// start → the Deployment settled (check.Times).
	Termination string
	DisruptTime string
	DisruptS    string
	Bursts      string
	Worst       string
	Expected    string
	Verdict     string
	Status      check.Status
	// Client is the client mode measured: keep-alive and transparent retry.
	Client string
	// Retry is true when Go's transport retried transparently: failures may be hidden.
	Retry bool
}

func rowCells(r Row) cells {
	s, sum := r.Config, r.Summary
	c := cells{
		Scenario:    scenarioCell(s),
		Disruption:  disruptionCell(s),
		Requests:    fmt.Sprint(sum.Requests),
		Failures:    failuresCell(sum.Failures),
		Phases:      phasesCell(r),
		FailurePct:  "—",
		Termination: r.Times.TerminationString(),
		DisruptTime: r.Times.DisruptionString(),
		DisruptS:    fmt.Sprint(sum.DisruptionSeconds),
		Bursts:      fmt.Sprint(len(sum.Bursts)),
		Worst:       worstCell(r.Disruptions),
		Expected:    s.Expect.String(),
		Status:      status(r),
		Client:      clientMode(sum),
		Retry:       sum.KeepAlive && sum.TransparentRetry,
	}
	if c.Expected == "" {
		c.Expected = "—"
	}
	c.Verdict = verdictLabel(c.Status) + retriedNote(r)
	if sum.Requests > 0 {
		c.FailurePct = pct(sum.FailureRatio)
	}
	if sum.Requests > 0 && sum.KeepAlive != s.KeepAlive {
		// The scenario asked for one mode and the load ran in the other: say what was measured.
		c.Scenario += " (measured " + c.Client + ")"
	}
	return c
}

// scenarioCell is the Scenario's String() without its disruption part, which has a column
// of its own.
func scenarioCell(c check.Applied) string { return c.Name + ": " + c.Shape() }

func disruptionCell(c check.Applied) string { return c.DisruptionString() }

// worstCell is the success ratio of the worst disruption and its number: "97.50% (#2)";
// "—" when no disruption was recorded.
func worstCell(ds []check.DisruptionResult) string {
	if len(ds) == 0 {
		return "—"
	}
	w := check.WorstDisruption(ds)
	if w.Requests == 0 {
		return fmt.Sprintf("no requests (#%d)", w.N)
	}
	if w.Failed == 0 {
		return fmt.Sprintf("100%% (all %d)", len(ds))
	}
	return fmt.Sprintf("%.2f%% (#%d)", 100*w.SuccessRatio, w.N)
}

// failuresCell lists failures by class, sorted by class: "eof 8, reset 3"; "—" for none.
func failuresCell(f map[loadgen.Class]int) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(f)) {
		if f[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, f[c]))
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// phasesCell says the row's failures by phase ("propagation 12, unknown 1"), "—" with none,
// "n/a" when the row has no attribution (it did not run its load, or predates it).
func phasesCell(r Row) string {
	if r.Explanation == nil {
		if r.Summary.Failed > 0 {
			return "n/a"
		}
		return "—"
	}
	if s := check.FormatPhases(r.Explanation.Phases); s != "" {
		return s
	}
	return "—"
}

// pct formats a ratio as a percentage with enough digits for one failure in 100 000.
func pct(r float64) string {
	if r == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3f%%", 100*r)
}

// retriedNote marks a row that needed a second attempt (internal/attempt): " (retried: <the
// first attempt's reason>)"; empty for a row that ran once.
func retriedNote(r Row) string {
	if r.Attempts < 2 {
		return ""
	}
	return " (retried: " + cmp.Or(r.Retried, "no reason recorded") + ")"
}

func verdictLabel(s check.Status) string {
	switch s {
	case check.Pass:
		return "✅ pass"
	case check.Fail:
		return "❌ fail"
	case check.Error:
		return "💥 error"
	}
	return "⚠️ harness-fault"
}

// clientMode says how the load's client used connections, which changes what is measured.
func clientMode(s loadgen.Summary) string {
	switch {
	case !s.KeepAlive:
		return "keep-alive off"
	case s.TransparentRetry:
		return "keep-alive on, transparent retry"
	}
	return "keep-alive on, no retry"
}

// versionsLine names what the run was measured with.
func versionsLine(v Versions) []string {
	or := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	img := or(v.NodeImage)
	if v.ImageSource != "" {
		img += " (" + v.ImageSource + ")"
	}
	line := []string{
		"rollcheck " + or(v.Rollcheck),
		"Kubernetes " + or(v.Kubernetes),
		"kind " + or(v.Kind),
		"node image " + img,
	}
	if v.KubeProxyMode != "" {
		line = append(line, "kube-proxy "+v.KubeProxyMode)
	}
	return append(line, "Go "+or(v.Go), "vegeta "+or(v.Vegeta))
}

// retryNote explains the transparent-retry marker.
const retryNote = "transparent retry: keep-alive was on and the requests were replayable, so Go's " +
	"http.Transport silently retried requests whose reused connection the server had closed; " +
	"those failures do not show in the row."

// anonymousNote explains the missing-pod-identity marker.
const anonymousNote = "no pod identity: the app named no pod in its answers (no X-Pod-Name, or the " +
	"header the check names), so the timeline has no per-pod request lanes and which pod a failed " +
	"request reached is unknown (unless a proxy in front named the pod's address it chose: then " +
	"each request is tied to its pod by that address); the verdict is unaffected."
