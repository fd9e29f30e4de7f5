package rctest

import (
	"fmt"

	"github.com/onsi/gomega/types"

	"github.com/rollcheck/rollcheck/check"
)

// Pass succeeds when a row's verdict is pass; its failure message gives the row, the
// verdict's reason and the load summary.
func Pass() types.GomegaMatcher { return HaveStatus(check.Pass) }

// HaveStatus succeeds when a row's verdict has the given status.
func HaveStatus(s check.Status) types.GomegaMatcher { return &statusMatcher{want: s} }

type statusMatcher struct{ want check.Status }

func rowOf(actual any) (*check.Row, error) {
	switch r := actual.(type) {
	case *check.Row:
		if r == nil {
			return nil, fmt.Errorf("expected a row, got nil")
		}
		return r, nil
	case check.Row:
		return &r, nil
	}
	return nil, fmt.Errorf("expected a check.Row or *check.Row, got %T", actual)
}

func (m *statusMatcher) Match(actual any) (bool, error) {
	r, err := rowOf(actual)
	if err != nil {
		return false, err
	}
	return r.Verdict.Status == m.want, nil
}

func (m *statusMatcher) FailureMessage(actual any) string {
	r, _ := rowOf(actual)
	return fmt.Sprintf("row %s: %s, want %s: %s (expected %s)\n%s",
		r.Config, r.Verdict.Status, m.want, r.Verdict.Reason, r.Config.Expect, r.Summary)
}

func (m *statusMatcher) NegatedFailureMessage(actual any) string {
	r, _ := rowOf(actual)
	return fmt.Sprintf("row %s: %s, want anything but %s: %s", r.Config, r.Verdict.Status, m.want, r.Verdict.Reason)
}

// HaveWorstDisruptionAtLeast succeeds when every disruption of a row succeeded at least
// ratio of its requests.
func HaveWorstDisruptionAtLeast(ratio float64) types.GomegaMatcher { return &worstMatcher{ratio} }

type worstMatcher struct{ ratio float64 }

func (m *worstMatcher) Match(actual any) (bool, error) {
	r, err := rowOf(actual)
	if err != nil {
		return false, err
	}
	if len(r.Disruptions) == 0 {
		return false, fmt.Errorf("row %s recorded no disruption", r.Config.Name)
	}
	return check.WorstDisruption(r.Disruptions).SuccessRatio >= m.ratio, nil
}

func (m *worstMatcher) FailureMessage(actual any) string {
	r, _ := rowOf(actual)
	w := check.WorstDisruption(r.Disruptions)
	return fmt.Sprintf("row %s: %s %d/%d succeeded %.2f%% of %d requests, want at least %.2f%%",
		r.Config.Name, w.Kind, w.N, len(r.Disruptions), 100*w.SuccessRatio, w.Requests, 100*m.ratio)
}

func (m *worstMatcher) NegatedFailureMessage(actual any) string {
	r, _ := rowOf(actual)
	return fmt.Sprintf("row %s: every disruption succeeded at least %.2f%%, want one below", r.Config.Name, 100*m.ratio)
}
