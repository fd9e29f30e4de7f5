package check

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// RunsAlone returns why p must run with no other plan beside it on the same cluster, "" when it
// may run beside others. Each plan has a namespace of its own; what it shares with the plans
// beside it is the one rule every front end follows (rollcheck check's rows, tune's probes, the
// suites' Serial specs):
//
//   - load from the host (the default, any Entry, any URL): every host load goes through the
//     one NodePort address, whose conntrack entries each row flushes, and it is timed on the
//     machine that also sends the other rows' load;
//   - a disruption whose kind says so (DisruptionInfo.Alone): a kubelet restart stops the
//     terminations of every pod on the node, other rows' too (Validate asks it for load from the
//     host today, which runs alone already); a node drain cordons a node every row schedules on,
//     so no other row's new pod can start there until it is uncordoned (two drains at once may
//     cordon every worker, and the evicted pods' replacements have nowhere to start); a drain of
//     the node the load enters at is a drain;
//   - load from the cluster to a URL outside the row's namespace (a host name with a dot, or an
//     address): every row of a check sends to that same proxy, ingress or gateway, where each
//     row's routes to its own namespace (an Ingress of the same host and path) collide;
//   - an app checked in place (App.Namespace): every row disrupts, and may change, the one live
//     Deployment.
//
// Load from the cluster to the load Service or to a Service of the row's own (a URL whose host
// is a short name) shares nothing, under every other disruption.
func (p Plan) RunsAlone() string {
	if p.InPlace() {
		return fmt.Sprintf("an app checked in place is one workload (%s) that every row disrupts and may change", p.App.Workload())
	}
	if p.Load.From != LoadFromCluster { // "" is the host, the default
		return "load from the host: the NodePort is one, and the host's load is timed on the machine that sends the other rows' load"
	}
	if why := p.Disruption.Kind.Info().Alone; why != "" {
		return why
	}
	if h := outsideNamespace(p.Load.URL); h != "" {
		return fmt.Sprintf("load to %s, outside the row's namespace: the rows beside it would send to the same address, where their routes (an Ingress of the same host and path in each namespace) collide", h)
	}
	return ""
}

// outsideNamespace is the host of a load pod's URL u when it reaches beyond the row's namespace:
// a name with a dot (another namespace's Service, an external name) or an IP address; "" for no
// URL or a short name, which a load pod resolves in its own namespace.
func outsideNamespace(u string) string {
	if u == "" {
		return ""
	}
	pu, err := url.Parse(u)
	if err != nil {
		return u // Validate refuses it; alone is the safe side
	}
	if h := pu.Hostname(); strings.Contains(h, ".") || net.ParseIP(h) != nil || h == "" {
		return pu.Host
	}
	return ""
}
