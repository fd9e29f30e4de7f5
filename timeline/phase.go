package timeline

import "slices"

// Phase names the part of one pod's termination (or start) that a failed request is
// attributed to. internal/attribute holds the rules; docs/reference.md's "Why a request failed" says
// each rule, the evidence it uses and its time tolerance.
type Phase string

// Phases, in the order the rules are tried (internal/attribute's Rules, which Phases follows).
const (
	// PhaseProxyNoUpstream: the proxy answered itself and named no upstream: it had no pod left
	// to send to (every address it knew was gone or marked down).
	PhaseProxyNoUpstream Phase = "proxy-no-upstream"
	// PhaseSIGKILL: the request was in flight when the kubelet killed the container at the
	// end of its grace period (exit code 137, or the app's log ended after "sigterm" without
	// "exiting").
	PhaseSIGKILL Phase = "sigkill"
	// PhaseGoAway: an HTTP/2 or gRPC request the server refused with GOAWAY (the connection's
	// last stream id was below it, or the connection closed after GOAWAY with the stream
	// unfinished) and the client did not send again. A server that stops well sends GOAWAY and
	// lets the streams it took finish (http.Server.Shutdown, gRPC's GracefulStop); a client
	// resends a refused request only when it may (Go: GetBody set; gRPC: a retry policy). A
	// health check that a terminating pod answered NOT_SERVING is here too: its server said it
	// was going away before the client had seen its GOAWAY.
	PhaseGoAway Phase = "goaway"
	// PhaseConnectionAge: the server closed the connection under the request after its own
	// GOAWAY for the connection's age, not for a termination: gRPC's MaxConnectionAge sends
	// GOAWAY and MaxConnectionAgeGrace later closes the connection with the RPCs still on it.
	// Known by the GOAWAY's debug data "max_age" in the client's error (grpc-go's server sends
	// it); a server that names no reason leaves such failures to the other rules.
	PhaseConnectionAge Phase = "connection-age"
	// PhaseInFlightCut: the request was in flight when the process exited on its own.
	PhaseInFlightCut Phase = "in-flight-cut"
	// PhaseSidecarExit: a sidecar in front of the app (a proxy the load passes through) stopped
	// accepting before the app did: the request was in flight through it when it exited, or
	// was sent to it after it stopped while the data plane still routed to the pod.
	PhaseSidecarExit Phase = "sidecar-exit"
	// PhaseProxyPropagation: the load went through a proxy in front of the app that keeps its
	// own list of pods (an ingress, DNS-discovered upstreams): the proxy still sent the request
	// to a pod that no longer accepted connections (it named that pod's address), or, naming
	// none, sent it while such a pod was still in the proxy's list.
	PhaseProxyPropagation Phase = "proxy-propagation"
	// PhaseStaleAddress: a client that balances over the pods itself (gRPC round_robin over a
	// headless Service's DNS answer) sent to a pod's address it still held after that pod had
	// stopped accepting, or, holding no ready address at all, failed while the Service had
	// ready pods it did not know yet: it keeps the addresses it resolved until it resolves
	// again (grpc-go: at least 30 s apart), whatever the EndpointSlices say.
	PhaseStaleAddress Phase = "stale-address"
	// PhaseNoEndpoint: the Service had no endpoint left that could take the request (none ready,
	// none serving while terminating, or those left had closed their listener), so nothing could
	// answer it: a drain had evicted every replica, or the only replica stopped serving before
	// its replacement was ready. A preStop with readiness still passing keeps a terminating pod
	// serving (kube-proxy falls back to it when no endpoint is ready); for a drain, a
	// PodDisruptionBudget and replicas spread over nodes.
	PhaseNoEndpoint Phase = "no-endpoint"
	// PhaseNoLocalEndpoint: the Service sends external traffic only to endpoints on the node
	// it entered (externalTrafficPolicy Local), and that node had none that could take the
	// request (none ready, none serving while terminating, or those left had closed their
	// listener), though pods on other nodes may have been ready: kube-proxy drops such traffic
	// (the client times out). A load balancer in front must stop sending to the node by its
	// health check of the Service's healthCheckNodePort; or use externalTrafficPolicy Cluster.
	PhaseNoLocalEndpoint Phase = "no-local-endpoint"
	// PhasePinnedConnection: a kept-alive connection to a terminating pod closed under the
	// request, sent after the Service had stopped routing new connections to that pod.
	PhasePinnedConnection Phase = "pinned-connection"
	// PhasePropagation: the pod no longer accepted new connections while the data plane still
	// routed new connections to it.
	PhasePropagation Phase = "propagation"
	// PhaseStartup: a new pod got traffic before it could serve.
	PhaseStartup Phase = "startup"
	// PhaseSteady: no pod was terminating or starting: the app or the harness is broken.
	PhaseSteady Phase = "steady"
	// PhaseUnknown: a pod was terminating or starting, but no rule matched.
	PhaseUnknown Phase = "unknown"
)

// Phases lists every Phase in the order the rules are tried: the phases of internal/attribute's
// Rules, which state that order (a test there checks that this list follows them).
var Phases = []Phase{PhaseProxyNoUpstream, PhaseSIGKILL, PhaseGoAway, PhaseConnectionAge, PhaseInFlightCut, PhaseSidecarExit, PhaseProxyPropagation, PhaseStaleAddress, PhaseNoLocalEndpoint, PhaseNoEndpoint, PhasePinnedConnection, PhasePropagation, PhaseStartup, PhaseSteady, PhaseUnknown}

// Known reports whether p is one of Phases.
func (p Phase) Known() bool { return slices.Contains(Phases, p) }
