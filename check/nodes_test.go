package check

import "testing"

func TestNodesCrossed(t *testing.T) {
	for _, tc := range []struct {
		n       *Nodes
		crossed bool
		str     string
	}{
		{nil, false, "not read"},
		{&Nodes{App: []string{"w1", "w2"}}, false, "app on w1, w2; load from the host"},
		{&Nodes{App: []string{"w1", "w2"}, Load: []string{"rollcheck-load@cp"}}, true, "app on w1, w2; load rollcheck-load@cp (every request crosses nodes)"},
		{&Nodes{App: []string{"w1", "w2"}, Load: []string{"l-1@cp", "l-2@w2"}}, false, "app on w1, w2; load l-1@cp, l-2@w2"},
		{&Nodes{App: []string{"n"}, Load: []string{"rollcheck-load@n"}}, false, "app on n; load rollcheck-load@n"},
	} {
		if got := tc.n.Crossed(); got != tc.crossed {
			t.Errorf("%v.Crossed() = %v, want %v", tc.n, got, tc.crossed)
		}
		if got := tc.n.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
	}
}
