package replay

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/timeline"
)

// Packing a set of recorded rows into testdata (see testdata/README.md):
//
//	go test ./internal/replay -run TestPack -pack-from DIR -pack-to testdata/NAME.tar.gz -pack-rows 'GLOB,GLOB'
var (
	packFrom = flag.String("pack-from", "", "TestPack: the run directory to take rows from (its rows/ and raw/)")
	packTo   = flag.String("pack-to", "", "TestPack: the .tar.gz to write")
	packRows = flag.String("pack-rows", "*", "TestPack: the rows to take, comma-separated globs of their file names")
)

// TestPack writes the rows of -pack-from that -pack-rows names into -pack-to: each row's file
// as it is, its attribution as it is, and its ledger with only what the analysis reads (no
// 100 ms buckets, which the row has, and no response sizes). It does nothing without -pack-from.
func TestPack(t *testing.T) {
	if *packFrom == "" {
		t.Skip("no -pack-from")
	}
	rows, err := rowfile.Read(*packFrom)
	if err != nil {
		t.Fatal(err)
	}
	var files []packed
	for _, row := range rows {
		name := rowfile.Name(row)
		if !slices.ContainsFunc(strings.Split(*packRows, ","), func(g string) bool { ok, _ := path.Match(g, name); return ok }) {
			continue
		}
		base := strings.TrimSuffix(name, ".json")
		for _, f := range []struct{ from, to string }{{filepath.Join("rows", name), "rows/" + name}, {filepath.Join("raw", base+".attribution.json"), "raw/" + base + ".attribution.json"}} {
			b, err := os.ReadFile(filepath.Join(*packFrom, f.from))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, packed{f.to, b})
		}
		ledger, err := readLedger(filepath.Join(*packFrom, ledgerPath(row)))
		if err != nil {
			t.Fatal(err)
		}
		ledger.Buckets = nil
		for i := range ledger.Requests {
			ledger.Requests[i].BytesIn = 0
		}
		var b strings.Builder
		if err := ledger.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		files = append(files, packed{"raw/" + base + ".ledger.json", []byte(b.String())})
	}
	if len(files) == 0 {
		t.Fatalf("no row of %s matches %q", *packFrom, *packRows)
	}
	if err := writeTarGz(*packTo, files); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d rows", *packTo, len(files)/3)
}

type packed struct {
	name string
	data []byte
}

// writeTarGz writes files into a gzipped tar at path, with no times or owners, so that the same
// rows make the same bytes.
func writeTarGz(path string, files []packed) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, p := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p.name, Mode: 0o644, Size: int64(len(p.data)), Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(p.data); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), zw.Close(), f.Close())
}

// unpack extracts the gzipped tar at path into a new directory and returns it.
func unpack(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(to, dir+string(filepath.Separator)) {
			t.Fatalf("%s: %s is outside the set", path, h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sets are the recorded sets in testdata.
func sets(t *testing.T) []string {
	t.Helper()
	s, err := filepath.Glob(filepath.Join("testdata", "*.tar.gz"))
	if err != nil || len(s) == 0 {
		t.Fatalf("no recorded sets in testdata (%v)", err)
	}
	return s
}

// movedRecommendation is a recorded row whose recommendation the analysis has changed on
// purpose since the row was recorded: from was to now (as the replay says them), and why.
type movedRecommendation struct {
	was, now, why string
	// routedFrom is how the row's RoutedFrom now begins and what it holds; fit its Fit now.
	routedFrom, saying, fit string
}

// moved are the recorded rows whose recommendation moves on replay, by "set/row file". Every
// other change fails the tests, and so does one of these that does not move as said.
var moved = map[string]movedRecommendation{
	"kind-grpc.tar.gz/grpc--grpc-max-age--rollout-restart--cluster.json": {
		was: "preStop 6s, grace 12s", now: "preStop 5s, grace 11s",
		why: "a gRPC pick_first channel rides one connection pinned to a pod (check.Applied's PinsConnections): " +
			"the pod's last answer after its deletion (data plane p99 4.469s) measures its preStop and GOAWAY, not routing, " +
			"so routed is control plane p99 181ms + kube-proxy programming p99 3.35s = 3.531s; the 5s preStop it had now fits",
		routedFrom: "control plane p99 181ms + kube-proxy programming p99 3.35s", saying: "not the data plane p99 4.469s", fit: "headroom",
	},
	"kind-grpc.tar.gz/grpc--grpc-rr-prestop-35s--rollout-restart--cluster.json": {
		was: "preStop 37s, grace 40s", now: "preStop 35s, grace 38s",
		why: "2 of the 9 client windows (34.966s, 35.112s) end where the pod stopped serving (its last RPC answered at its SIGTERM/listener close): " +
			"lower bounds set by the 35 s preStop, not the client's window; routed from the 7 pods the client left on its own, p99 33.094s",
		routedFrom: "the client's window p99 33.094s (deletion → its last RPC to the pod's address)",
		saying:     "≥ 35.112s for 2 pod(s): the pod answered until it exited, so this is a lower bound of the client's window, not counted", fit: "headroom",
	},
}

// movedExitUncertainty are the exit windows of recorded rows that a change of the analysis
// widened on purpose, by row, termination and container (the app's, or its front sidecar's):
// the uncertainty recorded and the one derived now, and why. Nothing else of those rows moves.
var movedExitUncertainty = map[string]struct {
	termination int
	front       bool
	was, now    time.Duration
	why         string
}{
	"kind-e2e.tar.gz/sidecar--sidecar-classic-quiet--rollout-restart--cluster.json": {2, true, 991273641, time.Second,
		"the container status's finishedAt (to the second) now stands for the exit window's start against the log end's (seen − 2 s, an assumption a loaded node breaks): the window is the status's whole second"},
}

// The rows recorded on kind, replayed with the current analysis, change nothing: verdict,
// phase counts (the row's and each disruption's), requests counted and recommendation; but for
// the rows of moved, whose recommendation alone changes, as said there.
func TestReplayRecordedRowsChangesNothing(t *testing.T) {
	seen := map[string]bool{}
	for _, set := range sets(t) {
		t.Run(filepath.Base(set), func(t *testing.T) {
			rep, err := Dir(unpack(t, set))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			_ = rep.Write(&b)
			unexpected := false
			for _, r := range rep.Rows {
				key := filepath.Base(set) + "/" + r.File
				var want []string
				if m, ok := moved[key]; ok {
					seen[key] = true
					want = []string{fmt.Sprintf("recommendation: %s → %s", m.was, m.now)}
				}
				if r.Skipped != "" || len(r.Kept) > 0 || !slices.Equal(r.Changes, want) {
					t.Errorf("%s: changes %q, want %q", r.File, r.Changes, want)
					unexpected = true
				}
			}
			if unexpected {
				t.Errorf("replay:\n%s", b.String())
			}
		})
	}
	for key := range moved {
		if !seen[key] {
			t.Errorf("%s: in moved but not in the recorded sets", key)
		}
	}
}

// Beyond what the replay prints, the analysis of every recorded row gives what the run recorded:
// its explanation (windows, recommendation, advice), its terminations and disruptions, and each
// failed request's phase and pod in raw/<row>.attribution.json. Durations may differ by a
// microsecond at most: the rows were recorded when the analysis still read the monotonic clock
// (see analyze's wallClock).
//
// Together the sets show every phase but proxy-no-upstream (no recorded row yet) and steady
// (which a working matrix row never shows), and every kind of expected outcome the matrix uses.
func TestReplayRecordedRowsInDetail(t *testing.T) {
	phases, rules := map[timeline.Phase]bool{}, map[string]bool{}
	for _, set := range sets(t) {
		dir := unpack(t, set)
		rows, err := rowfile.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			t.Run(filepath.Base(set)+"/"+rowfile.Name(row), func(t *testing.T) {
				ledger, err := readLedger(filepath.Join(dir, ledgerPath(row)))
				if err != nil {
					t.Fatal(err)
				}
				in, kept := input(row, ledger)
				if len(kept) > 0 {
					t.Fatalf("not derived again: %v", kept)
				}
				a := analyze.Row(in)
				wasEx := row.Explanation
				if m, ok := moved[filepath.Base(set)+"/"+rowfile.Name(row)]; ok {
					wasEx = movedExplanation(t, m, row.Explanation, a.Explanation)
				}
				if m, ok := movedExitUncertainty[filepath.Base(set)+"/"+rowfile.Name(row)]; ok {
					if row.Times == nil || m.termination >= len(row.Times.Terminations) {
						t.Fatalf("movedExitUncertainty: no termination %d (%s)", m.termination, m.why)
					}
					times := *row.Times
					times.Terminations = slices.Clone(times.Terminations)
					x := &times.Terminations[m.termination]
					got := &x.ExitUncertainty
					if m.front {
						f := *x.Front
						x.Front, got = &f, &f.ExitUncertainty
					}
					if *got != m.was {
						t.Errorf("movedExitUncertainty: recorded %v, not %v (%s)", *got, m.was, m.why)
					}
					*got = m.now
					row.Times = &times
				}
				for _, c := range []struct {
					what     string
					was, now any
				}{
					{"verdict", reworded(row.Verdict), analyze.Verdict(row.Config, a)}, {"summary", row.Summary, a.Summary}, {"pod identity", row.PodIdentity, a.PodIdentity},
					{"explanation", wasEx, a.Explanation}, {"times", row.Times, a.Times}, {"disruptions", row.Disruptions, a.Disruptions},
				} {
					if d := differ(reflect.ValueOf(c.was), reflect.ValueOf(c.now), c.what); d != "" {
						t.Error(d)
					}
				}
				var was attribute.Result
				b, err := os.ReadFile(filepath.Join(dir, "raw", strings.TrimSuffix(rowfile.Name(row), ".json")+".attribution.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &was); err != nil {
					t.Fatal(err)
				}
				if w, n := attributed(was), attributed(a.Attribution); !slices.Equal(w, n) {
					t.Errorf("attribution: %d failed requests recorded, %d now; first difference %s", len(w), len(n), firstDiff(w, n))
				}
				for ph := range a.Explanation.Phases {
					phases[ph] = true
				}
				rules[string(row.Config.Expect.Kind)] = true
				rules["drainBlocked"] = rules["drainBlocked"] || row.Config.Expect.DrainBlocked
			})
		}
	}
	notYet := []timeline.Phase{timeline.PhaseProxyNoUpstream, timeline.PhaseSteady}
	for _, ph := range timeline.Phases {
		if !phases[ph] && !slices.Contains(notYet, ph) {
			t.Errorf("no recorded row shows phase %s", ph)
		}
	}
	for _, r := range []string{string(check.ExpectZero), string(check.ExpectAtMost), string(check.ExpectFailures), "drainBlocked"} {
		if !rules[r] {
			t.Errorf("no recorded row expects %s", r)
		}
	}
}

// movedExplanation checks that the recommendation of a row of moved moved as said (its numbers,
// where its routed time came from, its fit), and returns the recorded explanation with what may move
// taken from now: the routed time, its source, the preStop and grace, the fit and the advice.
// The rest of the explanation must still be as recorded.
func movedExplanation(t *testing.T, m movedRecommendation, was, now *check.Explanation) *check.Explanation {
	t.Helper()
	if was == nil || was.Recommendation == nil || now == nil || now.Recommendation == nil {
		t.Fatalf("moved: a recommendation recorded and one now expected (%s)", m.why)
	}
	wr, nr := *was.Recommendation, *now.Recommendation
	if w, n := recommendation(&wr), recommendation(&nr); w != m.was || n != m.now {
		t.Errorf("recommendation %s → %s, want %s → %s (%s)", w, n, m.was, m.now, m.why)
	}
	if !strings.HasPrefix(nr.RoutedFrom, m.routedFrom) || !strings.Contains(nr.RoutedFrom, m.saying) {
		t.Errorf("routed from %q, want it to begin %q and say %q", nr.RoutedFrom, m.routedFrom, m.saying)
	}
	if nr.Fit != m.fit {
		t.Errorf("fit %q, want %q", nr.Fit, m.fit)
	}
	wr.Routed, wr.RoutedFrom, wr.PreStop, wr.GraceSeconds, wr.Fit, wr.Advice = nr.Routed, nr.RoutedFrom, nr.PreStop, nr.GraceSeconds, nr.Fit, nr.Advice
	ex := *was
	ex.Recommendation = &wr
	return &ex
}

// attributed is each failed request's "seq phase pod", in order.
func attributed(r attribute.Result) []string {
	out := make([]string, len(r.Failed))
	for i, a := range r.Failed {
		out[i] = fmt.Sprintf("%d %s %s", a.Seq, a.Phase, a.Pod)
	}
	return out
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q → %q", a[i], b[i])
		}
	}
	return "(one is longer)"
}

var durationType = reflect.TypeFor[time.Duration]()

// differ says where was and now differ, durations by more than a microsecond; "" when nowhere.
func differ(was, now reflect.Value, path string) string {
	if was.Type() != now.Type() {
		return fmt.Sprintf("%s: %s vs %s", path, was.Type(), now.Type())
	}
	switch {
	case was.Type() == durationType:
		if d := time.Duration(was.Int() - now.Int()); d > time.Microsecond || d < -time.Microsecond {
			return fmt.Sprintf("%s: %v → %v", path, time.Duration(was.Int()), time.Duration(now.Int()))
		}
		return ""
	case was.Type() == reflect.TypeFor[time.Time]():
		if !was.Interface().(time.Time).Equal(now.Interface().(time.Time)) {
			return fmt.Sprintf("%s: %v → %v", path, was.Interface(), now.Interface())
		}
		return ""
	}
	switch was.Kind() {
	case reflect.Pointer:
		if was.IsNil() || now.IsNil() {
			if was.IsNil() != now.IsNil() {
				return fmt.Sprintf("%s: %v → %v", path, was.Interface(), now.Interface())
			}
			return ""
		}
		return differ(was.Elem(), now.Elem(), path)
	case reflect.Struct:
		for i := range was.NumField() {
			if f := was.Type().Field(i); f.IsExported() {
				if d := differ(was.Field(i), now.Field(i), path+"."+f.Name); d != "" {
					return d
				}
			}
		}
		return ""
	case reflect.Slice:
		if was.Len() != now.Len() {
			return fmt.Sprintf("%s: %d elements → %d", path, was.Len(), now.Len())
		}
		for i := range was.Len() {
			if d := differ(was.Index(i), now.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(was.Interface(), now.Interface()) && !(was.Kind() == reflect.Map && was.Len() == 0 && now.Len() == 0) {
		return fmt.Sprintf("%s: %v → %v", path, was.Interface(), now.Interface())
	}
	return ""
}

// mechanismShare is the wording a recorded verdict gave the share of a multi-phase negative
// control's mechanism before the verdict printed it as a percentage with its floor.
var mechanismShare = regexp.MustCompile(`(\d+) of (\d+) failures are ([a-z-]+), the mechanism this row is for$|(\d+) of (\d+) failures are ([a-z-]+), the mechanism this row is for;`)

// reworded is a recorded verdict in today's words, its status and figures as recorded: the
// mechanism's share as "N of M failures (P%) are X, the mechanism this row is for (at least F%)".
// Only the wording moves; the figures in it are the recorded ones.
func reworded(v check.Verdict) check.Verdict {
	v.Reason = mechanismShare.ReplaceAllStringFunc(v.Reason, func(m string) string {
		sub := mechanismShare.FindStringSubmatch(m)
		n, total, phase, tail := sub[1], sub[2], sub[3], ""
		if n == "" {
			n, total, phase, tail = sub[4], sub[5], sub[6], ";"
		}
		in, _ := strconv.Atoi(n)
		all, _ := strconv.Atoi(total)
		pct := strings.TrimSuffix(strconv.FormatFloat(100*float64(in)/float64(all), 'f', 1, 64), ".0")
		return fmt.Sprintf("%s of %s failures (%s%%) are %s, the mechanism this row is for (at least %s%%)%s",
			n, total, pct, phase, strconv.FormatFloat(100*check.MinMechanismShare, 'f', -1, 64), tail)
	})
	return v
}
