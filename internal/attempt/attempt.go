// Package attempt is the front ends' one policy for a row the harness could not judge
// (check.HarnessFault: a stalled or short load, say, which says nothing about the app):
// rollcheck check, rctest and tune run such a row once more, keep both attempts (the first
// under rowfile.AttemptName, its raw files renamed to match) and mark the second with
// check.Row.Attempts and Retried, so that every report shows that the row needed a retry.
package attempt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// Max is how many times a row runs at most: once, and once more after a harness fault.
const Max = 2

// Again reports whether a row whose attempt n (1-based) ended with row runs once more: a
// harness fault, before Max attempts, while ctx lives, and only one whose failures were shown
// to be the harness's (Settle): an attempt in which the app failed requests is not run again.
func Again(ctx context.Context, row *check.Row, n int) bool {
	return ctx.Err() == nil && row != nil && Settle(row).Status == check.HarnessFault && n < Max
}

// Settle is the verdict of an attempt: a harness fault stays one only when the requests sent
// do not already break the row's rule (check.Outcome.Fault); else the app's failures fail it,
// so that no second attempt can make a pass of them.
func Settle(row *check.Row) check.Verdict {
	if row.Verdict.Status != check.HarnessFault {
		return row.Verdict
	}
	return row.Config.Expect.Fault(row.Summary, row.Verdict.Reason)
}

// Mark records on second that it is a row run again after an attempt that ended for reason
// (its verdict reason, or its error).
func Mark(second *check.Row, reason string) {
	if second == nil {
		return
	}
	second.Attempts = max(second.Attempts, 1) + 1
	second.Retried = reason
}

// Keep keeps first, attempt 1 of a row about to run again, in the artifacts directory dir: its
// raw files (check.Row.Artifacts, which the next attempt would overwrite) renamed to the
// attempt's name, and the row written under rowfile.AttemptName(check.Row, 1). It returns the row
// file's path relative to dir.
func Keep(dir string, first check.Row) (string, error) {
	if dir == "" {
		return "", nil
	}
	base := strings.TrimSuffix(rowfile.Name(first), ".json")
	kept := strings.TrimSuffix(rowfile.AttemptName(first, 1), ".json")
	first.Artifacts = maps.Clone(first.Artifacts)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(first.Artifacts)) {
		rel := first.Artifacts[k]
		name := filepath.Base(rel)
		if !strings.HasPrefix(name, base) {
			continue
		}
		to := filepath.Join(filepath.Dir(rel), kept+strings.TrimPrefix(name, base))
		if err := os.Rename(filepath.Join(dir, rel), filepath.Join(dir, to)); err != nil {
			errs = append(errs, err)
			continue
		}
		first.Artifacts[k] = to
	}
	path, err := rowfile.WriteAttempt(dir, first, 1)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return "", fmt.Errorf("keep the first attempt of %s: %w", first.Config.Name, err)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return path, nil
	}
	return rel, nil
}

// Run runs a row with run and, when Again says so, once more: before the second attempt the
// first is kept in the artifacts directory dir (Keep; dir empty: not kept) and retrying is
// told of it (nil: not told); the second is marked with the first's reason (Mark). It returns the last attempt. A failure
// to keep the first attempt is returned with the second's row, which is still the result.
func Run(ctx context.Context, dir string, run func(context.Context) (*check.Row, error), retrying func(first *check.Row)) (*check.Row, error) {
	row, err := run(ctx)
	if err == nil && row != nil {
		row.Verdict = Settle(row)
	}
	if err != nil || !Again(ctx, row, 1) {
		return row, err
	}
	if retrying != nil {
		retrying(row)
	}
	_, kerr := Keep(dir, *row)
	second, err := run(ctx)
	if err == nil && second != nil {
		second.Verdict = Settle(second)
	}
	Mark(second, row.Verdict.Reason)
	return second, errors.Join(err, kerr)
}
