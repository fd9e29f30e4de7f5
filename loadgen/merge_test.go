package loadgen

import (
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
		return aggregate(cfg.WithDefaults(), run{started: t0.Add(offset), ended: t0.Add(offset + 2*time.Second), stopAt: t0.Add(offset + 2*time.Second), endReason: reason}, reqs)
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
