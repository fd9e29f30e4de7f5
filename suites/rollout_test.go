//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go.
var _ = table("rollout restart under constant load", "rollout", matrix.RolloutEntries())
