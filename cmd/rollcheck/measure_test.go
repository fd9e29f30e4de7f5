package main

import (
	"strings"
	"testing"
)

// Bad flags are one line and exit 2, before any cluster work.
func TestWindowsMeasureFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--deletions", "0"}, "--deletions 0: want 1 to 50"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--node", "a", "--nodes-of", "shop"}, "not both"},
		{[]string{"--image-registry", "registry.example:5000"}, "is for an existing cluster"},
		{[]string{"--context", "prod", "--image-registry", "not a registry!"}, "--image-registry"},
		// Every problem at once, on one line.
		{[]string{"--deletions", "99", "--node", "a", "--nodes-of", "shop"}, "--deletions 99: want 1 to 50; give --node or --nodes-of, not both"},
	} {
		var stdout, stderr strings.Builder
		code := dispatch(t.Context(), commands, "rollcheck", append([]string{"windows", "measure"}, c.args...), &stdout, &stderr)
		if msg := stderr.String(); code != exitBadInput || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}
