package knobs

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A Target is one of make's e2e targets as the knobs it sets, where they differ from make
// e2e's: what it selects (a Ginkgo label filter and the suite directories) and where it runs
// (a cluster of its own, its workers, kube-proxy's mode, a subdirectory for its files). The
// Makefile's target NAME runs `scripts/e2e.sh NAME`, which exports TargetEnv's lines
// (`rollcheck knobs target NAME`) before anything else: the Makefile holds no label filter,
// and internal/matrix/targets_test.go pins the specs each target selects.
type Target struct {
	// Name is the make target.
	Name string
	// Labels is its label filter (ROLLCHECK_LABELS) and Suites its suite directories
	// (ROLLCHECK_SUITES), whatever the environment says; empty: the knob as set, else its
	// default (make e2e's).
	Labels, Suites string
	// ProxyMode is kube-proxy's mode (ROLLCHECK_KUBE_PROXY_MODE), and NodeImage the node image
	// choice (ROLLCHECK_NODE_IMAGE), whatever the environment says (CI exports
	// ROLLCHECK_NODE_IMAGE=offline); empty: the knob's. A target with a node image of its own
	// has a cluster of its own: a reused cluster must run the image asked for.
	ProxyMode, NodeImage string
	// Cluster and Workers are the cluster's name (ROLLCHECK_CLUSTER_NAME) and its workers
	// (ROLLCHECK_WORKERS) unless the environment sets them; empty: the knob's.
	Cluster, Workers string
	// Artifacts is the subdirectory of ARTIFACTS its files go to; empty: ARTIFACTS itself.
	Artifacts string
}

// DefaultLabels is make e2e's label filter (ROLLCHECK_LABELS' default): the default matrix.
const DefaultLabels = "!slow && !stop-signal-field && !proxy && !multinode && !terminating-endpoints && !http2 && !grpc"

// Targets are make's e2e targets, in the Makefile's order.
var Targets = []Target{
	{Name: "e2e"},
	{Name: "e2e-slow", Labels: "slow", Suites: "suites"},
	{Name: "e2e-proxy", Labels: "proxy", Suites: "suites"},
	{Name: "e2e-multinode", Labels: "multinode || terminating-endpoints || smoke", Suites: "suites",
		Cluster: "rollcheck-multinode", Workers: "2", Artifacts: "multinode"},
	{Name: "e2e-grpc", Labels: "http2 || grpc", Suites: "suites", Artifacts: "grpc"},
	{Name: "e2e-nftables", ProxyMode: "nftables", Cluster: "rollcheck-nftables", Artifacts: "nftables"},
	// The row that needs a runtime taking lifecycle.stopSignal: containerd 2.3 or later, which
	// neither the offline image (Debian's 1.6.20) nor kind v0.30.0's (2.1.4) has.
	{Name: "e2e-stopsignal", Labels: "stop-signal-field", Suites: "suites",
		Cluster: "rollcheck-stopsignal", NodeImage: OfflineContainerd2, Artifacts: "stopsignal"},
	{Name: "smoke", Labels: "smoke", Suites: "suites"},
	// One passing row and one negative control of every family make e2e leaves out, for CI:
	// those of one node on make e2e's cluster, those that need workers on a cluster of their own.
	{Name: "e2e-families", Labels: "family && !multinode && !terminating-endpoints", Suites: "suites", Artifacts: "families"},
	{Name: "e2e-families-multinode", Labels: "family && (multinode || terminating-endpoints)", Suites: "suites",
		Cluster: "rollcheck-multinode", Workers: "2", Artifacts: "families-multinode"},
}

// LookupTarget is the target named name.
func LookupTarget(name string) (Target, bool) {
	for _, t := range Targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// TargetEnv is the environment make's target name runs with, as NAME=value lines for the
// knobs it sets, in the environment getenv reads: its own values, the environment's where it
// only gives a default, and ARTIFACTS (else its default) with its subdirectory.
func TargetEnv(name string, getenv func(string) string) ([]string, error) {
	t, ok := LookupTarget(name)
	if !ok {
		return nil, fmt.Errorf("%s: no such target (make's e2e targets: %s)", name, targetNames())
	}
	var env []string
	set := func(knob, v string) {
		if v != "" {
			env = append(env, knob+"="+v)
		}
	}
	orDefault := func(knob, def string) string {
		if v := getenv(knob); v != "" {
			return v
		}
		return def
	}
	set(EnvLabels, t.Labels)
	set(EnvSuites, t.Suites)
	set(EnvProxyMode, t.ProxyMode)
	set(EnvNodeImage, t.NodeImage)
	if t.Cluster != "" {
		set(EnvName, orDefault(EnvName, t.Cluster))
	}
	if t.Workers != "" {
		set(EnvWorkers, orDefault(EnvWorkers, t.Workers))
	}
	if t.Artifacts != "" {
		base, _ := Get(getenv, EnvArtifacts) // no rule: never an error
		set(EnvArtifacts, filepath.Join(base, t.Artifacts))
	}
	return env, nil
}

func targetNames() string {
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
