package observe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The handlers below keep their own last-seen state per pod and endpoint and record the
// transitions between it and what the watch delivers: a relist after a dropped watch, which
// replays changed objects, records only what really changed while the watch was down.
//
// now is the time the watch loop received the change (taken before any lock): that is the
// time Pod and endpoint moments are recorded at.

// podState is what the timeline tracks of one pod.
type podState struct {
	uid       types.UID
	scheduled bool
	ready     bool
	deleting  bool
	ip        string // status.podIP, once given
	// containers by name (the pod's init containers' and containers' statuses).
	containers map[string]containerState
}

// containerState is what the timeline tracks of one container of a pod.
type containerState struct {
	restarts int32
	running  bool
	started  time.Time // running.startedAt, while running
	// exit identifies the latest termination the status shows (state.terminated, else
	// lastTerminationState.terminated): one that differs from it is a new exit.
	exit termination
}

// termination identifies one exit of a container.
type termination struct {
	present     bool
	containerID string
	finished    time.Time
	exitCode    int32
	signal      int32
}

func terminationOf(t *corev1.ContainerStateTerminated) termination {
	if t == nil {
		return termination{}
	}
	return termination{present: true, containerID: t.ContainerID, finished: t.FinishedAt.Time, exitCode: t.ExitCode, signal: t.Signal}
}

func containersOf(p *corev1.Pod) map[string]containerState {
	out := make(map[string]containerState, len(p.Status.InitContainerStatuses)+len(p.Status.ContainerStatuses))
	for _, cs := range statuses(p) {
		c := containerState{restarts: cs.RestartCount}
		if r := cs.State.Running; r != nil {
			c.running, c.started = true, r.StartedAt.Time
		}
		if t := cs.State.Terminated; t != nil {
			c.exit = terminationOf(t)
		} else {
			c.exit = terminationOf(cs.LastTerminationState.Terminated)
		}
		out[cs.Name] = c
	}
	return out
}

func podStateOf(p *corev1.Pod) podState {
	s := podState{uid: p.UID, scheduled: p.Spec.NodeName != "", deleting: p.DeletionTimestamp != nil, ip: p.Status.PodIP, containers: containersOf(p)}
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case corev1.PodScheduled:
			s.scheduled = s.scheduled || c.Status == corev1.ConditionTrue
		case corev1.PodReady:
			s.ready = c.Status == corev1.ConditionTrue
		}
	}
	return s
}

// onPod handles a pod that was added (initial: part of Start's list) or updated.
func (o *Observer) onPod(now time.Time, pod *corev1.Pod, initial bool) {
	next := podStateOf(pod)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	o.followAppLogsLocked(pod)
	if initial {
		o.pods[pod.Name] = next
		if n := pod.Spec.NodeName; n != "" {
			// Where it runs: a node's own endpoints (attribute.LocalOutages) need every pod's node.
			o.recordLocked(Event{Time: now, Kind: PodScheduled, Pod: pod.Name, Node: n, Detail: n})
		}
		if next.ip != "" {
			// Its address maps a proxy's named upstream to it (attribute.Life.IP).
			o.recordLocked(Event{Time: now, Kind: PodAddress, Pod: pod.Name, Address: next.ip, Detail: next.ip})
		}
		return
	}
	prev, known := o.pods[pod.Name]
	if known && prev.uid != next.uid {
		// Deleted and re-created under the same name while we were not watching.
		o.recordLocked(Event{Time: now, Kind: PodGone, Pod: pod.Name, Detail: "replaced by a new pod of the same name"})
		known = false
	}
	if !known {
		prev = podState{uid: next.uid}
		o.recordLocked(Event{Time: now, Kind: PodCreated, Pod: pod.Name})
	}
	o.podTransitionsLocked(now, pod, prev, next)
	o.pods[pod.Name] = next
}

func (o *Observer) podTransitionsLocked(now time.Time, pod *corev1.Pod, prev, next podState) {
	if !prev.scheduled && next.scheduled {
		o.recordLocked(Event{Time: now, Kind: PodScheduled, Pod: pod.Name, Node: pod.Spec.NodeName, Detail: pod.Spec.NodeName})
	}
	if next.ip != "" && next.ip != prev.ip {
		o.recordLocked(Event{Time: now, Kind: PodAddress, Pod: pod.Name, Address: next.ip, Detail: next.ip})
	}
	if !prev.ready && next.ready {
		o.recordLocked(Event{Time: now, Kind: PodReady, Pod: pod.Name})
	}
	if !prev.deleting && next.deleting {
		o.recordLocked(Event{Time: now, Kind: PodDeleting, Pod: pod.Name, GraceSeconds: graceSeconds(pod), Detail: graceDetail(pod)})
		ep, present := o.endpoints[pod.Name]
		o.atDeletion[pod.Name] = deletionBaseline{
			present:     present,
			ready:       present && ep.ready,
			everInSlice: o.inSlice[pod.Name],
		}
	}
	o.containerTransitionsLocked(now, pod, prev.containers)
	if prev.ready && !next.ready {
		o.recordLocked(Event{Time: now, Kind: PodUnready, Pod: pod.Name, Detail: readyReason(pod)})
	}
}

// containerTransitionsLocked records, for each container in pod's status, a new exit (its
// state.terminated, or its lastTerminationState after a restart, that differs from the last
// one known in prev) and then a new start (running, where prev was not running or started
// at another time).
func (o *Observer) containerTransitionsLocked(now time.Time, pod *corev1.Pod, prev map[string]containerState) {
	for _, cs := range statuses(pod) {
		was := prev[cs.Name]
		exited := cs.State.Terminated
		if exited != nil && terminationOf(exited) == was.exit {
			exited = nil // known
		}
		if last := cs.LastTerminationState.Terminated; exited == nil && cs.State.Terminated == nil &&
			last != nil && cs.RestartCount > was.restarts && terminationOf(last) != was.exit {
			exited = last // exited and restarted between two updates
		}
		if exited != nil {
			o.recordLocked(Event{Time: now, Kind: ContainerExited, Pod: pod.Name, Container: cs.Name,
				ExitCode: ptr.To(exited.ExitCode), Reported: exited.FinishedAt.Time, Detail: exitDetail(exited)})
		}
		if r := cs.State.Running; r != nil && (!was.running || !was.started.Equal(r.StartedAt.Time) || was.restarts != cs.RestartCount) {
			var fields []string
			if cs.RestartCount > 0 {
				fields = append(fields, fmt.Sprintf("restartCount=%d", cs.RestartCount))
			}
			if cs.StopSignal != nil {
				// The effective stop signal, as the runtime reports it (ContainerStopSignals).
				fields = append(fields, "stopSignal="+string(*cs.StopSignal))
			}
			detail := strings.Join(fields, " ")
			o.recordLocked(Event{Time: now, Kind: ContainerStarted, Pod: pod.Name, Container: cs.Name,
				Reported: r.StartedAt.Time, Detail: detail})
		}
	}
}

// exitDetail is "exitCode=N" followed by the reason and signal, where set.
func exitDetail(t *corev1.ContainerStateTerminated) string {
	d := fmt.Sprintf("exitCode=%d", t.ExitCode)
	if t.Reason != "" {
		d += " reason=" + t.Reason
	}
	if t.Signal != 0 {
		d += fmt.Sprintf(" signal=%d", t.Signal)
	}
	return d
}

// graceSeconds is a copy of the pod's deletion grace period; nil when not set.
func graceSeconds(p *corev1.Pod) *int64 {
	if p.DeletionGracePeriodSeconds == nil {
		return nil
	}
	return ptr.To(*p.DeletionGracePeriodSeconds)
}

func graceDetail(p *corev1.Pod) string {
	if p.DeletionGracePeriodSeconds == nil {
		return "grace=unknown"
	}
	return fmt.Sprintf("grace=%ds", *p.DeletionGracePeriodSeconds)
}

func readyReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return strings.TrimSpace(strings.TrimSuffix(c.Reason+": "+c.Message, ": "))
		}
	}
	return ""
}

// onPodDelete handles a pod that was deleted (missed: found gone by a relist, after a watch
// was down, rather than seen on the watch).
func (o *Observer) onPodDelete(now time.Time, pod *corev1.Pod, missed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	prev, known := o.pods[pod.Name]
	delete(o.pods, pod.Name)
	if !known || prev.uid != pod.UID {
		// Never seen alive: record only its deletion.
		prev = podState{uid: pod.UID, containers: containersOf(pod)}
	}
	// A forced deletion (grace 0) removes the object without an update carrying the
	// deletionTimestamp first: record the deletion, and any container exit, from the final
	// state.
	next := prev
	if pod.DeletionTimestamp != nil {
		next.deleting = true
	}
	o.podTransitionsLocked(now, pod, prev, next)
	detail := ""
	if pod.Status.Phase != "" {
		detail = "phase=" + string(pod.Status.Phase)
	}
	if missed {
		detail = strings.TrimSpace(detail + " (deleted while the watch was down)")
	}
	o.recordLocked(Event{Time: now, Kind: PodGone, Pod: pod.Name, PodPhase: string(pod.Status.Phase), Detail: detail})
}

// endpointState is one pod's address in the Service's EndpointSlices.
type endpointState struct {
	ready, serving, terminating bool
}

func (e endpointState) detail() string {
	return fmt.Sprintf("serving=%t terminating=%t", e.serving, e.terminating)
}

func (e endpointState) conditions() *EndpointConditions {
	return &EndpointConditions{Ready: e.ready, Serving: e.serving, Terminating: e.terminating}
}

// deletionBaseline is a pod's endpoint state when its deletion was first seen.
type deletionBaseline struct {
	present, ready bool
	everInSlice    bool
}

// sliceEndpoints returns the pod endpoints of a slice, by pod name. A pod listed twice in
// one slice counts as ready if any of its entries is.
func sliceEndpoints(s *discoveryv1.EndpointSlice) map[string]endpointState {
	out := map[string]endpointState{}
	for _, ep := range s.Endpoints {
		if ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" || ep.TargetRef.Name == "" {
			continue
		}
		c := ep.Conditions
		st := endpointState{
			ready:       c.Ready == nil || *c.Ready, // nil means ready
			serving:     c.Serving == nil || *c.Serving,
			terminating: c.Terminating != nil && *c.Terminating,
		}
		out[ep.TargetRef.Name] = merge(out[ep.TargetRef.Name], st, true)
	}
	return out
}

// merge combines two entries of the same pod: the pod is ready (serving, terminating) if
// either entry says so. With have false, a is ignored.
func merge(a, b endpointState, have bool) endpointState {
	if !have {
		return b
	}
	return endpointState{ready: a.ready || b.ready, serving: a.serving || b.serving, terminating: a.terminating || b.terminating}
}

func (o *Observer) onSlice(now time.Time, s *discoveryv1.EndpointSlice, initial bool) {
	eps := sliceEndpoints(s)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	affected := map[string]bool{}
	for pod := range o.slices[s.Name] {
		affected[pod] = true
	}
	for pod := range eps {
		affected[pod] = true
	}
	o.slices[s.Name] = eps
	o.reconcileEndpointsLocked(now, affected, initial)
}

func (o *Observer) onSliceDelete(now time.Time, s *discoveryv1.EndpointSlice) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	affected := map[string]bool{}
	for pod := range o.slices[s.Name] {
		affected[pod] = true
	}
	delete(o.slices, s.Name)
	o.reconcileEndpointsLocked(now, affected, false)
}

// reconcileEndpointsLocked recomputes the union over all slices for the affected pods and
// records the transitions (none when baseline is set).
func (o *Observer) reconcileEndpointsLocked(now time.Time, affected map[string]bool, baseline bool) {
	names := make([]string, 0, len(affected))
	for pod := range affected {
		names = append(names, pod)
	}
	sort.Strings(names)
	for _, pod := range names {
		var next endpointState
		present := false
		for _, eps := range o.slices {
			if st, ok := eps[pod]; ok {
				next = merge(next, st, present)
				present = true
			}
		}
		prev, had := o.endpoints[pod]
		if present {
			o.endpoints[pod] = next
			o.inSlice[pod] = true
		} else {
			delete(o.endpoints, pod)
		}
		if baseline {
			continue
		}
		switch {
		case present && next.ready && !(had && prev.ready):
			o.recordLocked(Event{Time: now, Kind: EndpointReady, Pod: pod, Endpoint: next.conditions(), Detail: next.detail()})
		case present && !next.ready && (!had || prev != next):
			o.recordLocked(Event{Time: now, Kind: EndpointUnready, Pod: pod, Endpoint: next.conditions(), Detail: next.detail()})
		case !present && had:
			o.recordLocked(Event{Time: now, Kind: EndpointRemoved, Pod: pod})
		}
	}
}

// onEvent handles a core/v1 Event that was added or updated (prev is nil when it is new).
// Events that exist at Start are not recorded, only their later occurrences.
func (o *Observer) onEvent(prev, ev *corev1.Event, initial bool) {
	if initial || ev.InvolvedObject.Kind != "Pod" {
		return
	}
	if prev != nil && sameOccurrence(prev, ev) {
		return // a relist, or a change that is not a new occurrence
	}
	detail := ev.Reason
	if ev.Message != "" {
		detail += ": " + ev.Message
	}
	if n := occurrences(ev); n > 1 {
		detail += fmt.Sprintf(" (x%d)", n)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	o.recordLocked(Event{Time: eventTime(ev), Kind: K8sEvent, Pod: ev.InvolvedObject.Name, Detail: detail})
}

func occurrences(ev *corev1.Event) int32 {
	if ev.Series != nil && ev.Series.Count > ev.Count {
		return ev.Series.Count
	}
	return ev.Count
}

func sameOccurrence(a, b *corev1.Event) bool {
	return occurrences(a) == occurrences(b) && eventTime(a).Equal(eventTime(b))
}

// eventTime is when the Event last happened, by the Event's own timestamps: the series'
// last observation, lastTimestamp, eventTime, firstTimestamp, then its creation time.
// lastTimestamp and firstTimestamp have a resolution of one second.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	default:
		return ev.CreationTimestamp.Time
	}
}
