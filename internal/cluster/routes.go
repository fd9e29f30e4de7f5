package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/klient/wait"
)

// The offline node image has no kindnet (its image would need a registry). Each node's bridge
// CNI config is written by containerd from a template with the node's podCIDR (the
// controller-manager gives each node one /24 of the podSubnet); what kindnet also does, and the
// template cannot, is route every other node's podCIDR to that node's IP. routePodCIDRs does it
// once the nodes have their podCIDRs: kind's nodes share one Docker network, so the next hop is
// the other node's address on it.

// podRoute is one route a node needs: dst (another node's podCIDR) via that node's IP.
type podRoute struct {
	Node, Dst, Via string
}

// podRoutes returns the routes every node needs to reach every other node's pods, sorted by
// node and destination. A node without a podCIDR or an InternalIP yet is an error: the caller
// waits and asks again.
func podRoutes(nodes []corev1.Node) ([]podRoute, error) {
	type hop struct{ name, cidr, ip string }
	var hops []hop
	for _, n := range nodes {
		cidr := n.Spec.PodCIDR
		if cidr == "" {
			return nil, fmt.Errorf("node %s has no podCIDR yet", n.Name)
		}
		if _, err := netip.ParsePrefix(cidr); err != nil {
			return nil, fmt.Errorf("node %s: podCIDR %q: %w", n.Name, cidr, err)
		}
		ip := ""
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				if addr, err := netip.ParseAddr(a.Address); err == nil && addr.Is4() {
					ip = a.Address
					break
				}
			}
		}
		if ip == "" {
			return nil, fmt.Errorf("node %s has no IPv4 InternalIP yet", n.Name)
		}
		hops = append(hops, hop{n.Name, cidr, ip})
	}
	var routes []podRoute
	for _, from := range hops {
		for _, to := range hops {
			if to.name != from.name {
				routes = append(routes, podRoute{Node: from.name, Dst: to.cidr, Via: to.ip})
			}
		}
	}
	slices.SortFunc(routes, func(a, b podRoute) int {
		return strings.Compare(a.Node+" "+a.Dst, b.Node+" "+b.Dst)
	})
	return routes, nil
}

// routePodCIDRs sets the routes between the nodes' podCIDRs of an offline-image cluster with
// workers (`ip route replace` in each node: the same again when a cluster is reused, and after
// a node's container restarted). A cluster of one node, or on the upstream image (kindnet
// routes), needs none.
func (c *Cluster) routePodCIDRs(ctx context.Context) error {
	if c.ImageSource != SourceOffline || c.Workers == 0 {
		return nil
	}
	var routes []podRoute
	err := wait.For(func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := c.Client.Resources().List(ctx, &nodes); err != nil {
			return false, err
		}
		if len(nodes.Items) != 1+c.Workers {
			return false, nil
		}
		r, err := podRoutes(nodes.Items)
		if err != nil {
			return false, nil
		}
		routes = r
		return true, nil
	}, wait.WithContext(ctx), wait.WithTimeout(2*time.Minute), wait.WithInterval(time.Second))
	if err != nil {
		return fmt.Errorf("wait for the podCIDR and address of %d node(s) of cluster %q: %w", 1+c.Workers, c.Name, err)
	}
	all, err := c.kind.ListNodes(c.Name)
	if err != nil {
		return fmt.Errorf("route pod networks: list nodes: %w", err)
	}
	for _, n := range all {
		for _, r := range routes {
			if r.Node != n.String() {
				continue
			}
			var out bytes.Buffer
			cmd := n.CommandContext(ctx, "ip", "route", "replace", r.Dst, "via", r.Via)
			if err := cmd.SetStdout(&out).SetStderr(&out).Run(); err != nil {
				return fmt.Errorf("route %s via %s on node %s: %w: %s", r.Dst, r.Via, r.Node, err, strings.TrimSpace(out.String()))
			}
		}
	}
	c.Logf("pod networks routed between %d nodes (%d routes)", len(all), len(routes))
	return nil
}
