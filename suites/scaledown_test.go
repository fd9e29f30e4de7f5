//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go.
var _ = table("scale down and up under constant load", "scaledown", matrix.ScaleDownEntries())
