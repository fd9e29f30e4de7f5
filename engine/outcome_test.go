package engine

import (
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
)

// summary is a valid load run of n requests whose failures are given by class.
func summary(n int, failures map[loadgen.Class]int) loadgen.Summary {
	s := loadgen.Summary{Requests: n, Failures: failures, Valid: true, Rate: 100, AchievedRate: 100}
	for _, f := range failures {
		s.Failed += f
	}
	s.OK = n - s.Failed
	if n > 0 {
		s.FailureRatio = float64(s.Failed) / float64(n)
		s.SuccessRatio = float64(s.OK) / float64(n)
	}
	return s
}

func TestOutcomeString(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Zero(), "0 failures"},
		{AtMost(0.005), "≤ 0.50%"},
		{Failures(), "failures"},
		{Failures(loadgen.ClassReset, loadgen.ClassEOF), "failures (reset|eof)"},
		{Outcome{Kind: "odd"}, "odd"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.o, got, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	reset, eof, refused := loadgen.ClassReset, loadgen.ClassEOF, loadgen.ClassRefused
	http503 := loadgen.HTTP5xxClass(503)
	for _, tc := range []struct {
		name   string
		o      Outcome
		s      loadgen.Summary
		want   Status
		reason string // part of the reason
	}{
		{"zero: none failed", Zero(), summary(1000, nil), Pass, "0 of 1000 requests failed (0.000%)"},
		{"zero: one failed", Zero(), summary(1000, map[loadgen.Class]int{reset: 1}), Fail, "1 of 1000 requests failed (0.100%), expected none"},

		{"at most: below", AtMost(0.01), summary(1000, map[loadgen.Class]int{eof: 5}), Pass, "5 of 1000"},
		{"at most: at the limit", AtMost(0.01), summary(1000, map[loadgen.Class]int{eof: 10}), Pass, "10 of 1000"},
		{"at most: above", AtMost(0.01), summary(1000, map[loadgen.Class]int{eof: 11}), Fail, "expected at most 1.00%"},
		{"at most: none failed", AtMost(0.01), summary(1000, nil), Pass, "0 of 1000"},

		{"failures: none failed", Failures(), summary(1000, nil), Fail, "the negative control did not see the disruption"},
		{"failures: none failed with classes", Failures(reset), summary(1000, nil), Fail, "negative control"},
		{"failures: any class", Failures(), summary(1000, map[loadgen.Class]int{http503: 3}), Pass, "3 of 1000"},
		{"failures: all expected", Failures(reset, eof), summary(1000, map[loadgen.Class]int{reset: 4, eof: 6}), Pass, "10 of 10 failures are reset|eof"},
		{"failures: exactly half", Failures(reset), summary(1000, map[loadgen.Class]int{reset: 5, refused: 5}), Pass, "5 of 10"},
		{"failures: majority", Failures(reset, eof), summary(1000, map[loadgen.Class]int{reset: 5, eof: 1, refused: 4}), Pass, "6 of 10"},
		{"failures: minority", Failures(reset), summary(1000, map[loadgen.Class]int{reset: 4, refused: 5}), Fail, "only 4 of 9 failures are reset: not the expected mechanism"},
		{"failures: none of the classes", Failures(eof), summary(1000, map[loadgen.Class]int{http503: 7}), Fail, "only 0 of 7"},

		{"unknown expectation", Outcome{Kind: "maybe"}, summary(1000, nil), Fail, `unknown expectation maybe`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.o.Judge(tc.s)
			if v.Status != tc.want || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("Judge = %s %q, want %s containing %q", v.Status, v.Reason, tc.want, tc.reason)
			}
		})
	}
}

// An invalid load run says nothing about the app: whatever its failures and whatever was
// expected, it is a harness fault.
func TestJudgeHarnessFault(t *testing.T) {
	invalid := summary(1000, map[loadgen.Class]int{loadgen.ClassReset: 30})
	invalid.Valid = false
	invalid.InvalidReason = "achieved rate 80.00/s misses the asked 100/s by 20.0% (tolerance 1%)"
	cleanInvalid := summary(1000, nil)
	cleanInvalid.Valid = false
	cleanInvalid.InvalidReason = "stalled: no request sent for 2s from +5s"
	empty := summary(0, nil) // valid by mistake, but nothing was sent
	for _, o := range []Outcome{Zero(), AtMost(0.5), Failures(), Failures(loadgen.ClassReset)} {
		for _, tc := range []struct {
			s      loadgen.Summary
			reason string
		}{
			{invalid, "invalid load run: achieved rate 80.00/s"},
			{cleanInvalid, "invalid load run: stalled"},
			{empty, "no request was sent"},
		} {
			v := o.Judge(tc.s)
			if v.Status != HarnessFault || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("%s.Judge(%d requests, valid %v) = %s %q, want harness-fault %q",
					o, tc.s.Requests, tc.s.Valid, v.Status, v.Reason, tc.reason)
			}
		}
	}
}

func TestOutcomeRejectsUnknownClass(t *testing.T) {
	for _, c := range []loadgen.Class{"resets", "ok", "http_200", "http_600", ""} {
		if err := Failures(c).Validate(); err == nil {
			t.Errorf("Failures(%q).Validate() accepted an unknown class", c)
		}
	}
	for _, c := range []loadgen.Class{loadgen.ClassReset, loadgen.HTTP5xxClass(503), loadgen.ClassOther} {
		if err := Failures(c).Validate(); err != nil {
			t.Errorf("Failures(%q).Validate(): %v", c, err)
		}
	}
}
