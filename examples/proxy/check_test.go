// Package proxy_test checks the example of a check through a user's own proxy: the check file
// and its manifests make valid plans, with the load sent through nginx. `make check
// SPEC=examples/proxy/check.yaml` runs it on kind.
package proxy_test

import (
	"testing"

	"github.com/rollcheck/rollcheck/spec"
)

func TestCheckFile(t *testing.T) {
	c, err := spec.Load("check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := c.Plans()
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 {
		t.Fatalf("%d plans, want as-is and prestop-5s", len(plans))
	}
	for _, r := range plans {
		p := r.Plan()
		if l := p.Load; l.URL != "http://front/" || l.UpstreamHeader != "X-Upstream" || l.Resolve != "web-headless" {
			t.Errorf("%s: load %+v, want it through nginx's Service front", p.Variant.Name, l)
		}
		if _, err := r.Objects("ns", 0); err != nil {
			t.Errorf("%s: %v", p.Variant.Name, err)
		}
	}
}
