package check

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// entryPlan is webPlan with host load entering at the entry node, externalTrafficPolicy etp and
// a drain of the entry node.
func entryPlan(t *testing.T, etp corev1.ServiceExternalTrafficPolicy) Plan {
	p := webPlan(t)
	p.Load.From, p.Load.Entry = LoadFromHost, EntryNode
	p.Variant.ExternalTrafficPolicy = etp
	p.Disruption.Kind, p.Disruption.Node, p.Disruption.Count = DrainNode, DrainEntry, 1
	return p
}

func TestEntryAccepted(t *testing.T) {
	for _, etp := range []corev1.ServiceExternalTrafficPolicy{"", corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal} {
		p := entryPlan(t, etp)
		if _, err := p.Validate(); err != nil {
			t.Errorf("%q: %v", etp, err)
		}
		objs, err := mustResolve(t, p).Objects("rc-web", 30080)
		if err != nil {
			t.Fatalf("Objects: %v", err)
		}
		for _, o := range objs {
			if s, ok := o.(*corev1.Service); ok && s.Name == LoadServiceName && s.Spec.ExternalTrafficPolicy != etp {
				t.Errorf("load Service externalTrafficPolicy %q, want %q", s.Spec.ExternalTrafficPolicy, etp)
			}
		}
		a := p.Applied()
		if a.LoadEntry != EntryNode || a.DrainNode != DrainEntry || a.ExternalTrafficPolicy != string(etp) {
			t.Errorf("applied %+v", a)
		}
		if etp == corev1.ServiceExternalTrafficPolicyLocal && !strings.Contains(a.String(), "entry=node etp=Local") || !strings.Contains(a.String(), "drain-node×1 node=entry") {
			t.Errorf("name %q", a.String())
		}
	}
}

func TestEntryRejected(t *testing.T) {
	local := corev1.ServiceExternalTrafficPolicyLocal
	for _, tc := range []struct {
		name string
		mod  func(p *Plan)
		want string
	}{
		{"Local from a load pod", func(p *Plan) { p.Load.From, p.Load.Entry, p.Disruption.Node = LoadFromCluster, "", "" }, "externalTrafficPolicy Local: it applies only to traffic that enters a node from outside the cluster"},
		{"Local at the default address", func(p *Plan) { p.Load.Entry, p.Disruption.Node = "", "" }, "externalTrafficPolicy Local needs load entry node"},
		{"an unknown policy", func(p *Plan) { p.Variant.ExternalTrafficPolicy = "Nearest" }, `externalTrafficPolicy "Nearest": want Cluster or Local`},
		{"entry from a load pod", func(p *Plan) { p.Load.From, p.Variant.ExternalTrafficPolicy = LoadFromCluster, "" }, "load entry node: only load from the host enters at a node"},
		{"an unknown entry", func(p *Plan) { p.Load.Entry = "worker" }, `load entry "worker": want node`},
		{"the entry drained, no entry", func(p *Plan) { p.Load.Entry, p.Variant.ExternalTrafficPolicy = "", "" }, "disruption node entry: the load enters at no node of its own"},
		{"node of another disruption", func(p *Plan) { p.Disruption.Kind = DeletePod }, `disruption node "entry": only for drain-node, not delete-pod`},
		{"an unknown drain target", func(p *Plan) { p.Disruption.Node = "busiest" }, `disruption node "busiest": want entry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := entryPlan(t, local)
			tc.mod(&p)
			_, err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
