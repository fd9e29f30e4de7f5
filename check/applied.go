package check

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/rollcheck/rollcheck/loadgen"
)

// String names the row, e.g.
// "prestop-5s: preStop=sleep:5s sigterm=drain grace=30s keepalive=off rollout-restart×3".
func (c Applied) String() string {
	return c.Name + ": " + c.Shape() + " " + c.DisruptionString()
}

// Shape is the shutdown configuration and client mode, without name and disruption:
// "preStop=sleep:5s sigterm=drain grace=30s pdb=maxUnavailable:1 req=5s readyDelay=2s keepalive=on POST".
func (c Applied) Shape() string {
	var b strings.Builder
	fmt.Fprintf(&b, "preStop=%s", c.PreStop)
	if c.OnSIGTERM != "" {
		fmt.Fprintf(&b, " sigterm=%s", c.OnSIGTERM)
	}
	if c.StopSignal != "" {
		fmt.Fprintf(&b, " stopSignal=%s", c.StopSignal)
	}
	fmt.Fprintf(&b, " grace=%ds", c.GraceSeconds)
	if c.PDB != nil {
		fmt.Fprintf(&b, " pdb=%s", strings.Replace(c.PDB.String(), "=", ":", 1))
		if c.PDBFromManifests {
			b.WriteString("(manifests)")
		}
	}
	for _, sc := range c.Sidecars {
		fmt.Fprintf(&b, " sidecar=%s", sc)
	}
	if c.RequestDuration > 0 {
		fmt.Fprintf(&b, " req=%s", c.RequestDuration)
	}
	if c.ReadyDelay > 0 {
		fmt.Fprintf(&b, " readyDelay=%s", c.ReadyDelay)
	}
	if c.Patched {
		b.WriteString(" +patch")
	}
	ka := "off"
	if c.KeepAlive {
		ka = "on"
	}
	if c.Method != "GET" && c.Method != "" {
		ka += " " + c.Method
	}
	fmt.Fprintf(&b, " keepalive=%s", ka)
	if c.LoadFrom == LoadFromCluster {
		b.WriteString(" load=cluster") // host, the default, is left unsaid: the names rows had
		if c.LoadPods > 1 {
			fmt.Fprintf(&b, "×%d", c.LoadPods)
		}
	}
	if c.LoadEntry != "" {
		fmt.Fprintf(&b, " entry=%s", c.LoadEntry)
	}
	if c.ExternalTrafficPolicy != "" {
		fmt.Fprintf(&b, " etp=%s", c.ExternalTrafficPolicy)
	}
	switch {
	case c.GRPC != nil:
		fmt.Fprintf(&b, " grpc=%s", c.GRPC)
	case c.Protocol != "":
		fmt.Fprintf(&b, " proto=%s", c.Protocol)
	}
	if c.LoadURL != "" {
		fmt.Fprintf(&b, " via=%s", c.LoadURL)
		if c.LoadHost != "" {
			fmt.Fprintf(&b, "(Host:%s)", c.LoadHost)
		}
	}
	return b.String()
}

// DisruptionString is the disruption and its count: "rollout-restart×3"; a drain's timeout
// when it is not the default: "drain-node×3 drainTimeout=30s".
func (c Applied) DisruptionString() string {
	s := fmt.Sprintf("%s×%d", c.Disruption, c.Count)
	if c.DrainTimeout != 0 && c.DrainTimeout != DefaultDrainTimeout {
		s += fmt.Sprintf(" drainTimeout=%s", c.DrainTimeout)
	}
	if c.DrainNode != "" {
		s += fmt.Sprintf(" node=%s", c.DrainNode)
	}
	return s
}

// Through says the load went through a proxy in front of the app (Load.URL), which keeps its
// own list of pods.
func (c Applied) Through() bool { return c.LoadURL != "" }

// Balanced says the client balanced over the pods' addresses itself (gRPC round_robin over a
// headless Service), not through kube-proxy.
func (c Applied) Balanced() bool {
	return c.GRPC != nil && c.GRPC.Balancing == loadgen.BalancingRoundRobin
}

// PinsConnections says the load's requests ride a connection it holds to one pod rather than
// being routed afresh each: keep-alive (HTTP/1.1, h2c, HTTP/2), or a gRPC channel that does not
// balance itself (pick_first through the ClusterIP: one connection, pinned to one pod for its
// life). The client keeps sending to a deleted pod on that connection until the pod closes it
// (GOAWAY, the app's exit), whatever the routing: the pod's last answer measures the pod's own
// shutdown (its preStop), not the Service's routing, so the data plane is no routing window
// for such a row (analyze.Route, the run's pooled data plane, rollcheck windows extract), and
// rollcheck audit does not predict it.
func (c Applied) PinsConnections() bool {
	return c.KeepAlive || c.Protocol == loadgen.ProtocolGRPC && !c.Balanced()
}

// LocalOnly says the load Service sent external traffic only to pods on the node it entered
// (externalTrafficPolicy Local).
func (c Applied) LocalOnly() bool {
	return c.ExternalTrafficPolicy == string(corev1.ServiceExternalTrafficPolicyLocal)
}
