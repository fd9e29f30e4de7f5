package report

import (
	"bufio"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/tune"
)

// Names of the files WriteTune writes.
const (
	TuneJSONFile     = "tune.json"
	TuneMarkdownFile = "tune.md"
	TuneHTMLFile     = "tune.html"
)

// tuneCells is one probe as a line of the table, plain text.
func tuneCells(p tune.Probe) []string {
	n := strconv.Itoa(p.N)
	if p.Retry {
		n += " (retry)"
	}
	c := []string{n, seconds(p.PreStop), "—", "—", "—", "—", "—", "—", "—", verdictLabel(p.Status)}
	if p.Exit.N > 0 {
		c[6] = p.Exit.P50.Round(100 * time.Millisecond).String()
	}
	if p.DisruptionTime.N > 0 {
		c[7] = p.DisruptionTime.P50.Round(100 * time.Millisecond).String()
	}
	if p.Requests > 0 {
		c[2], c[3], c[4] = strconv.Itoa(p.Requests), strconv.Itoa(p.Failed), pct(p.FailureRatio)
	}
	if p.Disruptions > 0 {
		c[5] = fmt.Sprintf("%.2f%%", 100*p.WorstSuccessRatio)
	}
	if p.Deletions > 0 {
		c[8] = fmt.Sprintf("%d of %d", p.FailingDeletions, p.Deletions)
	}
	if p.Alone && p.Judged() {
		c[8] += ", alone"
	}
	return c
}

// seconds formats d as a number of seconds: "0", "1.5", "20".
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// byPreStop returns the probes sorted by preStop, those at the same value in the order they ran.
func byPreStop(ps []tune.Probe) []tune.Probe {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b tune.Probe) int { return cmp.Compare(a.PreStop, b.PreStop) })
	return ps
}

// tuneHeadline says in a sentence what the tune found.
func tuneHeadline(r *tune.Result) string {
	switch r.Status {
	case tune.Found:
		if e := r.AtFound; e != nil {
			return fmt.Sprintf("Found: preStop %s s, confirmed alone: %d of %d deletions failed, so a deletion fails with p ≤ %.2f %% (95 %% confidence).",
				seconds(r.Found), e.Failing, e.Deletions, 100*e.Upper)
		}
		return fmt.Sprintf("Found: preStop %s s, confirmed by runs alone.", seconds(r.Found))
	case tune.Unconfirmed:
		return fmt.Sprintf("Not confirmed: the search found preStop %s s, but runs alone did not bound the chance that a deletion fails below %s %%.",
			seconds(r.Found), percentOf(r.Bound))
	case tune.NotFound:
		return fmt.Sprintf("Not found: no preStop from %s s to %s s met the threshold.", seconds(r.Min), seconds(r.Max))
	}
	return "Incomplete: the tune stopped before it had an answer (a probe could not be judged twice, or it was interrupted)."
}

// tuneFacts are the tune's settings and cost, in display order.
func tuneFacts(r *tune.Result) []fact {
	return []fact{
		{"base", fmt.Sprintf("%s (suite %s)", r.Base, r.Suite)},
		{"disruption", fmt.Sprintf("%s×%d", r.Disruption.Kind, r.Disruption.Count)},
		{"threshold", r.Expect.String()},
		{"grace period", fmt.Sprintf("%d s", r.GraceSeconds)},
		{"search", fmt.Sprintf("%s s to %s s, resolution %s s", seconds(r.Min), seconds(r.Max), seconds(r.Resolution))},
		{"bound", fmt.Sprintf("a deletion fails with p below %s %% at 95 %% confidence: %d deletions alone, none failing", percentOf(r.Bound), r.DeletionsNeeded)},
		{"probes", fmt.Sprintf("%d search, %d confirmation (alone), up to %d at once", len(r.Probes), len(r.Confirm), max(r.Parallel, 1))},
		{"wall time", r.Wall.Round(time.Second).String()},
	}
}

// recommendationLines are the recommendation and its inputs; nil when there is none.
func recommendationLines(rec *check.Recommendation) []string {
	if rec == nil {
		return nil
	}
	ls := []string{
		fmt.Sprintf("preStop ≥ %s s, terminationGracePeriodSeconds ≥ %d", seconds(rec.PreStop), rec.GraceSeconds),
		fmt.Sprintf("inputs: routed %s (%s), request p99 %s", rec.Routed.Round(time.Millisecond), rec.RoutedFrom, rec.RequestP99.Round(time.Millisecond)),
	}
	if rec.Fit != "" {
		ls = append(ls, "the confirmed configuration: "+rec.Fit)
	}
	if rec.Advice != "" {
		ls = append(ls, rec.Advice)
	}
	return ls
}

// percentOf is 100·r, as short as it goes: "5", "0.5".
func percentOf(r float64) string { return strconv.FormatFloat(100*r, 'f', -1, 64) }

// boundLines say what the runs alone showed at the answer and one resolution below it; nil
// when none ran there.
func boundLines(r *tune.Result) []string {
	var out []string
	if e := r.AtFound; e != nil {
		out = append(out, fmt.Sprintf("at %s s, the answer: %s", seconds(e.PreStop), e))
	}
	if e := r.Below; e != nil {
		out = append(out, fmt.Sprintf("at %s s, one step below: %s", seconds(e.PreStop), e))
	}
	return out
}

// unjudged lists the probes that have no verdict on the app, with their reasons.
func unjudged(r *tune.Result) []string {
	var out []string
	for _, p := range append(slices.Clone(r.Probes), r.Confirm...) {
		if !p.Judged() {
			out = append(out, fmt.Sprintf("probe %d (preStop %s s): %s: %s", p.N, seconds(p.PreStop), p.Status, p.Reason))
		}
	}
	return out
}

// TuneMarkdown writes what Tune found for humans and PR comments: the answer in a sentence,
// the settings, the curve (the search's probes by preStop: requests, failures, the worst
// disruption's success ratio, failing deletions, the verdict), the confirmation runs, the bound
// at the answer and one step below, the recommendation with its inputs when the confirming run
// has one, and the wall time.
func TuneMarkdown(w io.Writer, r *tune.Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	table := func(ps []tune.Probe) {
		p("%s", tuneTable.markdownHeader())
		for _, pr := range ps {
			p("| %s |\n", strings.Join(tuneCells(pr), " | "))
		}
	}
	p("# rollcheck tune: %s\n\n", mdEscape(r.Base))
	p("**%s**\n\n", tuneHeadline(r))
	for _, f := range tuneFacts(r) {
		p("- %s: %s\n", f.Name, mdEscape(f.Value))
	}
	if r.Note != "" {
		p("\nNote: %s.\n", mdEscape(r.Note))
	}
	p("\n## Curve\n\n")
	if len(r.Probes) == 0 {
		p("No probe ran.\n")
	} else {
		table(byPreStop(r.Probes))
	}
	if len(r.Confirm) > 0 {
		p("\n## Confirmation\n\n")
		table(r.Confirm)
	}
	if ls := boundLines(r); ls != nil {
		p("\n## Bound\n\n")
		for _, l := range ls {
			p("- %s\n", mdEscape(l))
		}
	}
	if u := unjudged(r); len(u) > 0 {
		p("\nNo verdict on the app:\n\n")
		for _, l := range u {
			p("- %s\n", mdEscape(l))
		}
	}
	if r.FoundOK {
		p("\n## Recommendation\n\n")
		if ls := recommendationLines(r.Recommendation); ls != nil {
			for _, l := range ls {
				p("- %s\n", mdEscape(l))
			}
		} else {
			p("The confirming run gave no recommendation.\n")
		}
	}
	p("\n%s\n", mdEscape(strings.Join(versionsLine(r.Versions), " · ")))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write tune markdown: %w", err)
	}
	return nil
}

//go:embed tune.html.tmpl
var tuneHTML string

var tuneTemplate = template.Must(template.New("tune.html").Funcs(template.FuncMap{
	"n": func(f float64) string { return fmt.Sprintf("%.1f", f) },
}).Parse(tuneHTML))

// Geometry of the tune chart.
const (
	tuneW       = 900.0
	tuneMarginL = 70.0
	tuneMarginR = 80.0
	tuneTop     = 24.0
	tunePlotH   = 260.0
	tuneAxisH   = 44.0
	// tuneTitleInset is the axes' titles' distance from the chart's left and right edges.
	tuneTitleInset = 4.0
)

// Series colors of the tune chart.
const (
	colFailures = "#cf222e"
	colWorst    = "#1f77b4"
	colFound    = "#1a7f37"
)

type tunePoint struct {
	X, Y   float64
	Title  string
	Hollow bool // a failing probe
}

type yTick struct {
	Y     float64
	Label string
}

// tuneChart is the curve's geometry, ready for the template.
type tuneChart struct {
	W, H, PlotX, PlotY, PlotW, PlotH, PlotRight, PlotBottom float64
	XTicks                                                  []axisTick
	FailTicks, RatioTicks                                   []yTick
	Failures, Worst                                         []tunePoint
	FailLine, WorstLine                                     string
	Found                                                   *marker
	FoundLabelX                                             float64
	FoundAnchor                                             string
	AxisTitleY, LeftTickX, RightTickX, TitleY               float64
	LeftTitleX, RightTitleX                                 float64
	ColFailures, ColWorst                                   string
}

// buildTuneChart lays out the curve: x is preStop seconds from 0 to Max; the left axis counts
// failed requests, the right one is the worst disruption's success ratio. One point of each
// series per judged probe; the value found is a vertical line.
func buildTuneChart(r *tune.Result) tuneChart {
	c := tuneChart{W: tuneW, H: tuneTop + tunePlotH + tuneAxisH, PlotX: tuneMarginL, PlotY: tuneTop,
		PlotW: tuneW - tuneMarginL - tuneMarginR, PlotH: tunePlotH, ColFailures: colFailures, ColWorst: colWorst}
	c.PlotRight, c.PlotBottom = c.PlotX+c.PlotW, c.PlotY+c.PlotH
	c.AxisTitleY, c.LeftTickX, c.RightTickX, c.TitleY = c.PlotBottom+36, c.PlotX-8, c.PlotRight+8, c.PlotY-10
	// The axes' titles sit above the plot, from the chart's edges inward: written from the tick
	// labels' position outward they would run past the chart's edges and be cut off.
	c.LeftTitleX, c.RightTitleX = tuneTitleInset, c.W-tuneTitleInset
	end := tuneEnd(r)
	xOf := func(d time.Duration) float64 { return c.PlotX + c.PlotW*d.Seconds()/end.Seconds() }
	c.XTicks = xTicks(end, xOf)
	for i := range c.XTicks {
		c.XTicks[i].Y1, c.XTicks[i].Y2, c.XTicks[i].TY = c.PlotY, c.PlotBottom, c.PlotBottom+16
	}

	curve := r.Curve()
	maxFailed, minWorst := 1, 1.0
	for _, p := range curve {
		maxFailed = max(maxFailed, p.Failed)
		if p.Disruptions > 0 {
			minWorst = min(minWorst, p.WorstSuccessRatio)
		}
	}
	fMax := niceCeil(maxFailed)
	wLo := max(math.Floor(minWorst*20)/20-0.05, 0)
	yFail := func(n int) float64 { return c.PlotBottom - c.PlotH*float64(n)/float64(fMax) }
	yWorst := func(r float64) float64 { return c.PlotBottom - c.PlotH*(r-wLo)/(1-wLo) }
	for _, n := range []int{0, fMax / 2, fMax} {
		c.FailTicks = append(c.FailTicks, yTick{yFail(n), strconv.Itoa(n)})
	}
	for _, v := range []float64{wLo, (wLo + 1) / 2, 1} {
		c.RatioTicks = append(c.RatioTicks, yTick{yWorst(v), strconv.FormatFloat(math.Round(1000*v)/10, 'f', -1, 64) + "%"})
	}
	var fl, wl []string
	for _, p := range curve {
		x := xOf(p.PreStop)
		kind := "probe"
		if p.Confirm {
			kind = "confirmation"
		}
		title := fmt.Sprintf("%s %d: preStop %s s: %d of %d failed; worst disruption %.2f%%; disruption time p50 %s: %s",
			kind, p.N, seconds(p.PreStop), p.Failed, p.Requests, 100*p.WorstSuccessRatio, p.DisruptionTime.P50.Round(100*time.Millisecond), p.Status)
		fp := tunePoint{x, yFail(p.Failed), title, p.Status != check.Pass}
		wp := tunePoint{x, yWorst(p.WorstSuccessRatio), title, p.Status != check.Pass}
		c.Failures, c.Worst = append(c.Failures, fp), append(c.Worst, wp)
		fl = append(fl, fmt.Sprintf("%.1f,%.1f", fp.X, fp.Y))
		wl = append(wl, fmt.Sprintf("%.1f,%.1f", wp.X, wp.Y))
	}
	c.FailLine, c.WorstLine = strings.Join(fl, " "), strings.Join(wl, " ")
	if r.Status == tune.Found || r.Status == tune.Unconfirmed {
		label := "found " + seconds(r.Found) + " s"
		if !r.FoundOK {
			label += " (unconfirmed)"
		}
		x := xOf(r.Found)
		c.Found = &marker{X: x, Y1: c.PlotY, Y2: c.PlotBottom, Color: colFound, Width: 1.5, Dash: "5 3",
			Label: label, LabelY: c.PlotY + 14, Title: tuneHeadline(r)}
		// The label sits inside the plot, right of the line, or left of it near the right edge.
		c.FoundLabelX, c.FoundAnchor = x+5, "start"
		if x > c.PlotX+0.8*c.PlotW {
			c.FoundLabelX, c.FoundAnchor = x-5, "end"
		}
	}
	return c
}

// tuneEnd is the x axis' end: a tenth past the largest preStop drawn (a probe or the value
// found), rounded up to a round unit. Not the search's upper bound: a search up to 20 s that
// found 1 s would crowd every point into the plot's left tenth.
func tuneEnd(r *tune.Result) time.Duration {
	hi := r.Found
	for _, p := range r.Curve() {
		hi = max(hi, p.PreStop)
	}
	hi = max(hi+hi/10, time.Second)
	for _, unit := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second} {
		if hi <= 10*unit {
			return (hi + unit - 1) / unit * unit
		}
	}
	return (hi + time.Minute - 1) / time.Minute * time.Minute
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten, and to an even number above 1 (the
// middle tick is n/2).
func niceCeil(n int) int {
	if n <= 1 {
		return 2
	}
	p := 1
	for p*10 < n {
		p *= 10
	}
	for _, m := range []int{1, 2, 5, 10} {
		if m*p >= n {
			return max(m*p, 2)
		}
	}
	return 10 * p
}

// tunePage is what the tune template renders.
type tunePage struct {
	Base, Headline, Note, Versions, Generated string
	Status                                    string
	Facts                                     []fact
	Header                                    []string
	Curve, Confirm                            [][]string
	Unjudged, Bound                           []string
	FoundOK                                   bool
	Recommendation                            []string
	Chart                                     tuneChart
}

// TuneHTML writes a self-contained HTML page of what Tune found: the answer, the settings,
// the curve as an inline SVG chart (failures and the worst disruption's success ratio against
// preStop seconds, one point per judged probe, the value found marked) and as tables, the
// confirmation runs and the recommendation. It has no scripts and loads nothing.
func TuneHTML(w io.Writer, r *tune.Result) error {
	p := tunePage{Base: r.Base, Headline: tuneHeadline(r), Note: r.Note, Status: string(r.Status),
		Versions: strings.Join(versionsLine(r.Versions), " · "), Facts: tuneFacts(r), Header: tuneTable.Headers(),
		Unjudged: unjudged(r), Bound: boundLines(r), FoundOK: r.FoundOK, Recommendation: recommendationLines(r.Recommendation),
		Chart: buildTuneChart(r), Generated: time.Now().UTC().Format(time.RFC3339)}
	for _, pr := range byPreStop(r.Probes) {
		p.Curve = append(p.Curve, tuneCells(pr))
	}
	for _, pr := range r.Confirm {
		p.Confirm = append(p.Confirm, tuneCells(pr))
	}
	if err := tuneTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("write tune HTML: %w", err)
	}
	return nil
}

// TuneJSON writes the result as indented JSON (the probes' rows are not in it: each probe
// names its row's file).
func TuneJSON(w io.Writer, r *tune.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write tune JSON: %w", err)
	}
	return nil
}

// WriteTune writes the result's JSON, Markdown and HTML reports to dir/tune.json, dir/tune.md
// and dir/tune.html, creating dir if needed, and returns the paths written. It stops at the
// first error; files written before it are returned with it.
func WriteTune(dir string, r *tune.Result) (paths []string, err error) {
	with := func(f func(io.Writer, *tune.Result) error) func(io.Writer) error {
		return func(w io.Writer) error { return f(w, r) }
	}
	return writeFiles(dir, []reportFile{
		{TuneJSONFile, with(TuneJSON)},
		{TuneMarkdownFile, with(TuneMarkdown)},
		{TuneHTMLFile, with(TuneHTML)},
	})
}
