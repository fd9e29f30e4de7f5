//go:build e2e

package suites_test

import "github.com/rollcheck/rollcheck/internal/matrix"

// HTTP/2 over cleartext and over TLS on pinned connections, and gRPC through a ClusterIP or balanced by the
// client over a headless Service.
var _ = table("HTTP/2", "http2", matrix.HTTP2Entries())

var _ = table("gRPC", "grpc", matrix.GRPCEntries())
