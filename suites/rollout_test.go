//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/suites"

// The rows and the reasoning behind each expected outcome are in rows.go.
var _ = table("rollout restart under constant load", "rollout", suites.RolloutEntries())
