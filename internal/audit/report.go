package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rollcheck/rollcheck/timeline"
)

// SchemaVersion is the schemaVersion of rollcheck audit's JSON (Report).
const SchemaVersion = 2

// Report is rollcheck audit's result: every workload scored against a cluster's windows, ranked
// by predicted failures per rollout.
type Report struct {
	// SchemaVersion is the format's version (SchemaVersion).
	SchemaVersion int `json:"schemaVersion"`
	// Windows says where and when the windows scored against were measured.
	Windows Provenance `json:"windows"`
	// Rate is the requests per second each pod serves in the predictions.
	Rate float64 `json:"rate"`
	// RequestP99 is the request p99 the grace period must leave, and RequestP99From where it
	// comes from.
	RequestP99     Duration `json:"requestP99"`
	RequestP99From string   `json:"requestP99From"`
	// Formula is the prediction's formula, in words.
	Formula string `json:"formula"`
	// Expected says what the expected counts were taken over: the windows' measured
	// distributions, or (a windows file of p99s alone) their p99s, the upper bound.
	Expected string `json:"expected"`
	// AppDelay says what the predictions assume of the apps' own stop after SIGTERM.
	AppDelay string `json:"appDelay"`
	// Workloads are the scored workloads, the most failures per rollout first.
	Workloads []Result `json:"workloads"`
}

// Formula is the prediction, as the report states it.
const Formula = "expected failures = rate (req/s per pod) × mean exposed window per pod (over every measured window: the mean of max(0, window − what the pod holds)) × pods the disruption takes; upper bound: the same at the window's p99"

// AppDelayUnknown is what the predictions assume when no app delay is known.
const AppDelayUnknown = "not known (the manifests do not say whether an app keeps serving after SIGTERM on its own): assumed to stop accepting at SIGTERM, after its preStop; an app with a shutdown delay loses fewer (--app-delay)"

// Audit scores inv against f.
func Audit(inv *Inventory, f *WindowsFile, o Options) Report {
	p99, from := RequestP99(f, o)
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	expected := "the windows' measured distributions (each deleted pod's window)"
	if m := f.Windows; len(m.DataPlane.dist().pts)+len(m.ControlPlane.dist().pts)+len(m.Proxy.dist().pts)+len(m.Client.dist().pts) == 0 {
		expected = "the windows file holds p99s only (written before rollcheck kept the samples): the expected counts are the upper bounds; extract or measure the windows again"
	}
	delay := AppDelayUnknown
	if len(o.AppDelay) > 0 {
		var ds []string
		for k, d := range o.AppDelay {
			ds = append(ds, fmt.Sprintf("%s %s (%s)", cmp.Or(k, "every workload"), d.Delay, d.From))
		}
		slices.Sort(ds)
		delay = "the app keeps accepting after SIGTERM on its own: " + strings.Join(ds, "; ") + "; " + "other workloads: " + AppDelayUnknown
		if _, all := o.AppDelay[""]; all {
			delay = "the app keeps accepting after SIGTERM on its own: " + strings.Join(ds, "; ")
		}
	}
	return Report{SchemaVersion: SchemaVersion, Windows: f.Measured, Rate: o.Rate, RequestP99: Duration(p99), RequestP99From: from,
		Formula: Formula, Expected: expected, AppDelay: delay, Workloads: Score(inv, f, o)}
}

// Worst is the largest expected failures per rollout or per drain of any workload.
func (r Report) Worst() float64 {
	worst := 0.0
	for _, w := range r.Workloads {
		worst = max(worst, w.PredictedPerRollout, w.PredictedPerDrain)
	}
	return worst
}

// JSON writes r as indented JSON.
func (r Report) JSON(out io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := out.Write(b.Bytes())
	return err
}

// Table writes r for people: a line per workload, then each workload's exposed and unknown
// mechanisms with their fix.
func (r Report) Table(out io.Writer) error {
	fmt.Fprintf(out, "windows: %s, measured %s; %g req/s per pod; request p99 %s (%s)\n%s\nexpected over %s\napp's own delay after SIGTERM: %s\n\n",
		r.Windows.Source, r.Windows.From.Format(time.DateOnly), r.Rate, ms(r.RequestP99.D()), r.RequestP99From, Formula, r.Expected, r.AppDelay)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tPODS\tPRESTOP (FRONT)\tGRACE\tRECOMMENDED\tPER ROLLOUT (UPPER)\tPER DRAIN (UPPER)\tEXPOSED\tUNKNOWN")
	for _, res := range r.Workloads {
		w := res.Workload
		var exposed, unknown []string
		for _, f := range res.Findings {
			switch f.Status {
			case Exposed:
				exposed = append(exposed, fmt.Sprintf("%s/%s %.0f (%.0f)", f.Mechanism, f.Per, f.Predicted, f.Upper))
			case Unknown:
				unknown = append(unknown, string(f.Mechanism))
			case Blocked:
				exposed = append(exposed, fmt.Sprintf("%s/%s blocked", f.Mechanism, f.Per))
			}
		}
		pre := w.PreStop().String()
		if w.Front != w.App {
			pre = w.Front + ": " + pre
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%ds\t%s/%ds\t%.0f (%.0f)\t%.0f (%.0f)\t%s\t%s\n", w.ID(), w.Replicas, pre, w.GraceSeconds, res.PreStop, res.GraceSeconds,
			res.PredictedPerRollout, res.UpperPerRollout, res.PredictedPerDrain, res.UpperPerDrain, dash(strings.Join(exposed, ", ")), dash(strings.Join(unknown, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Workloads {
		var lines []string
		for _, f := range res.Findings {
			if f.Status == Covered && res.AppDelay == nil {
				continue
			}
			if f.Status == Covered && f.Mechanism != timeline.PhasePropagation && f.Mechanism != timeline.PhaseSidecarExit {
				continue
			}
			line := fmt.Sprintf("  %s %s (%s): %s", f.Status, f.Mechanism, f.Per, f.Why)
			if f.Status == Exposed && f.ExposedMean == f.Exposed {
				line += fmt.Sprintf("; %g req/s × %s × %d pods = %.0f", r.Rate, ms(f.Exposed.D()), f.Pods, f.Predicted)
			} else if f.Status == Exposed {
				line += fmt.Sprintf("; expected %g req/s × %s (mean) × %d pods = %.0f, at most %g × %s (p99) × %d = %.0f", r.Rate, ms(f.ExposedMean.D()), f.Pods, f.Predicted, r.Rate, ms(f.Exposed.D()), f.Pods, f.Upper)
			} else if f.Bound > 0 {
				line += fmt.Sprintf("; at worst %.0f", f.Bound)
			}
			if f.Fix != "" {
				line += "; fix: " + f.Fix
			}
			if f.Note != "" {
				line += "; note: " + f.Note
			}
			lines = append(lines, line)
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(out, "\n%s (routed %s: %s)\n%s\n", res.Workload.ID(), ms(res.Routed.D()), res.RoutedFrom, strings.Join(lines, "\n"))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
