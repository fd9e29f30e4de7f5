// Package observe records a lifecycle timeline of one namespace while a disruption runs, from
// watches of its Pods, the EndpointSlices of its Service and its core/v1 Events, and computes
// for every deleted pod how long the Service kept routing to it (endpoint propagation delay).
//
// Start an Observer before the disruption, Mark the harness's own moments (Disruption,
// DisruptionDone) into the same timeline, and Stop it afterwards to get a Timeline sorted by
// time with its Propagation computed. Pod and endpoint moments are stamped with the local time
// at which the watch delivered the change, so that they line up with the load generator's
// timeline, which uses the same clock; Kubernetes Events keep their own timestamps.
//
// Moments recorded: PodCreated, PodScheduled (Detail: node), PodReady and PodUnready on
// transitions of the Ready condition (Detail: its reason), PodDeleting when the
// deletionTimestamp first appears (Detail: grace=Ns; also recorded from the final object of a
// forced deletion), PodGone; per pod, over the union of the Service's EndpointSlices,
// EndpointReady, EndpointUnready when it is present but not ready, again whenever its
// serving/terminating flags change (Detail: those flags), and EndpointRemoved when it has
// left every slice (moving between slices is not a removal); K8sEvent for each new
// occurrence of a core/v1 Event about a Pod (Detail: reason: message, with (xN) when
// repeated), stamped with the Event's own time (second resolution for lastTimestamp);
// per container in the pod status, ContainerStarted when it is running in a new run
// (Reported: startedAt) and ContainerExited when a new termination shows, as state.terminated
// or, after a restart, lastTerminationState (ExitCode, Reported: finishedAt, Detail:
// exitCode=N reason=R signal=S). Objects that exist at Start are the baseline: not reported,
// except, for each pod that runs then, its PodAddress and its PodScheduled (its node).
//
// With WithAppLogs, the app container's logs of every watched pod, baseline pods included, are
// followed while it runs (one stream per pod UID and restart): each line that is a JSON object
// with string fields "ts" and "event" is an AppEvent stamped with ts, the app's own clock
// (Detail: the event, then the other fields as k=v in key order), and the end of the stream is
// an AppLogEnded (Detail: exiting=, sigterm=, lines=). A forced deletion removes the pod
// before its status shows the exit; a stream that ends after "sigterm" but without "exiting"
// is then the evidence that the process was killed.
//
// Each kind is listed and then watched; a watch that the API server ends (its timeout, an
// expired resourceVersion, an error) is re-opened, with a relist when needed, instead of
// silently ending observation. All goroutines end when Stop is called or the context given
// to Start is cancelled.
package observe
