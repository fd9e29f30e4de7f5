//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The row and the reasoning behind it are in rows.go (KubeletRestartEntries). Label slow: make
// e2e-slow runs it, the default make e2e does not.
var _ = table("a kubelet restart during termination", "kubeletrestart", matrix.KubeletRestartEntries())
