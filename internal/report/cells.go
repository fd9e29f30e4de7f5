package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
)

// cells is one row of the conformance table, as plain text (not yet escaped).
type cells struct {
	Scenario   string
	Disruption string
	Requests   string
	Failures   string
	FailurePct string
	DisruptS   string
	Bursts     string
	Expected   string
	Verdict    string
	Status     scenario.Status
	// Client is the client mode measured: keep-alive and transparent retry.
	Client string
	// Retry is true when Go's transport retried transparently: failures may be hidden.
	Retry bool
}

// tableHeader is the header of the conformance table.
var tableHeader = []string{"scenario", "disruption", "requests", "failures by class", "failure %",
	"disruption s", "bursts", "expected", "verdict"}

func rowCells(r Row) cells {
	s, sum := r.Scenario, r.Summary
	c := cells{
		Scenario:   scenarioCell(s),
		Disruption: disruptionCell(s),
		Requests:   fmt.Sprint(sum.Requests),
		Failures:   failuresCell(sum.Failures),
		FailurePct: "—",
		DisruptS:   fmt.Sprint(sum.DisruptionSeconds),
		Bursts:     fmt.Sprint(len(sum.Bursts)),
		Expected:   s.Expect.String(),
		Status:     status(r),
		Client:     clientMode(sum),
		Retry:      sum.KeepAlive && sum.TransparentRetry,
	}
	if c.Expected == "" {
		c.Expected = "—"
	}
	c.Verdict = verdictLabel(c.Status)
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
func scenarioCell(s scenario.Scenario) string {
	str := s.String()
	if cut, ok := strings.CutSuffix(str, " "+disruptionCell(s)); ok {
		return cut
	}
	return str
}

func disruptionCell(s scenario.Scenario) string {
	return fmt.Sprintf("%s×%d", s.Disruption, s.Count)
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

// pct formats a ratio as a percentage with enough digits for one failure in 100 000.
func pct(r float64) string {
	if r == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3f%%", 100*r)
}

func verdictLabel(s scenario.Status) string {
	switch s {
	case scenario.Pass:
		return "✅ pass"
	case scenario.Fail:
		return "❌ fail"
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
	return []string{
		"rollcheck " + or(v.Rollcheck),
		"Kubernetes " + or(v.Kubernetes),
		"kind " + or(v.Kind),
		"node image " + img,
		"Go " + or(v.Go),
		"vegeta " + or(v.Vegeta),
	}
}

// retryNote explains the transparent-retry marker.
const retryNote = "transparent retry: keep-alive was on and the requests were replayable, so Go's " +
	"http.Transport silently retried requests whose reused connection the server had closed; " +
	"those failures do not show in the row."
