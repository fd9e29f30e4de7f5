package check

import (
	"math"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
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

// An invalid load run is a harness fault only for what the harness explains: a zero-failure or
// at-most row is judged on the requests actually sent, less the failures in flight while the
// load stalled on its own. An app that failed 1 % of its requests fails, however the load went
// (the old rule made every invalid run a harness fault, which a second attempt then passed).
func TestJudgeInvalidLoadRun(t *testing.T) {
	appFails := summary(1000, map[loadgen.Class]int{loadgen.ClassReset: 10}) // 1 %, none in a stall
	appFails.Valid = false
	appFails.InvalidReason = "achieved rate 80.00/s misses the asked 100/s by 20.0% (tolerance 1%)"
	inStall := appFails
	inStall.InvalidReason, inStall.StallFailed = "stalled: no request sent for 4s from +5s", 10
	partly := inStall
	partly.StallFailed = 4 // 6 of the 10 outside the stall
	cleanInvalid := summary(1000, nil)
	cleanInvalid.Valid = false
	cleanInvalid.InvalidReason = "stalled: no request sent for 2s from +5s"
	empty := summary(0, nil) // valid by mistake, but nothing was sent
	for _, tc := range []struct {
		name   string
		o      Outcome
		s      loadgen.Summary
		status Status
		reason string
	}{
		{"app fails 1 %, zero expected", Zero(), appFails, Fail, "10 of 1000 requests failed (1.000%), expected none; the app failed them whatever the harness did: invalid load run: achieved rate"},
		{"app fails 1 %, at most 0.5 %", AtMost(0.005), appFails, Fail, "expected at most 0.50%"},
		{"app fails 1 %, at most 5 %", AtMost(0.05), appFails, HarnessFault, "invalid load run: achieved rate"},
		{"every failure in the load's stall", Zero(), inStall, HarnessFault, "invalid load run: stalled"},
		{"some outside the stall", Zero(), partly, Fail, "6 of 1000 requests failed (0.600%) besides the 4 in flight while the load stalled, expected none"},
		{"negative control", Failures(), appFails, HarnessFault, "invalid load run: achieved rate"},
		{"negative control by class", Failures(loadgen.ClassReset), appFails, HarnessFault, "invalid load run"},
		{"bounds", Bounds().WithMaxDisruptionSeconds(1), appFails, HarnessFault, "invalid load run"},
		{"clean invalid, zero", Zero(), cleanInvalid, HarnessFault, "invalid load run: stalled"},
		{"clean invalid, at most", AtMost(0.01), cleanInvalid, HarnessFault, "invalid load run: stalled"},
		{"nothing sent", Zero(), empty, HarnessFault, "no request was sent"},
	} {
		v := tc.o.Judge(tc.s)
		if v.Status != tc.status || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%s: %s.Judge = %s %q, want %s %q", tc.name, tc.o, v.Status, v.Reason, tc.status, tc.reason)
		}
	}
}

func TestOutcomeRejectsUnknownClass(t *testing.T) {
	for _, c := range []loadgen.Class{"resets", "ok", "http_200", "http_600", "", "grpc_ok", "grpc_bogus", "proxy_200"} {
		if err := Failures(c).Validate(); err == nil {
			t.Errorf("Failures(%q).Validate() accepted an unknown class", c)
		}
	}
	for _, c := range []loadgen.Class{loadgen.ClassReset, loadgen.HTTP5xxClass(503), loadgen.ClassOther, loadgen.ProxyClass(502),
		loadgen.ClassGoAway, loadgen.ClassStreamReset, "grpc_unavailable", "grpc_deadline_exceeded", loadgen.ClassGRPCNotServing} {
		if err := Failures(c).Validate(); err != nil {
			t.Errorf("Failures(%q).Validate(): %v", c, err)
		}
	}
}

func TestOutcomeStringWithBounds(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Zero().WithMinSuccessRatioPerDisruption(0.95), "0 failures, ≥ 95% per disruption"},
		{AtMost(0.01).WithMinSuccessRatioPerDisruption(0.995).WithMaxDisruptionSeconds(2), "≤ 1.00%, ≥ 99.5% per disruption, ≤ 2 disruption s"},
		{Zero().WithMaxDisruptionSeconds(0), "0 failures, ≤ 0 disruption s"},
		{Bounds().WithMinSuccessRatioPerDisruption(0.9), "≥ 90% per disruption"},
		{Bounds().WithMaxDisruptionSeconds(3), "≤ 3 disruption s"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.o, got, tc.want)
		}
	}
}

// disruption is one disruption of kind rollout-restart with n requests of which failed failed.
func disruption(n, requests, failed int) DisruptionResult {
	d := DisruptionResult{Kind: RolloutRestart, N: n, Requests: requests, Failed: failed}
	if requests > 0 {
		d.SuccessRatio = float64(requests-failed) / float64(requests)
	}
	return d
}

func TestJudgeMinSuccessRatioPerDisruption(t *testing.T) {
	s := summary(1200, map[loadgen.Class]int{loadgen.ClassEOF: 12})
	atMost := AtMost(0.02).WithMinSuccessRatioPerDisruption(0.975)
	for _, tc := range []struct {
		name   string
		o      Outcome
		s      loadgen.Summary
		ds     []DisruptionResult
		want   Status
		reason string // the whole reason
	}{
		{"every disruption meets it", atMost, s, []DisruptionResult{disruption(1, 400, 2), disruption(2, 400, 4), disruption(3, 400, 6)},
			Pass, "12 of 1200 requests failed (1.000%); worst disruption 98.50%"},
		{"the worst at exactly the bound", atMost, s, []DisruptionResult{disruption(1, 400, 10), disruption(2, 400, 1), disruption(3, 400, 1)},
			Pass, "12 of 1200 requests failed (1.000%); worst disruption 97.50%"},
		{"one disruption misses it: the worst is named", atMost, s, []DisruptionResult{disruption(1, 400, 1), disruption(2, 400, 11), disruption(3, 400, 0)},
			Fail, "12 of 1200 requests failed (1.000%); rollout-restart 2/3: 389 of 400 requests succeeded (97.25%), expected at least 97.50% per disruption"},
		{"two miss it: the worse is named", atMost, s, []DisruptionResult{disruption(1, 400, 11), disruption(2, 400, 1), disruption(3, 400, 0), disruption(4, 400, 12)},
			Fail, "12 of 1200 requests failed (1.000%); rollout-restart 4/4: 388 of 400 requests succeeded (97.00%), expected at least 97.50% per disruption"},
		{"no disruption recorded", atMost, s, nil,
			HarnessFault, "12 of 1200 requests failed (1.000%); no disruption was recorded to judge its success ratio"},
		{"a disruption without requests", atMost, s, []DisruptionResult{disruption(1, 400, 0), disruption(2, 0, 0)},
			HarnessFault, "12 of 1200 requests failed (1.000%); rollout-restart 2/2 sent no request"},
		// The kind's own rule comes first: its failure is the verdict.
		{"the whole run fails first", Zero().WithMinSuccessRatioPerDisruption(0.5), s, []DisruptionResult{disruption(1, 400, 12)},
			Fail, "12 of 1200 requests failed (1.000%), expected none"},
		{"an invalid load is a harness fault", atMost, func() loadgen.Summary { i := s; i.Valid, i.InvalidReason = false, "stalled"; return i }(), nil,
			HarnessFault, "invalid load run: stalled"},
		{"unset: disruptions are not judged", AtMost(0.02), s, []DisruptionResult{disruption(1, 100, 12)},
			Pass, "12 of 1200 requests failed (1.000%)"},
		{"bounds alone", Bounds().WithMinSuccessRatioPerDisruption(0.95), summary(1200, map[loadgen.Class]int{loadgen.ClassEOF: 60}),
			[]DisruptionResult{disruption(1, 400, 20), disruption(2, 400, 20)},
			Pass, "60 of 1200 requests failed (5.000%); worst disruption 95.00%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.o.Judge(tc.s, tc.ds...)
			if v.Status != tc.want || v.Reason != tc.reason {
				t.Errorf("Judge = %s %q\n     want %s %q", v.Status, v.Reason, tc.want, tc.reason)
			}
		})
	}
}

func TestJudgeMaxDisruptionSeconds(t *testing.T) {
	withSeconds := func(s loadgen.Summary, n int) loadgen.Summary { s.DisruptionSeconds = n; return s }
	s := summary(1000, map[loadgen.Class]int{loadgen.ClassReset: 5})
	ds := []DisruptionResult{disruption(1, 500, 2), disruption(2, 500, 3)}
	for _, tc := range []struct {
		name   string
		o      Outcome
		s      loadgen.Summary
		want   Status
		reason string
	}{
		{"below", AtMost(0.01).WithMaxDisruptionSeconds(2), withSeconds(s, 1), Pass, "5 of 1000 requests failed (0.500%)"},
		{"at the bound", AtMost(0.01).WithMaxDisruptionSeconds(2), withSeconds(s, 2), Pass, "5 of 1000 requests failed (0.500%)"},
		{"above", AtMost(0.01).WithMaxDisruptionSeconds(2), withSeconds(s, 3),
			Fail, "5 of 1000 requests failed (0.500%); 3 disruption seconds, expected at most 2"},
		{"zero allowed, none seen", Zero().WithMaxDisruptionSeconds(0), summary(1000, nil), Pass, "0 of 1000 requests failed (0.000%)"},
		{"with the per-disruption bound, both met", AtMost(0.01).WithMinSuccessRatioPerDisruption(0.99).WithMaxDisruptionSeconds(2), withSeconds(s, 2),
			Pass, "5 of 1000 requests failed (0.500%); worst disruption 99.40%"},
		{"with the per-disruption bound, seconds exceeded", AtMost(0.01).WithMinSuccessRatioPerDisruption(0.99).WithMaxDisruptionSeconds(1), withSeconds(s, 2),
			Fail, "5 of 1000 requests failed (0.500%); worst disruption 99.40%; 2 disruption seconds, expected at most 1"},
		{"bounds alone, exceeded", Bounds().WithMaxDisruptionSeconds(1), withSeconds(s, 4),
			Fail, "5 of 1000 requests failed (0.500%); 4 disruption seconds, expected at most 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.o.Judge(tc.s, ds...)
			if v.Status != tc.want || v.Reason != tc.reason {
				t.Errorf("Judge = %s %q\n     want %s %q", v.Status, v.Reason, tc.want, tc.reason)
			}
		})
	}
}

func TestOutcomeValidateBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want string // empty: valid
	}{
		{"ratio 0.95", Zero().WithMinSuccessRatioPerDisruption(0.95), ""},
		{"ratio 1", AtMost(0.1).WithMinSuccessRatioPerDisruption(1), ""},
		{"ratio 0 is unset", Zero().WithMinSuccessRatioPerDisruption(0), ""},
		{"seconds 0", Zero().WithMaxDisruptionSeconds(0), ""},
		{"seconds 5", AtMost(0.1).WithMaxDisruptionSeconds(5), ""},
		{"bounds with a ratio", Bounds().WithMinSuccessRatioPerDisruption(0.9), ""},
		{"bounds with seconds", Bounds().WithMaxDisruptionSeconds(0), ""},
		{"negative ratio", Zero().WithMinSuccessRatioPerDisruption(-0.1), "expect minSuccessRatioPerDisruption -0.1: want a ratio between 0 and 1"},
		{"ratio above 1", Zero().WithMinSuccessRatioPerDisruption(1.01), "expect minSuccessRatioPerDisruption 1.01"},
		{"ratio NaN", Zero().WithMinSuccessRatioPerDisruption(math.NaN()), "expect minSuccessRatioPerDisruption NaN"},
		{"negative seconds", Zero().WithMaxDisruptionSeconds(-1), "expect maxDisruptionSeconds -1: want 0 or more"},
		{"negative control with a ratio", Failures().WithMinSuccessRatioPerDisruption(0.9), "expect failures-expected (a negative control) cannot also bound"},
		{"negative control with seconds", Failures(loadgen.ClassReset).WithMaxDisruptionSeconds(3), "expect failures-expected (a negative control) cannot also bound"},
		{"bounds without a bound", Bounds(), "expect bounds: set minSuccessRatioPerDisruption or maxDisruptionSeconds"},
		{"the kind is still checked", AtMost(0).WithMaxDisruptionSeconds(1), "expect at-most 0"},
		{"no kind", Outcome{}, `expect "": want zero-failures, at-most, failures-expected or bounds`},
		{"unknown kind", Outcome{Kind: "maybe"}, `expect "maybe": want zero-failures, at-most, failures-expected or bounds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}

// The With methods return a changed copy; the receiver keeps its bounds.
func TestOutcomeWithCopies(t *testing.T) {
	base := Zero()
	_ = base.WithMinSuccessRatioPerDisruption(0.9).WithMaxDisruptionSeconds(1)
	if base.MinSuccessRatioPerDisruption != 0 || base.MaxDisruptionSeconds != nil {
		t.Errorf("With* changed the receiver: %+v", base)
	}
	a, b := Zero().WithMaxDisruptionSeconds(1), Zero().WithMaxDisruptionSeconds(2)
	if *a.MaxDisruptionSeconds != 1 || *b.MaxDisruptionSeconds != 2 {
		t.Errorf("bounds share storage: %d, %d", *a.MaxDisruptionSeconds, *b.MaxDisruptionSeconds)
	}
}

func TestWorstDisruption(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ds    []DisruptionResult
		wantN int // 0: the zero DisruptionResult
	}{
		{"none", nil, 0},
		{"one", []DisruptionResult{disruption(1, 100, 5)}, 1},
		{"the lowest ratio", []DisruptionResult{disruption(1, 100, 1), disruption(2, 100, 7), disruption(3, 100, 3)}, 2},
		{"the first among equals", []DisruptionResult{disruption(1, 100, 0), disruption(2, 200, 10), disruption(3, 100, 5)}, 2},
		{"the last", []DisruptionResult{disruption(1, 100, 0), disruption(2, 100, 0), disruption(3, 100, 1)}, 3},
		// A disruption with no request has ratio 0: it is the worst, and Judge says why.
		{"no requests", []DisruptionResult{disruption(1, 100, 50), disruption(2, 0, 0)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := WorstDisruption(tc.ds)
			if tc.wantN == 0 {
				if w.N != 0 || w.Requests != 0 || w.Kind != "" {
					t.Errorf("WorstDisruption = %+v, want the zero value", w)
				}
				return
			}
			if w.N != tc.wantN {
				t.Errorf("WorstDisruption = #%d (%+v), want #%d", w.N, w, tc.wantN)
			}
		})
	}
}

// A negative control must show its failures in most disruptions, not once by chance.
func TestJudgeNegativeControlInMostDisruptions(t *testing.T) {
	o := Failures(loadgen.ClassEOF)
	s := summary(1000, map[loadgen.Class]int{loadgen.ClassEOF: 1})
	d := func(failed ...int) []DisruptionResult {
		var ds []DisruptionResult
		for i, f := range failed {
			ds = append(ds, DisruptionResult{Kind: RolloutRestart, N: i + 1, Requests: 300, Failed: f})
		}
		return ds
	}
	if v := o.Judge(s, d(1, 0, 0)...); v.Status != Fail || !strings.Contains(v.Reason, "failures in 1 of 3 disruptions, expected in at least 2") {
		t.Errorf("one failure in one of three disruptions: %s %q, want fail", v.Status, v.Reason)
	}
	if v := o.Judge(s, d(4, 0, 9)...); v.Status != Pass || !strings.Contains(v.Reason, "failures in 2 of 3 disruptions") {
		t.Errorf("failures in two of three: %s %q, want pass", v.Status, v.Reason)
	}
	if v := o.Judge(s, d(0, 3)...); v.Status != Pass {
		t.Errorf("one of two disruptions: %s %q, want pass (half, rounded up)", v.Status, v.Reason)
	}
	if v := o.Judge(s); v.Status != Pass {
		t.Errorf("no disruptions given: %s %q, want the class rule alone", v.Status, v.Reason)
	}
}

func TestJudgeMinDisruptionsWithFailures(t *testing.T) {
	o := Failures(loadgen.ClassEOF).WithMinDisruptionsWithFailures(1)
	s := summary(1000, map[loadgen.Class]int{loadgen.ClassEOF: 28})
	ds := []DisruptionResult{{N: 1, Requests: 300, Failed: 28}, {N: 2, Requests: 300}, {N: 3, Requests: 300}}
	if v := o.Judge(s, ds...); v.Status != Pass {
		t.Errorf("failures in 1 of 3, 1 required: %s %q", v.Status, v.Reason)
	}
	if v := Failures(loadgen.ClassEOF).Judge(s, ds...); v.Status != Fail {
		t.Errorf("failures in 1 of 3, most required: %s %q, want fail", v.Status, v.Reason)
	}
	if err := Zero().WithMinDisruptionsWithFailures(1).Validate(); err == nil {
		t.Error("minDisruptionsWithFailures on a zero-failures outcome validated")
	}
}

// mechanismCase is a row's failures by phase and the verdict JudgeMechanism should give them:
// its status, and words its reason holds.
type mechanismCase struct {
	name   string
	phases map[timeline.Phase]int
	status Status
	reason string
}

// judgeMechanismCases judges each case's phases with o, after Judge gave pass.
func judgeMechanismCases(t *testing.T, o Outcome, pass Verdict, cases []mechanismCase) {
	t.Helper()
	for _, tc := range cases {
		v := o.JudgeMechanism(pass, tc.phases)
		if v.Status != tc.status || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%s: %+v, want %s with %q", tc.name, v, tc.status, tc.reason)
		}
	}
}

func TestJudgeMechanism(t *testing.T) {
	o := Failures(loadgen.ClassEOF, loadgen.ClassReset).ByPhase(timeline.PhasePropagation)
	pass := Verdict{Status: Pass, Reason: "40 of 1000 requests failed"}
	judgeMechanismCases(t, o, pass, []mechanismCase{
		{"right mechanism", map[timeline.Phase]int{timeline.PhasePropagation: 36, timeline.PhaseUnknown: 4}, Pass, "36 of 40 failures are propagation"},
		{"right count, wrong mechanism", map[timeline.Phase]int{timeline.PhasePropagation: 31, timeline.PhaseSteady: 9}, Fail, "right count, wrong mechanism: only 31 of 40 failures are propagation, expected at least 80% (by phase: propagation 31, steady 9)"},
		{"not attributed", nil, Pass, ""},
	})
	// A well-configured row that failed says which phases broke it.
	v := Zero().JudgeMechanism(Verdict{Status: Fail, Reason: "9 of 1242 requests failed (0.725%), expected none"}, map[timeline.Phase]int{timeline.PhasePropagation: 9})
	if v.Status != Fail || !strings.HasSuffix(v.Reason, "; by phase: propagation 9") {
		t.Errorf("failing zero row: %+v", v)
	}
	// Harness faults stay what they are.
	if v := o.JudgeMechanism(Verdict{Status: HarnessFault, Reason: "stalled"}, map[timeline.Phase]int{timeline.PhaseSteady: 3}); v.Reason != "stalled" {
		t.Errorf("harness fault changed: %+v", v)
	}
	if err := Zero().ByPhase(timeline.PhasePropagation).Validate(); err == nil {
		t.Error("phases on a zero-failures row validated")
	}
	if err := o.ByPhase("nope").Validate(); err == nil || !strings.Contains(err.Error(), `expect phase "nope"`) {
		t.Errorf("unknown phase: %v", err)
	}
	if s := o.String(); s != "failures (eof|reset) by propagation" {
		t.Errorf("String %q", s)
	}
}

// A negative control that accepts several phases is for the first: besides the share of all of
// them, at least MinMechanismShare of the failures must be in that one, or mostly the phases it
// accepts besides showed. One failure in the mechanism among 400 no longer passes (it did when
// the rule asked only for some).
func TestJudgeMechanismFor(t *testing.T) {
	o := Failures().ByPhase(timeline.PhaseInFlightCut, timeline.PhasePropagation)
	if m := o.Mechanism(); m != timeline.PhaseInFlightCut {
		t.Errorf("Mechanism %q, want in-flight-cut", m)
	}
	pass := Verdict{Status: Pass, Reason: "400 of 2500 requests failed"}
	judgeMechanismCases(t, o, pass, []mechanismCase{
		{"the row's mechanism and the other", map[timeline.Phase]int{timeline.PhaseInFlightCut: 300, timeline.PhasePropagation: 95, timeline.PhaseUnknown: 5}, Pass,
			"; 395 of 400 failures are in-flight-cut|propagation; 300 of 400 failures (75%) are in-flight-cut, the mechanism this row is for (at least 25%)"},
		{"the row's mechanism at the floor", map[timeline.Phase]int{timeline.PhaseInFlightCut: 100, timeline.PhasePropagation: 300}, Pass,
			"100 of 400 failures (25%) are in-flight-cut, the mechanism this row is for (at least 25%)"},
		{"the row's mechanism, once", map[timeline.Phase]int{timeline.PhaseInFlightCut: 1, timeline.PhasePropagation: 399}, Fail,
			"400 of 2500 requests failed; only 1 of 400 failures (0.2%) are in-flight-cut, the mechanism this row is for (at least 25%); it accepts propagation besides, not instead (by phase: in-flight-cut 1, propagation 399)"},
		{"the row's mechanism, just under the floor", map[timeline.Phase]int{timeline.PhaseInFlightCut: 99, timeline.PhasePropagation: 301}, Fail,
			"only 99 of 400 failures (24.8%) are in-flight-cut"},
		{"fails by share", map[timeline.Phase]int{timeline.PhaseInFlightCut: 200, timeline.PhasePropagation: 100, timeline.PhaseSteady: 100}, Fail,
			"right count, wrong mechanism: only 300 of 400 failures are in-flight-cut|propagation, expected at least 80% (by phase: in-flight-cut 200, propagation 100, steady 100)"},
		{"only the other shows", map[timeline.Phase]int{timeline.PhasePropagation: 396, timeline.PhaseUnknown: 4}, Fail,
			"400 of 2500 requests failed; only 0 of 400 failures (0%) are in-flight-cut, the mechanism this row is for (at least 25%); it accepts propagation besides, not instead (by phase: propagation 396, unknown 4)"},
	})
	// One phase: the share alone says it (at least 80 % in it), and the reason stays as it was.
	one := Failures().ByPhase(timeline.PhasePinnedConnection)
	if v := one.JudgeMechanism(pass, map[timeline.Phase]int{timeline.PhasePinnedConnection: 400}); v.Status != Pass || v.Reason != pass.Reason+"; 400 of 400 failures are pinned-connection" {
		t.Errorf("one phase: %+v", v)
	}
	// The rendering names the row's phase first, the ones it accepts besides after it.
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{o, "failures by in-flight-cut (also propagation)"},
		{one, "failures by pinned-connection"},
		{Failures(loadgen.ClassEOF).ByPhase(timeline.PhaseConnectionAge, timeline.PhaseInFlightCut, timeline.PhaseGoAway), "failures (eof) by connection-age (also in-flight-cut|goaway)"},
	} {
		if s := tc.o.String(); s != tc.want {
			t.Errorf("String %q, want %q", s, tc.want)
		}
	}
	if err := Failures().ByPhase(timeline.PhaseInFlightCut, timeline.PhaseInFlightCut).Validate(); err == nil || !strings.Contains(err.Error(), `expect phase "in-flight-cut": listed twice`) {
		t.Errorf("a phase listed twice: %v", err)
	}
}
