package attribute

import (
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// A stream the terminating pod refused with GOAWAY, not sent again, is the GOAWAY's; the same
// class with no pod terminating is not.
func TestGoAway(t *testing.T) {
	b := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"), ev(-10, timeline.PodAddress, "b", "10.244.0.6")).del("a", 0, 0.1)
	b.add(ev(5.2, timeline.AppEvent, "a", "exiting code=0"))
	q := failed(1, 0.4, 0.01, loadgen.ClassGoAway)
	a := b.attr(t, Input{Requests: []loadgen.Request{q}})
	want(t, a, timeline.PhaseGoAway, "a")
	if !strings.Contains(a.Why, "refused by the GOAWAY of a") {
		t.Errorf("why %q", a.Why)
	}
	steady := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"))
	if a := steady.attr(t, Input{Requests: []loadgen.Request{q}}); a.Phase == timeline.PhaseGoAway {
		t.Errorf("a GOAWAY with no pod terminating attributed to %s", a.Phase)
	}
}

// A balancing client's RPC to a deleted pod's address after the pod stopped accepting is a
// stale address; one with no address while a new pod was ready is too; neither applies to a
// client that does not balance.
func TestStaleAddress(t *testing.T) {
	b := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"), ev(-10, timeline.PodAddress, "b", "10.244.0.6")).del("a", 0, 0.1)
	b.add(ev(5, timeline.AppEvent, "a", "listener closed"), ev(5.1, timeline.AppEvent, "a", "exiting code=0"),
		ev(1, timeline.PodCreated, "n", ""), ev(2, timeline.PodAddress, "n", "10.244.0.9"), ev(3, timeline.EndpointReady, "n", "serving=true terminating=false"))
	toGone := failed(1, 8, 0.001, loadgen.GRPCClass(14))
	toGone.Peer = "10.244.0.5:8080"
	a := b.attr(t, Input{Requests: []loadgen.Request{toGone}, Context: Context{Balanced: true}})
	want(t, a, timeline.PhaseStaleAddress, "a")
	if !strings.Contains(a.Why, "sent to a's address 10.244.0.5:8080") || !strings.Contains(a.Why, "the client still held the address") {
		t.Errorf("why %q", a.Why)
	}
	none := failed(2, 8, 0.001, loadgen.GRPCClass(14))
	a = b.attr(t, Input{Requests: []loadgen.Request{none}, Context: Context{Balanced: true}})
	if a.Phase != timeline.PhaseStaleAddress || !strings.Contains(a.Why, "the client had no ready address to send to while the Service had ready pods (b, n)") {
		t.Errorf("no address: attributed to %s (%s)", a.Phase, a.Why)
	}
	if a := b.attr(t, Input{Requests: []loadgen.Request{toGone}}); a.Phase == timeline.PhaseStaleAddress {
		t.Errorf("a client that does not balance: attributed to %s", a.Phase)
	}
}

// An RPC cut after the server's GOAWAY for the connection's age (grpc-go's "max_age") is the
// connection's age, even in flight when a rollout's pod exited; the same cut naming another
// GOAWAY (a graceful stop's), or none, is the exit's; a timed-out RPC is neither.
func TestConnectionAge(t *testing.T) {
	b := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5")).del("a", 0, 0.1)
	b.add(ev(1.0, timeline.AppEvent, "a", "exiting code=0"))
	aged := failed(1, 0.5, 0.5, loadgen.GRPCClass(14))
	aged.Error = `closing transport due to: connection error: desc = "error reading from server: EOF", received prior goaway: code: NO_ERROR, debug data: "max_age"`
	a := b.attr(t, Input{Requests: []loadgen.Request{aged}})
	if a.Phase != timeline.PhaseConnectionAge || a.Pod != "" || !strings.Contains(a.Why, "MaxConnectionAgeGrace") {
		t.Errorf("max_age cut: %s %q (%s)", a.Phase, a.Pod, a.Why)
	}
	graceful := aged
	graceful.Error = strings.Replace(aged.Error, "max_age", "graceful_stop", 1)
	if a := b.attr(t, Input{Requests: []loadgen.Request{graceful}}); a.Phase != timeline.PhaseInFlightCut || !strings.Contains(a.Why, "the client cannot tell which") {
		t.Errorf("graceful_stop cut: attributed to %s (%s), want in-flight-cut saying the drain did not wait", a.Phase, a.Why)
	}
	timedOut := aged
	timedOut.Class = loadgen.ClassTimeout
	if a := b.attr(t, Input{Requests: []loadgen.Request{timedOut}}); a.Phase == timeline.PhaseConnectionAge {
		t.Errorf("a timed-out RPC attributed to %s", a.Phase)
	}
	steady := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"))
	if a := steady.attr(t, Input{Requests: []loadgen.Request{aged}}); a.Phase != timeline.PhaseConnectionAge {
		t.Errorf("max_age cut with no pod terminating: attributed to %s", a.Phase)
	}
}

// An RPC that hit its deadline across a pod's exit was waiting, not cut: never in-flight-cut.
func TestDeadlineExceededNotCut(t *testing.T) {
	b := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5")).del("a", 0, 0.1)
	b.add(ev(1.0, timeline.AppEvent, "a", "exiting code=0"))
	cut := failed(1, 0.5, 0.5, loadgen.GRPCClass(14))
	if a := b.attr(t, Input{Requests: []loadgen.Request{cut}}); a.Phase != timeline.PhaseInFlightCut {
		t.Fatalf("control: an UNAVAILABLE across the exit attributed to %s", a.Phase)
	}
	late := failed(1, 0.5, 0.5, loadgen.GRPCClass(4))
	if a := b.attr(t, Input{Requests: []loadgen.Request{late}}); a.Phase == timeline.PhaseInFlightCut || a.Phase == timeline.PhaseSIGKILL {
		t.Errorf("a DEADLINE_EXCEEDED attributed to %s", a.Phase)
	}
}

// A health check answered NOT_SERVING by a pod after its deletion is its going away (goaway);
// the same answer from a pod no one deletes is not.
func TestNotServingWhileGoing(t *testing.T) {
	b := (&tl{}).add(ev(-10, timeline.PodAddress, "a", "10.244.0.5"), ev(-10, timeline.PodAddress, "b", "10.244.0.6")).del("a", 0, 0.1)
	b.add(ev(5.2, timeline.AppEvent, "a", "exiting code=0"))
	q := failed(1, 5.1, 0.001, loadgen.ClassGRPCNotServing)
	q.Pod = "a"
	a := b.attr(t, Input{Requests: []loadgen.Request{q}})
	want(t, a, timeline.PhaseGoAway, "a")
	if !strings.Contains(a.Why, "answered NOT_SERVING by the health service of a") {
		t.Errorf("why %q", a.Why)
	}
	q.Pod = "b"
	if a := b.attr(t, Input{Requests: []loadgen.Request{q}}); a.Phase == timeline.PhaseGoAway {
		t.Errorf("NOT_SERVING from a pod not terminating attributed to %s", a.Phase)
	}
}
