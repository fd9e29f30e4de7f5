package audit

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// MinAppDelay is the least delay after the preStop that counts as the app's own: below it, an
// exit that late is the kubelet's and the process's noise.
const MinAppDelay = 100 * time.Millisecond

// MeasuredAppDelay is how long a recorded row's app kept running after its preStop on its own:
// over the row's deleted pods (Times.Terminations), the least of exit − its uncertainty − the
// row's longest request − the preStop's length. An app that drains closes its listener at
// SIGTERM and lives on only for the requests in flight (the longest request, taken off); one
// that keeps serving (a shutdown delay) lives on for the delay. False when the row has no
// terminations, a pod was killed (whether it still accepted is not known), the preStop has no
// known length, or the least is below MinAppDelay.
func MeasuredAppDelay(r check.Row) (time.Duration, bool) {
	if r.Times == nil || len(r.Times.Terminations) == 0 || r.Explanation == nil {
		return 0, false
	}
	pre, ok := r.Config.PreStop.Duration()
	if !ok {
		return 0, false
	}
	least := time.Duration(-1)
	for _, t := range r.Times.Terminations {
		if t.How != check.EndedOwn || t.Exit <= 0 {
			return 0, false
		}
		own := t.Exit - t.ExitUncertainty - r.Explanation.RequestMax - pre
		if least < 0 || own < least {
			least = own
		}
	}
	if least < MinAppDelay {
		return 0, false
	}
	return least.Round(time.Millisecond), true
}

// AppDelays are the apps' measured delays after SIGTERM in rows (MeasuredAppDelay), by key (the
// row's configuration name for an agreement, its Deployment for an audit): the least of a key's
// rows; a key with a row whose pods measured no delay has none.
func AppDelays(rows []check.Row, key func(check.Applied) string, source string) map[string]AppDelay {
	least := map[string]time.Duration{}
	none := map[string]bool{}
	for _, r := range rows {
		if r.Times == nil || len(r.Times.Terminations) == 0 {
			continue
		}
		k := key(r.Config)
		d, ok := MeasuredAppDelay(r)
		if !ok {
			none[k] = true
			continue
		}
		if l, seen := least[k]; !seen || d < l {
			least[k] = d
		}
	}
	out := map[string]AppDelay{}
	for k, d := range least {
		if !none[k] {
			out[k] = AppDelay{Delay: Duration(d), From: fmt.Sprintf("measured in %s: its pods ran on at least %s after their preStop, less the longest request", source, d)}
		}
	}
	return out
}

// AgreementBetween audits rows against the windows of another run's rows (windowsRows), with
// the apps' delays after SIGTERM measured there: out of sample. An error when the windows' run
// has no row to extract windows from.
func AgreementBetween(windowsRows, rows []check.Row, source string) ([]AgreementRow, *WindowsFile, error) {
	f, err := Extract(windowsRows, source)
	if err != nil {
		return nil, nil, err
	}
	return AgreementWith(rows, f, AppDelays(windowsRows, configName, source)), f, nil
}

func configName(a check.Applied) string { return a.Name }

// CrossAgreement is the agreement of one run out of sample: its rows, in order of start, dealt
// into folds (row i to fold i mod folds), each fold's rows audited against the windows (and app
// delays) extracted from the other folds' rows; folds is at least 2, at most the rows.
func CrossAgreement(rows []check.Row, folds int, source string) ([]AgreementRow, error) {
	if folds < 2 || folds > len(rows) {
		return nil, fmt.Errorf("cross agreement: %d folds of %d rows: want 2 to %d", folds, len(rows), len(rows))
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b check.Row) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.Config.Name, b.Config.Name))
	})
	var out []AgreementRow
	var errs []error
	for k := range folds {
		var in, rest []check.Row
		for i, r := range sorted {
			if i%folds == k {
				in = append(in, r)
			} else {
				rest = append(rest, r)
			}
		}
		t, _, err := AgreementBetween(rest, in, fmt.Sprintf("%s, fold %d of %d left out", source, k+1, folds))
		if err != nil {
			errs = append(errs, fmt.Errorf("fold %d: %w", k+1, err))
			continue
		}
		out = append(out, t...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("cross agreement: %w", errors.Join(errs...))
	}
	slices.SortStableFunc(out, func(a, b AgreementRow) int { return cmp.Compare(a.Row, b.Row) })
	return out, nil
}

// InSample tells whether the windows f were measured while rows ran (their spans overlap): the
// agreement of rows against f would be in sample.
func InSample(f *WindowsFile, rows []check.Row) bool {
	for _, r := range rows {
		end := r.Started.Add(r.Duration)
		if !r.Started.After(f.Measured.To) && !end.Before(f.Measured.From) {
			return true
		}
	}
	return false
}
