//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The only replica deleted: every endpoint terminating at once.
var _ = table("every endpoint terminating at once", "terminating", matrix.TerminatingEntries())
