package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// A cluster that must send nothing outside the machine (the offline image's, as for CoreDNS's
// forwarding: dnsIsolation) needs more than a DNS without forwarding. A node routes whatever
// its pods send that kube-proxy did not translate (a ClusterIP with no rule at that moment, an
// outside address) to its default gateway, Docker's bridge on the host, which masquerades it
// out of the machine. Measured before this fence: a load pod sending to its Service while the
// Service's last endpoints went away got, 1 s after its first SYN, an HTTP 404 from outside the
// machine. fenceEgress drops, on every node, a connection a pod opens to outside the pod network
// unless kube-proxy translated it (conntrack state DNAT): a Service's traffic to pods or the API
// server still flows, and so do the pods' answers to connections opened from outside (a
// NodePort's, or another node's pod behind the CNI's masquerade: its source is that node's
// address); any other new connection is dropped, as a cloud network drops a ClusterIP no one
// answers.

// The iptables rule lets through what kube-proxy translated, and a node's own packets. A packet
// to a pod address that no route of the node covers (a node without kindnet whose routes to the
// other nodes' podCIDRs are missing, a DNAT to a pod of a node that is gone) would still take the
// node's default route off the machine: measured on a cluster of workers made from the offline
// image without routePodCIDRs' routes, a load pod's requests to a pod of the other worker were
// answered 404 from outside. So the fence also routes the whole pod subnet nowhere
// (blackholeArgs): the podCIDR routes, more specific, still win.

// blackholeArgs is the ip route command (without "ip") that drops, on a node, what is sent to a
// pod address no more specific route covers.
func blackholeArgs(subnet netip.Prefix) []string {
	return []string{"route", "replace", "blackhole", subnet.String()}
}

// fenceComment marks the rule, so that a reused node is not given it twice.
const fenceComment = "rollcheck: nothing a pod sends leaves the cluster unless kube-proxy translated it"

// podSubnetRE finds the pod subnet in kubeadm's ClusterConfiguration.
var podSubnetRE = regexp.MustCompile(`(?m)^\s*podSubnet:\s*"?([0-9a-fA-F.:/]+)"?\s*$`)

// podSubnet reads the cluster's pod subnet from kubeadm's ClusterConfiguration (kube-system
// ConfigMap kubeadm-config): kind sets it from its config's networking.podSubnet.
func podSubnet(clusterConfiguration string) (netip.Prefix, error) {
	m := podSubnetRE.FindStringSubmatch(clusterConfiguration)
	if m == nil {
		return netip.Prefix{}, fmt.Errorf("kubeadm's ClusterConfiguration names no podSubnet")
	}
	p, err := netip.ParsePrefix(m[1])
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("kubeadm's podSubnet %q: %w", m[1], err)
	}
	return p, nil
}

// fenceArgs is the iptables rule (without -C/-I) that fenceEgress puts first in FORWARD.
func fenceArgs(subnet netip.Prefix) []string {
	s := subnet.String()
	return []string{"FORWARD", "-s", s, "!", "-d", s, "-m", "conntrack", "--ctstate", "NEW", "-m", "conntrack", "!", "--ctstate", "DNAT",
		"-m", "comment", "--comment", fenceComment, "-j", "DROP"}
}

// fenceEgress puts the fence on every node of a cluster this run created and isolates (the
// same choice as CoreDNS's forwarding), or that an earlier run created isolated and this one
// reuses (isolatedBefore), once per node.
func (c *Cluster) fenceEgress(ctx context.Context) error {
	isolate, _, err := dnsIsolation(c.IsolateDNS, c.ImageSource, c.Created)
	if err != nil {
		return err
	}
	if !isolate && !c.Created {
		// A reused cluster that an earlier run created isolated keeps its fence: the rule is
		// gone from a node container Docker restarted, while its CoreDNS stays isolated.
		if isolate, err = c.isolatedBefore(ctx); err != nil {
			return fmt.Errorf("fence the pods' egress: %w", err)
		}
	}
	if !isolate {
		return nil
	}
	var cm corev1.ConfigMap
	if err := c.Client.Resources("kube-system").Get(ctx, "kubeadm-config", "kube-system", &cm); err != nil {
		return fmt.Errorf("fence the pods' egress: read kubeadm-config: %w", err)
	}
	subnet, err := podSubnet(cm.Data["ClusterConfiguration"])
	if err != nil {
		return fmt.Errorf("fence the pods' egress: %w", err)
	}
	nodes, err := c.kind.ListNodes(c.Name)
	if err != nil {
		return fmt.Errorf("fence the pods' egress: list nodes: %w", err)
	}
	rule := fenceArgs(subnet)
	for _, n := range nodes {
		var bout bytes.Buffer
		if err := n.CommandContext(ctx, "ip", blackholeArgs(subnet)...).SetStdout(&bout).SetStderr(&bout).Run(); err != nil {
			return fmt.Errorf("fence the pods' network on node %s: %w: %s", n.String(), err, strings.TrimSpace(bout.String()))
		}
		if n.CommandContext(ctx, "iptables", append([]string{"-w", "-C"}, rule...)...).Run() == nil {
			continue // there already
		}
		var out bytes.Buffer
		cmd := n.CommandContext(ctx, "iptables", append([]string{"-w", "-I"}, rule...)...)
		if err := cmd.SetStdout(&out).SetStderr(&out).Run(); err != nil {
			return fmt.Errorf("fence the pods' egress on node %s: %w: %s", n.String(), err, strings.TrimSpace(out.String()))
		}
	}
	c.Logf("pods' egress fenced on %d node(s): what a pod sends outside %s without kube-proxy's translation is dropped, and so is what is sent to an address of %s no node has (nothing leaves the machine)", len(nodes), subnet, subnet)
	return nil
}
