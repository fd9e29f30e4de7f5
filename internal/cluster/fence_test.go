package cluster

import (
	"strings"
	"testing"
)

func TestPodSubnet(t *testing.T) {
	cc := "apiServer:\n  certSANs: [localhost]\nnetworking:\n  dnsDomain: cluster.local\n  podSubnet: 10.244.0.0/16\n  serviceSubnet: 10.96.0.0/16\n"
	p, err := podSubnet(cc)
	if err != nil || p.String() != "10.244.0.0/16" {
		t.Fatalf("podSubnet = %v, %v", p, err)
	}
	if got := strings.Join(fenceArgs(p), " "); got != `FORWARD -s 10.244.0.0/16 ! -d 10.244.0.0/16 -m conntrack --ctstate NEW -m conntrack ! --ctstate DNAT -m comment --comment `+fenceComment+` -j DROP` {
		t.Errorf("rule %q", got)
	}
	if got := strings.Join(blackholeArgs(p), " "); got != "route replace blackhole 10.244.0.0/16" {
		t.Errorf("blackhole %q", got)
	}
	if _, err := podSubnet("networking:\n  serviceSubnet: 10.96.0.0/16\n"); err == nil {
		t.Error("no podSubnet: no error")
	}
	if _, err := podSubnet("  podSubnet: 10.244.0.0/99\n"); err == nil {
		t.Error("a bad podSubnet: no error")
	}
}
