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

// The rule as check.Recommendation documents it, on kind's routed time of the README's
// example rows (3.937 s, request p99 145 ms: ≥ 5 s, ≥ 8 s), and on the routed time rollcheck
// init assumes.
func TestSettingsRule(t *testing.T) {
	pre, grace := Settings(3937*time.Millisecond, 145*time.Millisecond)
	if pre != 5*time.Second || grace != 8 {
		t.Errorf("Settings(3.937s, 145ms) = %s, %d; want 5s, 8", pre, grace)
	}
	if pre, _ := Settings(AssumedKindRouted, 0); pre != 5*time.Second {
		t.Errorf("Settings(AssumedKindRouted) = %s, want 5s", pre)
	}
	if pre, _ := Settings(3*time.Second, 0); pre != 4*time.Second {
		t.Errorf("Settings(3s) = %s, want 4s (a whole second is not rounded up again)", pre)
	}
	if g := Grace(5*time.Second, 2*time.Second); g != 9 {
		t.Errorf("Grace(5s, 2s) = %d, want 9", g)
	}
}
