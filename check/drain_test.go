package check

import (
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/loadgen"
)

// drainResult is drain n of a drain-node row: blocked, or drained 12 s after its start with its
// replacements ready 15 s after it.
func drainResult(n int, blocked bool) DisruptionResult {
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := DisruptionResult{Kind: DrainNode, N: n, Started: start, Requests: 100, SuccessRatio: 1,
		Drain: &Drain{Node: "kind-worker", Pods: []string{"app-1"}, Timeout: time.Minute}}
	if blocked {
		d.Drain.Refused429, d.Drain.Blocked = 12, true
	} else {
		d.Drain.Evictions, d.Drain.Refused429 = 1, 2
		d.Drain.Drained, d.Drain.ReplacementsReady = start.Add(12*time.Second), start.Add(15500*time.Millisecond)
	}
	return d
}

func TestJudgeDrains(t *testing.T) {
	s := summary(300, nil)
	for _, tc := range []struct {
		name   string
		o      Outcome
		ds     []DisruptionResult
		status Status
		reason string
	}{
		{"every drain blocked", Zero().WithDrainBlocked(), []DisruptionResult{drainResult(1, true), drainResult(2, true)}, Pass,
			"0 of 300 requests failed (0.000%); every drain blocked (2 drains blocked: 24 evictions refused (429) by the PodDisruptionBudget over 60 s each)"},
		{"one drain finished", Zero().WithDrainBlocked(), []DisruptionResult{drainResult(1, true), drainResult(2, false)}, Fail,
			"drain-node 2/2 was not blocked (node kind-worker: 1 evictions, 2 refused (429), drained in 12 s, replacements ready 15.5 s after its start), expected every drain blocked"},
		{"no drain recorded", Zero().WithDrainBlocked(), nil, HarnessFault, "no drain was recorded"},
		{"a blocked drain unexpected", Zero(), []DisruptionResult{drainResult(1, false), drainResult(2, true)}, Fail,
			"drain-node 2/2: node kind-worker: drain blocked: 12 evictions refused (429) by the PodDisruptionBudget over 60 s, 0 of 1 evictions accepted: the pods it was to take away never went"},
		{"drains that finished", Zero(), []DisruptionResult{drainResult(1, false)}, Pass, "0 of 300 requests failed (0.000%)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.o.Judge(s, tc.ds...)
			if v.Status != tc.status || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("Judge = %s %q, want %s with %q", v.Status, v.Reason, tc.status, tc.reason)
			}
		})
	}
	// Failures fail the row by the zero rule first, blocked or not.
	if v := Zero().WithDrainBlocked().Judge(summary(300, map[loadgen.Class]int{loadgen.ClassRefused: 1}), drainResult(1, true)); v.Status != Fail {
		t.Errorf("a blocked drain with a failure: %+v", v)
	}
}

func TestDrainOutcomeString(t *testing.T) {
	if got := Zero().WithDrainBlocked().String(); got != "0 failures, drain blocked" {
		t.Errorf("String = %q", got)
	}
}

func TestDrainDefaultsAndApplied(t *testing.T) {
	p := webPlan(t)
	p.Disruption = Disruption{Kind: DrainNode, Count: 2}
	p.Variant.PDB = &PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	if _, err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := p.WithDefaults().Disruption.DrainTimeout; got != DefaultDrainTimeout {
		t.Errorf("drainTimeout default %s, want %s", got, DefaultDrainTimeout)
	}
	a := p.Applied()
	if a.DrainTimeout != DefaultDrainTimeout || a.PDB == nil || a.PDB.String() != "maxUnavailable=1" || a.PDBFromManifests {
		t.Errorf("Applied: drainTimeout %s, pdb %v (from manifests %t)", a.DrainTimeout, a.PDB, a.PDBFromManifests)
	}
	if s := a.String(); !strings.Contains(s, " pdb=maxUnavailable:1 ") || !strings.HasSuffix(s, " drain-node×2") {
		t.Errorf("String = %q", s)
	}
	// Another disruption with a budget: allowed, with a warning that it changes nothing.
	p.Disruption = Disruption{Kind: DeletePod}
	warnings, err := p.Validate()
	if err != nil || !strings.Contains(strings.Join(warnings, "; "), "pdb maxUnavailable=1: only evictions (drain-node) honour a PodDisruptionBudget; delete-pod deletes or replaces pods without asking it") {
		t.Errorf("Validate = %q, %v", warnings, err)
	}
}

func TestPlanObjectsWithPDB(t *testing.T) {
	p := webPlan(t)
	p.Disruption.Kind = DrainNode
	p.Variant.PDB = &PDB{MinAvailable: ptr.To(intstr.FromString("50%"))}
	objs, err := mustResolve(t, p).Objects("rc-web", 0)
	if err != nil {
		t.Fatal(err)
	}
	var pdb *policyv1.PodDisruptionBudget
	for _, o := range objs {
		if b, ok := o.(*policyv1.PodDisruptionBudget); ok {
			pdb = b
		}
	}
	dep := deploymentOf(t, p.App.Objects, "web")
	switch {
	case pdb == nil:
		t.Fatalf("no PodDisruptionBudget in %d objects", len(objs))
	case pdb.Name != PDBName || pdb.Namespace != "rc-web" || pdb.APIVersion != "policy/v1" || pdb.Kind != "PodDisruptionBudget":
		t.Errorf("budget %s %s/%s", pdb.APIVersion, pdb.Namespace, pdb.Name)
	case pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.String() != "50%" || pdb.Spec.MaxUnavailable != nil:
		t.Errorf("budget spec %+v", pdb.Spec)
	case pdb.Spec.Selector == nil || len(pdb.Spec.Selector.MatchLabels) == 0 || pdb.Spec.Selector.MatchLabels["app"] != dep.Spec.Selector.MatchLabels["app"]:
		t.Errorf("budget selector %v, want the Deployment's matchLabels %v", pdb.Spec.Selector, dep.Spec.Selector.MatchLabels)
	}
	// The manifests' own budget is what Applied reports when the Variant has none.
	p.Variant.PDB = nil
	p.App.Objects = append(p.App.Objects, decodeAll(t, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 2, selector: {matchLabels: {app: web}}}\n")...)
	if a := p.Applied(); !a.PDBFromManifests || a.PDB == nil || a.PDB.String() != "minAvailable=2" {
		t.Errorf("Applied pdb %v from manifests %t", a.PDB, a.PDBFromManifests)
	}
}
