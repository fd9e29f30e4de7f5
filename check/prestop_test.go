package check

import (
	"testing"
	"time"
)

// The one reading of a preStop's length, which check, init and audit share: every form a manifest
// may hold, known or named as unknown.
func TestPreStopDuration(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		ps   PreStop
		want time.Duration
		ok   bool
	}{
		{PreStop{None: true}, 0, true},
		{PreStop{}, 0, true},
		{PreStop{Sleep: 5 * s}, 5 * s, true},
		{PreStop{Exec: []string{"sleep", "5"}}, 5 * s, true},
		{PreStop{Exec: []string{"/bin/sleep", "2.5"}}, 2500 * time.Millisecond, true},
		{PreStop{Exec: []string{"sleep", "5s"}}, 5 * s, true},
		{PreStop{Exec: []string{"sh", "-c", "sleep 10"}}, 10 * s, true},
		{PreStop{Exec: []string{"/bin/sh", "-c", "exec sleep 3"}}, 3 * s, true},
		{PreStop{Exec: []string{"bash", "-c", "sleep 5"}}, 5 * s, true},
		{PreStop{Exec: []string{"sh", "-c", "sleep 10 && kill 1"}}, 0, false},
		{PreStop{Exec: []string{"/drain.sh"}}, 0, false},
		// A multi-call binary's applet: busybox, the sample app's own sleep.
		{PreStop{Exec: []string{"/bin/busybox", "sleep", "3"}}, 3 * s, true},
		{PreStop{Exec: []string{"/app", "sleep", "5s"}}, 5 * s, true},
		{PreStop{Exec: []string{"/app", "sleep", "forever"}}, 0, false},
		{PreStop{Exec: []string{"sh", "sleep", "5"}}, 0, false}, // a script named sleep
		{PreStop{Exec: []string{"sleep", "-1"}}, 0, false},
		{PreStop{Exec: []string{"sleep", "inf"}}, 0, false},
		{PreStop{Exec: []string{"sleep", "NaN"}}, 0, false},
		{PreStop{HTTPGet: "/prestop?sleep=5s"}, 5 * s, true},
		{PreStop{HTTPGet: "/prestop?sleep=-5s"}, 0, false},
		{PreStop{HTTPGet: "/prestop"}, 0, false},
		{PreStop{HTTPGet: "/prestop?wait=5s"}, 0, false},
		{PreStop{TCPSocket: true}, 0, false},
	} {
		if got, ok := c.ps.Duration(); got != c.want || ok != c.ok {
			t.Errorf("%s: %s, %t; want %s, %t", c.ps, got, ok, c.want, c.ok)
		}
	}
}
