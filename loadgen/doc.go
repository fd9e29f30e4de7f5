// Package loadgen is the model of a constant-rate load run at one target, HTTP (HTTP/1.1 or
// HTTP/2) or gRPC, with a ledger of every request, so that the traffic disruption caused by a
// Kubernetes rollout can be measured, classified and reported: a [Config] in, a [Result] out,
// and the failure [Class] of each [Request] in between.
//
// The attack that sends the load and keeps the ledger lives in the package
// [github.com/rollcheck/rollcheck/loadgen/attack]: attack.Start on the host, attack.Serve and
// attack.Follow for a load run elsewhere (a load pod) and read back, attack.WaitServing, and
// attack.WriteVegeta for vegeta's own encoding of a ledger. It is the only package of rollcheck
// that imports vegeta (github.com/tsenart/vegeta/v12) and grpc-go's client; loadgen imports
// neither vegeta nor any of grpc-go, so that a package that only reads results (check, and
// every Go user of rollcheck through it) does not pull them in.
//
// # Results
//
// [NewResult] judges the ledger of one attack over its [Run]: totals, failures by class,
// latency quantiles, the timeline in 100 ms buckets ([Bucket]), disruption seconds (1 s
// windows with any failure), failure bursts ([Burst]) and stalls ([Stall]), and whether the run
// is valid. [Merge] does the same for
// several attacks run at once against one target, each at its share of the rate (a row's load
// pods). A Result is written and read as JSON ([Result.WriteJSON], [ReadJSON]); [Summary] is
// its compact view.
//
// # Classes
//
// Each [Request] has a [Class]: [ClassOK] for an answer with a status in 200-399, otherwise how
// it failed: a refused connection ([ClassRefused]), a reset ([ClassReset]), a connection closed
// before a complete answer ([ClassEOF]), the client's timeout ([ClassTimeout]), a 4xx
// ([ClassHTTP4xx]), a 5xx by its code ([HTTP5xxClass], or [ProxyClass] when the proxy in front
// answered itself), HTTP/2's GOAWAY and RST_STREAM, a gRPC status ([GRPCClass], keyed by the
// status code's number), or [ClassOther]. The attack classifies each request as it completes;
// how it reads transport errors is told in its package documentation.
//
// # HTTP/2
//
// [Config.Protocol] chooses what the load speaks: [ProtocolHTTP1] (the default), [ProtocolH2C]
// (HTTP/2 over cleartext, prior knowledge) or [ProtocolHTTP2] (over TLS, the certificate not
// verified). With keep-alive every request of the attack is a stream of a few shared
// connections, without it each connection carries one stream. How an HTTP/2 request ended has
// classes of its own: [ClassGoAway] (the server sent GOAWAY and closed with the stream
// unfinished, or refused it) and [ClassStreamReset] (RST_STREAM); a connection reset or closed
// under the stream is [ClassReset] or [ClassEOF], as over HTTP/1.1. Go's HTTP/2 transport sends a
// stream the server refused (above its GOAWAY's last stream ID, or REFUSED_STREAM) again on a
// new connection, for any method: [Result.TransparentRetry] is always true over HTTP/2.
//
// # gRPC
//
// [ProtocolGRPC] sends unary RPCs ([Config.GRPCMethod], by default [DefaultGRPCMethod], the
// standard health check) through one client connection, open loop at a constant rate. Each
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
