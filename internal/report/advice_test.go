package report

import (
	"strings"
	"testing"
)

// The note on pods killed without a word of SIGTERM names the PID 1 only when the app's own
// lines show it speaks; without them it says rollcheck cannot tell.
func TestPID1Note(t *testing.T) {
	if n := PID1Note(1, true, 10); !strings.Contains(n, "PID 1 did not pass SIGTERM on") {
		t.Errorf("with lines: %q", n)
	}
	if n := PID1Note(1, false, 10); !strings.Contains(n, "cannot tell which") || strings.Contains(n, "did not pass") {
		t.Errorf("without lines: %q", n)
	}
	if PID1Note(0, true, 10) != "" {
		t.Error("a note with no pod unheard")
	}
}
