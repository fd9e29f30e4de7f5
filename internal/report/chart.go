package report

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Geometry of a timeline chart, in SVG user units (pixels).
const (
	chartW      = 1160.0
	marginL     = 160.0 // lane labels and the y axis
	marginR     = 16.0
	plotW       = chartW - marginL - marginR
	labelsH     = 18.0 // disruption labels above the bars
	barsH       = 150.0
	rugGap      = 4.0
	rugH        = 8.0
	lanesGap    = 10.0
	laneH       = 16.0
	axisH       = 26.0
	minBarW     = 2.0 // buckets narrower than this are merged
	maxLanes    = 40
	maxXTicks   = 16
	minBurstW   = 2.0
	markerLabel = 11.0
)

// classColors are the colors of the failure classes in the charts; 5xx codes not listed get
// color5xx, and any other class a color from fallbackColors.
var classColors = map[loadgen.Class]string{
	loadgen.ClassOK:           "#b9d7b0",
	loadgen.ClassRefused:      "#d62728",
	loadgen.ClassReset:        "#ff7f0e",
	loadgen.ClassEOF:          "#9467bd",
	loadgen.ClassTimeout:      "#8c564b",
	loadgen.ClassHTTP4xx:      "#e377c2",
	loadgen.ClassOther:        "#7f7f7f",
	loadgen.HTTP5xxClass(502): "#1f77b4",
	loadgen.HTTP5xxClass(503): "#17becf",
	loadgen.HTTP5xxClass(504): "#393b79",
}

const (
	color5xx   = "#6baed6"
	colorProxy = "#e7969c" // the proxy in front answered itself
)

var fallbackColors = []string{"#bcbd22", "#843c39", "#637939", "#7b4173", "#e7ba52"}

func classColor(c loadgen.Class) string {
	if col, ok := classColors[c]; ok {
		return col
	}
	if strings.HasPrefix(string(c), "http_5") {
		return color5xx
	}
	if c.IsProxy() {
		return colorProxy
	}
	h := fnv.New32a()
	h.Write([]byte(c))
	return fallbackColors[h.Sum32()%uint32(len(fallbackColors))]
}

// Lifecycle colors, shared by the lanes, the markers and the legend.
const (
	colDisruption = "#111111"
	colDeleting   = "#e6550d"
	colEPReady    = "#31a354"
	colEPUnready  = "#d4a000"
	colEPRemoved  = "#cb181d"
	colPodGone    = "#636363"
	colK8sEvent   = "#6a51a3"
	colServing    = "#e5f5e0"
	colRouted     = "#fdae6b" // still a ready endpoint after deletion began
	colTerminate  = "#fee6ce" // a terminating (not ready) endpoint
	colBurst      = "#f8a99a"
)

type rect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
}

type marker struct {
	X, Y1, Y2 float64
	Color     string
	Width     float64
	Dash      string
	Label     string
	LabelY    float64
	Title     string
}

type tick struct {
	X, Y, H float64
	Color   string
	Title   string
	Dot     bool
}

type lane struct {
	Y, LabelY, MidY float64
	X1, X2, LabelX  float64
	Label           string
	Pod             string
	Bands           []rect
	Ticks           []tick
}

type axisTick struct {
	X, Y1, Y2, TY float64
	Label         string
}

// chart is the geometry of one row's timeline, ready for the template.
type chart struct {
	W, H           float64
	PlotX, PlotW   float64
	BarsY, BarsH   float64
	BarsBottom     float64
	RugY, RugH     float64
	LanesY         float64
	AxisY, AxisTxY float64
	YMax           int
	YMaxY          float64
	YLabel         string
	Bursts         []rect
	Bars           []rect
	Rug            []rect
	Markers        []marker
	Lanes          []lane
	XTicks         []axisTick
	// Classes are the failure classes of the row, for the legend.
	Classes []legendItem
	// Notes say what the chart leaves out.
	Notes []string
	Empty bool

	PlotRight, YLabelX, AxisTitleX, YTitleY, RugTextY, CenterX, CenterY float64
}

type legendItem struct {
	Name, Color string
}

// buildChart lays out the timeline of r: x is seconds since r.Started.
func buildChart(r Row) chart {
	loadOff := time.Duration(0)
	if !r.LoadStarted.IsZero() {
		loadOff = r.LoadStarted.Sub(r.Started)
	}
	plotted := func(k timeline.Kind) bool {
		switch k {
		case timeline.Disruption, timeline.DisruptionDone, timeline.PodDeleting, timeline.EndpointReady,
			timeline.EndpointUnready, timeline.EndpointRemoved, timeline.PodGone, timeline.K8sEvent:
			return true
		}
		return false
	}
	var events []timeline.Event
	if r.Timeline != nil {
		for _, e := range r.Timeline.Events {
			if plotted(e.Kind) {
				events = append(events, e)
			}
		}
		slices.SortStableFunc(events, func(a, b timeline.Event) int { return a.Time.Compare(b.Time) })
	}

	// The x domain: from Started to the end of the load or the last event, whichever is later.
	end := time.Duration(0)
	if n := len(r.Buckets); n > 0 {
		end = loadOff + r.Buckets[n-1].Start + loadgen.BucketWidth
	}
	for _, e := range events {
		end = max(end, e.Time.Sub(r.Started))
	}
	if end <= 0 {
		end = r.Duration
	}
	if end <= 0 {
		end = time.Second
	}
	c := chart{W: chartW, PlotX: marginL, PlotW: plotW, BarsY: labelsH, BarsH: barsH}
	c.BarsBottom = c.BarsY + c.BarsH
	c.RugY, c.RugH = c.BarsBottom+rugGap, rugH
	c.LanesY = c.RugY + c.RugH + lanesGap
	sec := end.Seconds()
	xOf := func(d time.Duration) float64 { return marginL + plotW*d.Seconds()/sec }
	inDomain := func(d time.Duration) bool { return d >= 0 && d <= end }

	// Lanes first, to know the chart's height.
	c.Lanes, c.Notes = buildLanes(r, events, end, c.LanesY, xOf)
	lanesBottom := c.LanesY + float64(len(c.Lanes))*laneH
	if len(c.Lanes) == 0 {
		lanesBottom = c.LanesY - lanesGap/2
	}
	c.AxisY = lanesBottom + 2
	c.AxisTxY = c.AxisY + 14
	c.H = c.AxisY + axisH

	// Bars: buckets, merged until each is at least minBarW wide.
	bucketPx := plotW * loadgen.BucketWidth.Seconds() / sec
	k := 1
	if bucketPx < minBarW {
		k = int(math.Ceil(minBarW / bucketPx))
	}
	width := time.Duration(k) * loadgen.BucketWidth
	c.YLabel = "requests / " + shortDur(width)
	merged := mergeBuckets(r.Buckets, k)
	c.YMax = 1
	for _, b := range merged {
		c.YMax = max(c.YMax, b.Sent)
	}
	c.YMaxY = c.BarsY
	classes := map[loadgen.Class]bool{}
	gap := 0.0
	if bucketPx*float64(k) >= 4 {
		gap = 0.5
	}
	for _, b := range merged {
		at := loadOff + b.Start
		x := xOf(at)
		w := max(xOf(at+width)-x-gap, 0.5)
		title := bucketTitle(at, width, b)
		y := c.BarsBottom
		h := func(n int) float64 { return c.BarsH * float64(n) / float64(c.YMax) }
		fcs := slices.Sorted(maps.Keys(b.Failures))
		for _, cl := range fcs {
			n := b.Failures[cl]
			if n <= 0 {
				continue
			}
			classes[cl] = true
			y -= h(n)
			c.Bars = append(c.Bars, rect{x, y, w, h(n), classColor(cl), title})
		}
		if b.OK > 0 {
			y -= h(b.OK)
			c.Bars = append(c.Bars, rect{x, y, w, h(b.OK), classColor(loadgen.ClassOK), title})
		}
		if b.Failed > 0 {
			dom := slices.MaxFunc(fcs, func(a, b2 loadgen.Class) int {
				return cmp.Or(cmp.Compare(b.Failures[a], b.Failures[b2]), strings.Compare(string(b2), string(a)))
			})
			c.Rug = append(c.Rug, rect{x, c.RugY, max(w, 1), c.RugH, classColor(dom), title})
		}
	}
	for _, cl := range slices.Sorted(maps.Keys(classes)) {
		c.Classes = append(c.Classes, legendItem{string(cl), classColor(cl)})
	}
	for _, cl := range slices.Sorted(maps.Keys(r.Summary.Failures)) {
		if !classes[cl] && r.Summary.Failures[cl] > 0 {
			c.Classes = append(c.Classes, legendItem{string(cl), classColor(cl)})
		}
	}
	c.Empty = len(r.Buckets) == 0

	// Bursts, behind the failure rug: they join failures that are close in time.
	for i, b := range r.Summary.Bursts {
		from, to := b.First.Sub(r.Started), b.Last.Sub(r.Started)
		if to < 0 || from > end {
			continue
		}
		x := xOf(max(from, 0))
		w := max(xOf(min(to, end))-x, minBurstW)
		c.Bursts = append(c.Bursts, rect{x, c.RugY - 2, w, c.RugH + 4, colBurst,
			fmt.Sprintf("burst %d: %d failures (%s) over %s from +%s", i+1, b.Count,
				failuresCell(b.Classes), b.Span().Round(time.Millisecond), secs(from))})
	}

	// Vertical markers: disruptions through everything, pod deletions through the bars.
	nd, nDone := 0, 0
	for _, e := range events {
		at := e.Time.Sub(r.Started)
		if !inDomain(at) {
			continue
		}
		x := xOf(at)
		switch e.Kind {
		case timeline.Disruption:
			nd++
			c.Markers = append(c.Markers, marker{x, c.BarsY - 4, c.AxisY, colDisruption, 1.5, "",
				fmt.Sprintf("D%d", nd), markerLabel, eventTitle(r.Started, e)})
		case timeline.DisruptionDone:
			nDone++
			c.Markers = append(c.Markers, marker{x, c.BarsY - 4, c.AxisY, colDisruption, 1.2, "4 3",
				fmt.Sprintf("✓%d", nDone), markerLabel, eventTitle(r.Started, e)})
		case timeline.PodDeleting:
			c.Markers = append(c.Markers, marker{x, c.BarsY, c.BarsBottom + rugGap + rugH, colDeleting, 1, "2 2",
				"", 0, eventTitle(r.Started, e)})
		}
	}

	c.XTicks = xTicks(end, xOf)
	for i := range c.XTicks {
		c.XTicks[i].Y1, c.XTicks[i].Y2, c.XTicks[i].TY = c.BarsY, c.AxisY, c.AxisTxY
	}
	c.PlotRight = c.PlotX + c.PlotW
	c.YLabelX = c.PlotX - 6
	c.AxisTitleX = c.PlotX - 18
	c.YTitleY = c.BarsY + c.BarsH/2
	c.RugTextY = c.RugY + c.RugH
	c.CenterX, c.CenterY = c.PlotX+c.PlotW/2, c.BarsY+c.BarsH/2
	return c
}

// mergeBuckets sums every k consecutive buckets into one.
func mergeBuckets(bs []loadgen.Bucket, k int) []loadgen.Bucket {
	if k <= 1 {
		return bs
	}
	var out []loadgen.Bucket
	for i := 0; i < len(bs); i += k {
		m := loadgen.Bucket{Start: bs[i].Start}
		for _, b := range bs[i:min(i+k, len(bs))] {
			m.Sent += b.Sent
			m.OK += b.OK
			m.Failed += b.Failed
			for c, n := range b.Failures {
				if m.Failures == nil {
					m.Failures = map[loadgen.Class]int{}
				}
				m.Failures[c] += n
			}
		}
		out = append(out, m)
	}
	return out
}

func bucketTitle(at, width time.Duration, b loadgen.Bucket) string {
	s := fmt.Sprintf("+%s to +%s: %d sent, %d ok", secs(at), secs(at+width), b.Sent, b.OK)
	if b.Failed > 0 {
		s += ", failed: " + failuresCell(b.Failures)
	}
	return s
}

func eventTitle(start time.Time, e timeline.Event) string {
	s := fmt.Sprintf("+%s %s", secs(e.Time.Sub(start)), e.Kind)
	if e.Pod != "" {
		s += " " + e.Pod
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// secs formats d as seconds with one decimal: "12.3s".
func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func shortDur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%g s", d.Seconds())
}

// xTicks returns at most maxXTicks ticks at a round interval over [0, end].
func xTicks(end time.Duration, xOf func(time.Duration) float64) []axisTick {
	intervals := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second,
		10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	every := intervals[len(intervals)-1]
	for _, s := range intervals {
		if int(end/s) < maxXTicks {
			every = s
			break
		}
	}
	var ts []axisTick
	for t := time.Duration(0); t <= end; t += every {
		ts = append(ts, axisTick{X: xOf(t), Label: fmt.Sprintf("%gs", t.Seconds())})
	}
	return ts
}

// podState is what the lanes need to know of one pod.
type podState struct {
	name  string
	ready time.Duration // endpoint-ready, or unset
	del   time.Duration // pod-deleting
	unrdy time.Duration // endpoint-unready
	rem   time.Duration // endpoint-removed
	gone  time.Duration // pod-gone
	has   map[timeline.Kind]bool
	shown bool // has an event inside the domain
	evs   []timeline.Event
}

// buildLanes lays out one lane per pod that had an endpoint or lifecycle moment during the
// chart's domain, or that served through it.
func buildLanes(r Row, events []timeline.Event, end time.Duration, y float64, xOf func(time.Duration) float64) ([]lane, []string) {
	pods := map[string]*podState{}
	var order []*podState
	outside := 0
	for _, e := range events {
		if e.Pod == "" || e.Kind == timeline.Disruption || e.Kind == timeline.DisruptionDone {
			continue
		}
		at := e.Time.Sub(r.Started)
		p := pods[e.Pod]
		if p == nil {
			p = &podState{name: e.Pod, has: map[timeline.Kind]bool{}}
			pods[e.Pod] = p
			order = append(order, p)
		}
		set := func(d *time.Duration) {
			if !p.has[e.Kind] {
				*d = at
			}
		}
		switch e.Kind {
		case timeline.EndpointReady:
			set(&p.ready)
		case timeline.PodDeleting:
			set(&p.del)
		case timeline.EndpointUnready:
			set(&p.unrdy)
		case timeline.EndpointRemoved:
			set(&p.rem)
		case timeline.PodGone:
			set(&p.gone)
		}
		p.has[e.Kind] = true
		p.evs = append(p.evs, e)
		if at >= 0 && at <= end {
			p.shown = true
		} else if at > end {
			outside++
		}
	}
	var notes []string
	var lanes []lane
	clamp := func(d time.Duration) time.Duration { return min(max(d, 0), end) }
	for _, p := range order {
		// A pod that served through the whole chart has a lane too: it carried the load.
		servedThrough := p.has[timeline.EndpointReady] && p.ready < 0 && !p.has[timeline.EndpointRemoved] && !p.has[timeline.PodGone]
		if !p.shown && !servedThrough {
			continue
		}
		if len(lanes) == maxLanes {
			notes = append(notes, fmt.Sprintf("only the first %d pods have a lane", maxLanes))
			break
		}
		l := lane{Y: y, LabelY: y + laneH - 4, MidY: y + laneH/2, X1: marginL, X2: marginL + plotW, LabelX: marginL - 6,
			Label: shortPod(p.name), Pod: p.name}
		band := func(from, to time.Duration, fill, title string) {
			from, to = clamp(from), clamp(to)
			if to <= from {
				return
			}
			l.Bands = append(l.Bands, rect{xOf(from), y + 3, xOf(to) - xOf(from), laneH - 6, fill, title})
		}
		// Serving: from endpoint-ready (or the start) until deletion began, it went unready, or
		// it left the endpoints.
		if p.has[timeline.EndpointReady] {
			stop := end
			for _, k := range []struct {
				kind timeline.Kind
				at   time.Duration
			}{{timeline.PodDeleting, p.del}, {timeline.EndpointUnready, p.unrdy}, {timeline.EndpointRemoved, p.rem}} {
				if p.has[k.kind] && k.at >= p.ready {
					stop = min(stop, k.at)
				}
			}
			band(p.ready, stop, colServing, p.name+": ready endpoint")
		}
		if p.has[timeline.PodDeleting] {
			stop := end
			if p.has[timeline.EndpointUnready] && p.unrdy >= p.del {
				stop = p.unrdy
			} else if p.has[timeline.EndpointRemoved] && p.rem >= p.del {
				stop = p.rem
			}
			if p.has[timeline.EndpointReady] && p.ready <= p.del {
				band(p.del, stop, colRouted, fmt.Sprintf("%s: still a ready endpoint %s after deletion began", p.name, secs(stop-p.del)))
			}
			if p.has[timeline.EndpointUnready] && p.unrdy >= p.del {
				rstop := end
				if p.has[timeline.EndpointRemoved] && p.rem >= p.unrdy {
					rstop = p.rem
				}
				band(p.unrdy, rstop, colTerminate, fmt.Sprintf("%s: terminating endpoint for %s", p.name, secs(rstop-p.unrdy)))
			}
		}
		for _, e := range p.evs {
			at := e.Time.Sub(r.Started)
			if at < 0 || at > end {
				continue
			}
			t := tick{X: xOf(at), Y: y + 1, H: laneH - 2, Title: eventTitle(r.Started, e)}
			switch e.Kind {
			case timeline.EndpointReady:
				t.Color = colEPReady
			case timeline.PodDeleting:
				t.Color = colDeleting
			case timeline.EndpointUnready:
				t.Color = colEPUnready
			case timeline.EndpointRemoved:
				t.Color = colEPRemoved
			case timeline.PodGone:
				t.Color = colPodGone
			case timeline.K8sEvent, timeline.AppEvent, timeline.ContainerStarted, timeline.ContainerExited, timeline.AppLogEnded:
				// Kubelet events, container starts and exits, the app's own lifecycle lines:
				// dots, each named on hover.
				t.Color, t.Dot, t.Y = colK8sEvent, true, y+laneH/2
			}
			l.Ticks = append(l.Ticks, t)
		}
		lanes = append(lanes, l)
		y += laneH
	}
	if outside > 0 {
		notes = append(notes, fmt.Sprintf("%d pod events after the end of the chart are not drawn", outside))
	}
	return lanes, notes
}

// shortPod shortens a pod name for a lane label, keeping its distinctive end.
func shortPod(name string) string {
	const max = 24
	if len(name) <= max {
		return name
	}
	return "…" + name[len(name)-max+1:]
}
