package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
)

// A row that could not read kube-proxy's metrics says why, once per reason, under the table.
func TestKubeProxyUnmeasuredSaysWhy(t *testing.T) {
	reason := "list the kube-proxy pods: forbidden; not measured without the rights get pods/proxy in namespace kube-system (examples/rbac/kube-proxy-metrics.yaml grants them)"
	row := func() Row {
		return Row{Explanation: &check.Explanation{Propagation: check.PropagationSummary{KubeProxyError: reason}}}
	}
	var b strings.Builder
	writeKubeProxyUnmeasured(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, []Row{row(), row()})
	if want := "kube-proxy's programming lag not measured (2 row(s)): " + reason; !strings.Contains(b.String(), want) {
		t.Errorf("got %q, want it to hold %q", b.String(), want)
	}
}
