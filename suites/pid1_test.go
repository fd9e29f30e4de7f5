//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (PID1Entries).
var _ = table("who is PID 1: exec form, a shell wrapper, tini", "pid1", matrix.PID1Entries())
