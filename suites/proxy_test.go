//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// The rows and the reasoning behind each expected outcome are in rows.go (ProxyEntries).
var _ = table("through a real proxy in front of the app (HAProxy, Caddy, nginx, Traefik), which keeps its own list of pods", "proxy", matrix.ProxyEntries())
