// Package timeline holds the lifecycle moments rollcheck records while it disrupts an app:
// pods created, ready, deleting and gone, their endpoints turning not ready and leaving the
// Service's EndpointSlices, Kubernetes Events about them, their containers starting and
// exiting (with the exit code), the app's own lifecycle lines (sigterm, drained, exiting...)
// and the end of its log stream, and the harness's own disruption marks, with the endpoint
// propagation delay computed per deleted pod. The engine's rows carry a Timeline; the
// observer that records it is internal.
//
// Time is the local time at which the observer received a moment, except for Kubernetes
// Events and the app's lines, which keep their own timestamps; Reported carries the time a
// pod status states (startedAt, finishedAt) next to its time of receipt.
package timeline
