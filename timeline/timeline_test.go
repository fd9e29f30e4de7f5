package timeline

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEventJSON: the container fields are omitted when unset; an exit code of 0 is not unset.
func TestEventJSON(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	code := int32(0)
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Time: at, Kind: PodGone, Pod: "p"}, `{"time":"2025-01-02T03:04:05.000000006Z","kind":"pod-gone","pod":"p"}`},
		{Event{Time: at, Kind: ContainerExited, Pod: "p", Container: "app", ExitCode: &code, Reported: at.Truncate(time.Second), Detail: "exitCode=0"},
			`{"time":"2025-01-02T03:04:05.000000006Z","kind":"container-exited","pod":"p","container":"app","exitCode":0,"reported":"2025-01-02T03:04:05Z","detail":"exitCode=0"}`},
		{Event{Time: at, Kind: AppEvent, Pod: "p", Container: "app", Detail: "sigterm mode=drain"},
			`{"time":"2025-01-02T03:04:05.000000006Z","kind":"app","pod":"p","container":"app","detail":"sigterm mode=drain"}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.want {
			t.Errorf("got %s (%v)\nwant %s", b, err, c.want)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil || back.Kind != c.e.Kind || !back.Reported.Equal(c.e.Reported) ||
			(back.ExitCode == nil) != (c.e.ExitCode == nil) {
			t.Errorf("round trip of %s: %+v (%v)", b, back, err)
		}
	}
}
