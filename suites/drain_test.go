//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (DrainEntries). Two need
// worker nodes (label multinode, not in the default make e2e); the blocked drain runs on one.
var _ = table("a node drain through the eviction API", "drainnode", matrix.DrainEntries())
