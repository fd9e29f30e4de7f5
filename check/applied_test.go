package check

import (
	"testing"
	"time"
)

func TestConfigString(t *testing.T) {
	base := Applied{Name: "prestop-5s", PreStop: PreStop{Sleep: 5 * time.Second}, OnSIGTERM: "drain", GraceSeconds: 30, Method: "GET",
		Disruption: RolloutRestart, Count: 3}
	for _, tc := range []struct {
		name       string
		mod        func(*Applied)
		want       string
		wantShape  string
		wantDisrup string
	}{
		{"as is", func(*Applied) {},
			"prestop-5s: preStop=sleep:5s sigterm=drain grace=30s keepalive=off rollout-restart×3",
			"preStop=sleep:5s sigterm=drain grace=30s keepalive=off", "rollout-restart×3"},
		{"slow, patched, keep-alive POST", func(c *Applied) {
			c.RequestDuration, c.Patched, c.KeepAlive, c.Method = 5*time.Second, true, true, "POST"
		}, "prestop-5s: preStop=sleep:5s sigterm=drain grace=30s req=5s +patch keepalive=on POST rollout-restart×3",
			"preStop=sleep:5s sigterm=drain grace=30s req=5s +patch keepalive=on POST", "rollout-restart×3"},
		// The app's warm-up, when known (the sample app's --ready-delay).
		{"slow to turn ready", func(c *Applied) {
			c.RequestDuration, c.ReadyDelay = 5*time.Second, 2*time.Second
		}, "prestop-5s: preStop=sleep:5s sigterm=drain grace=30s req=5s readyDelay=2s keepalive=off rollout-restart×3",
			"preStop=sleep:5s sigterm=drain grace=30s req=5s readyDelay=2s keepalive=off", "rollout-restart×3"},
		// A user's app: what it does on SIGTERM is not known.
		{"no sigterm, exec hook", func(c *Applied) {
			c.OnSIGTERM, c.PreStop, c.Disruption, c.Count, c.Method = "", PreStop{Exec: []string{"/app", "sleep", "5s"}}, ForceDelete, 1, ""
		}, "prestop-5s: preStop=exec:/app sleep 5s grace=30s keepalive=off force-delete×1",
			"preStop=exec:/app sleep 5s grace=30s keepalive=off", "force-delete×1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.mod(&c)
			if got := c.String(); got != tc.want {
				t.Errorf("String() = %q\n        want %q", got, tc.want)
			}
			if got := c.Shape(); got != tc.wantShape {
				t.Errorf("Shape() = %q\n       want %q", got, tc.wantShape)
			}
			if got := c.DisruptionString(); got != tc.wantDisrup {
				t.Errorf("DisruptionString() = %q, want %q", got, tc.wantDisrup)
			}
		})
	}
}
