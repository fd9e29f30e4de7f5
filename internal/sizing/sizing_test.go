package sizing

import (
	"testing"
	"time"
)

// The rule as check.Recommendation documents it, on kind's routed time of the README's
// example rows (3.937 s, request p99 145 ms: ≥ 5 s, ≥ 8 s).
func TestRule(t *testing.T) {
	pre := PreStop(3937 * time.Millisecond)
	if pre != 5*time.Second {
		t.Errorf("PreStop(3.937s) = %s, want 5s", pre)
	}
	if g := GraceSeconds(pre, 145*time.Millisecond); g != 8 {
		t.Errorf("GraceSeconds(5s, 145ms) = %d, want 8", g)
	}
	if got := PreStop(AssumedKindRouted); got != 5*time.Second {
		t.Errorf("PreStop(AssumedKindRouted) = %s, want 5s", got)
	}
	if got := PreStop(3 * time.Second); got != 4*time.Second {
		t.Errorf("PreStop(3s) = %s, want 4s (a whole second is not rounded up again)", got)
	}
}
