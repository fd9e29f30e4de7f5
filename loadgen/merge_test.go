package loadgen

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Two attacks at half the rate each merge into one ledger judged against the whole rate.
func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	half := func(offset time.Duration, reason EndReason, failEvery int) *Result {
		var reqs []Request
		for i := range 100 { // 50 req/s for 2 s
			q := Request{Seq: uint64(i), Timestamp: t0.Add(offset + time.Duration(i)*20*time.Millisecond), Latency: time.Millisecond, Class: ClassOK, Code: 200}
			if failEvery > 0 && i%failEvery == 0 {
				q.Class, q.Code = ClassRefused, 0
			}
			reqs = append(reqs, q)
		}
		cfg := Config{Target: "http://10.96.0.1/", Rate: 50, Duration: 10 * time.Second, AllowRemote: true}
		return NewResult(cfg.WithDefaults(), Run{Started: t0.Add(offset), Ended: t0.Add(offset + 2*time.Second), StopAt: t0.Add(offset + 2*time.Second), EndReason: reason}, reqs)
	}
	a, b := half(0, EndStopped, 10), half(10*time.Millisecond, EndStopped, 0)
	res, err := Merge(Config{Target: "http://10.96.0.1/", Rate: 100, Duration: 10 * time.Second, AllowRemote: true}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.Requests != 200 || res.Totals.Failed != 10 || res.Totals.Failures[ClassRefused] != 10 {
		t.Errorf("totals %+v, want 200 requests, 10 refused", res.Totals)
	}
	for i, q := range res.Requests {
		if q.Seq != uint64(i) || (i > 0 && q.Timestamp.Before(res.Requests[i-1].Timestamp)) {
			t.Fatalf("request %d: seq %d at %s, not in one sending order", i, q.Seq, q.Timestamp)
		}
	}
	if !res.Started.Equal(t0) || !res.Ended.Equal(t0.Add(2010*time.Millisecond)) || res.EndReason != EndStopped || res.Window != 2010*time.Millisecond {
		t.Errorf("started %s ended %s reason %s window %s", res.Started, res.Ended, res.EndReason, res.Window)
	}
	if res.AchievedRate < 95 || res.AchievedRate > 105 || !res.Valid {
		t.Errorf("achieved %.1f req/s, valid %v (%s): want about the whole 100", res.AchievedRate, res.Valid, res.InvalidReason)
	}
	// One attack cancelled makes the whole cancelled; nothing to merge is an error.
	if res, _ := Merge(Config{Target: "http://10.96.0.1/", Rate: 100, Duration: 10 * time.Second, AllowRemote: true}, a, half(0, EndCanceled, 0)); res.EndReason != EndCanceled {
		t.Errorf("end reason %s, want canceled", res.EndReason)
	}
	if _, err := Merge(Config{}); err == nil {
		t.Error("Merge of nothing: no error")
	}
}

// Load pods start one after another: each is owed its rate from its own start, so a second pod
// that started 3 s after the first leaves the merged load valid at the whole rate, and one that
// sent too little still makes it invalid.
func TestMergeStaggeredStarts(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	attack := func(start time.Time, rate int, until time.Time, keep float64) *Result {
		cfg := Config{Target: "http://127.0.0.1:1/", Rate: rate, Duration: time.Minute}.WithDefaults()
		var reqs []Request
		gap := time.Second / time.Duration(rate)
		for at, k := start, 0; at.Before(until); at, k = at.Add(gap), k+1 {
			if float64(k%100) < keep*100 {
				reqs = append(reqs, Request{Timestamp: at, Latency: time.Millisecond, Code: 200, Class: ClassOK})
			}
		}
		return NewResult(cfg, Run{Started: start, Ended: until, EndReason: EndStopped, StopAt: until}, reqs)
	}
	end := t0.Add(30 * time.Second)
	whole := Config{Target: "http://127.0.0.1:1/", Rate: 300, Duration: time.Minute}
	m, err := Merge(whole, attack(t0, 150, end, 1), attack(t0.Add(3*time.Second), 150, end, 1))
	if err != nil || !m.Valid || math.Abs(m.AchievedRate-300) > 3 {
		t.Fatalf("staggered: err %v, valid %v (%s), achieved %.1f", err, m.Valid, m.InvalidReason, m.AchievedRate)
	}
	m, _ = Merge(whole, attack(t0, 150, end, 1), attack(t0.Add(3*time.Second), 150, end, 0.9))
	if m.Valid || !strings.Contains(m.InvalidReason, "achieved rate") {
		t.Errorf("a pod that sent 90 %% of its share: valid %v (%s), achieved %.1f", m.Valid, m.InvalidReason, m.AchievedRate)
	}
}

// One load pod frozen while the other sends: the merged ledger has no gap, yet the request in
// flight across that pod's own stall is the harness's (StallFailed), and a failure of the other
// pod, outside any stall, is the app's.
func TestMergeJudgesEachAttacksStalls(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	cfg := Config{Target: "http://10.96.0.1/", Rate: 50, Duration: 10 * time.Second, AllowRemote: true}
	share := func(freeze bool) *Result {
		var reqs []Request
		for i := range 500 { // 50 req/s for 10 s
			at := time.Duration(i) * 20 * time.Millisecond
			if freeze && at >= 4*time.Second && at < 7*time.Second {
				continue // frozen 3 s
			}
			q := Request{Seq: uint64(i), Timestamp: t0.Add(at), Latency: time.Millisecond, Class: ClassOK, Code: 200}
			switch {
			case freeze && at == 3980*time.Millisecond:
				q.Class, q.Code, q.Latency = ClassTimeout, 0, 2*time.Second // in flight across the freeze
			case !freeze && at == time.Second:
				q.Class, q.Code = ClassRefused, 0 // the app's
			}
			reqs = append(reqs, q)
		}
		return NewResult(cfg.WithDefaults(), Run{Started: t0, Ended: t0.Add(10 * time.Second), EndReason: EndDuration}, reqs)
	}
	frozen, steady := share(true), share(false)
	if frozen.StallFailed != 1 {
		t.Fatalf("the frozen attack alone: %d stall failures, want 1", frozen.StallFailed)
	}
	res, err := Merge(Config{Target: "http://10.96.0.1/", Rate: 100, Duration: 10 * time.Second, AllowRemote: true}, frozen, steady)
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.Failed != 2 || res.StallFailed != 1 || len(res.Stalls) != 1 || res.Stalls[0].Saturated {
		t.Errorf("merged: %d failed, %d in a stall, stalls %+v; want 2, 1 and the frozen pod's one stall", res.Totals.Failed, res.StallFailed, res.Stalls)
	}
}
