package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLoadPlacement(t *testing.T) {
	free := loadPlacement{}
	if free.affinity() != nil || free.nodeSelector() != nil || free.tolerations() != nil {
		t.Errorf("no app labels and no node: want the scheduler's choice alone")
	}
	away := loadPlacement{avoid: map[string]string{"app": "web"}}
	a := away.affinity()
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		t.Fatalf("affinity %+v: want one preferred anti-affinity term, nothing required", a)
	}
	term := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels["app"] != "web" || term.Namespaces != nil {
		t.Errorf("term %+v: want the app's labels per hostname, in the load pods' namespace", term)
	}
	// An app checked in place runs in a namespace of its own: the term looks there.
	inPlace := loadPlacement{avoid: away.avoid, avoidIn: "shop"}
	if ns := inPlace.affinity().PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.Namespaces; len(ns) != 1 || ns[0] != "shop" {
		t.Errorf("in place, the term looks in %v, want [shop]", ns)
	}
	if away.nodeSelector() != nil || away.tolerations() != nil {
		t.Errorf("no node named: want no node selector and no toleration")
	}
	cp := loadPlacement{node: "rc-control-plane", avoid: away.avoid}
	if got := cp.nodeSelector()[corev1.LabelHostname]; got != "rc-control-plane" {
		t.Errorf("node selector %v", cp.nodeSelector())
	}
	if tl := cp.tolerations(); len(tl) != 1 || tl[0].Key != "node-role.kubernetes.io/control-plane" || tl[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations %+v: want the control plane's NoSchedule taint tolerated", tl)
	}
}
