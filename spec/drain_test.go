package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/rollcheck/rollcheck/check"
)

// A drain-node disruption, a budget and an expected blocked drain read from a check file into
// the Plan that Go would build, and the budget is one of the row's objects.
func TestDrainCheck(t *testing.T) {
	c, err := Parse([]byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
disruptions: [{kind: drain-node, count: 2, drainTimeout: 30s}]
variants:
- name: spread
  replicas: 3
  pdb: {maxUnavailable: 1}
  expect: {failures: 0}
- name: single
  replicas: 1
  pdb: {minAvailable: 100%}
  expect: {failures: 0, drainBlocked: true}
`), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := plansOf(c.Plans())
	if err != nil || len(plans) != 2 {
		t.Fatalf("Plans: %d plans, %v", len(plans), err)
	}
	spread, single := plans[0], plans[1]
	if d := spread.Disruption; d != (check.Disruption{Kind: check.DrainNode, Count: 2, DrainTimeout: 30 * time.Second}) {
		t.Errorf("disruption %+v", d)
	}
	if b := spread.Variant.PDB; b == nil || b.String() != "maxUnavailable=1" || b.MaxUnavailable.IntVal != 1 {
		t.Errorf("spread pdb %v", b)
	}
	if b := single.Variant.PDB; b == nil || b.String() != "minAvailable=100%" {
		t.Errorf("single pdb %v", b)
	}
	if e := single.Variant.Expect; !reflect.DeepEqual(e, check.Zero().WithDrainBlocked()) {
		t.Errorf("single expect %+v", e)
	}
	if spread.Variant.Expect.DrainBlocked {
		t.Error("spread expects a blocked drain")
	}
	objs, err := mustResolve(t, single).Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if b, ok := o.(*policyv1.PodDisruptionBudget); ok {
			found = b.Spec.MinAvailable.String() == "100%" && b.Spec.Selector.MatchLabels["app"] == "web"
		}
	}
	if !found {
		t.Error("no PodDisruptionBudget of minAvailable 100% selecting app=web in the row's objects")
	}
}

func TestDrainCheckRejects(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"disruptions: [{kind: rollout-restart, drainTimeout: 30s}]\nvariants: [{name: a, expect: {failures: 0}}]",
			"disruption drainTimeout 30s: only for drain-node, not rollout-restart"},
		{"disruptions: [{kind: drain-node}]\nvariants: [{name: a, pdb: {minAvailable: 1, maxUnavailable: 1}, expect: {failures: 0}}]",
			"pdb: set exactly one of minAvailable and maxUnavailable"},
		{"disruptions: [{kind: drain-node}]\nvariants: [{name: a, pdb: {maxUnavailible: 1}, expect: {failures: 0}}]",
			`unknown field "variants[0].pdb.maxUnavailible"`},
		{"disruptions: [{kind: delete-pod}]\nvariants: [{name: a, expect: {failures: 0, drainBlocked: true}}]",
			"expect drainBlocked: only a drain-node disruption can be blocked, not delete-pod"},
		{"disruptions: [{kind: drain-node}]\nvariants: [{name: a, expect: {maxFailureRatio: 0.01, drainBlocked: true}}]",
			"expect drainBlocked: only with zero failures"},
	} {
		c, err := Parse([]byte("apiVersion: rollcheck.io/v1alpha1\nkind: Check\napp: {manifests: [web.yaml], port: 8080}\n"+tc.doc+"\n"), "testdata")
		if err == nil {
			_, _, err = plansOf(c.Plans())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n error %v\n want %q", tc.doc, err, tc.want)
		}
	}
}

// externalTrafficPolicy Local, the load entering at a node and a drain of that node read from a
// check file; Local with load from a pod is refused before any cluster work.
func TestEntryDrainCheck(t *testing.T) {
	const file = `
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
load: {from: %s, entry: node}
disruptions: [{kind: drain-node, count: 1, node: entry}]
variants:
- name: local
  replicas: 4
  externalTrafficPolicy: Local
  expect: {failuresExpected: {classes: [timeout]}}
`
	c, err := Parse([]byte(strings.ReplaceAll(file, "%s", "host")), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := plansOf(c.Plans())
	if err != nil || len(plans) != 1 {
		t.Fatalf("Plans: %d plans, %v", len(plans), err)
	}
	p := plans[0]
	if p.Load.Entry != check.EntryNode || p.Disruption.Node != check.DrainEntry || p.Variant.ExternalTrafficPolicy != "Local" {
		t.Errorf("load %+v, disruption %+v, policy %q", p.Load, p.Disruption, p.Variant.ExternalTrafficPolicy)
	}
	c, err = Parse([]byte(strings.ReplaceAll(file, "%s", "cluster")), "testdata")
	if err == nil {
		_, _, err = plansOf(c.Plans())
	}
	if err == nil || !strings.Contains(err.Error(), "load entry node: only load from the host enters at a node") {
		t.Errorf("Local from a load pod: %v", err)
	}
}

// A check file takes every kind of check's table (each with what it needs: replicas, grace).
func TestEveryDisruptionKind(t *testing.T) {
	for _, d := range check.Disruptions {
		c, err := Parse([]byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
disruptions: [{kind: `+string(d.Kind)+`, count: 1}]
variants:
- name: three
  replicas: 3
  terminationGracePeriodSeconds: 30
  expect: {failures: 0}
`), "testdata")
		if err != nil {
			t.Fatalf("%s: %v", d.Kind, err)
		}
		plans, _, err := plansOf(c.Plans())
		if err != nil || len(plans) != 1 || plans[0].Disruption.Kind != d.Kind {
			t.Errorf("%s: a check file of it: %d plans, %v", d.Kind, len(plans), err)
		}
	}
}
