// Package attack sends the load that package [github.com/rollcheck/rollcheck/loadgen] models:
// constant-rate HTTP (HTTP/1.1 or HTTP/2) or gRPC load at one target, every request kept in a
// ledger ([loadgen.Request]) and judged into a [loadgen.Result].
//
// It is the only package of rollcheck that imports vegeta (github.com/tsenart/vegeta/v12) and
// grpc-go's client. Its callers see loadgen's typed values only: a [loadgen.Config] in, a running
// [Attack] (or a [Remote] one), and a [loadgen.Result] out. A program that only reads results
// imports loadgen, not this package.
//
// # Measuring
//
// [Start] validates a [loadgen.Config] and runs a vegeta attack with a constant pacer against a
// static target. The pacer is vegeta's ConstantPacer but for one thing: after a stall longer than
// [loadgen.StallGap] it drops the requests it missed instead of sending them all at once, so that
// a frozen or starved generator leaves a stall in the ledger (an invalid run) and no burst the
// row never asked for, whose failures would be counted against the app. Every vegeta result is turned into a [loadgen.Request] (sequence number,
// timestamp, latency, status code, failure [loadgen.Class], error text and the pod named by the
// [loadgen.Config.PodHeader] response header) and kept. When the attack ends, the ledger is
// judged by [loadgen.NewResult]. With [loadgen.Config.Resolve], the attack also asks the DNS
// server of its resolv.conf for that name while it runs ([loadgen.ResolveEvery]) and keeps each
// change of the answer in [loadgen.Result.DNS].
//
// [Serve] runs an attack where the load is sent (a load pod) and writes its ledger as a stream
// of JSON lines, and [Follow] reads such a stream where the load is judged ([Remote]): the
// Result rebuilt from the stream is the one the attack would have returned itself.
// [WaitServing] waits, before a load, until the target answers from every replica, and
// [WriteVegeta] writes a ledger in vegeta's own encoding for "vegeta report" and "vegeta plot".
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
// HTTP/2 ([loadgen.ProtocolH2C], [loadgen.ProtocolHTTP2]) is the standard library's own
// (http.Transport.Protocols), not vegeta's HTTP2 and H2C options, so that vegeta's other
// options still configure the one *http.Transport of the attack.
//
// # gRPC
//
// [loadgen.ProtocolGRPC] sends unary RPCs through one grpc-go client connection, open loop at a
// constant rate: the same pacer says when, and the RPCs run on workers as vegeta's
// requests do. Each RPC is a [loadgen.Request] of the same ledger; its class is
// [loadgen.GRPCClass] of its status code.
package attack
