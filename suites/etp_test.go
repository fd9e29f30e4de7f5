//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (ETPEntries): a drain of
// the node the host's load enters at, with externalTrafficPolicy Local and Cluster. They need
// worker nodes (label multinode, not in the default make e2e).
var _ = table("a drain of the node the load enters, by externalTrafficPolicy", "etp", matrix.ETPEntries())
