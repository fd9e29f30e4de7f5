package analyze

import (
	"testing"
	"time"
)

// The formula's arithmetic: preStop = routed + 1 s rounded up; grace = preStop + p99 + 2 s
// rounded up; Fit compares both.
func TestSettingsAndFit(t *testing.T) {
	pre, grace := Settings(1200*time.Millisecond, 900*time.Millisecond)
	if pre != 3*time.Second || grace != 6 {
		t.Errorf("Settings(1.2s, 900ms) = %s, %d; want 3s, 6 (ceil 2.2 s; ceil 5.9 s)", pre, grace)
	}
	for _, c := range []struct {
		pre   time.Duration
		known bool
		own   time.Duration
		grace int64
		want  string
	}{
		{5 * time.Second, true, 0, 30, "headroom"},
		{2 * time.Second, true, 0, 30, "short"},
		{2 * time.Second, true, time.Second, 30, "headroom"}, // the app's own delay counts
		{5 * time.Second, true, 0, 5, "short"},
		{0, false, 0, 30, ""},
	} {
		if got := Fit(c.pre, c.known, c.own, c.grace, pre, grace); got != c.want {
			t.Errorf("Fit(%s, %t, %s, %d) = %q, want %q", c.pre, c.known, c.own, c.grace, got, c.want)
		}
	}
	if (Windows{KubeProxy: Window{N: 3, P99: time.Second}}).Measured() {
		t.Error("kube-proxy's programming alone is no routed window")
	}
}
