package attempt

import (
	"context"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// A failure the app caused never leaves as a pass: a first attempt that the harness could not
// judge as a whole, but in which the app failed requests that no stall of the load explains,
// fails at once instead of being run again until an attempt passes. Each case is a first
// attempt as the engine of an earlier rollcheck recorded it (a harness fault), then a clean
// second attempt; the earlier policy ran the row again and kept the pass.
func TestAppFailuresAreNotRetriedIntoAPass(t *testing.T) {
	invalid := func(requests, failed int, class loadgen.Class, reason string) loadgen.Summary {
		return loadgen.Summary{Requests: requests, OK: requests - failed, Failed: failed, Failures: map[loadgen.Class]int{class: failed},
			FailureRatio: float64(failed) / float64(requests), Valid: false, InvalidReason: reason}
	}
	valid := loadgen.Summary{Requests: 1000, OK: 1000, Valid: true}
	for _, tc := range []struct {
		name    string
		expect  check.Outcome
		first   loadgen.Summary
		reason  string
		want    check.Status
		retried bool
	}{
		{"an app failing 1 % of its requests, the load's rate missed", check.Zero(),
			invalid(1000, 10, loadgen.ClassReset, "achieved rate 97.00/s misses the asked 100/s by 3.0% (tolerance 1%)"),
			"invalid load run: achieved rate 97.00/s misses the asked 100/s by 3.0% (tolerance 1%)", check.Fail, false},
		{"an app failing 1 %, at most 0.5 % allowed", check.AtMost(0.005),
			invalid(1000, 10, loadgen.ClassReset, "stalled: no request sent for 1.2s from +8s"),
			"invalid load run: stalled: no request sent for 1.2s from +8s", check.Fail, false},
		{"a hanging app at 2,000 req/s with a 2 min timeout (1,000 workers filled, the generator stalled)", check.Zero(),
			invalid(1001, 1000, loadgen.ClassTimeout, "stalled: no request sent for 2m0s from +0.5s"),
			"the load generator sent nothing for 4s", check.Fail, false},
		{"failures the observer did not see", check.Zero(),
			loadgen.Summary{Requests: 1000, OK: 990, Failed: 10, Failures: map[loadgen.Class]int{loadgen.ClassRefused: 10}, FailureRatio: 0.01, Valid: true},
			"the observer could not watch the cluster while the load ran (pods unwatched 15s): 10 failed requests, whose phases come from late events; no verdict", check.Fail, false},
		{"fewer disruptions ran, with failures", check.Zero(),
			loadgen.Summary{Requests: 1000, OK: 995, Failed: 5, Failures: map[loadgen.Class]int{loadgen.ClassRefused: 5}, FailureRatio: 0.005, Valid: true},
			"2 of 3 disruptions ran", check.Fail, false},
		{"the harness's own fault, no failure: run again", check.Zero(),
			invalid(1000, 0, loadgen.ClassTimeout, "stalled: no request sent for 4s from +5s"),
			"invalid load run: stalled: no request sent for 4s from +5s", check.Pass, true},
		{"a negative control whose load stalled: run again", check.Failures(),
			invalid(1000, 40, loadgen.ClassRefused, "stalled: no request sent for 4s from +5s"),
			"invalid load run: stalled: no request sent for 4s from +5s", check.Pass, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runs := 0
			got, err := Run(context.Background(), dir, func(context.Context) (*check.Row, error) {
				runs++
				r := row(t, dir, check.HarnessFault, tc.reason)
				r.Config.Expect, r.Summary = tc.expect, tc.first
				if runs > 1 {
					r.Verdict, r.Summary = check.Verdict{Status: check.Pass, Reason: "0 of 1000 requests failed"}, valid
				}
				return r, nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verdict.Status != tc.want || (runs == 2) != tc.retried {
				t.Errorf("verdict %s after %d attempt(s) (%q); want %s, retried %v", got.Verdict.Status, runs, got.Verdict.Reason, tc.want, tc.retried)
			}
		})
	}
}
