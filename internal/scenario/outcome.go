package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/loadgen"
)

// Expectation is the kind of outcome a Scenario is expected to produce.
type Expectation string

// Expectations.
const (
	// ExpectZero: not one request may fail.
	ExpectZero Expectation = "zero-failures"
	// ExpectAtMost: the failure ratio may not exceed Outcome.MaxRatio.
	ExpectAtMost Expectation = "at-most"
	// ExpectFailures: a negative control; failures must show, and mostly of Outcome.Classes,
	// or the harness has lost its ability to see the mechanism.
	ExpectFailures Expectation = "failures-expected"
)

// Outcome is what a Scenario is expected to produce.
type Outcome struct {
	Kind Expectation `json:"kind"`
	// MaxRatio is the highest failure ratio ExpectAtMost accepts (0.01 is 1 %).
	MaxRatio float64 `json:"maxRatio,omitempty"`
	// Classes are the failure classes the mechanism produces (ExpectFailures); at least half
	// of the failures must be of these classes. Empty: any failure class will do.
	Classes []loadgen.Class `json:"classes,omitempty"`
}

// Zero expects no failure at all.
func Zero() Outcome { return Outcome{Kind: ExpectZero} }

// AtMost expects a failure ratio of at most r.
func AtMost(r float64) Outcome { return Outcome{Kind: ExpectAtMost, MaxRatio: r} }

// Failures expects failures, mostly of the given classes.
func Failures(classes ...loadgen.Class) Outcome {
	return Outcome{Kind: ExpectFailures, Classes: classes}
}

// Validate checks the Outcome.
func (o Outcome) Validate() error {
	switch o.Kind {
	case ExpectZero:
	case ExpectAtMost:
		if o.MaxRatio <= 0 || o.MaxRatio >= 1 {
			return fmt.Errorf("expect at-most %v: want a ratio between 0 and 1", o.MaxRatio)
		}
	case ExpectFailures:
		for _, c := range o.Classes {
			if !knownFailure(c) {
				return fmt.Errorf("expect failures of class %q: not a failure class (want refused, reset, eof, timeout, http_4xx, http_5NN or other)", c)
			}
		}
	default:
		return fmt.Errorf("expect %q: want zero-failures, at-most or failures-expected", o.Kind)
	}
	return nil
}

// String says the expectation in a few words: "0 failures", "≤ 0.50%", "failures (reset|eof)".
func (o Outcome) String() string {
	switch o.Kind {
	case ExpectZero:
		return "0 failures"
	case ExpectAtMost:
		return fmt.Sprintf("≤ %.2f%%", 100*o.MaxRatio)
	case ExpectFailures:
		if len(o.Classes) == 0 {
			return "failures"
		}
		return "failures (" + classList(o.Classes) + ")"
	}
	return string(o.Kind)
}

// Status is the verdict of one run.
type Status string

// Statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// HarnessFault: the load run itself was invalid (missed rate, stalled generator), so it
	// says nothing about the app.
	HarnessFault Status = "harness-fault"
)

// Verdict is a Status and the reason for it.
type Verdict struct {
	Status Status `json:"status"`
	Reason string `json:"reason"`
}

// Judge compares a load result with the expected Outcome. An invalid load run is a harness
// fault whatever its failures.
func (o Outcome) Judge(s loadgen.Summary) Verdict {
	if !s.Valid {
		return Verdict{HarnessFault, "invalid load run: " + s.InvalidReason}
	}
	if s.Requests == 0 {
		return Verdict{HarnessFault, "no request was sent"}
	}
	ratio := fmt.Sprintf("%d of %d requests failed (%.3f%%)", s.Failed, s.Requests, 100*s.FailureRatio)
	switch o.Kind {
	case ExpectZero:
		if s.Failed == 0 {
			return Verdict{Pass, ratio}
		}
		return Verdict{Fail, ratio + ", expected none"}
	case ExpectAtMost:
		if s.FailureRatio <= o.MaxRatio {
			return Verdict{Pass, ratio}
		}
		return Verdict{Fail, fmt.Sprintf("%s, expected at most %.2f%%", ratio, 100*o.MaxRatio)}
	case ExpectFailures:
		if s.Failed == 0 {
			return Verdict{Fail, "no request failed: the negative control did not see the disruption"}
		}
		if len(o.Classes) == 0 {
			return Verdict{Pass, ratio}
		}
		in := 0
		for c, n := range s.Failures {
			if slices.Contains(o.Classes, c) {
				in += n
			}
		}
		share := fmt.Sprintf("%d of %d failures are %s", in, s.Failed, classList(o.Classes))
		if 2*in >= s.Failed {
			return Verdict{Pass, ratio + "; " + share}
		}
		return Verdict{Fail, ratio + "; only " + share + ": not the expected mechanism"}
	}
	return Verdict{Fail, "unknown expectation " + string(o.Kind)}
}

func classList(cs []loadgen.Class) string {
	ss := make([]string, len(cs))
	for i, c := range cs {
		ss[i] = string(c)
	}
	return strings.Join(ss, "|")
}

// knownFailure reports whether c is a failure class loadgen can produce.
func knownFailure(c loadgen.Class) bool {
	switch c {
	case loadgen.ClassRefused, loadgen.ClassReset, loadgen.ClassEOF, loadgen.ClassTimeout, loadgen.ClassHTTP4xx, loadgen.ClassOther:
		return true
	}
	var code int
	if _, err := fmt.Sscanf(string(c), "http_%d", &code); err == nil {
		return loadgen.HTTP5xxClass(code) == c
	}
	return false
}
