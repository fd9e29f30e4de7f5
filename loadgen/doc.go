// Package loadgen drives constant-rate HTTP load (HTTP/1.1 or HTTP/2) or gRPC load at one
// target and keeps a ledger of every request, so that the traffic disruption caused by a
// Kubernetes rollout can be measured, classified and reported.
//
// It is the only package of rollcheck that imports vegeta
// (github.com/tsenart/vegeta/v12). Callers see typed values only: a
// [Config] in, a running [Attack], and a [Result] out.
//
// # Measuring
//
// [Start] validates a [Config] and runs a vegeta attack with a constant pacer
// against a static target. Every vegeta result is turned into a [Request]
// (sequence number, timestamp, latency, status code, failure [Class], error
// text and the pod named by the [Config.PodHeader] response header) and kept.
// When the attack ends, the ledger is aggregated into totals, failures by
// class, latency quantiles, 100 ms [Bucket]s, disruption seconds (1 s windows
// with any failure) and failure [Burst]s.
//
// # Classes
//
// Vegeta flattens transport errors into strings (vegeta.Result.Error is
// err.Error()), so a live attack classifies failures by the status code and by
// the error text. classify also accepts a real error and then walks its
// chain with errors.Is and errors.As for syscall errnos, timeouts and EOFs.
// Wrapping the transport to keep the error chain was considered and rejected:
// http.Client only takes its cheap timeout path for its own *http.Transport; for
// any other RoundTripper it starts a timer goroutine per request.
//
// # HTTP/2
//
// [Config.Protocol] chooses what the load speaks: [ProtocolHTTP1] (the default), [ProtocolH2C]
// (HTTP/2 over cleartext, prior knowledge) or [ProtocolHTTP2] (over TLS, the certificate not
// verified). HTTP/2 is the standard library's own (http.Transport.Protocols); with keep-alive
// every request of the attack is a stream of a few shared connections, without it each
// connection carries one stream. How an HTTP/2 request ended has classes of its own:
// [ClassGoAway] (the server sent GOAWAY and closed with the stream unfinished, or refused it)
// and [ClassStreamReset] (RST_STREAM); a connection reset or closed under the stream is
// [ClassReset] or [ClassEOF], as over HTTP/1.1. Go's HTTP/2 transport sends a stream the server
// refused (above its GOAWAY's last stream ID, or REFUSED_STREAM) again on a new connection,
// for any method: [Result.TransparentRetry] is always true over HTTP/2.
//
// # gRPC
//
// [ProtocolGRPC] sends unary RPCs ([Config.GRPCMethod], by default [DefaultGRPCMethod], the
// standard health check) through one grpc-go client connection, open loop at a constant rate:
// vegeta's ConstantPacer says when, and the RPCs run on workers as vegeta's requests do. Each
// RPC is a [Request] of the same ledger, judged by the same validity rules: its start
// (Timestamp), its end (Timestamp + Latency), [Request.Status] (the status code's name),
// Error (the status's message), [Request.Peer] (the address it went to) and the pod that
// named itself in the response metadata ([Config.PodHeader] in lower case, header or trailer).
// A status other than OK is its [GRPCClass] ("grpc_unavailable", "grpc_deadline_exceeded" for
// the client's Timeout); a health check answered NOT_SERVING is [ClassGRPCNotServing].
// [Config.Balancing] chooses pick_first (one connection: through a ClusterIP, one pod) or
// round_robin (with "dns:///" over a headless Service, the client spreads RPCs over the pods it
// resolved); [Config.WaitForReady] and [Config.Retry] are set in the client's service config.
// grpc-go resends an RPC that never reached the server's application (it arrived on a stream
// the server refused after GOAWAY) whatever the retry policy: [Result.TransparentRetry] is
// true. A retry policy only applies to a trailers-only answer: a server that sets header
// metadata before it fails sends headers first, and its failures are never retried.
//
// # Validity
//
// A run is only evidence when it delivered the load it was asked for. A
// [Result] is marked invalid ([Result.Valid] false, with
// [Result.InvalidReason]) when its achieved rate misses the asked rate by more
// than [RateTolerance] (or [RateSlack]'s worth of requests, for short runs), when sending stalled for longer than [StallGap], or
// when it ended well before its Duration although nobody stopped it.
//
// # Keep-alive and transparent retries
//
// With keep-alive on, Go's http.Transport silently retries a request whose
// reused connection the server closed or reset before answering, when the
// request is replayable: methods GET, HEAD, OPTIONS and TRACE, or a request
// carrying an Idempotency-Key or X-Idempotency-Key header. Such a retry is
// invisible here: the request succeeds on a fresh connection and only its
// latency grows. A body-less request that failed before any byte was written
// is retried even when it is a POST. [Result.TransparentRetry] records whether
// a run measured in that mode; to see every dropped connection, run with
// keep-alive off or with a non-replayable method such as POST.
//
// # Network
//
// By default only loopback targets (127.0.0.0/8, ::1, localhost) are accepted,
// matching rollcheck's rule that load goes to a kind NodePort mapped on
// 127.0.0.1; set [Config.AllowRemote] to lift it. Redirects are not followed
// (a 3xx answer counts as a success), so load never leaves the target.
package loadgen
