//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (SidecarEntries).
var _ = table("a proxy sidecar in front of the app: classic and native, with and without its own preStop", "sidecar", matrix.SidecarEntries())
