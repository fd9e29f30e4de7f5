package live

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/rollcheck/rollcheck/internal/access/accesstest"
)

// The audit's rights are reviewed in the namespace read before any list call: a right denied is
// one line naming it and examples/rbac/audit.yaml, and nothing is listed.
func TestReadAllowed(t *testing.T) {
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schemaGVR]string{
		Routes[0]: "HTTPRouteList", Routes[1]: "GRPCRouteList"})
	var asked []string
	cs := accesstest.Reviews(func(a *authorizationv1.ResourceAttributes) bool {
		asked = append(asked, a.Namespace)
		return a.Resource == "statefulsets"
	})
	_, err := readAllowed(context.Background(), cs, dyn, "shop")
	if err == nil || !strings.Contains(err.Error(), "list statefulsets") || !strings.Contains(err.Error(), "audit.yaml") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a right denied: %v; want one line naming list statefulsets and audit.yaml", err)
	}
	for _, ns := range asked {
		if ns != "shop" {
			t.Errorf("a right reviewed in namespace %q, want shop", ns)
		}
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" {
			t.Errorf("a list of %s before the rights were granted", a.GetResource().Resource)
		}
	}
	inv, err := readAllowed(context.Background(), accesstest.Reviews(func(*authorizationv1.ResourceAttributes) bool { return false }), dyn, "shop")
	if err != nil || inv == nil || len(inv.Workloads) != 0 {
		t.Errorf("every right granted, no workload: %v, %+v", err, inv)
	}
}
