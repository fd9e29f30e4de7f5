package cluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kind.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const header = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"

func embedded(t *testing.T) *KindConfig {
	t.Helper()
	kc, err := Options{}.kindConfig()
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func TestLoadKindConfigOfTheRepository(t *testing.T) {
	kc, err := LoadKindConfig("kind-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if kc.NodePort != 30080 || kc.HostPort != 30080 {
		t.Fatalf("NodePort %d HostPort %d, want 30080 mapped to 30080", kc.NodePort, kc.HostPort)
	}
}

// The kind config at the repository's top, which users run with the kind CLI, is the one
// rollcheck embeds, byte for byte.
func TestTopKindConfigIsTheEmbeddedOne(t *testing.T) {
	top, err := os.ReadFile("../../kind-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(top) != string(DefaultKindConfig) {
		t.Error("kind-config.yaml at the repository's top differs from internal/cluster/kind-config.yaml (embedded): copy one onto the other")
	}
	if _, err := LoadKindConfig("../../kind-config.yaml"); err != nil {
		t.Error(err)
	}
}

func TestLoadKindConfigRejects(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"any address":    {header + "nodes:\n- role: control-plane\n  extraPortMappings:\n  - {containerPort: 30080, hostPort: 30080, listenAddress: 0.0.0.0}\n", "only sends load to loopback"},
		"no address":     {header + "nodes:\n- role: control-plane\n  extraPortMappings:\n  - {containerPort: 30080, hostPort: 30080}\n", "only sends load to loopback"},
		"not a NodePort": {header + "nodes:\n- role: control-plane\n  extraPortMappings:\n  - {containerPort: 8080, hostPort: 8080, listenAddress: 127.0.0.1}\n", "NodePort range"},
		"two mappings":   {header + "nodes:\n- role: control-plane\n  extraPortMappings:\n  - {containerPort: 30080, hostPort: 30080, listenAddress: 127.0.0.1}\n  - {containerPort: 30081, hostPort: 30081, listenAddress: 127.0.0.1}\n", "more than one port mapping"},
		"no mapping":     {header + "nodes:\n- role: control-plane\n", "no extraPortMappings"},
		"wrong kind":     {"kind: Pod\napiVersion: v1\n", "want kind Cluster"},
		"unknown field":  {header + "nodez: []\n", "parse kind config"},
		"worker first":   {header + "nodes:\n- role: worker\n  extraPortMappings:\n  - {containerPort: 30080, hostPort: 30080, listenAddress: 127.0.0.1}\n", "first node must be the control-plane"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadKindConfig(writeConfig(t, c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("want a one-line error, got %q", err)
			}
		})
	}
	if _, err := LoadKindConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

func TestRender(t *testing.T) {
	kc := embedded(t)
	for _, c := range []struct {
		o       Options
		nodes   int
		noCNI   bool
		workers int
	}{
		{Options{NodeImage: "kindest/node:v1"}, 1, false, 0},
		{Options{NodeImage: "kindest/node:v1", Workers: 2}, 3, false, 2},
		{Options{NodeImage: "rollcheck/kind-node:v1"}, 1, true, 0},
	} {
		b, err := kc.Render(c.o)
		if err != nil {
			t.Fatal(err)
		}
		var got kindv1.Cluster
		if err := yaml.UnmarshalStrict(b, &got); err != nil {
			t.Fatalf("rendered config does not parse: %v\n%s", err, b)
		}
		if len(got.Nodes) != c.nodes || got.Networking.DisableDefaultCNI != c.noCNI {
			t.Fatalf("%+v: %d nodes, disableDefaultCNI %v; want %d, %v", c.o, len(got.Nodes), got.Networking.DisableDefaultCNI, c.nodes, c.noCNI)
		}
		if pm := got.Nodes[0].ExtraPortMappings; len(pm) != 1 || pm[0].ListenAddress != "127.0.0.1" {
			t.Fatalf("port mapping lost: %+v", pm)
		}
		if got.Networking.PodSubnet != "10.244.0.0/16" {
			t.Fatalf("pod subnet %q", got.Networking.PodSubnet)
		}
		// The first worker's NodePort on the next loopback port: the load's entry node.
		for i, n := range got.Nodes[1:] {
			pm := n.ExtraPortMappings
			switch {
			case i == 0 && (len(pm) != 1 || pm[0].ListenAddress != "127.0.0.1" || pm[0].ContainerPort != 30080 || pm[0].HostPort != 30081):
				t.Fatalf("first worker's port mapping %+v, want 127.0.0.1:30081 -> 30080", pm)
			case i > 0 && len(pm) != 0:
				t.Fatalf("worker %d maps %+v, want nothing", i+1, pm)
			}
		}
	}
	// Rendering must not change the loaded config.
	if kc.Cluster.Networking.DisableDefaultCNI || len(kc.Cluster.Nodes) != 1 {
		t.Fatal("Render modified the loaded config")
	}
}

func TestOptionsValidate(t *testing.T) {
	cfg := writeConfig(t, header)
	good := Options{Name: "rollcheck", KindConfig: cfg, NodeImage: "kindest/node:v1.34.0"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	offlineWorkers := good
	offlineWorkers.NodeImage, offlineWorkers.Workers = SourceOffline, 2
	if err := offlineWorkers.Validate(); err != nil {
		t.Errorf("the offline node image with workers: %v", err)
	}
	bad := []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.Name = "has space" }, "lower-case letters"},
		{func(o *Options) { o.Name = "Upper" }, "lower-case letters"},
		{func(o *Options) { o.Workers = -1 }, "0 to 5 workers"},
		{func(o *Options) { o.NodeImage = "" }, "no node image"},
		{func(o *Options) { o.KindConfig = cfg + ".missing" }, "kind config"},
		{func(o *Options) { o.KindConfigData = []byte(header) }, "both a file"},
	}
	for _, b := range bad {
		o := good
		b.mut(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want one containing %q", o, err, b.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, k := range knobs.All {
		t.Setenv(k.Name, "")
	}
	t.Setenv(knobs.EnvWorkers, "two")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), knobs.EnvWorkers+`="two": want a whole number from 0 to 5`) {
		t.Fatalf("bad %s accepted: %v", knobs.EnvWorkers, err)
	}
	t.Setenv(knobs.EnvWorkers, "")
	t.Setenv(knobs.EnvKeep, "1")
	t.Setenv(knobs.EnvNodeImageOf, "rollcheck/kind-node:v1")
	o, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !o.Keep || o.Name != "rollcheck" || knobs.ImageSource(o.NodeImage) != SourceOffline || o.NodeImage != "rollcheck/kind-node:v1" || o.KindConfig != "" {
		t.Fatalf("options %+v", o)
	}
	t.Setenv(knobs.EnvKeep, "maybe")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), knobs.EnvKeep+`="maybe"`) {
		t.Fatalf("%s=maybe accepted: %v", knobs.EnvKeep, err)
	}
	t.Setenv(knobs.EnvKeep, "false")
	if o, err := FromEnv(); err != nil || o.Keep {
		t.Fatalf("%s=false: keep %v, error %v; want the cluster not kept", knobs.EnvKeep, o.Keep, err)
	}
}

// FromEnv takes ROLLCHECK_LOAD_IMAGE; Validate applies its rule to Options made in Go.
func TestLoadImageKnob(t *testing.T) {
	for _, k := range knobs.All {
		t.Setenv(k.Name, "")
	}
	t.Setenv(knobs.EnvLoadImage, "rollcheck/load:v1")
	if o, err := FromEnv(); err != nil || o.LoadImage != "rollcheck/load:v1" {
		t.Fatalf("FromEnv: load image %q, %v", o.LoadImage, err)
	}
	if err := (Options{Name: "x", NodeImage: "auto", LoadImage: "x:latest"}).Validate(); err == nil || !strings.Contains(err.Error(), knobs.EnvLoadImage) {
		t.Fatalf("Validate: %v, want the :latest load image refused", err)
	}
}

// DefaultKindConfig is kind-config.yaml of this package (TestTopKindConfigIsTheEmbeddedOne
// holds the repository's top copy to it).
func TestOneKindConfig(t *testing.T) {
	b, err := os.ReadFile("kind-config.yaml")
	if err != nil || string(b) != string(DefaultKindConfig) {
		t.Fatalf("DefaultKindConfig is not kind-config.yaml of this package (%v)", err)
	}
}

// The kind config makes kube-proxy's metrics reachable through the API server's pod proxy
// (internal/proxymetrics), and Render keeps the patch. kind v0.30.0 generates kube-proxy's
// configuration as a document of kind KubeProxyConfiguration, apiVersion
// kubeproxy.config.k8s.io/v1alpha1 (pkg/cluster/internal/kubeadm/config.go), and applies each
// kubeadmConfigPatches entry as a JSON merge patch to the documents whose kind is the patch's and,
// when the patch names one, whose apiVersion is too (pkg/internal/patch).
func TestKindConfigsExposeKubeProxyMetrics(t *testing.T) {
	want := map[string]any{
		"kind":               "KubeProxyConfiguration",
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"metricsBindAddress": "0.0.0.0:10249",
	}
	for name, path := range map[string]string{
		"DefaultKindConfig": writeConfig(t, string(DefaultKindConfig)),
	} {
		kc, err := LoadKindConfig(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := kc.Render(Options{NodeImage: "kindest/node:v1", Workers: 1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var rendered kindv1.Cluster
		if err := yaml.UnmarshalStrict(b, &rendered); err != nil {
			t.Fatalf("%s: rendered config does not parse: %v", name, err)
		}
		for stage, patches := range map[string][]string{"loaded": kc.Cluster.KubeadmConfigPatches, "rendered": rendered.KubeadmConfigPatches} {
			var found []map[string]any
			for _, p := range patches {
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(p), &doc); err != nil {
					t.Fatalf("%s, %s: patch %q: %v", name, stage, p, err)
				}
				if doc["kind"] == want["kind"] {
					found = append(found, doc)
				}
				if strings.Contains(p, "\n---") {
					t.Errorf("%s, %s: patch %q holds more than one document", name, stage, p)
				}
			}
			if len(found) != 1 || !reflect.DeepEqual(found[0], want) {
				t.Errorf("%s, %s: KubeProxyConfiguration patches %v, want exactly %v", name, stage, found, want)
			}
		}
	}
}

func TestProxyMode(t *testing.T) {
	for conf, want := range map[string]string{
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\n": "nftables",
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nmode: iptables\n":                               "iptables",
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nmode: \"\"\n":                                   "iptables",
	} {
		if got, err := proxyModeOf(conf); err != nil || got != want {
			t.Errorf("proxyModeOf(%q) = %q, %v; want %q", conf, got, err, want)
		}
	}
	if _, err := proxyModeOf("mode: [\n"); err == nil {
		t.Error("a broken configuration parsed")
	}
	kc, err := ParseKindConfig("embedded", DefaultKindConfig)
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[string]string{"": "", ProxyIPTables: "kubeProxyMode: iptables", ProxyNFTables: "kubeProxyMode: nftables"} {
		b, err := kc.Render(Options{NodeImage: "kindest/node:v1", ProxyMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), "kubeProxyMode"); has != (want != "") || (want != "" && !strings.Contains(string(b), want)) {
			t.Errorf("mode %q rendered:\n%s", mode, b)
		}
	}
	o := Options{Name: "rollcheck", NodeImage: "kindest/node:v1", ProxyMode: "ipvs"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `kube-proxy mode "ipvs": want iptables or nftables`) {
		t.Errorf("ipvs accepted: %v", err)
	}
}
