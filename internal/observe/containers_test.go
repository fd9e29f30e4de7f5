package observe

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// at is a time of second resolution, as the pod status reports it.
func at(sec int) metav1.Time {
	return metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second))
}

func running(name string, restarts int32, started metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}
}

func terminated(code, signal int32, reason string, finished metav1.Time) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ExitCode: code, Signal: signal, Reason: reason,
		FinishedAt: finished, ContainerID: "containerd://" + finished.String()}
}

func setContainers(p *corev1.Pod, cs ...corev1.ContainerStatus) {
	p.Status.ContainerStatuses = cs
}

// events returns the events of kind for pod.
func events(tl Timeline, kind Kind, podName string) []Event {
	var out []Event
	for _, e := range tl.Events {
		if e.Kind == kind && e.Pod == podName {
			out = append(out, e)
		}
	}
	return out
}

func checkExit(t *testing.T, e Event, container string, code int32, finished metav1.Time, detail string) {
	t.Helper()
	if e.Container != container || e.ExitCode == nil || *e.ExitCode != code || !e.Reported.Equal(finished.Time) || e.Detail != detail {
		t.Errorf("exit of %s: got container=%q exitCode=%v reported=%v detail=%q, want %q %d %v %q",
			e.Pod, e.Container, e.ExitCode, e.Reported, e.Detail, container, code, finished.Time, detail)
	}
}

// TestContainerExits: a container that starts and exits (137 after SIGKILL, 0 after a drain)
// is recorded once each, with the status's own times as Reported.
func TestContainerExits(t *testing.T) {
	w := newWorld(t)
	o := w.start()

	for i, c := range []struct {
		pod, reason, detail string
		code, signal        int32
	}{
		{"killed", "Error", "exitCode=137 reason=Error signal=9", 137, 9},
		{"drained", "Completed", "exitCode=0 reason=Completed", 0, 0},
	} {
		p := pod(c.pod)
		setContainers(p, corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
		w.createPod(p)
		started := at(10 * i)
		setContainers(p, running("app", 0, started))
		w.updatePod(p)
		waitFor(t, o, ContainerStarted, c.pod, 1)

		finished := at(10*i + 5)
		setContainers(p, corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{
			Terminated: terminated(c.code, c.signal, c.reason, finished)}})
		w.updatePod(p)
		waitFor(t, o, ContainerExited, c.pod, 1)
		// The same status again, with another change: no second exit.
		p.Spec.NodeName = "kind-worker"
		w.updatePod(p)
		waitFor(t, o, PodScheduled, c.pod, 1)
		w.must(w.client.CoreV1().Pods(testNS).Delete(w.ctx, c.pod, metav1.DeleteOptions{}))
		tl := waitFor(t, o, PodGone, c.pod, 1)

		want := []Kind{PodCreated, ContainerStarted, ContainerExited, PodScheduled, PodGone}
		if got := kindsOf(tl, c.pod); !equalKinds(got, want) {
			t.Fatalf("%s: kinds\n got %v\nwant %v\n%s", c.pod, got, want, dump(tl))
		}
		checkExit(t, events(tl, ContainerExited, c.pod)[0], "app", c.code, finished, c.detail)
		if e := events(tl, ContainerStarted, c.pod)[0]; e.Container != "app" || !e.Reported.Equal(started.Time) ||
			e.Detail != "" || e.ExitCode != nil {
			t.Errorf("%s: start %+v", c.pod, e)
		}
	}
}

// TestContainerRestart: an exit seen only as lastTerminationState with a higher restartCount
// is recorded, before the new start; an exit already seen as state.terminated is not recorded
// again when it becomes the last termination.
func TestContainerRestart(t *testing.T) {
	w := newWorld(t)
	o := w.start()
	p := pod("app-1")
	setContainers(p, running("app", 0, at(0)), running("sidecar", 0, at(0)))
	w.createPod(p)
	waitFor(t, o, ContainerStarted, "app-1", 2)

	// Exited and restarted between two updates.
	first := terminated(1, 0, "Error", at(5))
	restarted := running("app", 1, at(6))
	restarted.LastTerminationState.Terminated = first
	setContainers(p, restarted, running("sidecar", 0, at(0)))
	w.updatePod(p)
	waitFor(t, o, ContainerStarted, "app-1", 3)

	// Exit seen as it happens, then the restart.
	second := terminated(2, 0, "Error", at(8))
	crashed := corev1.ContainerStatus{Name: "app", RestartCount: 1, State: corev1.ContainerState{Terminated: second}}
	crashed.LastTerminationState.Terminated = first
	setContainers(p, crashed, running("sidecar", 0, at(0)))
	w.updatePod(p)
	waitFor(t, o, ContainerExited, "app-1", 2)
	again := running("app", 2, at(9))
	again.LastTerminationState.Terminated = second
	setContainers(p, again, running("sidecar", 0, at(0)))
	w.updatePod(p)
	waitFor(t, o, ContainerStarted, "app-1", 4)
	tl := o.Stop()
	typedAsDetail(t, tl)

	want := []Kind{PodCreated, ContainerStarted, ContainerStarted, ContainerExited, ContainerStarted, ContainerExited, ContainerStarted}
	if got := kindsOf(tl, "app-1"); !equalKinds(got, want) {
		t.Fatalf("kinds\n got %v\nwant %v\n%s", got, want, dump(tl))
	}
	exits := events(tl, ContainerExited, "app-1")
	checkExit(t, exits[0], "app", 1, at(5), "exitCode=1 reason=Error")
	checkExit(t, exits[1], "app", 2, at(8), "exitCode=2 reason=Error")
	starts := events(tl, ContainerStarted, "app-1")
	if s := starts[2]; s.Container != "app" || s.Detail != "restartCount=1" || !s.Reported.Equal(at(6).Time) {
		t.Errorf("restart: %+v", s)
	}
	if s := starts[3]; s.Detail != "restartCount=2" || !s.Reported.Equal(at(9).Time) {
		t.Errorf("second restart: %+v", s)
	}
}

// TestContainerBaseline: containers of a pod that exists at Start are not reported, and their
// known exits are not reported later either.
func TestContainerBaseline(t *testing.T) {
	p := pod("app-0")
	restarted := running("app", 3, at(20))
	restarted.LastTerminationState.Terminated = terminated(137, 9, "Error", at(19))
	setContainers(p, restarted, corev1.ContainerStatus{Name: "done", State: corev1.ContainerState{
		Terminated: terminated(0, 0, "Completed", at(3))}})
	w := newWorld(t, p)
	o := w.start()

	p.Spec.NodeName = "kind-worker"
	w.updatePod(p)
	tl := waitFor(t, o, PodScheduled, "app-0", 1)
	if got := kindsOf(tl, "app-0"); !equalKinds(got, []Kind{PodScheduled}) {
		t.Fatalf("baseline containers reported:\n%s", dump(tl))
	}
}

// TestContainerExitOnForcedDelete: the final state of a deleted pod can carry the exit.
func TestContainerExitOnForcedDelete(t *testing.T) {
	o := &Observer{ns: testNS, logf: t.Logf, cancel: func() {},
		pods: map[string]podState{"app-1": {uid: "uid-app-1", containers: map[string]containerState{
			"app": {running: true, started: at(0).Time}}}},
		slices: map[string]map[string]endpointState{}, endpoints: map[string]endpointState{},
		inSlice: map[string]bool{}, atDeletion: map[string]deletionBaseline{}}
	gone := pod("app-1")
	gone.DeletionTimestamp = ptr.To(metav1.Now())
	gone.DeletionGracePeriodSeconds = ptr.To[int64](0)
	setContainers(gone, corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{
		Terminated: terminated(137, 0, "Error", at(4))}})
	o.onPodDelete(time.Now(), gone, false)

	// A pod never seen alive: only its deletion.
	never := pod("app-2")
	setContainers(never, corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{
		Terminated: terminated(137, 0, "Error", at(4))}})
	o.onPodDelete(time.Now(), never, false)

	tl := o.Stop()
	typedAsDetail(t, tl)
	if got := kindsOf(tl, "app-1"); !equalKinds(got, []Kind{PodDeleting, ContainerExited, PodGone}) {
		t.Fatalf("kinds: %v\n%s", got, dump(tl))
	}
	checkExit(t, events(tl, ContainerExited, "app-1")[0], "app", 137, at(4), "exitCode=137 reason=Error")
	if got := kindsOf(tl, "app-2"); !equalKinds(got, []Kind{PodGone}) {
		t.Fatalf("never seen alive: %v", got)
	}
}
