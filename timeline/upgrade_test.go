package timeline

import (
	"reflect"
	"testing"
)

// Rows recorded before the typed fields have only Detail, as the observer wrote it: Upgraded
// reads each typed field from it, leaves a typed field already set alone, and does not change
// the timeline it is given.
func TestUpgraded(t *testing.T) {
	grace := func(s int64) *int64 { return &s }
	for _, c := range []struct {
		in   Event
		want Event
	}{
		{Event{Kind: PodDeleting, Detail: "grace=30s"}, Event{Kind: PodDeleting, Detail: "grace=30s", GraceSeconds: grace(30)}},
		{Event{Kind: PodDeleting, Detail: "grace=0s"}, Event{Kind: PodDeleting, Detail: "grace=0s", GraceSeconds: grace(0)}},
		{Event{Kind: PodDeleting, Detail: "grace=unknown"}, Event{Kind: PodDeleting, Detail: "grace=unknown"}},
		{Event{Kind: PodScheduled, Detail: "kind-worker"}, Event{Kind: PodScheduled, Detail: "kind-worker", Node: "kind-worker"}},
		{Event{Kind: PodAddress, Detail: "10.244.0.5"}, Event{Kind: PodAddress, Detail: "10.244.0.5", Address: "10.244.0.5"}},
		{Event{Kind: PodGone, Detail: "phase=Failed (deleted while the watch was down)"}, Event{Kind: PodGone, Detail: "phase=Failed (deleted while the watch was down)", PodPhase: "Failed"}},
		{Event{Kind: PodGone, Detail: "replaced by a new pod of the same name"}, Event{Kind: PodGone, Detail: "replaced by a new pod of the same name"}},
		{Event{Kind: EndpointReady, Detail: "serving=true terminating=false"}, Event{Kind: EndpointReady, Detail: "serving=true terminating=false", Endpoint: &EndpointConditions{Ready: true, Serving: true}}},
		{Event{Kind: EndpointUnready, Detail: "serving=true terminating=true"}, Event{Kind: EndpointUnready, Detail: "serving=true terminating=true", Endpoint: &EndpointConditions{Serving: true, Terminating: true}}},
		{Event{Kind: EndpointUnready}, Event{Kind: EndpointUnready}},
		{Event{Kind: AppEvent, Detail: "listener_closed"}, Event{Kind: AppEvent, Detail: "listener_closed", App: &AppLine{Event: LineListenerClosed}}},
		{Event{Kind: AppEvent, Detail: `prestop phase=start sleep=5s`}, Event{Kind: AppEvent, Detail: `prestop phase=start sleep=5s`, App: &AppLine{Event: LinePreStop, Fields: map[string]string{"phase": PreStopStart, "sleep": "5s"}}}},
		{Event{Kind: AppEvent, Detail: `started addr=:8080 proxy_to="" note="a b=c" list=[1,true]`},
			Event{Kind: AppEvent, Detail: `started addr=:8080 proxy_to="" note="a b=c" list=[1,true]`, App: &AppLine{Event: LineStarted, Fields: map[string]string{"addr": ":8080", "proxy_to": "", "note": "a b=c", "list": "[1,true]"}}}},
		// Typed already (a row the observer wrote with them): left as it is.
		{Event{Kind: PodDeleting, Detail: "grace=30s", GraceSeconds: grace(5)}, Event{Kind: PodDeleting, Detail: "grace=30s", GraceSeconds: grace(5)}},
		{Event{Kind: AppEvent, Detail: "sigterm", App: &AppLine{Event: LineExiting}}, Event{Kind: AppEvent, Detail: "sigterm", App: &AppLine{Event: LineExiting}}},
		// Other kinds keep their Detail only.
		{Event{Kind: K8sEvent, Detail: "Killing: Stopping container app"}, Event{Kind: K8sEvent, Detail: "Killing: Stopping container app"}},
	} {
		tl := Timeline{Events: []Event{c.in}}
		got := tl.Upgraded()
		if !reflect.DeepEqual(got.Events[0], c.want) {
			t.Errorf("%s %q: got %+v, want %+v", c.in.Kind, c.in.Detail, got.Events[0], c.want)
		}
		if !reflect.DeepEqual(tl.Events[0], c.in) {
			t.Errorf("%s %q: the timeline given was changed: %+v", c.in.Kind, c.in.Detail, tl.Events[0])
		}
		if again := got.Upgraded(); !reflect.DeepEqual(again, got) {
			t.Errorf("%s %q: not idempotent: %+v", c.in.Kind, c.in.Detail, again.Events[0])
		}
	}
}
