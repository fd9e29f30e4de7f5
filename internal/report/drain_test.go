package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

func TestDrainSection(t *testing.T) {
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	done := check.DisruptionResult{Kind: check.DrainNode, N: 1, Started: start, Drain: &check.Drain{Node: "kind-worker", Pods: []string{"a", "b", "c"},
		Evictions: 3, Refused429: 4, Drained: start.Add(14200 * time.Millisecond), ReplacementsReady: start.Add(12 * time.Second), Timeout: time.Minute}}
	blocked := check.DisruptionResult{Kind: check.DrainNode, N: 2, Started: start.Add(time.Minute), Drain: &check.Drain{Node: "kind-worker2", Pods: []string{"d"},
		Refused429: 12, Blocked: true, Timeout: time.Minute}}
	r := check.Row{Config: check.Applied{Name: "pdb", Disruption: check.DrainNode, Count: 2, PDB: &check.PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
		Summary: loadgen.Summary{Requests: 1000}, Verdict: check.Verdict{Status: check.Pass}, Disruptions: []check.DisruptionResult{done, blocked}}
	other := check.Row{Config: check.Applied{Name: "naive", Disruption: check.RolloutRestart, Count: 1}, Disruptions: []check.DisruptionResult{{Kind: check.RolloutRestart, N: 1}}}
	var b bytes.Buffer
	if err := (Run{Rows: []check.Row{r, other}}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, "## Node drains")
	if i < 0 {
		t.Fatalf("no drain section in:\n%s", out)
	}
	section := out[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	for _, want := range []string{
		"| 1/2 | kind-worker | maxUnavailable=1 | 3 of 3 | 4 | 14.2 s | 12.0 s | no |",
		"| 2/2 | kind-worker2 | maxUnavailable=1 | 0 of 1 | 12 | — | — | drain blocked: 12 evictions refused (429) by the PodDisruptionBudget over 60 s |",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("missing %q in:\n%s", want, section)
		}
	}
	if strings.Contains(section, "naive") {
		t.Error("a row that drained nothing is in the drain section")
	}
	// A repeated row's runs share its name: each drain says its run.
	r.Repeat = 2
	b.Reset()
	_ = (Run{Rows: []check.Row{r}}).WriteMarkdown(&b)
	if !strings.Contains(b.String(), "| run 2: 2/2 | kind-worker2 |") {
		t.Errorf("a repeated row's drain does not name its run:\n%s", b.String())
	}
	b.Reset()
	_ = (Run{Rows: []check.Row{other}}).WriteMarkdown(&b)
	if strings.Contains(b.String(), "## Node drains") {
		t.Error("a drain section without drains")
	}
}
