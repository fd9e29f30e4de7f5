//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (StopSignalEntries).
var _ = table("stop signals: an app that drains on SIGQUIT, with and without its image's STOPSIGNAL", "stopsignal", matrix.StopSignalEntries())
