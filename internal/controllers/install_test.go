package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOfKindCluster(t *testing.T) {
	node := func(name, id string) corev1.Node {
		n := corev1.Node{}
		n.Name, n.Spec.ProviderID = name, id
		return n
	}
	ours := []corev1.Node{node("rc-ctl-control-plane", "kind://docker/rc-ctl/rc-ctl-control-plane"), node("rc-ctl-worker", "kind://docker/rc-ctl/rc-ctl-worker")}
	if err := ofKindCluster(ours, "rc-ctl"); err != nil {
		t.Errorf("the cluster's own nodes: %v", err)
	}
	for name, nodes := range map[string][]corev1.Node{
		"another kind cluster":        {node("rc-control-plane", "kind://docker/rc/rc-control-plane")},
		"a prefix of the name":        {node("rc-ctl2-control-plane", "kind://docker/rc-ctl2/rc-ctl2-control-plane")},
		"one node of another cluster": append(ours, node("x", "kind://docker/other/x")),
		"not kind":                    {node("gke-1", "gce://project/zone/gke-1")},
		"no nodes":                    nil,
	} {
		if err := ofKindCluster(nodes, "rc-ctl"); err == nil {
			t.Errorf("%s: no error", name)
		} else if len(nodes) > 0 && !strings.Contains(err.Error(), `kind cluster "rc-ctl"`) {
			t.Errorf("%s: %v, want it to name the cluster", name, err)
		}
	}
}

func TestEstablished(t *testing.T) {
	crd := func(conds ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if conds != nil {
			unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
		}
		return u
	}
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want bool
	}{
		{"no status", crd(), false},
		{"names accepted only", crd(map[string]any{"type": "NamesAccepted", "status": "True"}), false},
		{"not yet", crd(map[string]any{"type": "Established", "status": "False"}), false},
		{"established", crd(map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": "True"}), true},
	} {
		if got := established(tc.u); got != tc.want {
			t.Errorf("%s: established = %v, want %v", tc.name, got, tc.want)
		}
	}
}
