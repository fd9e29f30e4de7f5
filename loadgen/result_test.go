package loadgen

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 11, 22, 12, 0, 0, 0, time.UTC)

// hit returns the ledger entry of the k-th hit (k from 1) of a 10/s
// constant pacer: sent at k × 100 ms (+1 ms) after t0, answered 200 by pod-k%2.
func hit(k int) Request {
	return Request{
		Seq:       uint64(k - 1),
		Timestamp: t0.Add(time.Duration(k)*100*time.Millisecond + time.Millisecond),
		Latency:   10 * time.Millisecond,
		Code:      200,
		Class:     ClassOK,
		BytesIn:   2,
		Pod:       []string{"pod-0", "pod-1"}[k%2],
	}
}

// fail returns the k-th hit failed with class c: status code (0 for no answer) and error text
// msg, as the attack classifies them.
func fail(k int, c Class, code uint16, msg string) Request {
	q := hit(k)
	q.Class, q.Code, q.Error, q.BytesIn, q.Pod = c, code, msg, 0, ""
	return q
}

// synthetic is the Result of the ledger entries rs, in the (shuffled) order they arrived; an
// entry with no class is a success.
func synthetic(cfg Config, rn Run, rs []Request) *Result {
	cfg = cfg.WithDefaults()
	reqs := slices.Clone(rs)
	for i := range reqs {
		if reqs[i].Class == "" {
			reqs[i].Class = ClassOK
		}
	}
	if rn.Started.IsZero() {
		rn.Started = t0
	}
	if rn.EndReason == "" {
		rn.EndReason = EndDuration
	}
	if rn.Ended.IsZero() {
		rn.Ended = rn.Started.Add(cfg.Duration + time.Second)
	}
	return NewResult(cfg, rn, reqs)
}

var synthCfg = Config{Target: "http://127.0.0.1:30080/", Rate: 10, Duration: 5 * time.Second}

// synthResults is a 5 s run at 10/s with three bursts of failures.
func synthResults() []Request {
	var rs []Request
	for k := 1; k <= 50; k++ {
		switch {
		case k >= 10 && k <= 14:
			rs = append(rs, fail(k, ClassRefused, 0, `Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: connect: connection refused`))
		case k == 16:
			rs = append(rs, fail(k, ClassReset, 0, `Get "http://127.0.0.1:30080/": read tcp 127.0.0.1:4->127.0.0.1:30080: read: connection reset by peer`))
		case k == 30:
			rs = append(rs, fail(k, "http_503", 503, "503 Service Unavailable"))
		case k == 31:
			rs = append(rs, fail(k, ClassHTTP4xx, 404, "404 Not Found"))
		case k == 42:
			r := fail(k, ClassTimeout, 0, `Get "http://127.0.0.1:30080/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
			r.Latency = 2 * time.Second
			rs = append(rs, r)
		default:
			rs = append(rs, hit(k))
		}
	}
	// Results arrive in completion order, not sending order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	return rs
}

func TestAggregate(t *testing.T) {
	res := synthetic(synthCfg, Run{}, synthResults())
	t.Log(res)

	wantTotals := Totals{Requests: 50, OK: 41, Failed: 9, Failures: map[Class]int{
		ClassRefused: 5, ClassReset: 1, "http_503": 1, ClassHTTP4xx: 1, ClassTimeout: 1}}
	if !reflect.DeepEqual(res.Totals, wantTotals) {
		t.Errorf("Totals = %+v, want %+v", res.Totals, wantTotals)
	}
	if res.SuccessRatio != 0.82 || res.FailureRatio != 0.18 {
		t.Errorf("ratios %v %v, want 0.82 0.18", res.SuccessRatio, res.FailureRatio)
	}
	for i, q := range res.Requests {
		if q.Seq != uint64(i) {
			t.Fatalf("ledger not in sending order: position %d holds seq %d", i, q.Seq)
		}
	}
	if q := res.Requests[9]; q.Class != ClassRefused || q.Code != 0 || !strings.Contains(q.Error, "refused") || q.Pod != "" {
		t.Errorf("request 9 = %+v", q)
	}
	if q := res.Requests[0]; q.Class != ClassOK || q.Pod != "pod-1" || q.BytesIn != 2 || q.Error != "" {
		t.Errorf("request 0 = %+v", q)
	}

	// Latency: 49 × 10 ms and one 2 s.
	wantLat := Latency{Mean: 49800 * time.Microsecond, P50: 10 * time.Millisecond, P90: 10 * time.Millisecond,
		P95: 10 * time.Millisecond, P99: 2 * time.Second, Max: 2 * time.Second}
	if res.Latency != wantLat {
		t.Errorf("Latency = %+v, want %+v", res.Latency, wantLat)
	}

	// Buckets: hit k lands in bucket k; the last hit (5.001 s) adds a 51st.
	if len(res.Buckets) != 51 {
		t.Fatalf("%d buckets, want 51", len(res.Buckets))
	}
	for i, b := range res.Buckets {
		if b.Start != time.Duration(i)*BucketWidth {
			t.Errorf("bucket %d starts at %s", i, b.Start)
		}
		want := Bucket{Start: b.Start, Sent: 1, OK: 1}
		switch {
		case i == 0:
			want = Bucket{Start: 0}
		case i >= 10 && i <= 14:
			want = Bucket{Start: b.Start, Sent: 1, Failed: 1, Failures: map[Class]int{ClassRefused: 1}}
		case i == 16:
			want = Bucket{Start: b.Start, Sent: 1, Failed: 1, Failures: map[Class]int{ClassReset: 1}}
		case i == 30:
			want = Bucket{Start: b.Start, Sent: 1, Failed: 1, Failures: map[Class]int{"http_503": 1}}
		case i == 31:
			want = Bucket{Start: b.Start, Sent: 1, Failed: 1, Failures: map[Class]int{ClassHTTP4xx: 1}}
		case i == 42:
			want = Bucket{Start: b.Start, Sent: 1, Failed: 1, Failures: map[Class]int{ClassTimeout: 1}}
		}
		if !reflect.DeepEqual(b, want) {
			t.Errorf("bucket %d = %+v, want %+v", i, b, want)
		}
	}

	// Seconds 1 (1.0-1.6 s), 3 (3.0, 3.1 s) and 4 (4.2 s).
	if res.DisruptionSeconds != 3 {
		t.Errorf("DisruptionSeconds = %d, want 3", res.DisruptionSeconds)
	}
	at := func(k int) time.Time { return hit(k).Timestamp }
	wantBursts := []Burst{
		{First: at(10), Last: at(16), Count: 6, Classes: map[Class]int{ClassRefused: 5, ClassReset: 1}},
		// 3.0 s is 1.4 s after 1.6 s: a new burst.
		{First: at(30), Last: at(31), Count: 2, Classes: map[Class]int{"http_503": 1, ClassHTTP4xx: 1}},
		// 4.2 s is 1.1 s after 3.1 s: a new burst.
		{First: at(42), Last: at(42), Count: 1, Classes: map[Class]int{ClassTimeout: 1}},
	}
	if !reflect.DeepEqual(res.Bursts, wantBursts) {
		t.Errorf("Bursts = %+v\nwant %+v", res.Bursts, wantBursts)
	}
	if res.Bursts[0].Span() != 600*time.Millisecond {
		t.Errorf("burst span %s", res.Bursts[0].Span())
	}

	if !res.Valid || res.AchievedRate < 9.99 || res.AchievedRate > 10.01 {
		t.Errorf("valid=%v (%s) rate %.3f, want valid at 10/s", res.Valid, res.InvalidReason, res.AchievedRate)
	}
	if res.Window != 5*time.Second || res.TransparentRetry {
		t.Errorf("window %s retry %v", res.Window, res.TransparentRetry)
	}
}

// TestBurstGapBoundary: failures exactly BurstGap apart stay in one burst,
// just over it they split.
func TestBurstGapBoundary(t *testing.T) {
	cfg := Config{Target: "http://127.0.0.1:1/", Rate: 1000, Duration: 5 * time.Second}
	mk := func(off time.Duration) Request {
		r := fail(1, ClassEOF, 0, "EOF")
		r.Timestamp = t0.Add(off)
		return r
	}
	rs := []Request{mk(100 * time.Millisecond), mk(1100 * time.Millisecond), mk(2100*time.Millisecond + 1)}
	for i := range rs {
		rs[i].Seq = uint64(i)
	}
	res := synthetic(cfg, Run{}, rs)
	if len(res.Bursts) != 2 || res.Bursts[0].Count != 2 || res.Bursts[1].Count != 1 {
		t.Errorf("bursts %+v, want [2 1]", res.Bursts)
	}
	if res.DisruptionSeconds != 3 {
		t.Errorf("DisruptionSeconds = %d, want 3 (windows 0, 1, 2)", res.DisruptionSeconds)
	}
}

// paced returns hits of a constant pacer at rate per second sent at the
// given offsets (each a multiple of the interval), all answered 200.
func paced(rate int, from, to time.Duration) []Request {
	var rs []Request
	iv := time.Second / time.Duration(rate)
	for off := from; off <= to; off += iv {
		rs = append(rs, Request{Code: 200, Timestamp: t0.Add(off), Latency: time.Millisecond})
	}
	return rs
}

func renumber(rs []Request) []Request {
	for i := range rs {
		rs[i].Seq = uint64(i)
	}
	return rs
}

func TestJudge(t *testing.T) {
	cfg := Config{Target: "http://127.0.0.1:1/", Rate: 100, Duration: 5 * time.Second}
	iv := 10 * time.Millisecond
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// late returns the 2000 hits of a 20 s run with the last one sent at
	// lastMs instead of 20000 ms. At 20 s, RateTolerance (20 hits) is the
	// larger allowance.
	long := Config{Target: "http://127.0.0.1:1/", Rate: 100, Duration: 20 * time.Second}
	late := func(lastMs int) []Request {
		return renumber(append(paced(100, iv, ms(19990)), Request{Code: 200, Timestamp: t0.Add(ms(lastMs))}))
	}
	cases := []struct {
		name    string
		cfg     *Config
		rn      Run
		rs      []Request
		valid   bool
		reason  string
		rateMin float64
		rateMax float64
	}{
		{name: "on time", rs: paced(100, iv, ms(5000)), valid: true, rateMin: 100, rateMax: 100},
		{name: "last hit 160 ms late: 0.8 % off", cfg: &long, rs: late(20160), valid: true, rateMin: 99.2, rateMax: 99.21},
		{name: "last hit 250 ms late: 1.2 % off", cfg: &long, rs: late(20250), reason: "achieved rate 98.77/s misses the asked 100/s by 1.2% (tolerance 1%)"},
		// 3 s at 100/s with the last 80 ms of hits lost: 8 of 300 (2.7 %),
		// within RateSlack (10 hits at 100/s); 12 lost is not.
		{name: "short run lost 80 ms at its end", cfg: &Config{Target: "http://127.0.0.1:1/", Rate: 100, Duration: 3 * time.Second},
			rs:    renumber(append(paced(100, iv, ms(2910)), Request{Code: 200, Timestamp: t0.Add(ms(3001))})),
			valid: true, rateMin: 97.3, rateMax: 97.4},
		{name: "short run lost 120 ms at its end", cfg: &Config{Target: "http://127.0.0.1:1/", Rate: 100, Duration: 3 * time.Second},
			rs:     renumber(append(paced(100, iv, ms(2870)), Request{Code: 200, Timestamp: t0.Add(ms(3001))})),
			reason: "misses the asked 100/s by 4.0%"},
		{name: "half rate", rs: paced(50, ms(20), ms(5000)), reason: "achieved rate 50.00/s misses the asked 100/s by 50.0%"},
		{name: "stall in the middle", rs: renumber(append(paced(100, iv, ms(2000)), paced(100, ms(3500), ms(5000))...)),
			reason: "stalled: no request sent for 1.5s from +2s"},
		{name: "ended early", rs: paced(100, iv, ms(2000)), reason: "ended early: last request at +2s of a 5s run"},
		{name: "stopped early is judged over the time it ran", rs: paced(100, iv, ms(2000)),
			rn: Run{EndReason: EndStopped, StopAt: t0.Add(ms(2005))}, valid: true, rateMin: 100, rateMax: 100},
		{name: "canceled early", rs: paced(100, iv, ms(2000)),
			rn: Run{EndReason: EndCanceled, StopAt: t0.Add(ms(2005))}, valid: true, rateMin: 100, rateMax: 100},
		{name: "stalled before stop", rs: paced(100, iv, ms(2000)),
			rn: Run{EndReason: EndStopped, StopAt: t0.Add(4 * time.Second)}, reason: "stalled: no request sent in the last 2s before it was stopped"},
		{name: "late start", rs: paced(100, ms(1500), ms(5000)), reason: "stalled: no request sent for 1.5s from +0s"},
		{name: "nothing sent", rs: nil, reason: "no requests were sent"},
		// A short run whose last hit was delayed past its end lost one of
		// 20 hits (5 %): within RateSlack (2 hits at 20/s).
		{name: "short run lost its last hit", cfg: &Config{Target: "http://127.0.0.1:1/", Rate: 20, Duration: time.Second},
			rs:    renumber(append(paced(20, ms(50), ms(900)), Request{Code: 200, Timestamp: t0.Add(ms(1002))})),
			valid: true, rateMin: 18.9, rateMax: 19},
		{name: "short run lost three hits", cfg: &Config{Target: "http://127.0.0.1:1/", Rate: 20, Duration: time.Second},
			rs:     renumber(append(paced(20, ms(50), ms(800)), Request{Code: 200, Timestamp: t0.Add(ms(1002))})),
			reason: "misses the asked 20/s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
			}
			res := synthetic(c, tc.rn, tc.rs)
			if res.Valid != tc.valid {
				t.Errorf("Valid = %v (%q), want %v", res.Valid, res.InvalidReason, tc.valid)
			}
			if !strings.Contains(res.InvalidReason, tc.reason) || (tc.valid && res.InvalidReason != "") {
				t.Errorf("InvalidReason = %q, want it to contain %q", res.InvalidReason, tc.reason)
			}
			if tc.valid && (res.AchievedRate < tc.rateMin-1e-9 || res.AchievedRate > tc.rateMax+1e-9) {
				t.Errorf("AchievedRate = %v, want %v..%v", res.AchievedRate, tc.rateMin, tc.rateMax)
			}
		})
	}
}

func TestWindowAndEmptyBuckets(t *testing.T) {
	cfg := Config{Target: "http://127.0.0.1:1/", Rate: 10, Duration: 5 * time.Second}
	res := synthetic(cfg, Run{EndReason: EndStopped, StopAt: t0.Add(1234 * time.Millisecond)}, paced(10, 100*time.Millisecond, 1200*time.Millisecond))
	if res.Window != 1234*time.Millisecond || len(res.Buckets) != 13 || res.EndReason != EndStopped {
		t.Errorf("window %s, %d buckets, end %s; want 1.234s, 13, stopped", res.Window, len(res.Buckets), res.EndReason)
	}
	empty := synthetic(cfg, Run{}, nil)
	if len(empty.Buckets) != 50 || empty.Totals.Requests != 0 || empty.Latency != (Latency{}) || empty.Valid {
		t.Errorf("empty run: %d buckets, totals %+v, latency %+v, valid %v", len(empty.Buckets), empty.Totals, empty.Latency, empty.Valid)
	}
	if empty.Bursts == nil || empty.Totals.Failures == nil {
		t.Error("empty run: nil Bursts or Failures would encode as JSON null")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	cfg := synthCfg
	cfg.Headers = map[string]string{"X-A": "b"}
	res := synthetic(cfg, Run{}, synthResults())

	var first bytes.Buffer
	if err := res.WriteJSON(&first); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := back.WriteJSON(&second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("JSON changed in a round trip:\n%s\n%s", first.Bytes(), second.Bytes())
	}
	if !reflect.DeepEqual(back.Totals, res.Totals) || !reflect.DeepEqual(back.Config, res.Config) ||
		back.Valid != res.Valid || len(back.Requests) != 50 || !back.Requests[42].Timestamp.Equal(res.Requests[42].Timestamp) ||
		back.Requests[9].Class != ClassRefused || !maps.Equal(back.Bursts[0].Classes, res.Bursts[0].Classes) {
		t.Errorf("decoded result differs: %+v", back.Summary())
	}

	// camelCase keys a report reader relies on.
	var m map[string]any
	if err := json.Unmarshal(first.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"config", "started", "ended", "endReason", "totals", "successRatio", "failureRatio",
		"latency", "disruptionSeconds", "bursts", "achievedRate", "valid", "transparentRetry", "buckets", "requests"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no %q key", k)
		}
	}
	if fs := m["totals"].(map[string]any)["failures"].(map[string]any); fs["refused"] != 5.0 || fs["http_503"] != 1.0 {
		t.Errorf("totals.failures = %v", fs)
	}

	if _, err := ReadJSON(strings.NewReader("{")); err == nil {
		t.Error("readJSON accepted truncated JSON")
	}
}

func TestSummaryAndString(t *testing.T) {
	res := synthetic(synthCfg, Run{}, synthResults())
	s := res.Summary()
	if s.Requests != 50 || s.Failed != 9 || s.Failures[ClassRefused] != 5 || s.DisruptionSeconds != 3 ||
		len(s.Bursts) != 3 || !s.Valid || s.Latency != res.Latency || s.Rate != 10 || s.Target != synthCfg.Target {
		t.Errorf("Summary() = %+v", s)
	}
	s.Failures[ClassRefused] = 99
	if res.Totals.Failures[ClassRefused] != 5 {
		t.Error("Summary shares its Failures map with the Result")
	}
	b, err := json.Marshal(res.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"buckets"`)) || bytes.Contains(b, []byte(`"seq"`)) {
		t.Errorf("summary JSON carries the timeline or ledger: %s", b)
	}
	str := res.String()
	for _, w := range []string{"GET http://127.0.0.1:30080/", "50 requests", "9 failed", "refused=5", "http_503=1",
		"3 disruption s", "3 bursts", "no keep-alive", "valid"} {
		if !strings.Contains(str, w) {
			t.Errorf("String() = %q, missing %q", str, w)
		}
	}
	if strings.Contains(str, "\n") {
		t.Errorf("String() is not one line: %q", str)
	}
}

func TestPinnedVersions(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{vegetaModule + " " + pinnedVegetaVersion, grpcModule + " " + pinnedGRPCVersion} {
		if !strings.Contains(string(b), want) {
			t.Errorf("go.mod does not require %q: update the pinned version", want)
		}
	}
}

// ShiftClock moves every absolute time by d and leaves the offsets alone.
func TestShiftClock(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := &Result{Started: t0, Ended: t0.Add(time.Second),
		Requests: []Request{{Timestamp: t0.Add(10 * time.Millisecond), Latency: time.Millisecond}},
		Bursts:   []Burst{{First: t0.Add(20 * time.Millisecond), Last: t0.Add(30 * time.Millisecond)}},
		Buckets:  []Bucket{{Start: 100 * time.Millisecond}}}
	r.ShiftClock(-250 * time.Millisecond)
	d := -250 * time.Millisecond
	if !r.Started.Equal(t0.Add(d)) || !r.Ended.Equal(t0.Add(time.Second+d)) ||
		!r.Requests[0].Timestamp.Equal(t0.Add(10*time.Millisecond+d)) || r.Requests[0].Latency != time.Millisecond ||
		!r.Bursts[0].First.Equal(t0.Add(20*time.Millisecond+d)) || !r.Bursts[0].Last.Equal(t0.Add(30*time.Millisecond+d)) ||
		r.Buckets[0].Start != 100*time.Millisecond {
		t.Errorf("shifted: %+v", r)
	}
}

// A stall is the harness's only when the generator itself stopped sending (a frozen or starved
// load): the failures in flight across it are StallFailed, not the app's. A stall in which
// every worker waited on the app (a hanging app at 2,000 req/s with a 2 min timeout fills
// 1,000 workers in half a second) is the app's: none of its failures is excused.
func TestStallsTellTheHarnessFromTheApp(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := func(i int, at, lat time.Duration, c Class) Request {
		return Request{Seq: uint64(i), Timestamp: t0.Add(at), Latency: lat, Class: c}
	}
	// A hanging app: 1,000 requests sent in 0.5 s, each held until its 2 min timeout; the
	// generator, out of workers, sends the next only when the first times out.
	hang := Config{Target: "http://127.0.0.1:1/", Rate: 2000, Duration: 5 * time.Minute, Timeout: 2 * time.Minute, MaxWorkers: 1000}
	var reqs []Request
	for i := range 1000 {
		reqs = append(reqs, req(i, time.Duration(i)*500*time.Microsecond, 2*time.Minute, ClassTimeout))
	}
	reqs = append(reqs, req(1000, 2*time.Minute, 2*time.Minute, ClassTimeout))
	res := NewResult(hang.WithDefaults(), Run{Started: t0, Ended: t0.Add(3 * time.Minute), EndReason: EndStopped, StopAt: t0.Add(2*time.Minute + time.Second)}, reqs)
	if res.Valid || len(res.Stalls) == 0 || !res.Stalls[0].Saturated || res.StallFailed != 0 {
		t.Fatalf("a hanging app: valid %v, stalls %+v, stall failures %d; want an invalid run whose stall is the app's, no failure excused", res.Valid, res.Stalls, res.StallFailed)
	}
	if !strings.Contains(res.InvalidReason, "all 1000 workers waited on the app") {
		t.Errorf("reason %q does not say the stall is the app's", res.InvalidReason)
	}

	// A frozen load pod at 100 req/s: 4 s without sending, one request in flight across the
	// freeze times out; one failure before it, well outside, is the app's.
	frozen := Config{Target: "http://127.0.0.1:1/", Rate: 100, Duration: 10 * time.Second}
	reqs = nil
	for i := range 1000 {
		at := time.Duration(i) * 10 * time.Millisecond
		if at >= 5*time.Second {
			at += 4 * time.Second
		}
		if at >= 10*time.Second {
			break
		}
		c, lat := ClassOK, 5*time.Millisecond
		switch {
		case at == 4990*time.Millisecond:
			c, lat = ClassTimeout, 4*time.Second // in flight across the freeze
		case at == time.Second:
			c = ClassRefused
		}
		reqs = append(reqs, req(i, at, lat, c))
	}
	res = NewResult(frozen.WithDefaults(), Run{Started: t0, Ended: t0.Add(10 * time.Second), EndReason: EndDuration}, reqs)
	if res.Valid || len(res.Stalls) != 1 || res.Stalls[0].Saturated || res.Stalls[0].InFlight != 1 || res.StallFailed != 1 || res.Totals.Failed != 2 {
		t.Fatalf("a frozen load: valid %v, stalls %+v, stall failures %d of %d; want one harness stall excusing 1 of 2", res.Valid, res.Stalls, res.StallFailed, res.Totals.Failed)
	}
	if s := res.Summary(); s.StallFailed != 1 {
		t.Errorf("Summary().StallFailed = %d, want 1", s.StallFailed)
	}
}

// The default workers are sized from the rate and the timeout, so that an app that stops
// answering makes its requests time out instead of stalling the generator; within MaxInFlight.
func TestMaxWorkersSizedFromRateAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		rate    int
		timeout time.Duration
		want    uint64
	}{
		{100, 0, DefaultMaxWorkers},
		{2000, 2 * time.Second, 4000},
		{2000, 2 * time.Minute, MaxInFlight},
	} {
		c := Config{Rate: tc.rate, Timeout: tc.timeout}.WithDefaults()
		if c.MaxWorkers != tc.want {
			t.Errorf("rate %d, timeout %s: MaxWorkers %d, want %d", tc.rate, tc.timeout, c.MaxWorkers, tc.want)
		}
	}
}
