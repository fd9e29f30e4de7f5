package check

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every DisruptionKind constant has one entry in Disruptions, with what the docs and the
// checks need, and DisruptionKinds is the table's kinds in its order.
func TestDisruptionsTable(t *testing.T) {
	consts := kindConstants(t)
	seen := map[DisruptionKind]bool{}
	for _, d := range Disruptions {
		if seen[d.Kind] {
			t.Errorf("%s: two entries in Disruptions; keep one", d.Kind)
		}
		seen[d.Kind] = true
		if !slices.Contains(consts, d.Kind) {
			t.Errorf("%s: an entry of Disruptions but no DisruptionKind constant in plan.go; declare it there", d.Kind)
		}
		if d.Doc == "" || strings.Contains(d.Doc, "|") || strings.Contains(d.Doc, "\n") {
			t.Errorf("%s: Doc %q: say in one line, without |, what it does (docs/reference.md's table is made of it)", d.Kind, d.Doc)
		}
		if !slices.Contains([]Takes{TakesRollout, TakesOne, TakesNode, TakesAll}, d.Takes) {
			t.Errorf("%s: Takes %q: say which pods it takes away (TakesRollout, TakesOne, TakesNode or TakesAll)", d.Kind, d.Takes)
		}
		if (d.GraceAbove > 0) != (d.GraceWhy != "") {
			t.Errorf("%s: GraceAbove %s with GraceWhy %q: set both or neither", d.Kind, d.GraceAbove, d.GraceWhy)
		}
		if d.Evicts && d.Rights == "" {
			t.Errorf("%s: evicts pods but names no Rights (the cordon and the evictions need their own)", d.Kind)
		}
		if d.Kind.Info() != d {
			t.Errorf("%s: Info() is not its entry", d.Kind)
		}
	}
	for _, k := range consts {
		if !seen[k] {
			t.Errorf("DisruptionKind %s has no entry in Disruptions (check/disruptions.go): add one, and its runner in internal/disrupt", k)
		}
	}
	if len(DisruptionKinds) != len(Disruptions) {
		t.Fatalf("DisruptionKinds %v, Disruptions has %d entries", DisruptionKinds, len(Disruptions))
	}
	for i, k := range DisruptionKinds {
		if k != Disruptions[i].Kind {
			t.Errorf("DisruptionKinds[%d] = %s, the table's is %s", i, k, Disruptions[i].Kind)
		}
	}
	if got := DisruptionKind("explode").Info(); got != (DisruptionInfo{Kind: "explode"}) {
		t.Errorf("an unknown kind's Info: %+v, want only its Kind", got)
	}
}

// kindConstants is every constant of type DisruptionKind that plan.go declares.
func kindConstants(t *testing.T) []DisruptionKind {
	t.Helper()
	src, err := os.ReadFile("plan.go")
	if err != nil {
		t.Fatal(err)
	}
	var ks []DisruptionKind
	for _, m := range regexp.MustCompile(`(?m)^\s*[A-Z]\w*\s+DisruptionKind\s*=\s*"([^"]*)"`).FindAllSubmatch(src, -1) {
		ks = append(ks, DisruptionKind(m[1]))
	}
	if len(ks) == 0 {
		t.Fatal("plan.go declares no DisruptionKind constant")
	}
	return ks
}

// Validate accepts every kind of the table, names them all when it refuses one, and asks of
// each what its entry says.
func TestValidateAsksTheTable(t *testing.T) {
	_, err := Plan{Disruption: Disruption{Kind: "explode", Count: 1}}.Validate()
	if err == nil {
		t.Fatal("an unknown kind: no error")
	}
	for _, k := range DisruptionKinds {
		if !strings.Contains(err.Error(), string(k)) {
			t.Errorf("the error for an unknown kind does not offer %s: %v", k, err)
		}
	}
	for _, d := range Disruptions {
		if p := (Plan{Disruption: Disruption{Kind: d.Kind}}); p.WithDefaults().Disruption.DrainTimeout > 0 != d.Evicts {
			t.Errorf("%s: default drainTimeout %s, Evicts %v", d.Kind, p.WithDefaults().Disruption.DrainTimeout, d.Evicts)
		}
		_, err := Plan{Disruption: Disruption{Kind: d.Kind, Count: 1, DrainTimeout: DefaultDrainTimeout}}.Validate()
		if got := err != nil && strings.Contains(err.Error(), "drainTimeout"); got == d.Evicts {
			t.Errorf("%s: drainTimeout refused %v, but Evicts is %v: %v", d.Kind, got, d.Evicts, err)
		}
		_, err = Plan{Disruption: Disruption{Kind: d.Kind, Count: 1}, Load: Load{From: LoadFromCluster}}.Validate()
		if got := err != nil && strings.Contains(err.Error(), "send the load from the host"); got != (d.HostLoad != "") {
			t.Errorf("%s: load from the cluster refused %v, HostLoad %q: %v", d.Kind, got, d.HostLoad, err)
		}
	}
}
