// Package timeline holds the lifecycle moments rollcheck records while it disrupts an app:
// pods created, ready, deleting and gone, their endpoints turning not ready and leaving the
// Service's EndpointSlices, Kubernetes Events about them, and the harness's own disruption
// marks, with the endpoint propagation delay computed per deleted pod. The engine's rows
// carry a Timeline; the observer that records it is internal.
package timeline
