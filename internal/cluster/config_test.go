package cluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
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
	bad := []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.Name = "has space" }, "lower-case letters"},
		{func(o *Options) { o.Name = "Upper" }, "lower-case letters"},
		{func(o *Options) { o.Workers = -1 }, "0 to 5 workers"},
		{func(o *Options) { o.NodeImage = "" }, "no node image"},
		{func(o *Options) { o.NodeImage, o.Workers = SourceOffline, 1 }, "single-node bridge CNI"},
		{func(o *Options) { o.NodeImage, o.Workers = "rollcheck/kind-node:v1", 1 }, "single-node bridge CNI"},
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
	for _, k := range Knobs {
		t.Setenv(k.Name, "")
	}
	t.Setenv(EnvWorkers, "two")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvWorkers+`="two": want a whole number from 0 to 5`) {
		t.Fatalf("bad %s accepted: %v", EnvWorkers, err)
	}
	t.Setenv(EnvWorkers, "")
	t.Setenv(EnvKeep, "1")
	t.Setenv(EnvNodeImageOf, "rollcheck/kind-node:v1")
	o, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !o.Keep || o.Name != "rollcheck" || imageSource(o.NodeImage) != SourceOffline || o.NodeImage != "rollcheck/kind-node:v1" || o.KindConfig != "" {
		t.Fatalf("options %+v", o)
	}
	t.Setenv(EnvKeep, "maybe")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvKeep+`="maybe"`) {
		t.Fatalf("%s=maybe accepted: %v", EnvKeep, err)
	}
	t.Setenv(EnvKeep, "false")
	if o, err := FromEnv(); err != nil || o.Keep {
		t.Fatalf("%s=false: keep %v, error %v; want the cluster not kept", EnvKeep, o.Keep, err)
	}
}

// Every knob has one rule; CheckKnobs reports every problem at once, one error each.
func TestCheckKnobs(t *testing.T) {
	dir := t.TempDir()
	good := map[string]string{
		EnvName: "rollcheck-2.x", EnvKindConfig: writeConfig(t, header), EnvNodeImage: "kindest/node:v1.34.0",
		EnvWorkers: "5", EnvKeep: "On", EnvIsolateDNS: "auto", EnvRepeat: "20", EnvProcs: "8", EnvLoadFrom: "both", EnvLabels: "smoke && !negative-control || /^rollout/",
		EnvSuites: dir + " " + dir, EnvGinkgoFlags: "--v --flake-attempts=2", "K8S_VERSION": "v1.34.3",
		"ROLLCHECK_PULL_TIMEOUT": "120", "DEBIAN_SUITE": "bookworm", EnvLoadImage: "registry.example:5000/rollcheck/load:20261123-130506-0123456789ab",
	}
	if errs := CheckKnobs(func(k string) string { return good[k] }, false); len(errs) > 0 {
		t.Fatalf("good knobs refused: %v", errs)
	}
	bad := map[string]string{
		EnvName:        "Rollcheck",
		EnvKindConfig:  dir,
		EnvNodeImage:   "bad value",
		EnvWorkers:     "6",
		EnvKeep:        "maybe",
		EnvRepeat:      "0",
		EnvProcs:       "9",
		EnvLoadFrom:    "pod",
		EnvLabels:      "(smoke && negative-control",
		EnvSuites:      dir + "/none",
		EnvGinkgoFlags: "-v",
		"K8S_VERSION":  "1.34",
		EnvLoadImage:   "rollcheck/load",
	}
	errs := CheckKnobs(func(k string) string { return bad[k] }, false)
	if len(errs) != len(bad) {
		t.Fatalf("%d problems, want %d: %v", len(errs), len(bad), errs)
	}
	for i, err := range errs {
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "ROLLCHECK_") && !strings.HasPrefix(err.Error(), "K8S_") {
			t.Errorf("problem %d %q: want one line naming its knob", i, err)
		}
	}
	if errs := CheckKnobs(func(k string) string { return bad[k] }, true); len(errs) != 6 {
		t.Errorf("cluster knobs only: %d problems, want 6: %v", len(errs), errs)
	}
	for _, labels := range []string{"smoke; rm -rf /", "a & b", "(x"} {
		if errs := CheckKnobs(func(k string) string { return map[string]string{EnvLabels: labels}[k] }, false); len(errs) != 1 {
			t.Errorf("%s=%q: %v, want one problem", EnvLabels, labels, errs)
		}
	}
	offline := map[string]string{EnvNodeImage: "offline", EnvWorkers: "2"}
	if errs := CheckKnobs(func(k string) string { return offline[k] }, true); len(errs) != 1 || !strings.Contains(errs[0].Error(), "single-node") {
		t.Errorf("offline with workers: %v", errs)
	}
}

// ROLLCHECK_LOAD_IMAGE's one rule: an image reference with a tag that names one build.
func TestLoadImageKnob(t *testing.T) {
	for _, v := range []string{"rollcheck/load:20261123-130506-0123456789ab", "localhost:5000/load:v1", "load:v1",
		"rollcheck/load@sha256:" + strings.Repeat("0", 64)} {
		if errs := CheckKnobs(func(k string) string { return map[string]string{EnvLoadImage: v}[k] }, true); len(errs) > 0 {
			t.Errorf("%q refused: %v", v, errs)
		}
	}
	for _, v := range []string{"rollcheck/load", "rollcheck/load:latest", "Rollcheck/load:v1", "rollcheck/load:", "load:v1 x"} {
		errs := CheckKnobs(func(k string) string { return map[string]string{EnvLoadImage: v}[k] }, true)
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), EnvLoadImage+"=") || strings.Contains(errs[0].Error(), "\n") {
			t.Errorf("%q: %v; want one problem naming %s", v, errs, EnvLoadImage)
		}
	}
	for _, k := range Knobs {
		t.Setenv(k.Name, "")
	}
	t.Setenv(EnvLoadImage, "rollcheck/load:v1")
	if o, err := FromEnv(); err != nil || o.LoadImage != "rollcheck/load:v1" {
		t.Fatalf("FromEnv: load image %q, %v", o.LoadImage, err)
	}
	if err := (Options{Name: "x", NodeImage: "auto", LoadImage: "x:latest"}).Validate(); err == nil || !strings.Contains(err.Error(), EnvLoadImage) {
		t.Fatalf("Validate: %v, want the :latest load image refused", err)
	}
}

// TestBoolKnob pins the one meaning of true and false that scripts/test-scripts.sh checks for
// lib.sh's bool_knob too.
func TestBoolKnob(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", "True", "yes", "YES", "on", "On"} {
		if got, err := BoolKnob("K", v); err != nil || !got {
			t.Errorf("BoolKnob(%q) = %v, %v; want true", v, got, err)
		}
	}
	for _, v := range []string{"", "0", "false", "FALSE", "no", "No", "off", "OFF"} {
		if got, err := BoolKnob("K", v); err != nil || got {
			t.Errorf("BoolKnob(%q) = %v, %v; want false", v, got, err)
		}
	}
	for _, v := range []string{"maybe", "2", "-1", " 1", "1 ", "y", "n", "enabled", "ture"} {
		got, err := BoolKnob("K", v)
		if err == nil {
			t.Errorf("BoolKnob(%q) = %v, want an error", v, got)
			continue
		}
		if want := "K=" + v + ": want 1, true"; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("BoolKnob(%q) error %q, want one line starting %q", v, err, want)
		}
	}
}

// The one kind config is the embedded file; there is none at the repository root any more.
func TestOneKindConfig(t *testing.T) {
	b, err := os.ReadFile("kind-config.yaml")
	if err != nil || string(b) != string(DefaultKindConfig) {
		t.Fatalf("DefaultKindConfig is not kind-config.yaml of this package (%v)", err)
	}
	if _, err := os.Stat("../../kind-config.yaml"); err == nil {
		t.Fatal("a second kind-config.yaml at the repository root: the embedded one is the only one")
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

// ROLLCHECK_PROCS and ROLLCHECK_LOAD_FROM read by their rules, with their defaults when unset.
func TestProcsAndLoadMode(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if n, err := Procs(env()); n != DefaultProcs || err != nil {
		t.Errorf("Procs unset = %d, %v; want %d", n, err, DefaultProcs)
	}
	if n, err := Procs(env(EnvProcs, "4")); n != 4 || err != nil {
		t.Errorf("Procs 4 = %d, %v", n, err)
	}
	if _, err := Procs(env(EnvProcs, "0")); err == nil || !strings.HasPrefix(err.Error(), EnvProcs) {
		t.Errorf("Procs 0: %v, want an error naming the knob", err)
	}
	if m, err := LoadMode(env()); m != LoadBoth || err != nil {
		t.Errorf("LoadMode unset = %q, %v; want both", m, err)
	}
	if m, err := LoadMode(env(EnvLoadFrom, "host")); m != LoadHost || err != nil {
		t.Errorf("LoadMode host = %q, %v", m, err)
	}
	if _, err := LoadMode(env(EnvLoadFrom, "pod")); err == nil {
		t.Error("LoadMode pod: no error")
	}
}
