package windowsprobe

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rollcheck/rollcheck/internal/oneline"
)

// A measure's options: every problem at once, in the order the flags are read.
func TestOptionsProblems(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Deletions: 6}, ""},
		{Options{Deletions: 50, Nodes: []string{"a"}}, ""},
		{Options{Deletions: 0}, "--deletions 0: want 1 to 50"},
		{Options{Deletions: 99, Nodes: []string{"a"}, NodesOf: "shop"}, "--deletions 99: want 1 to 50; give --node or --nodes-of, not both"},
	} {
		err := oneline.Join(tc.o.Problems())
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// Windows' error keeps its message and is told apart as ErrNoWindows.
func TestNoWindows(t *testing.T) {
	inner := errors.New("no row with an explanation")
	var err error = noWindows{inner}
	if !errors.Is(err, ErrNoWindows) || !errors.Is(err, inner) || err.Error() != inner.Error() || errors.Is(err, ErrInterrupted) {
		t.Errorf("%v: want ErrNoWindows with the message of %v", err, inner)
	}
}
