package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

//go:embed timeline.html.tmpl
var timelineHTML string

var pageTemplate = template.Must(template.New("timeline.html").Funcs(template.FuncMap{
	"n": func(f float64) string { return fmt.Sprintf("%.1f", f) },
}).Parse(timelineHTML))

// page is what the HTML template renders.
type page struct {
	// Header and PropagationHeader are the headers of the conformance table and of each row's
	// endpoint table.
	Header, PropagationHeader []string
	Versions                  string
	Generated                 string
	Count                     string
	Rows                      []htmlRow
	AnyRetry                  bool
	RetryNote                 string
	Legend                    legend
}

type htmlRow struct {
	ID          string
	Suite       string
	Cells       cells
	StatusClass string
	Reason      string
	Why         string
	Facts       []fact
	Chart       chart
	Propagation []propLine
	Artifacts   []fact
}

type fact struct{ Name, Value string }

type propLine struct{ Pod, DeletingAt, ToUnready, ToRemoved string }

// legend holds the lifecycle colors for the template.
type legend struct {
	OK, Disruption, Deleting, EPReady, EPUnready, EPRemoved, PodGone, K8sEvent, Serving, Routed, Terminating, Burst string
}

// WriteHTML writes a self-contained HTML page: the conformance table, then for every row its
// summary numbers, verdict and a timeline drawn as inline SVG (requests per bucket, ok and
// failed by class; disruptions and pod deletions as vertical markers; one lane per pod with
// its endpoint and lifecycle moments). It has no scripts and loads nothing.
func (run Run) WriteHTML(w io.Writer) error {
	p := page{
		Header: conformanceTable.Headers(), PropagationHeader: endpointTable.Headers(),
		Versions:  strings.Join(versionsLine(run.Versions), " · "),
		Count:     Summarize(run).String(),
		RetryNote: retryNote,
		Legend: legend{
			OK: classColor("ok"), Disruption: colDisruption, Deleting: colDeleting, EPReady: colEPReady,
			EPUnready: colEPUnready, EPRemoved: colEPRemoved, PodGone: colPodGone, K8sEvent: colK8sEvent,
			Serving: colServing, Routed: colRouted, Terminating: colTerminate, Burst: colBurst,
		},
	}
	if !run.Generated.IsZero() {
		p.Generated = run.Generated.UTC().Format(time.RFC3339)
	}
	for i, r := range run.Rows {
		hr := htmlRow{
			ID:     fmt.Sprintf("row-%d", i+1),
			Suite:  r.Suite,
			Cells:  rowCells(r),
			Reason: reason(r),
			Why:    r.Config.Why,
			Chart:  buildChart(r),
		}
		p.AnyRetry = p.AnyRetry || hr.Cells.Retry
		hr.StatusClass = string(hr.Cells.Status)
		hr.Facts = facts(r)
		if r.Timeline != nil {
			for _, pr := range r.Timeline.Propagation {
				hr.Propagation = append(hr.Propagation, propLine{
					Pod:        pr.Pod,
					DeletingAt: "+" + secs(pr.DeletingAt.Sub(r.Started)),
					ToUnready:  propDur(pr.ToUnready),
					ToRemoved:  propDur(pr.ToRemoved),
				})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Artifacts)) {
			hr.Artifacts = append(hr.Artifacts, fact{k, r.Artifacts[k]})
		}
		p.Rows = append(p.Rows, hr)
	}
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

// facts are the summary numbers of a row, in display order.
func facts(r Row) []fact {
	s := r.Summary
	valid := "valid"
	if !s.Valid {
		valid = "INVALID: " + s.InvalidReason
	}
	fs := []fact{
		{"suite", r.Suite},
		{"started", r.Started.UTC().Format(time.RFC3339)},
		{"requests", fmt.Sprintf("%d sent, %d ok, %d failed", s.Requests, s.OK, s.Failed)},
		{"failures by class", failuresCell(s.Failures)},
		{"failure ratio", pct(s.FailureRatio)},
		{"disruption seconds", fmt.Sprint(s.DisruptionSeconds)},
		{"worst disruption", worstCell(r.Disruptions)},
		{"termination", terminationFact(r.Times)},
		{"disruption time", r.Times.DisruptionString()},
		{"bursts", fmt.Sprint(len(s.Bursts))},
		{"rate", fmt.Sprintf("%.1f of %d req/s asked", s.AchievedRate, s.Rate)},
		{"latency", fmt.Sprintf("p50 %s, p99 %s, max %s", s.Latency.P50, s.Latency.P99, s.Latency.Max)},
		{"client", clientMode(s)},
		{"load run", valid},
		{"expected", r.Config.Expect.String()},
	}
	if s.EndReason != "" {
		fs = append(fs, fact{"ended", string(s.EndReason)})
	}
	if s.Target != "" {
		fs = append(fs, fact{"target", strings.TrimSpace(s.Method + " " + s.Target)})
	}
	return fs
}

func propDur(d time.Duration) string {
	if d < 0 {
		return "not seen"
	}
	return d.Round(time.Millisecond).String()
}

// terminationFact is each moment of the deleted pods' terminations, from their deletion:
// "SIGTERM p50 5.0s (n 3) · exit p50 5.1s · max 5.2s (n 3) · gone p50 5.9s (n 3)".
func terminationFact(t *check.Times) string {
	if t == nil || len(t.Terminations) == 0 {
		return "— (no pod was deleted)"
	}
	part := func(name string, d check.Durations) string {
		if d.N == 0 {
			return name + " not seen"
		}
		return fmt.Sprintf("%s p50 %s · max %s (n %d)", name, d.P50.Round(10*time.Millisecond), d.Max.Round(10*time.Millisecond), d.N)
	}
	s := part("SIGTERM", t.SIGTERM) + "; " + part("exit", t.Exit) + "; " + part("gone", t.Gone)
	if t.Killed > 0 {
		s += fmt.Sprintf("; %d of %d killed", t.Killed, len(t.Terminations))
	}
	return s + " — from each pod's deletion"
}
