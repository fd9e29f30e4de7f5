package engine

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/rollcheck/rollcheck/check"
)

// Target is the cluster a check.Plan runs on and the way the load reaches it. Nothing in it is
// specific to kind: the kind front ends (the suites, the CLI, rctest) fill it from the cluster
// they created or reused.
type Target struct {
	// RESTConfig reaches the cluster's API server.
	RESTConfig *rest.Config
	// NodePort is the nodePort of the Service rollcheck creates for the load, and LoadURL the
	// base URL under which that port answers where the load generator runs (kind maps the
	// NodePort to 127.0.0.1, e.g. http://127.0.0.1:30080).
	NodePort int32
	LoadURL  string
	// EntryNode names a node that can run the app's pods, and EntryURL the base URL under which
	// its NodePort answers where the load generator runs: the load of a plan with load entry
	// node (check.EntryNode) goes there, so that it enters the cluster at that node (kind with
	// workers: the first worker, mapped to its own loopback port). Empty: such plans are refused.
	EntryNode string
	EntryURL  string
	// RunID, if set, labels every namespace the rows create (RunLabel=RunID), so that a front end
	// on a cluster it shares can wait for its own namespaces to be gone, and touch no other.
	RunID string
	// LoadImage is the load pod's image (rollcheck agent load), for plans whose load comes from
	// the cluster; the nodes must have it or be able to pull it (kind: the front end loads it).
	LoadImage string
	// LoadNode, if set, is the node every load pod runs on (its control-plane NoSchedule taint
	// tolerated): kind with workers names its control plane, which runs no pod of the rows, so
	// every request crosses nodes. Empty: the scheduler places them, away from the app's pods
	// where it can.
	LoadNode string
	// SharedClock says the load pods' clocks are this process's (kind: the nodes are containers
	// on this machine). Either way each load pod's clock is measured and recorded in the row
	// (Row.LoadClocks); only where it is not shared are the requests' times moved by the
	// measured offset before attribution.
	SharedClock bool
	// LoadNamespace, if set, is a namespace of the user's where the rows of an app checked in
	// place (check.Plan.InPlace) start their load pods, kept after the run (only the load pods are
	// deleted, before and after each row): for a user whose rights are namespaced. Empty: each row
	// creates a namespace of its own and deletes it. Only for plans in place.
	LoadNamespace string
	// RowNamespace, if set, is a namespace of the user's that the row applies its app into,
	// kept after it: for a user whose rights are a Role in namespaces they created. The row
	// holds the namespace's Lease (RowsLease; HoldRowNamespace), labels what it applies with
	// RunLabel, refuses an object of its names that is the user's or a pod of the user's that
	// the app's selector matches, and deletes what it applied and started, before (a killed
	// run's) and after. One row at a time per namespace; not for an app checked in place. Empty:
	// each row creates a namespace of its own and deletes it.
	RowNamespace string
	// NamespaceLabels are labels every namespace the rows create carries besides rollcheck's own
	// (e.g. pod-security.kubernetes.io/enforce: restricted, so that Pod Security admission holds
	// the rows' pods to that level).
	NamespaceLabels map[string]string
	// check.Versions describes the cluster (kind version, node image); the engine adds the
	// Kubernetes version, Go, vegeta and rollcheck.
	Versions check.Versions
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
	// Cluster, if set, is the front end's handle on the cluster, for what only some front ends
	// can do: the engine uses what it implements of ImageLoader, Resetter and KubeletRestarter
	// (kind's handle: all three). Nil, or none of them: the cluster must already have the images a
	// check.Plan lists (or pull them), nothing is reset between rows, and rows with the
	// kubelet-restart disruption are refused before they deploy.
	Cluster any
}

// ImageLoader is a Target.Cluster that loads images from the local Docker engine into the
// cluster's nodes (kind: as kind load docker-image does), before a row deploys the images its
// check.Plan lists.
type ImageLoader interface {
	LoadImages(ctx context.Context, refs []string) error
}

// Resetter is a Target.Cluster with state to reset before each row deploys and after its
// namespace's pods are gone (kind: flush the NodePort's conntrack entries, so that one row's dead
// pods cannot catch the next row's connections).
type Resetter interface {
	Reset(ctx context.Context) error
}

// KubeletRestarter is a Target.Cluster that restarts the kubelet of a node and returns once it
// runs again: the kubelet-restart disruption (kind: systemctl in the node's container).
type KubeletRestarter interface {
	RestartKubelet(ctx context.Context, node string) error
}
