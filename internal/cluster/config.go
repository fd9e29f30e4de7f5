package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"
	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// Environment variables read by FromEnv.
const (
	EnvName        = "ROLLCHECK_CLUSTER_NAME"      // kind cluster name (default "rollcheck")
	EnvKindConfig  = "ROLLCHECK_KIND_CONFIG"       // kind config file (default <repo>/kind-config.yaml)
	EnvKind        = "ROLLCHECK_KIND"              // kind binary (default "kind" on PATH)
	EnvNodeImage   = "ROLLCHECK_NODE_IMAGE_REF"    // node image reference (default: kind's own default)
	EnvImageSource = "ROLLCHECK_NODE_IMAGE_SOURCE" // "offline" or "upstream"
	EnvWorkers     = "ROLLCHECK_WORKERS"           // number of worker nodes (default 0)
	EnvKeep        = "ROLLCHECK_KEEP_CLUSTER"      // a boolean knob (see BoolKnob): keep the cluster
)

// Image sources.
const (
	SourceUpstream = "upstream"
	SourceOffline  = "offline"
)

// Options says which cluster to create or reuse and how.
type Options struct {
	Name        string // kind cluster name
	KindConfig  string // path of the kind config file
	KindPath    string // kind binary
	NodeImage   string // node image; it must be present in the Docker engine (Up never pulls)
	ImageSource string // SourceUpstream or SourceOffline
	Workers     int    // worker nodes besides the control plane
	Keep        bool   // keep the cluster when done
	RepoRoot    string // repository root (fixtures, manifests)
	Logf        func(format string, args ...any)
}

// DefaultKindConfig is the repository's kind-config.yaml without its comments (they say why
// kube-proxy's metrics listen on 0.0.0.0:10249 of the node), for suites and checks that run
// outside the rollcheck repository (a user's own module) with no ROLLCHECK_KIND_CONFIG.
const DefaultKindConfig = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  podSubnet: 10.244.0.0/16
kubeadmConfigPatches:
- |
  kind: KubeProxyConfiguration
  apiVersion: kubeproxy.config.k8s.io/v1alpha1
  metricsBindAddress: "0.0.0.0:10249"
nodes:
- role: control-plane
  extraPortMappings:
  - containerPort: 30080
    hostPort: 30080
    listenAddress: 127.0.0.1
    protocol: TCP
`

// FromEnv reads Options from the environment; repoRoot locates kind-config.yaml and fixtures.
// Outside the repository (repoRoot empty) and without ROLLCHECK_KIND_CONFIG, the kind config
// is DefaultKindConfig, written to a file in the temporary directory.
func FromEnv(repoRoot string) (Options, error) {
	kindConfig := os.Getenv(EnvKindConfig)
	if kindConfig == "" && repoRoot != "" {
		kindConfig = filepath.Join(repoRoot, "kind-config.yaml")
	}
	if kindConfig == "" {
		kindConfig = filepath.Join(os.TempDir(), "rollcheck-default-kind-config.yaml")
		if err := os.WriteFile(kindConfig, []byte(DefaultKindConfig), 0o644); err != nil {
			return Options{}, fmt.Errorf("write the default kind config: %w", err)
		}
	}
	o := Options{
		Name:        envOr(EnvName, "rollcheck"),
		KindConfig:  kindConfig,
		KindPath:    envOr(EnvKind, "kind"),
		NodeImage:   envOr(EnvNodeImage, kinddefaults.Image),
		ImageSource: envOr(EnvImageSource, SourceUpstream),
		RepoRoot:    repoRoot,
	}
	keep, err := BoolKnob(EnvKeep, os.Getenv(EnvKeep))
	if err != nil {
		return o, err
	}
	o.Keep = keep
	if w := os.Getenv(EnvWorkers); w != "" {
		n, err := strconv.Atoi(w)
		if err != nil {
			return o, fmt.Errorf("%s=%q: not a number", EnvWorkers, w)
		}
		o.Workers = n
	}
	return o, o.Validate()
}

// BoolKnob reads the value of the boolean knob name: 1, true, yes, on mean true; 0, false, no,
// off and empty mean false (any case); anything else is an error. scripts/lib.sh's bool_knob
// accepts exactly the same values.
func BoolKnob(name, value string) (bool, error) {
	switch strings.ToLower(value) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s: want 1, true, yes, on or 0, false, no, off (or unset)", name, value)
}

// Validate checks the options before any expensive work.
func (o Options) Validate() error {
	var errs []error
	if o.Name == "" || strings.ContainsAny(o.Name, " /:") {
		errs = append(errs, fmt.Errorf("cluster name %q: must be a non-empty DNS label", o.Name))
	}
	if o.Workers < 0 || o.Workers > 5 {
		errs = append(errs, fmt.Errorf("%s=%d: want 0 to 5 workers", EnvWorkers, o.Workers))
	}
	if o.ImageSource != SourceUpstream && o.ImageSource != SourceOffline {
		errs = append(errs, fmt.Errorf("%s=%q: want %q or %q", EnvImageSource, o.ImageSource, SourceUpstream, SourceOffline))
	}
	if o.NodeImage == "" {
		errs = append(errs, fmt.Errorf("no node image: set %s (make cluster does)", EnvNodeImage))
	}
	if o.ImageSource == SourceOffline && o.Workers > 0 {
		errs = append(errs, fmt.Errorf("%s=%d: the offline node image has a static single-node bridge CNI; use 0 workers or the upstream image", EnvWorkers, o.Workers))
	}
	if _, err := os.Stat(o.KindConfig); err != nil {
		errs = append(errs, fmt.Errorf("kind config: %w", err))
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// KindConfig is the parsed kind config plus what rollcheck needs from it.
type KindConfig struct {
	Cluster kindv1.Cluster
	// NodePort is the app's NodePort, mapped to HostPort on 127.0.0.1.
	NodePort int32
	HostPort int32
}

// LoadKindConfig reads and checks a kind config file: exactly one port mapping on the
// control-plane node, to a loopback listen address.
func LoadKindConfig(path string) (*KindConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kind config: %w", err)
	}
	var c kindv1.Cluster
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("parse kind config %s: %w", path, err)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("kind config %s: want kind Cluster, apiVersion kind.x-k8s.io/v1alpha4", path)
	}
	kc := &KindConfig{Cluster: c}
	for _, n := range c.Nodes {
		for _, pm := range n.ExtraPortMappings {
			ip := net.ParseIP(pm.ListenAddress)
			if ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("kind config %s: port mapping %d->%d listens on %q; rollcheck only sends load to loopback, set listenAddress: 127.0.0.1",
					path, pm.HostPort, pm.ContainerPort, pm.ListenAddress)
			}
			if pm.ContainerPort < 30000 || pm.ContainerPort > 32767 {
				return nil, fmt.Errorf("kind config %s: containerPort %d is not in the NodePort range 30000-32767", path, pm.ContainerPort)
			}
			if kc.NodePort != 0 {
				return nil, fmt.Errorf("kind config %s: more than one port mapping; rollcheck uses exactly one", path)
			}
			kc.NodePort, kc.HostPort = pm.ContainerPort, pm.HostPort
		}
	}
	if kc.NodePort == 0 {
		return nil, fmt.Errorf("kind config %s: no extraPortMappings entry for the app's NodePort", path)
	}
	if len(c.Nodes) == 0 || c.Nodes[0].Role != kindv1.ControlPlaneRole {
		return nil, fmt.Errorf("kind config %s: the first node must be the control-plane", path)
	}
	return kc, nil
}

// Render returns the kind config to create the cluster with, adjusted for the options.
func (kc *KindConfig) Render(o Options) ([]byte, error) {
	c := *kc.Cluster.DeepCopy()
	var nodes []kindv1.Node
	for _, n := range c.Nodes {
		if n.Role == kindv1.ControlPlaneRole {
			nodes = append(nodes, n)
		}
	}
	for range o.Workers {
		nodes = append(nodes, kindv1.Node{Role: kindv1.WorkerRole})
	}
	if len(nodes) != 1+o.Workers {
		return nil, fmt.Errorf("kind config: want one control-plane node, got %d", len(nodes)-o.Workers)
	}
	c.Nodes = nodes
	if o.ImageSource == SourceOffline {
		c.Networking.DisableDefaultCNI = true
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("render kind config: %w", err)
	}
	return b, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// RepoRoot finds the repository root by walking up from the working directory to the
// directory holding rollcheck's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/rollcheck/rollcheck\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod of github.com/rollcheck/rollcheck above the working directory")
		}
		dir = parent
	}
}
