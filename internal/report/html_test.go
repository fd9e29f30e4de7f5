package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func renderHTML(t *testing.T, run Run) string {
	t.Helper()
	var buf bytes.Buffer
	if err := run.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestWriteHTMLFile writes the synthetic run's HTML page to $ROLLCHECK_REPORT_HTML, to look
// at it in a browser; it is skipped when the variable is not set.
func TestWriteHTMLFile(t *testing.T) {
	out := os.Getenv("ROLLCHECK_REPORT_HTML")
	if out == "" {
		t.Skip("ROLLCHECK_REPORT_HTML not set")
	}
	if err := os.WriteFile(out, []byte(renderHTML(t, NewRun(syntheticRows()))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// wellFormed checks that the page's tags balance, with HTML's void elements and entities.
func wellFormed(t *testing.T, page string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tk.Name.Local)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != tk.Name.Local {
				t.Fatalf("</%s> closes %v", tk.Name.Local, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements: %v", stack)
	}
}

// svgs returns the page's SVG elements, each checked to be well-formed XML on its own.
func svgs(t *testing.T, page string) []string {
	t.Helper()
	all := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	for i, s := range all {
		d := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("svg %d is not well-formed XML: %v", i, err)
			}
		}
	}
	return all
}

func TestWriteHTML(t *testing.T) {
	rows := syntheticRows()
	rows[0].Verdict.Reason = `<b>bold</b> & "quoted"`
	page := renderHTML(t, NewRun(rows))
	wellFormed(t, page)

	if n := len(svgs(t, page)); n != len(rows) {
		t.Errorf("%d <svg> charts, want one per row (%d)", n, len(rows))
	}
	if strings.Contains(page, "ZgotmplZ") {
		t.Errorf("html/template rejected a value as unsafe (ZgotmplZ)")
	}
	// Self-contained: no scripts, no external resources.
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url(", `href="http`, `href="//`} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: has %q", bad)
		}
	}
	for _, want := range []string{
		// The table at the top, as in the Markdown.
		"<th>failures by class</th>", "eof 2, http_503 4, refused 44, reset 6", "failures (refused|reset)",
		"✅ pass", "⚠️ harness-fault", "3 rows: 2 pass, 0 fail, 1 harness-fault, 0 error",
		"rollcheck v0.1.0-test · Kubernetes v1.34.0",
		// Legend entries for the classes of the failing row.
		`></span>refused</span>`, `></span>reset</span>`, `></span>eof</span>`, `></span>http_503</span>`, `></span>timeout</span>`,
		// Markers and lanes.
		">D1<", ">D2<", ">✓1<", "app-7d9f8c6b5-old00", "pod-deleting app-7d9f8c6b5-old00",
		"endpoint-removed", "Killing: Stopping container app",
		// Summary numbers and the propagation table.
		"2000 sent, 1944 ok, 56 failed", "INVALID: achieved rate 91.30/s", "keep-alive on, transparent retry",
		"<td class=\"num\">700ms</td>",
		// Each row's worst disruption, as in the Markdown table.
		"<dt>worst disruption</dt><dd>90.24% (#1)</dd>", "<dt>worst disruption</dt><dd>100% (all 2)</dd>",
		"<th>worst disruption</th>", `<td class="num">90.24% (#1)</td>`,
		// Artifacts, linked relatively.
		`<a href="results/naive-exit.gob">vegeta</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Scenario and verdict text is escaped.
	if strings.Contains(page, "<b>bold</b>") || strings.Contains(page, "arrives <before>") {
		t.Errorf("text not escaped")
	}
	if !strings.Contains(page, "&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34;") || !strings.Contains(page, "arrives &lt;before&gt;") {
		t.Errorf("escaped text missing")
	}
}

func TestWriteHTMLEdgeRows(t *testing.T) {
	rows := syntheticRows()
	bare := rows[0]
	bare.Config.Name = "bare"
	bare.Buckets, bare.Timeline, bare.Artifacts, bare.LoadStarted = nil, nil, nil, time.Time{}
	page := renderHTML(t, NewRun([]Row{bare, {Suite: "x"}}))
	wellFormed(t, page)
	if n := len(svgs(t, page)); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	if !strings.Contains(page, "no load buckets recorded") {
		t.Errorf("an empty chart does not say so")
	}
	if !strings.Contains(page, "no verdict recorded for this row") {
		t.Errorf("an unjudged row does not say so")
	}
}

func TestChartGeometry(t *testing.T) {
	r := syntheticRows()[1]
	c := buildChart(r)
	inPlot := func(what string, x, w float64) {
		t.Helper()
		if x < c.PlotX-0.01 || x+w > c.PlotX+c.PlotW+0.01 {
			t.Errorf("%s at x=%.1f w=%.1f is outside the plot [%.1f, %.1f]", what, x, w, c.PlotX, c.PlotX+c.PlotW)
		}
	}
	for _, b := range append(append([]rect{}, c.Bars...), c.Rug...) {
		inPlot("bar", b.X, b.W)
		if b.Y < c.BarsY-0.01 || b.H < 0 {
			t.Errorf("bar %+v above the plot", b)
		}
	}
	// Bars start where the load starts: 3 s after the row started, of 23 s.
	first := c.Bars[0].X
	if want := c.PlotX + c.PlotW*3/23; first < want-0.5 || first > want+0.5 {
		t.Errorf("first bar at x=%.1f, want %.1f (the load started 3 s in)", first, want)
	}
	// Every bucket holds 10 requests, the y maximum.
	if c.YMax != 10 || c.YLabel != "requests / 100 ms" {
		t.Errorf("YMax %d %q", c.YMax, c.YLabel)
	}
	for _, m := range c.Markers {
		inPlot("marker", m.X, 0)
	}
	// 2 disruptions, 2 settled, 2 pod deletions.
	if len(c.Markers) != 6 {
		t.Errorf("%d markers, want 6", len(c.Markers))
	}
	// 3 old pods (serving from before the load) and 2 new ones.
	if len(c.Lanes) != 5 {
		t.Errorf("%d lanes, want 5", len(c.Lanes))
	}
	for _, l := range c.Lanes {
		for _, b := range l.Bands {
			inPlot("band", b.X, b.W)
		}
		for _, tk := range l.Ticks {
			inPlot("tick", tk.X, 0)
		}
	}
	if c.Lanes[len(c.Lanes)-1].Y+laneH > c.AxisY || c.AxisY > c.H {
		t.Errorf("lanes overflow the axis or the chart: %+v", c)
	}
	// Rug marks only where there are failures.
	if len(c.Rug) == 0 || len(c.Rug) > 20 {
		t.Errorf("%d rug marks", len(c.Rug))
	}
}

func TestChartMergesNarrowBuckets(t *testing.T) {
	r := syntheticRows()[0]
	// A 5 minute load: 3000 buckets on a plot under 1000 px wide.
	r.Buckets = make([]loadgen.Bucket, 3000)
	for i := range r.Buckets {
		r.Buckets[i] = loadgen.Bucket{Start: time.Duration(i) * loadgen.BucketWidth, Sent: 10, OK: 10}
	}
	r.Buckets[1234].Failed, r.Buckets[1234].OK = 1, 9
	r.Buckets[1234].Failures = map[loadgen.Class]int{loadgen.ClassReset: 1}
	c := buildChart(r)
	if len(c.Bars) > 600 {
		t.Errorf("%d bars for 3000 buckets: not merged", len(c.Bars))
	}
	for _, b := range c.Bars {
		if b.W < minBarW-0.6 {
			t.Errorf("bar %.2f px wide", b.W)
			break
		}
	}
	if !strings.HasPrefix(c.YLabel, "requests / ") || c.YLabel == "requests / 100 ms" || c.YMax <= 10 {
		t.Errorf("merged buckets: YLabel %q, YMax %d", c.YLabel, c.YMax)
	}
	if len(c.Rug) != 1 || c.Rug[0].Fill != classColor(loadgen.ClassReset) {
		t.Errorf("the one failure should show in the rug: %+v", c.Rug)
	}
	if len(c.XTicks) > maxXTicks {
		t.Errorf("%d x ticks", len(c.XTicks))
	}
}

func TestChartEventsOutsideTheDomain(t *testing.T) {
	r := syntheticRows()[0]
	r.Timeline = &timeline.Timeline{Events: []timeline.Event{
		{Time: r.Started.Add(-time.Minute), Kind: timeline.Disruption},
		{Time: r.Started.Add(-time.Minute), Kind: timeline.PodDeleting, Pod: "early"},
		{Time: r.Started.Add(2 * time.Second), Kind: timeline.PodCreated, Pod: "not-drawn"},
	}}
	c := buildChart(r)
	if len(c.Markers) != 0 {
		t.Errorf("markers before the start drawn: %+v", c.Markers)
	}
	if len(c.Lanes) != 0 {
		t.Errorf("lanes for pods with nothing to draw: %+v", c.Lanes)
	}
}
