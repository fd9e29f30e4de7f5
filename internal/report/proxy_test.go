package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

func TestProxySection(t *testing.T) {
	r := check.Row{Config: check.Applied{Name: "haproxy-dns", LoadURL: "http://front/", UpstreamHeader: "X-Upstream", Disruption: check.RolloutRestart, Count: 3},
		Summary: loadgen.Summary{Requests: 1000, Failed: 30, Proxy: true, ProxyTold: true,
			Failures: map[loadgen.Class]int{loadgen.ProxyClass(503): 20, loadgen.ClassTimeout: 10}},
		Verdict: check.Verdict{Status: check.Fail},
		Explanation: &check.Explanation{Phases: map[timeline.Phase]int{timeline.PhaseProxyPropagation: 25, timeline.PhaseProxyNoUpstream: 5},
			Propagation: check.PropagationSummary{Proxy: check.Summarize(nil), ProxyStale: 1}}}
	var b bytes.Buffer
	if err := (Run{Rows: []check.Row{r}}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"## Through a proxy", "http://front/", "proxy_503 20", "timeout 10", "proxy-no-upstream 5, proxy-propagation 25", "| fail |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out[strings.Index(out, "## Through"):])
		}
	}
	// An app that names no pod: who answered cannot be told.
	r.Summary.ProxyTold = false
	b.Reset()
	_ = (Run{Rows: []check.Row{r}}).WriteMarkdown(&b)
	if !strings.Contains(b.String(), "not told (the app named no pod)") {
		t.Error("an untold row does not say so")
	}
	if !strings.Contains(b.String(), "upstream named in X-Upstream") {
		t.Error("the row does not say which header named the upstream")
	}
}
