package observe

import "github.com/rollcheck/rollcheck/timeline"

// The recorded types live in the public timeline package; these aliases keep the observer's
// code and tests short.
type (
	Kind        = timeline.Kind
	Event       = timeline.Event
	Propagation = timeline.Propagation
	Timeline    = timeline.Timeline
	Gap         = timeline.Gap

	EndpointConditions = timeline.EndpointConditions
	AppLine            = timeline.AppLine
)

// Lifecycle moments (see timeline).
const (
	PodCreated      = timeline.PodCreated
	PodScheduled    = timeline.PodScheduled
	PodAddress      = timeline.PodAddress
	PodReady        = timeline.PodReady
	PodUnready      = timeline.PodUnready
	PodDeleting     = timeline.PodDeleting
	PodGone         = timeline.PodGone
	EndpointReady   = timeline.EndpointReady
	EndpointUnready = timeline.EndpointUnready
	EndpointRemoved = timeline.EndpointRemoved
	K8sEvent        = timeline.K8sEvent
	Disruption      = timeline.Disruption
	DisruptionDone  = timeline.DisruptionDone

	ContainerStarted = timeline.ContainerStarted
	ContainerExited  = timeline.ContainerExited
	AppEvent         = timeline.AppEvent
	AppLogEnded      = timeline.AppLogEnded
)
