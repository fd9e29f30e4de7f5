package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/tune"
)

// The HTML reports are drawn by a browser, so a browser checks them: headless Chromium (Debian's
// package `chromium`; make test installs it) loads each page from a local file, a script added
// to the test's copy of the page measures what the browser laid out, and a screenshot of the
// page as a user gets it goes to $ARTIFACTS/screenshots (else the test's temporary directory).
// Without Chromium the test fails: a report nobody has looked at is not tested.

// chromiumFlags keep Chromium off the network and away from any profile: the pages are local
// files that load nothing, and every name lookup fails.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
	"--force-device-scale-factor=1",
}

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found on PATH: the HTML reports are checked in headless Chromium; install Debian's package (apt-get install chromium; make test does it)")
	return ""
}

// runChromium runs Chromium on the local page with a fresh profile and returns its stdout.
func runChromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir()), args...)
	cmd := exec.CommandContext(ctx, chromium(t), append(args, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// measureJS records, after layout, the page's size and for every SVG its box and the boxes of
// its texts, point marks and plot area, as JSON in a <pre id="measure"> that --dump-dom prints.
const measureJS = `<script>
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; }
  function own(e) { var s = ""; e.childNodes.forEach(function (n) { if (n.nodeType === 3) s += n.data; }); return s.trim(); }
  var out = {width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight, svgs: []};
  document.querySelectorAll("svg").forEach(function (svg) {
    var s = {box: box(svg), texts: [], points: [], plot: null};
    svg.querySelectorAll("text").forEach(function (t) { s.texts.push({text: own(t), cls: t.getAttribute("class") || "", box: box(t)}); });
    svg.querySelectorAll("circle.failures").forEach(function (c) { s.points.push(box(c)); });
    var plot = svg.querySelector("rect.plot");
    if (plot) s.plot = box(plot);
    out.svgs.push(s);
  });
  var pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

type box struct{ X, Y, W, H float64 }

func (r box) String() string { return fmt.Sprintf("(%.0f,%.0f %.0f×%.0f)", r.X, r.Y, r.W, r.H) }

// inside reports whether r lies within o, give or take half a pixel.
func (r box) inside(o box) bool {
	const e = 0.5
	return r.X >= o.X-e && r.Y >= o.Y-e && r.X+r.W <= o.X+o.W+e && r.Y+r.H <= o.Y+o.H+e
}

// overlap reports whether r and o share more than a pixel each way.
func (r box) overlap(o box) bool {
	return math.Min(r.X+r.W, o.X+o.W)-math.Max(r.X, o.X) > 1 && math.Min(r.Y+r.H, o.Y+o.H)-math.Max(r.Y, o.Y) > 1
}

type measured struct {
	Width, Height float64
	SVGs          []struct {
		Box   box
		Texts []struct {
			Text, Cls string
			Box       box
		}
		Points []box
		Plot   *box
	}
}

// windowWidth is the browser window's width: the pages' own widest (the timeline's body, 1220
// px, and its margins).
const windowWidth = 1280

// browse writes the page to dir/name, measures it in Chromium and takes a screenshot of the
// whole page into shots/<name without .html>.png.
func browse(t *testing.T, dir, shots, name string, page []byte) measured {
	t.Helper()
	probe := filepath.Join(dir, "measure-"+name)
	withJS := bytes.Replace(page, []byte("</body>"), []byte(measureJS+"\n</body>"), 1)
	if bytes.Equal(withJS, page) {
		t.Fatalf("%s has no </body>", name)
	}
	if err := os.WriteFile(probe, withJS, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, probe, fmt.Sprintf("--window-size=%d,900", windowWidth), "--dump-dom")
	_, js, ok := strings.Cut(string(dom), `<pre id="measure">`)
	js, _, ok2 := strings.Cut(js, "</pre>")
	if !ok || !ok2 {
		t.Fatalf("%s: the measuring script left nothing in the DOM:\n%.2000s", name, dom)
	}
	var m measured
	if err := json.Unmarshal([]byte(unescapeHTML(js)), &m); err != nil {
		t.Fatalf("%s: measurements %q: %v", name, js, err)
	}
	if len(m.SVGs) == 0 {
		t.Fatalf("%s: no SVG drawn", name)
	}
	if m.Width > windowWidth {
		t.Errorf("%s is %.0f px wide in a %d px window: its right part is cut off", name, m.Width, windowWidth)
	}

	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shots, strings.TrimSuffix(name, ".html")+".png")
	h := int(math.Min(math.Ceil(m.Height), 8000))
	runChromium(t, file, fmt.Sprintf("--window-size=%d,%d", windowWidth, h), "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%d bytes): want a picture of the page", shot, err, sizeOf(st))
	}
	t.Logf("screenshot of %s: %s", name, shot)
	return m
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

func unescapeHTML(s string) string {
	return strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'", "&amp;", "&").Replace(s)
}

// screenshots is where the screenshots go: $ARTIFACTS/screenshots, else a temporary directory.
func screenshots(t *testing.T) string {
	if a := os.Getenv("ARTIFACTS"); a != "" {
		dir := filepath.Join(a, "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// legible checks every SVG's texts: drawn whole inside their SVG (a text outside the viewport
// is clipped), at least 10 px tall, and, for texts of the given classes, not over one another.
func legible(t *testing.T, name string, m measured, apart ...string) {
	t.Helper()
	for i, s := range m.SVGs {
		if s.Box.W < 300 || s.Box.H < 100 {
			t.Errorf("%s svg %d is %s: too small to read", name, i, s.Box)
		}
		var kept []int
		for j, tx := range s.Texts {
			if tx.Text == "" {
				continue
			}
			if !tx.Box.inside(s.Box) {
				t.Errorf("%s svg %d: text %q at %s is clipped: outside the SVG's box %s", name, i, tx.Text, tx.Box, s.Box)
			}
			if tx.Box.H < 10 {
				t.Errorf("%s svg %d: text %q is %.1f px tall: too small to read", name, i, tx.Text, tx.Box.H)
			}
			for _, c := range apart {
				if tx.Cls == c {
					kept = append(kept, j)
				}
			}
		}
		for a := range kept {
			for _, b := range kept[a+1:] {
				ta, tb := s.Texts[kept[a]], s.Texts[b]
				if ta.Box.overlap(tb.Box) {
					t.Errorf("%s svg %d: %q %s and %q %s overlap", name, i, ta.Text, ta.Box, tb.Text, tb.Box)
				}
			}
		}
	}
}

// TestReportsInBrowser renders the run's timeline page and a tune's curve, and checks in
// Chromium what a reader needs: every label legible and inside its chart, the axes' titles
// not clipped, and the curve's x axis fitted to its data.
func TestReportsInBrowser(t *testing.T) {
	chromium(t)
	dir, shots := t.TempDir(), screenshots(t)

	t.Run("timeline", func(t *testing.T) {
		t.Parallel()
		run := NewRun(syntheticRows())
		var buf bytes.Buffer
		if err := run.WriteHTML(&buf); err != nil {
			t.Fatal(err)
		}
		m := browse(t, dir, shots, "timeline.html", buf.Bytes())
		if len(m.SVGs) != len(run.Rows) {
			t.Errorf("%d charts drawn for %d rows", len(m.SVGs), len(run.Rows))
		}
		legible(t, "timeline", m, "xtick", "title")
		for i, s := range m.SVGs {
			has := map[string]bool{}
			for _, tx := range s.Texts {
				has[tx.Text] = true
			}
			for _, want := range []string{"seconds since start", "failures", "0s"} {
				if !has[want] {
					t.Errorf("timeline svg %d lacks the label %q", i, want)
				}
			}
		}
	})

	t.Run("tune", func(t *testing.T) {
		t.Parallel()
		r := tuneUpTo2s()
		var buf bytes.Buffer
		if err := TuneHTML(&buf, r); err != nil {
			t.Fatal(err)
		}
		m := browse(t, dir, shots, "tune.html", buf.Bytes())
		legible(t, "tune", m, "xtick", "title")
		s := m.SVGs[0]
		var titles []string
		var lastTick float64
		for _, tx := range s.Texts {
			switch tx.Cls {
			case "title":
				titles = append(titles, tx.Text)
			case "xtick":
				v, err := strconv.ParseFloat(strings.TrimSuffix(tx.Text, "s"), 64)
				if err != nil {
					t.Fatalf("x tick %q: %v", tx.Text, err)
				}
				lastTick = max(lastTick, v)
			}
		}
		if strings.Join(titles, "|") != "failed requests|worst disruption|preStop (s)" {
			t.Errorf("axis titles %q, want failed requests, worst disruption, preStop (s)", titles)
		}
		// The data spans 0 to 2 s: the axis ends at 2 s or a little after, not at the search's
		// upper bound (20 s), which would crowd every point into the left tenth.
		if lastTick < 2 || lastTick > 3 {
			t.Errorf("the x axis ends at %gs for probes from 0 to 2 s", lastTick)
		}
		if s.Plot == nil || len(s.Points) != 6 {
			t.Fatalf("plot %v, %d failure points: want the plot area and 6 points", s.Plot, len(s.Points))
		}
		right := 0.0
		for _, p := range s.Points {
			if !p.inside(*s.Plot) && p.X+p.W/2 > s.Plot.X+s.Plot.W+0.5 {
				t.Errorf("point %s right of the plot %s", p, *s.Plot)
			}
			right = max(right, p.X+p.W/2)
		}
		if frac := (right - s.Plot.X) / s.Plot.W; frac < 0.6 {
			t.Errorf("the rightmost point is at %.0f %% of the plot's width: the x axis does not fit the data", 100*frac)
		}
	})
}

// tuneUpTo2s is a tune searched up to 20 s whose probes all lie in 0–2 s: found 1 s, confirmed.
func tuneUpTo2s() *tune.Result {
	ms := time.Millisecond
	confirm := probe(6, time.Second, 0, 1)
	confirm.Confirm = true
	return &tune.Result{
		Suite: "tune", Base: "exit", Disruption: check.Disruption{Kind: check.RolloutRestart, Count: 5},
		Expect: check.Zero(), GraceSeconds: 30, Max: 20 * time.Second, Resolution: 250 * ms,
		Status: tune.Found, Found: time.Second, FoundOK: true,
		Probes: []tune.Probe{probe(1, 0, 140, 0.8), probe(2, 2*time.Second, 0, 1), probe(3, time.Second, 0, 1),
			probe(4, 500*ms, 12, 0.96), probe(5, 750*ms, 3, 0.99)},
		Confirm: []tune.Probe{confirm},
		Started: t0, Wall: 6 * time.Minute,
		Versions: check.Versions{Rollcheck: "dev", Kubernetes: "v1.34.3"},
	}
}
