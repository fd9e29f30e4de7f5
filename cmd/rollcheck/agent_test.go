package main

import (
	"bytes"
	"strings"
	"testing"
)

// The agent commands reach the moved programs: a bad flag is their own one-line refusal and
// exit 2, through dispatch (rollcheck agent ...) as through main's early path (agentProgram),
// and under the name app the executable is the sample app. rollcheck help does not list agent,
// and rollcheck help agent describes it.
func TestAgentDispatch(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "load", "--bogus"}, "rollcheck-load: flag provided but not defined: -bogus"},
		{[]string{"agent", "load", "--rate", "10"}, "rollcheck-load: "},
		{[]string{"agent", "app", "--bogus"}, "app: flag provided but not defined: -bogus"},
		{[]string{"agent", "app", "sleep"}, "app: usage: app sleep DURATION"},
	} {
		code, stdout, stderr := rollcheck(tc.args...)
		if code != exitBadInput || stdout != "" || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rollcheck %q: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", tc.args, code, stdout, stderr, tc.want)
		}
		prog, rest := agentProgram(tc.args)
		if prog == nil {
			t.Errorf("agentProgram(%q) = nil", tc.args)
			continue
		}
		var out, errb bytes.Buffer
		if code := prog(rest, &out, &errb); code != exitBadInput || !strings.HasPrefix(errb.String(), tc.want) {
			t.Errorf("agentProgram(%q): exit %d, stderr %q", tc.args, code, errb.String())
		}
	}
	if prog, _ := agentProgram([]string{"agent", "nope"}); prog != nil {
		t.Error("agentProgram(agent nope) is a program")
	}
	if code, _, stderr := rollcheck("agent", "nope"); code != exitBadInput || !strings.HasPrefix(stderr, `rollcheck agent: unknown command "nope"`) {
		t.Errorf("rollcheck agent nope: exit %d, stderr %q", code, stderr)
	}
	for arg0, want := range map[string]bool{"/app": true, "app": true, "/rollcheck": false, "rollcheck": false, "/usr/local/bin/app-x": false} {
		if got := asProgram(arg0) != nil; got != want {
			t.Errorf("asProgram(%q) is a program: %v, want %v", arg0, got, want)
		}
	}
	var errb bytes.Buffer
	if code := asProgram("/app")([]string{"sleep", "1h"}, &bytes.Buffer{}, &errb); code != exitBadInput || !strings.HasPrefix(errb.String(), `app: sleep "1h": want a duration`) {
		t.Errorf("/app sleep 1h: exit %d, stderr %q", code, errb.String())
	}
	_, list, _ := rollcheck("help")
	if strings.Contains(list, "\n  agent ") {
		t.Errorf("rollcheck help lists agent:\n%s", list)
	}
	for _, args := range [][]string{{"help", "agent"}, {"help", "agent", "load"}, {"help", "agent", "app"}} {
		code, stdout, stderr := rollcheck(args...)
		if code != exitPass || stderr != "" || !strings.HasPrefix(stdout, "usage: rollcheck "+strings.Join(args[1:], " ")) {
			t.Errorf("rollcheck %q: exit %d, stderr %q, stdout %q", args, code, stderr, stdout)
		}
	}
}
