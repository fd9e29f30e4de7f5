// Package kubeconfig reads the kubeconfig that names a cluster rollcheck does not own, as kubectl
// reads it, and says in one line which cluster it is.
package kubeconfig

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// A Ref names an existing cluster as kubectl does: a kubeconfig file (only that file,
// as kubectl --kubeconfig reads it) or kubectl's own files (the list in $KUBECONFIG, merged as
// kubectl merges it, else ~/.kube/config), and a context of it (else its current context). It
// comes from --kubeconfig and --context, or from the check file's cluster section; without
// either rollcheck runs on its own kind cluster and never reads KUBECONFIG or
// ~/.kube/config, so that a KUBECONFIG in the user's shell never moves a check onto the
// user's cluster.
type Ref struct {
	Kubeconfig string // a kubeconfig file; "" for kubectl's files
	Context    string // a context; "" for the current context
	By         string // what named it, for messages: "--context staging", "the check file's cluster section"
	// InCluster: the pod's own ServiceAccount (rest.InClusterConfig), for rollcheck gate and
	// serve run in a pod with neither --kubeconfig nor --context.
	InCluster bool
}

// HomeFile is kubectl's default kubeconfig, ~/.kube/config (a variable for tests).
var HomeFile = clientcmd.RecommendedHomeFile

// Rules are client-go's loading rules for r, kubectl's (clientcmd.NewDefaultClientConfigLoadingRules),
// read only: rollcheck never migrates or writes a kubeconfig.
func (r Ref) Rules() *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		rules.Precedence = []string{HomeFile}
	}
	rules.ExplicitPath = r.Kubeconfig
	rules.MigrationRules = nil     // no copy of an old ~/.kube/.kubeconfig into ~/.kube/config
	rules.WarnIfAllMissing = false // Resolve says it in its own line
	return rules
}

// files says which kubeconfig files r reads: "FILE", "KUBECONFIG (a, b)" or "~/.kube/config"'s path.
func (r Ref) files(rules *clientcmd.ClientConfigLoadingRules) string {
	switch {
	case r.Kubeconfig != "":
		return r.Kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		named := slices.DeleteFunc(slices.Clone(rules.Precedence), func(f string) bool { return f == "" })
		return clientcmd.RecommendedConfigPathEnvVar + " (" + strings.Join(named, ", ") + ")"
	}
	return rules.Precedence[0]
}

// Resolve reads r's kubeconfig: the client configuration of its context, and one line that
// says which cluster it is: `context "staging" (cluster "gke-1", server https://…) from
// KUBECONFIG (/a, /b)`. It reads local files only, and never falls back to a pod's in-cluster
// configuration: a context that is not there is an error that lists those that are.
func (r Ref) Resolve() (*rest.Config, string, error) {
	if r.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("no kubeconfig given and not in a pod (%v): give --kubeconfig FILE or --context NAME", err)
		}
		return cfg, fmt.Sprintf("in-cluster, server %s, as %s", cfg.Host, r.By), nil
	}
	rules := r.Rules()
	from := r.files(rules)
	if r.Kubeconfig != "" {
		if _, err := os.Stat(r.Kubeconfig); err != nil {
			return nil, "", fmt.Errorf("%s: %w", r.By, err)
		}
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: r.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", r.By, err)
	}
	name := cmp.Or(r.Context, raw.CurrentContext)
	contexts := slices.Sorted(maps.Keys(raw.Contexts))
	kc, ok := raw.Contexts[name]
	switch {
	case len(contexts) == 0:
		return nil, "", fmt.Errorf("%s: no context in %s", r.By, from)
	case name == "":
		return nil, "", fmt.Errorf("%s: %s names no current context: name one with --context (it has %s)", r.By, from, strings.Join(contexts, ", "))
	case !ok:
		return nil, "", fmt.Errorf("%s: no context %q in %s (it has %s)", r.By, name, from, strings.Join(contexts, ", "))
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: context %q of %s: %w", r.By, name, from, err)
	}
	return cfg, fmt.Sprintf("context %q (cluster %q, server %s) from %s", name, kc.Cluster, cfg.Host, from), nil
}
