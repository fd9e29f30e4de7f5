package check

import (
	"fmt"
	"time"
)

// DisruptionInfo is what rollcheck knows of one DisruptionKind: every question its validation,
// analysis, audit, reports and rights ask about a kind is a field here, so that a kind is one
// entry of Disruptions (and a runner in internal/disrupt, keyed by the same kind).
type DisruptionInfo struct {
	Kind DisruptionKind
	// Doc is one line: what the disruption does (docs/reference.md's table of disruptions).
	Doc string
	// Takes is which of the app's pods one disruption takes away.
	Takes Takes
	// Forced says it deletes with grace period 0: the kubelet gives preStop about 1 s and the
	// container 2 s more whatever is set, so no preStop or grace advice removes its failures.
	Forced bool
	// RestartsKubelet says it restarts the kubelet of the deleted pod's node while the pod
	// terminates: only a front end that can (an engine.Target whose Cluster is a KubeletRestarter: kind's) runs it, it
	// may cut a preStop hook short, and it starts the termination over.
	RestartsKubelet bool
	// Evicts says it takes pods through the eviction API after cordoning their node (a drain):
	// only it honours a PodDisruptionBudget, takes Disruption.DrainTimeout and Disruption.Node,
	// can be blocked (Outcome.DrainBlocked), and needs the rights of Rights.
	Evicts bool
	// Scales says it changes the Deployment's replicas, down and then back: the pods it takes
	// are not replaced until it scales back.
	Scales bool
	// MinReplicas is the fewest replicas the Deployment needs for it (0: any).
	MinReplicas int
	// GraceAbove, when set, is the terminationGracePeriodSeconds the Deployment must exceed,
	// and GraceWhy why.
	GraceAbove time.Duration
	GraceWhy   string
	// HostLoad, when set, says why it needs the load from the host.
	HostLoad string
	// Alone, when set, says why a plan with it must run alone even with load from the cluster
	// (Plan.RunsAlone).
	Alone string
	// Rights is the feature of rollcheck's rights (docs/reference.md, "Least privilege") it
	// needs beyond the core ones; "" for none.
	Rights string
}

// Takes is which of the app's pods one disruption takes away.
type Takes string

// What a disruption takes away.
const (
	// TakesRollout: every pod, replaced in turn as the Deployment's strategy allows.
	TakesRollout Takes = "rollout"
	// TakesOne: one pod.
	TakesOne Takes = "one"
	// TakesNode: the app's pods on one node.
	TakesNode Takes = "node"
	// TakesAll: every pod at once, so that the Service is left with no endpoint.
	TakesAll Takes = "all"
)

// Disruptions is every disruption kind, one entry each, in the order the reports use.
var Disruptions = []DisruptionInfo{
	{Kind: RolloutRestart, Takes: TakesRollout, Doc: "`kubectl rollout restart`: every pod replaced in turn, as the Deployment's strategy allows"},
	{Kind: DeletePod, Takes: TakesOne, Doc: "one pod deleted gracefully, the one ready the longest (not a replacement that has had no traffic yet); the ReplicaSet replaces it"},
	{Kind: ForceDelete, Takes: TakesOne, Forced: true, Doc: "one pod deleted with grace period 0: preStop gets about 1 s and the container 2 s more, whatever is set"},
	{Kind: ScaleDown, Takes: TakesOne, Scales: true, MinReplicas: 2, Doc: "the Deployment scaled down by one, then back up"},
	{Kind: ScaleToZero, Takes: TakesAll, Scales: true, Doc: "the Deployment scaled to 0 replicas until every pod is gone, then back: the Service has no endpoint in between"},
	{Kind: KubeletRestart, Takes: TakesOne, RestartsKubelet: true, Doc: "one pod deleted gracefully and the kubelet of its node restarted while it terminates (kind only)",
		GraceAbove: KubeletRestartAfter + 2*time.Second, GraceWhy: fmt.Sprintf("restarts the kubelet %s after the deletion", KubeletRestartAfter),
		HostLoad: "the load pod's ledger streams through the kubelet it restarts",
		Alone:    "a kubelet restart stops every other row's terminations on the node too"},
	{Kind: DrainNode, Takes: TakesNode, Evicts: true, Rights: "drain", Doc: "the app's pods on one node evicted through the eviction API after a cordon, as `kubectl drain` does; PodDisruptionBudgets decide",
		Alone: "a node drain cordons a node the rows share: no other row's new pod can be scheduled on it until it is uncordoned"},
}

// DisruptionKinds lists every DisruptionKind, in the order the reports use (Disruptions').
var DisruptionKinds = func() []DisruptionKind {
	ks := make([]DisruptionKind, len(Disruptions))
	for i, d := range Disruptions {
		ks[i] = d.Kind
	}
	return ks
}()

// Info is k's entry of Disruptions; the zero DisruptionInfo (with Kind k) for a kind that is
// none of them, which Plan.Validate refuses.
func (k DisruptionKind) Info() DisruptionInfo {
	for _, d := range Disruptions {
		if d.Kind == k {
			return d
		}
	}
	return DisruptionInfo{Kind: k}
}
