package rctest_test

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/rctest"
)

// row is a hand-built row: status and reason as judged, one disruption per success ratio
// (100 requests each).
func row(status check.Status, reason string, ratios ...float64) check.Row {
	r := check.Row{
		Config: check.Applied{Name: "prestop-5s", App: "web", Replicas: 2, Rate: 100, Method: "GET",
			Disruption: check.RolloutRestart, Count: len(ratios), Expect: check.Outcome{Kind: check.ExpectZero}},
		Summary: loadgen.Summary{Target: "http://127.0.0.1:30080/", Requests: 300, OK: 297, Failed: 3},
		Verdict: check.Verdict{Status: status, Reason: reason},
	}
	for i, ratio := range ratios {
		r.Disruptions = append(r.Disruptions, check.DisruptionResult{Kind: check.RolloutRestart, N: i + 1,
			Requests: 100, Failed: int(100 - 100*ratio + 0.5), SuccessRatio: ratio})
	}
	return r
}

func TestMatchers(t *testing.T) {
	failed := row(check.Fail, "3 of 300 requests failed, want none", 1, 0.97, 0.99)
	passed := row(check.Pass, "no request failed", 1, 1)
	for _, tc := range []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		want    bool
		// message is the failure message To (want false) or NotTo (want true) gives, in parts.
		message []string
	}{
		{"Pass on a passing row", rctest.Pass(), passed, true,
			[]string{"row " + passed.Config.String() + ": pass, want anything but pass: no request failed"}},
		{"Pass on a pointer to a passing row", rctest.Pass(), &passed, true, nil},
		{"Pass on a failing row", rctest.Pass(), failed, false,
			[]string{"row " + failed.Config.String() + ": fail, want pass: 3 of 300 requests failed, want none",
				"(expected " + failed.Config.Expect.String() + ")", "\n" + failed.Summary.String()}},
		{"HaveStatus fail on a failing row", rctest.HaveStatus(check.Fail), &failed, true,
			[]string{"fail, want anything but fail: 3 of 300 requests failed"}},
		{"HaveStatus error on a failing row", rctest.HaveStatus(check.Error), failed, false,
			[]string{": fail, want error: "}},
		{"worst disruption above the bound", rctest.HaveWorstDisruptionAtLeast(0.95), failed, true,
			[]string{"row prestop-5s: every disruption succeeded at least 95.00%, want one below"}},
		{"worst disruption at the bound", rctest.HaveWorstDisruptionAtLeast(0.97), failed, true, nil},
		{"worst disruption below the bound", rctest.HaveWorstDisruptionAtLeast(0.98), &failed, false,
			[]string{"row prestop-5s: rollout-restart 2/3 succeeded 97.00% of 100 requests, want at least 98.00%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.matcher.Match(tc.actual)
			if err != nil || got != tc.want {
				t.Fatalf("Match = %v, %v, want %v", got, err, tc.want)
			}
			msg := tc.matcher.FailureMessage(tc.actual)
			if tc.want {
				msg = tc.matcher.NegatedFailureMessage(tc.actual)
			}
			for _, part := range tc.message {
				if !strings.Contains(msg, part) {
					t.Errorf("message\n%s\ndoes not contain\n%s", msg, part)
				}
			}
		})
	}
}

func TestMatchersRefuse(t *testing.T) {
	var nilRow *check.Row
	for _, tc := range []struct {
		name    string
		matcher types.GomegaMatcher
		actual  any
		want    string
	}{
		{"a nil row", rctest.Pass(), nilRow, "expected a row, got nil"},
		{"something else", rctest.HaveStatus(check.Pass), "pass", "Row, got string"},
		{"a row without disruptions", rctest.HaveWorstDisruptionAtLeast(0.5), row(check.Pass, ""), "row prestop-5s recorded no disruption"},
		{"no row for the worst disruption", rctest.HaveWorstDisruptionAtLeast(0.5), 0.9, "Row, got float64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := tc.matcher.Match(tc.actual); got || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Match = %v, %v, want an error containing %q", got, err, tc.want)
			}
		})
	}
}

// The matchers in an assertion, as a suite uses them: a failing row fails Pass with the
// verdict's reason in the message.
func TestMatchersInGomega(t *testing.T) {
	var failures []string
	g := gomega.NewGomega(func(message string, _ ...int) { failures = append(failures, message) })
	r := row(check.Fail, "3 of 300 requests failed, want none", 0.97)
	g.Expect(r).To(rctest.HaveStatus(check.Fail))
	g.Expect(r).To(rctest.HaveWorstDisruptionAtLeast(0.9))
	g.Expect(r).NotTo(rctest.Pass())
	if len(failures) != 0 {
		t.Fatalf("failures %q, want none", failures)
	}
	g.Expect(r).To(rctest.Pass())
	if len(failures) != 1 || !strings.Contains(failures[0], "want pass: 3 of 300 requests failed, want none") {
		t.Errorf("failures %q, want one giving the reason", failures)
	}
}
