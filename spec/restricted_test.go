package spec

import (
	"testing"

	"github.com/rollcheck/rollcheck/internal/podsecurity"
)

// The example check's app meets the restricted Pod Security Standard as every variant applies
// it, so that it runs in namespaces that enforce it (ROLLCHECK_POD_SECURITY=restricted, shown by
// make e2e-rbac).
func TestExampleCheckIsRestricted(t *testing.T) {
	c, err := Load("../examples/check/check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := c.Plans()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plans {
		p, d := r.Plan(), r.Deployment()
		why, err := podsecurity.Restricted(d.Spec.Template.ObjectMeta, d.Spec.Template.Spec)
		if err != nil || len(why) > 0 {
			t.Errorf("%s: %v %v", p.Variant.Name, why, err)
		}
	}
}
