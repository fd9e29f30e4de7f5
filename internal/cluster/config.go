package cluster

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"os"
	"strings"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"
	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/oneline"
)

// kube-proxy modes a created cluster can run (Options.ProxyMode).
const (
	ProxyIPTables = "iptables"
	ProxyNFTables = "nftables"
)

// Image sources (knobs.ImageSource tells them from a reference).
const (
	SourceUpstream = knobs.SourceUpstream
	SourceOffline  = knobs.SourceOffline
)

// Options says which cluster to create or reuse and how.
type Options struct {
	Name       string // kind cluster name
	KindConfig string // path of a kind config file; empty: KindConfigData, else the embedded DefaultKindConfig
	// KindConfigData is a kind config (YAML or JSON, v1alpha4) given as data rather than as a
	// file (kindcluster.WithConfig); at most one of KindConfig and KindConfigData is set.
	KindConfigData []byte
	NodeImage      string // auto, upstream, offline or an image reference (see ResolveNodeImage); Up never pulls
	ImageSource    string // SourceUpstream or SourceOffline: set by Up from the resolved NodeImage
	Workers        int    // worker nodes besides the control plane
	// ProxyMode is kube-proxy's mode in a cluster Up creates: iptables (or empty) or nftables
	// (kind's networking.kubeProxyMode); a reused cluster must run the same.
	ProxyMode  string
	Keep       bool   // keep the cluster when done
	IsolateDNS string // remove CoreDNS's outside forwarding in a created cluster: auto (or empty), or a boolean (see dnsIsolation)
	LoadImage  string // a prebuilt load pod image (ROLLCHECK_LOAD_IMAGE); empty: LoadPodImage builds one
	// PodSecurity is the Pod Security level every namespace of the run enforces
	// (ROLLCHECK_POD_SECURITY); empty for none.
	PodSecurity string
	Logf        func(format string, args ...any)
}

// DefaultKindConfig is rollcheck's kind config (kind-config.yaml in this package, whose comments
// say why each setting is there): one control-plane node, the app's NodePort 30080 mapped to
// 127.0.0.1:30080, kube-proxy's metrics reachable through the API server's pod proxy.
//
//go:embed kind-config.yaml
var DefaultKindConfig []byte

// FromEnv reads the cluster's Options from the ROLLCHECK_* environment, every knob checked by
// its rule (internal/knobs) and every problem reported at once, on one line. It runs nothing: Up
// resolves the node image choice.
func FromEnv() (Options, error) {
	if err := oneline.Join(knobs.Check(os.Getenv, true)); err != nil {
		return Options{}, err
	}
	get := func(name string) string { v, _ := knobs.Get(os.Getenv, name); return v }
	o := Options{
		Name:        get(knobs.EnvName),
		KindConfig:  get(knobs.EnvKindConfig),
		NodeImage:   knobs.NodeImageChoice(os.Getenv),
		IsolateDNS:  get(knobs.EnvIsolateDNS),
		LoadImage:   get(knobs.EnvLoadImage),
		PodSecurity: get(knobs.EnvPodSecurity),
	}
	o.Keep, _ = knobs.Keep(os.Getenv)
	o.Workers, _ = knobs.Workers(os.Getenv)
	o.ProxyMode = knobs.ProxyMode(os.Getenv)
	return o, o.Validate()
}

// ResolveNodeImage turns a node image choice into a reference: upstream is kind's own default
// (defaults.Image of the kind module in go.mod); offline the newest rollcheck/kind-node image in
// the Docker engine (make node-image builds it); offline-containerd2 the newest
// rollcheck/kind-node-containerd2 one (make e2e-stopsignal builds it); auto the upstream image
// when the Docker engine has it, else the newest offline one; anything else is taken as an image
// reference. Nothing is pulled: ChooseNodeImage pulls, and scripts/node-image.sh builds, for make.
func ResolveNodeImage(ctx context.Context, choice string) (string, error) {
	switch choice {
	case SourceUpstream:
		return kinddefaults.Image, nil
	case knobs.OfflineContainerd2:
		out, err := run(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", knobs.OfflineContainerd2Repo)
		if err != nil {
			return "", fmt.Errorf("%s=%s: list the node images: %w", knobs.EnvNodeImage, choice, err)
		}
		if refs := strings.Fields(out); len(refs) > 0 {
			return refs[0], nil // docker lists the newest first
		}
		return "", fmt.Errorf("%s=%s: no %s image in the Docker engine: a checkout of rollcheck builds one (make e2e-stopsignal, scripts/node-image-containerd.sh)", knobs.EnvNodeImage, choice, knobs.OfflineContainerd2Repo)
	case SourceOffline, "auto":
		if choice == "auto" {
			if _, err := run(ctx, "docker", "image", "inspect", kinddefaults.Image); err == nil {
				return kinddefaults.Image, nil
			}
		}
		out, err := run(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", knobs.OfflineRepo)
		if err != nil && choice == SourceOffline {
			return "", fmt.Errorf("%s=offline: list the offline node images: %w", knobs.EnvNodeImage, err)
		}
		if refs := strings.Fields(out); err == nil && len(refs) > 0 {
			return refs[0], nil // docker lists the newest first
		}
		if choice == "auto" {
			return kinddefaults.Image, nil // Up says it is missing, and how to get it
		}
		return "", fmt.Errorf("%s=offline: no %s image in the Docker engine: a checkout of rollcheck builds one (make node-image)", knobs.EnvNodeImage, knobs.OfflineRepo)
	}
	return choice, nil
}

// Validate checks the options before any expensive work.
func (o Options) Validate() error {
	var errs []error
	if knobs.ValidClusterName(o.Name) != nil {
		errs = append(errs, fmt.Errorf("cluster name %q: want lower-case letters, digits, '.' and '-' (at most 50)", o.Name))
	}
	if o.Workers < 0 || o.Workers > 5 {
		errs = append(errs, fmt.Errorf("%d worker node(s): want 0 to 5 workers", o.Workers))
	}
	if o.ProxyMode != "" && o.ProxyMode != ProxyIPTables && o.ProxyMode != ProxyNFTables {
		errs = append(errs, fmt.Errorf("kube-proxy mode %q: want %s or %s", o.ProxyMode, ProxyIPTables, ProxyNFTables))
	}
	if o.NodeImage == "" {
		errs = append(errs, fmt.Errorf("no node image: set %s", knobs.EnvNodeImage))
	}
	if _, _, err := knobs.IsolateDNS(o.IsolateDNS); err != nil {
		errs = append(errs, fmt.Errorf("%s=%q: %w", knobs.EnvIsolateDNS, o.IsolateDNS, err))
	}
	if o.LoadImage != "" {
		if err := check.ValidLoadImage(o.LoadImage); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", knobs.EnvLoadImage, o.LoadImage, err))
		}
	}
	if o.KindConfig != "" {
		if _, err := os.Stat(o.KindConfig); err != nil {
			errs = append(errs, fmt.Errorf("kind config: %w", err))
		}
		if o.KindConfigData != nil {
			errs = append(errs, fmt.Errorf("kind config: both a file (%s) and data given; want one", o.KindConfig))
		}
	}
	return oneline.Join(errs)
}

// kindConfig reads the kind config the options name or give (the embedded default when none).
func (o Options) kindConfig() (*KindConfig, error) {
	switch {
	case o.KindConfig != "":
		return LoadKindConfig(o.KindConfig)
	case o.KindConfigData != nil:
		return ParseKindConfig("(given as data)", o.KindConfigData)
	}
	return ParseKindConfig("kind-config.yaml (embedded)", DefaultKindConfig)
}

// KindConfig is the parsed kind config plus what rollcheck needs from it.
type KindConfig struct {
	Cluster kindv1.Cluster
	// NodePort is the app's NodePort, mapped to HostPort on 127.0.0.1.
	NodePort int32
	HostPort int32
}

// EntryHostPort is the loopback port Render maps the first worker's NodePort to, when the
// cluster has workers: the port right after HostPort (30081 for rollcheck's config). Load sent
// there enters the cluster at that worker (check.EntryNode), where the app's pods run, rather
// than at the control plane, which runs none of them.
func (kc *KindConfig) EntryHostPort() int32 { return kc.HostPort + 1 }

// EntryNodeName is the kind node whose NodePort EntryHostPort maps: the first worker, which
// kind names <cluster>-worker.
func EntryNodeName(cluster string) string { return cluster + "-worker" }

// LoadKindConfig reads and checks a kind config file: exactly one port mapping on the
// control-plane node, to a loopback listen address.
func LoadKindConfig(path string) (*KindConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kind config: %w", err)
	}
	return ParseKindConfig(path, b)
}

// ParseKindConfig checks a kind config as LoadKindConfig does; path names it in errors.
func ParseKindConfig(path string, b []byte) (*KindConfig, error) {
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
	for i := range o.Workers {
		w := kindv1.Node{Role: kindv1.WorkerRole}
		if i == 0 {
			// The first worker's NodePort on its own loopback port: the entry node of load
			// that must enter where the app runs (externalTrafficPolicy Local).
			w.ExtraPortMappings = []kindv1.PortMapping{{ContainerPort: kc.NodePort, HostPort: kc.EntryHostPort(),
				ListenAddress: "127.0.0.1", Protocol: kindv1.PortMappingProtocolTCP}}
		}
		nodes = append(nodes, w)
	}
	if len(nodes) != 1+o.Workers {
		return nil, fmt.Errorf("kind config: want one control-plane node, got %d", len(nodes)-o.Workers)
	}
	c.Nodes = nodes
	if knobs.ImageSource(o.NodeImage) == SourceOffline {
		c.Networking.DisableDefaultCNI = true
	}
	if o.ProxyMode != "" {
		c.Networking.KubeProxyMode = kindv1.ProxyMode(o.ProxyMode)
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("render kind config: %w", err)
	}
	return b, nil
}
