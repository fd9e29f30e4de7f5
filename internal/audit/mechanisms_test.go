package audit

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Every entry of the prediction table has a case here, a workload whose score holds a finding of
// it, and each of its findings is in one of its phases and per its disruption: a new phase is an
// entry of Mechanisms and a case of this table, or this test fails naming it.
func TestEveryMechanismScores(t *testing.T) {
	f := kindWindows(t)
	three := "replicas: 3"
	behind := withService("replicas: 2", "", "      - name: a\n        image: a\n        ports: [{name: http, containerPort: 8080}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n"+
		"      - name: agent\n        image: g\n", "http") // a classic sidecar behind the app, without a preStop
	cases := map[string]struct {
		yaml string
		p99  time.Duration
	}{
		"propagation":         {deploy(three, ""), 0},
		"in-flight-cut":       {deploy(three, ""), 0},
		"sigkill":             {deploy(three, "lifecycle: {preStop: {sleep: {seconds: 2}}}", "terminationGracePeriodSeconds: 3"), 5 * time.Second},
		"no-endpoint-rollout": {strings.Replace(deploy("replicas: 2", ""), "selector:", "strategy: {type: Recreate}\n  selector:", 1), 0},
		"no-endpoint-drain":   {deploy("replicas: 1", ""), 0},
		"no-local-endpoint":   {deploy(three, "") + "---\napiVersion: v1\nkind: Service\nmetadata: {name: a-np}\nspec:\n  type: NodePort\n  externalTrafficPolicy: Local\n  selector: {app: a}\n  ports: [{port: 80, targetPort: 8080}]\n", 0},
		"stale-address":       {deploy(three, "", "", "grpc") + headless(), 0},
		"sidecar-exit":        {behind, 0},
	}
	var names []string
	for _, m := range Mechanisms {
		if slices.Contains(names, m.Name) {
			t.Errorf("two entries named %s", m.Name)
		}
		names = append(names, m.Name)
		if len(m.Phases) == 0 || (m.Per != PerRollout && m.Per != PerDrain) || m.Applies == "" || m.score == nil {
			t.Errorf("%s: phases %v, per %q, applies %q: an entry names its phases, its disruption, where it applies and its rule", m.Name, m.Phases, m.Per, m.Applies)
		}
		c, ok := cases[m.Name]
		if !ok {
			t.Errorf("mechanism %s has no case in this test: give it a workload it scores", m.Name)
			continue
		}
		inv := &Inventory{}
		if err := inv.Add([]byte(c.yaml)); err != nil {
			t.Fatal(err)
		}
		inv.Join()
		r := ScoreOne(inv.Workloads[0], f, Options{RequestP99: c.p99})
		found := false
		for _, fd := range r.Findings {
			if fd.Mechanism != m.Phases[0] || fd.Per != m.Per || fd.Status == Covered {
				continue
			}
			found = true
			if fd.Why == "" || fd.Window == "" || (fd.Status != Blocked && fd.Fix == "") {
				t.Errorf("%s: a finding without its why, window or fix: %+v", m.Name, fd)
			}
		}
		if !found {
			t.Errorf("%s: its case scores no %s finding per %s that is not covered: %+v", m.Name, m.Phases[0], m.Per, r.Findings)
		}
	}
	for name := range cases {
		if !slices.Contains(names, name) {
			t.Errorf("case %s names no entry of Mechanisms", name)
		}
	}
	// Every finding of every case comes from an entry, in its phases and per its disruption.
	for name, c := range cases {
		inv := &Inventory{}
		if err := inv.Add([]byte(c.yaml)); err != nil {
			t.Fatal(err)
		}
		inv.Join()
		s := scoringOf(inv.Workloads[0], f, Options{RequestP99: c.p99})
		for _, m := range Mechanisms {
			for _, fd := range m.score(s) {
				if !slices.Contains(m.Phases, fd.Mechanism) || fd.Per != m.Per {
					t.Errorf("case %s: entry %s gave a finding in %s per %s; it states %v per %s", name, m.Name, fd.Mechanism, fd.Per, m.Phases, m.Per)
				}
			}
		}
	}
}
