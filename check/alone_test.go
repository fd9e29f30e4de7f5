package check

import (
	"strings"
	"testing"
)

// RunsAlone, for every disruption kind under every load path: load from the host always runs
// alone; from the cluster, a kubelet restart and a node drain do, and so does a load to an address
// outside the row's namespace; everything else may run beside other rows.
func TestRunsAlone(t *testing.T) {
	const (
		host    = "load from the host: "
		kubelet = "a kubelet restart "
		drain   = "a node drain "
	)
	loads := []struct {
		name string
		load Load
		// alone is why the load path alone makes a row run alone, "" when it does not.
		alone string
	}{
		{"default (host)", Load{}, host},
		{"host", Load{From: LoadFromHost}, host},
		{"host entering at a node", Load{From: LoadFromHost, Entry: EntryNode}, host},
		{"host to a url", Load{From: LoadFromHost, URL: "http://front/"}, host},
		{"cluster", Load{From: LoadFromCluster}, ""},
		{"cluster, load pods", Load{From: LoadFromCluster, Pods: 3}, ""},
		{"cluster to a Service of the row's", Load{From: LoadFromCluster, URL: "http://front/", Resolve: "web-headless"}, ""},
		{"cluster to a short name and port", Load{From: LoadFromCluster, URL: "https://front:8443/shop", Host: "shop.example"}, ""},
		{"cluster to another namespace", Load{From: LoadFromCluster, URL: "http://ingress-nginx-controller.ingress-nginx.svc/", Host: "shop.example"}, "load to ingress-nginx-controller.ingress-nginx.svc, outside the row's namespace: "},
		{"cluster to an address", Load{From: LoadFromCluster, URL: "http://10.96.0.20:8080/"}, "load to 10.96.0.20:8080, outside the row's namespace: "},
		{"cluster to an IPv6 address", Load{From: LoadFromCluster, URL: "http://[fd00::20]/"}, "load to [fd00::20], outside the row's namespace: "},
	}
	for _, kind := range DisruptionKinds {
		for _, l := range loads {
			p := Plan{Disruption: Disruption{Kind: kind}, Load: l.load}
			want := l.alone
			if want != host {
				switch kind {
				case KubeletRestart:
					want = kubelet
				case DrainNode:
					want = drain
				}
			}
			got := p.RunsAlone()
			if want == "" && got != "" || !strings.HasPrefix(got, want) || got != "" && strings.Contains(got, "\n") {
				t.Errorf("%s under %s: RunsAlone %q, want it to start with %q", l.name, kind, got, want)
			}
		}
	}
	// A drain of the node the load enters at is a drain, and from the host.
	p := Plan{Disruption: Disruption{Kind: DrainNode, Node: DrainEntry}, Load: Load{From: LoadFromHost, Entry: EntryNode}}
	if got := p.RunsAlone(); !strings.HasPrefix(got, host) {
		t.Errorf("a drain of the entry node: %q", got)
	}
	// The defaults change nothing.
	for _, kind := range DisruptionKinds {
		p := Plan{Disruption: Disruption{Kind: kind}, Load: Load{From: LoadFromCluster}}
		if p.RunsAlone() != p.WithDefaults().RunsAlone() {
			t.Errorf("%s: RunsAlone %q, with defaults %q", kind, p.RunsAlone(), p.WithDefaults().RunsAlone())
		}
	}
}
