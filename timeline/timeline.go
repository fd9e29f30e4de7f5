package timeline

import (
	"fmt"
	"time"
)

// Kind names a lifecycle moment seen by the Observer.
type Kind string

// Lifecycle moments.
const (
	PodCreated      Kind = "pod-created"      // a Pod object appeared
	PodScheduled    Kind = "pod-scheduled"    // the Pod got a node
	PodAddress      Kind = "pod-address"      // the Pod has an IP (Detail): a proxy's named upstream maps to it
	PodReady        Kind = "pod-ready"        // Ready condition became True
	PodUnready      Kind = "pod-unready"      // Ready condition became False (before deletion, or on SIGTERM)
	PodDeleting     Kind = "pod-deleting"     // deletionTimestamp set: the kubelet starts preStop, then SIGTERM
	PodGone         Kind = "pod-gone"         // the Pod object was removed
	EndpointReady   Kind = "endpoint-ready"   // the Pod's address is ready in an EndpointSlice
	EndpointUnready Kind = "endpoint-unready" // the address is in a slice but not ready (terminating or unready)
	EndpointRemoved Kind = "endpoint-removed" // the address left every EndpointSlice of the Service
	K8sEvent        Kind = "event"            // a Kubernetes Event about a Pod (Killing, FailedPreStopHook, ...)
	Disruption      Kind = "disruption"       // the harness started a disruption (recorded with Mark)
	DisruptionDone  Kind = "disruption-done"  // the harness saw the disruption settle (recorded with Mark)
)

// Moments of a pod's containers, from the pod status, and of the app inside, from its log
// stream (AppEvent and AppLogEnded are recorded only when the observer follows the app's logs).
const (
	// ContainerStarted: the pod status shows a container running (a new start: first or
	// after a restart). Reported is its running.startedAt.
	ContainerStarted Kind = "container-started"
	// ContainerExited: the pod status shows a container newly terminated (state.terminated,
	// or lastTerminationState after a restart). ExitCode is set; Reported is its finishedAt.
	ContainerExited Kind = "container-exited"
	// AppEvent: a lifecycle line the app wrote on stdout (sigterm, listener_closed, drained,
	// exiting, prestop, started, ready...), stamped with the line's own "ts".
	AppEvent Kind = "app"
	// AppLogEnded: the app's log stream ended (the container exited or the pod is gone);
	// Detail says whether an "exiting" line was seen before the end.
	AppLogEnded Kind = "app-log-ended"
)

// Event is one lifecycle moment.
type Event struct {
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	// Pod is the pod concerned, if any.
	Pod string `json:"pod,omitempty"`
	// Container is the container concerned (ContainerStarted, ContainerExited, AppEvent,
	// AppLogEnded).
	Container string `json:"container,omitempty"`
	// ExitCode is the container's exit code (ContainerExited).
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Reported is the time the source itself states for the moment, when it has one and Time
	// is the time of receipt: a container's startedAt or finishedAt (one-second resolution).
	Reported time.Time `json:"reported,omitzero"`
	// GraceSeconds is the pod's deletion grace period in seconds (PodDeleting); nil: not known.
	GraceSeconds *int64 `json:"graceSeconds,omitempty"`
	// Node is the node the pod was scheduled to (PodScheduled).
	Node string `json:"node,omitempty"`
	// Address is the pod's IP (PodAddress).
	Address string `json:"address,omitempty"`
	// PodPhase is the pod's phase as last seen (PodGone); empty: not known.
	PodPhase string `json:"podPhase,omitempty"`
	// Endpoint is the conditions of the pod's endpoint (EndpointReady, EndpointUnready).
	Endpoint *EndpointConditions `json:"endpoint,omitempty"`
	// App is the app's lifecycle line (AppEvent).
	App *AppLine `json:"app,omitempty"`
	// Detail is the moment in words, for people: the Event reason and message, the
	// disruption, the endpoint conditions, the exit code and reason, the app's event name and
	// fields... What the analysis reads is in the typed fields above; rows recorded before
	// they existed have only Detail, which Upgraded reads them from.
	Detail string `json:"detail,omitempty"`
}

// EndpointConditions are an endpoint's conditions in the Service's EndpointSlices (merged over
// the slices that list the pod: true if any entry says so).
type EndpointConditions struct {
	Ready       bool `json:"ready"`
	Serving     bool `json:"serving"`
	Terminating bool `json:"terminating"`
}

// AppLine is one lifecycle line of the app: a JSON object with "ts" and "event" (one of the
// Line* names for the lines rollcheck reads), and its other fields.
type AppLine struct {
	Event string `json:"event"`
	// Fields are the line's other fields: a string as it is, any other value as compact JSON.
	Fields map[string]string `json:"fields,omitempty"`
}

// Is reports whether a is the line named event (false for nil).
func (a *AppLine) Is(event string) bool { return a != nil && a.Event == event }

// Propagation is, for one deleted pod, how long the Service kept routing to it after the
// deletion began: from PodDeleting to EndpointUnready (no longer ready: new connections stop
// being sent there once kube-proxy syncs) and to EndpointRemoved. Each is the first such moment
// after the deletion was seen; it is 0 when the endpoint was already not ready (or already
// removed) at that moment, which also covers the slice update arriving a hair before the pod
// update on its independent watch.
type Propagation struct {
	Pod        string        `json:"pod"`
	DeletingAt time.Time     `json:"deletingAt"`
	ToUnready  time.Duration `json:"toUnready"` // -1 when not seen
	ToRemoved  time.Duration `json:"toRemoved"` // -1 when not seen
}

// Timeline is what an Observer saw, in time order.
type Timeline struct {
	Namespace   string        `json:"namespace"`
	Started     time.Time     `json:"started"`
	Ended       time.Time     `json:"ended"`
	Events      []Event       `json:"events"`
	Propagation []Propagation `json:"propagation"`
	// Gaps are the times the observer could not watch the cluster (an API server restarted or
	// unreachable): what changed meanwhile was seen only after, with later times than it had.
	Gaps []Gap `json:"gaps,omitempty"`
}

// Gap is a time the observer could not watch one kind of object: from the end of a watch
// that failed until the next one ran.
type Gap struct {
	What  string    `json:"what"` // pods, endpointslices, events
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Error string    `json:"error,omitempty"` // the first error of the gap
}

// String says the gap in one line.
func (g Gap) String() string {
	return fmt.Sprintf("%s unwatched %s from %s (%s)", g.What, g.To.Sub(g.From).Round(10*time.Millisecond), g.From.Format("15:04:05.000"), g.Error)
}

// GapsWithin returns the gaps that overlap [from, to].
func (t Timeline) GapsWithin(from, to time.Time) []Gap {
	var out []Gap
	for _, g := range t.Gaps {
		if g.From.Before(to) && g.To.After(from) {
			out = append(out, g)
		}
	}
	return out
}

// Routed is how long after the deletion began the Service could still send new connections
// to the pod: the earlier of ToUnready and ToRemoved among those seen, or -1 when neither was.
func (p Propagation) Routed() time.Duration {
	switch {
	case p.ToUnready < 0:
		return p.ToRemoved
	case p.ToRemoved < 0:
		return p.ToUnready
	default:
		return min(p.ToUnready, p.ToRemoved)
	}
}
