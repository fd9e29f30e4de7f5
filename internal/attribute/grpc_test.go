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
	a := b.attr(t, Input{Requests: []loadgen.Request{toGone}, Balanced: true})
	want(t, a, timeline.PhaseStaleAddress, "a")
	if !strings.Contains(a.Why, "sent to a's address 10.244.0.5:8080") || !strings.Contains(a.Why, "the client still held the address") {
		t.Errorf("why %q", a.Why)
	}
	none := failed(2, 8, 0.001, loadgen.GRPCClass(14))
	a = b.attr(t, Input{Requests: []loadgen.Request{none}, Balanced: true})
	if a.Phase != timeline.PhaseStaleAddress || !strings.Contains(a.Why, "the client had no ready address to send to while the Service had ready pods (b, n)") {
		t.Errorf("no address: attributed to %s (%s)", a.Phase, a.Why)
	}
	if a := b.attr(t, Input{Requests: []loadgen.Request{toGone}}); a.Phase == timeline.PhaseStaleAddress {
		t.Errorf("a client that does not balance: attributed to %s", a.Phase)
	}
}
