package cluster

import (
	"net"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func node(name, cidr string, addrs ...corev1.NodeAddress) corev1.Node {
	var n corev1.Node
	n.Name, n.Spec.PodCIDR, n.Status.Addresses = name, cidr, addrs
	return n
}

func internal(ip string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
}

func TestPodRoutes(t *testing.T) {
	got, err := podRoutes([]corev1.Node{
		node("rc-worker", "10.244.1.0/24", corev1.NodeAddress{Type: corev1.NodeHostName, Address: "rc-worker"}, internal("fc00::3"), internal("172.18.0.3")),
		node("rc-control-plane", "10.244.0.0/24", internal("172.18.0.2")),
		node("rc-worker2", "10.244.2.0/24", internal("172.18.0.4")),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []podRoute{
		{"rc-control-plane", "10.244.1.0/24", "172.18.0.3"},
		{"rc-control-plane", "10.244.2.0/24", "172.18.0.4"},
		{"rc-worker", "10.244.0.0/24", "172.18.0.2"},
		{"rc-worker", "10.244.2.0/24", "172.18.0.4"},
		{"rc-worker2", "10.244.0.0/24", "172.18.0.2"},
		{"rc-worker2", "10.244.1.0/24", "172.18.0.3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("podRoutes:\n got %v\nwant %v", got, want)
	}
	if r, err := podRoutes([]corev1.Node{node("one", "10.244.0.0/24", internal("172.18.0.2"))}); err != nil || len(r) != 0 {
		t.Errorf("one node: %v, %v; want no route", r, err)
	}
	for _, tc := range []struct {
		n    corev1.Node
		want string
	}{
		{node("w", "", internal("172.18.0.3")), "no podCIDR yet"},
		{node("w", "10.244.1.0/33", internal("172.18.0.3")), "podCIDR"},
		{node("w", "10.244.1.0/24", internal("fc00::3")), "no IPv4 InternalIP"},
		{node("w", "10.244.1.0/24"), "no IPv4 InternalIP"},
	} {
		if _, err := podRoutes([]corev1.Node{tc.n}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.n.Spec, err, tc.want)
		}
	}
}

// TestLoadNode: with workers, load pods go to the control plane, also in the processes that
// join the cluster (Share carries the workers).
func TestLoadNode(t *testing.T) {
	c := &Cluster{Options: Options{Name: "rc", Workers: 2}}
	if got := c.loadNode(); got != "rc-control-plane" {
		t.Errorf("loadNode() = %q, want rc-control-plane", got)
	}
	if s := c.Share(); s.Workers != 2 {
		t.Errorf("Share() = %+v: the workers are lost to the joining processes", s)
	}
	if got := (&Cluster{Options: Options{Name: "rc"}}).loadNode(); got != "" {
		t.Errorf("one node: loadNode() = %q, want the scheduler's choice", got)
	}
}

func TestPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(l.Addr().(*net.TCPAddr).Port)
	if err := portFree(port); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("a held port: %v, want it said in use", err)
	}
	l.Close()
	if err := portFree(port); err != nil {
		t.Errorf("a free port: %v", err)
	}
}
