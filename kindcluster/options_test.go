package kindcluster

import (
	"context"
	"strings"
	"testing"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// The defaults come from nothing: the environment is read only through FromEnv.
func TestDefaultsIgnoreTheEnvironment(t *testing.T) {
	t.Setenv(knobs.EnvName, "from-env")
	t.Setenv(knobs.EnvKeep, "1")
	t.Setenv(knobs.EnvNodeImage, "offline")
	s, err := applyOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.Name != DefaultName || s.opts.Keep || s.opts.NodeImage != "auto" || s.opts.Workers != 0 {
		t.Errorf("defaults %+v, want name %s, node image auto, not kept, no workers", s.opts, DefaultName)
	}
}

func TestFromEnvThenOverrides(t *testing.T) {
	t.Setenv(knobs.EnvName, "from-env")
	t.Setenv(knobs.EnvKeep, "yes")
	t.Setenv(knobs.EnvNodeImage, "kindest/node:v1.34.0")
	logf := func(string, ...any) {}
	s, err := applyOptions([]Option{WithLogger(logf), WithImages("web:v1"), FromEnv(), WithKeep(false), WithImages("api:v2")})
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.Name != "from-env" || s.opts.NodeImage != "kindest/node:v1.34.0" {
		t.Errorf("FromEnv: %+v, want the environment's name and node image", s.opts)
	}
	if s.opts.Keep {
		t.Error("WithKeep(false) after FromEnv did not override ROLLCHECK_KEEP_CLUSTER=yes")
	}
	if s.opts.Logf == nil {
		t.Error("FromEnv dropped the logger given before it")
	}
	if strings.Join(s.images, " ") != "web:v1 api:v2" {
		t.Errorf("images %v, want both WithImages' images in order", s.images)
	}
}

func TestFromEnvBadKnob(t *testing.T) {
	t.Setenv(knobs.EnvWorkers, "many")
	t.Setenv(knobs.EnvKeep, "perhaps")
	_, err := Acquire(context.Background(), FromEnv())
	if err == nil || !strings.Contains(err.Error(), knobs.EnvWorkers+`="many"`) || !strings.Contains(err.Error(), knobs.EnvKeep) {
		t.Fatalf("error %v, want both bad knobs named", err)
	}
}

func TestWithConfig(t *testing.T) {
	good := &kindv1.Cluster{Nodes: []kindv1.Node{{
		Role:              kindv1.ControlPlaneRole,
		ExtraPortMappings: []kindv1.PortMapping{{ContainerPort: 31000, HostPort: 31000, ListenAddress: "127.0.0.1"}},
	}}}
	s, err := applyOptions([]Option{WithConfig(good)})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := cluster.ParseKindConfig("rendered", s.opts.KindConfigData)
	if err != nil || kc.NodePort != 31000 {
		t.Fatalf("the config as given to the policy: %+v, %v; want NodePort 31000", kc, err)
	}
	if good.Kind != "" {
		t.Error("WithConfig changed the caller's config")
	}

	bad := []struct {
		config *kindv1.Cluster
		want   string
	}{
		{nil, "kind config: nil"},
		{&kindv1.Cluster{Nodes: []kindv1.Node{{Role: kindv1.ControlPlaneRole}}}, "no extraPortMappings entry"},
		{&kindv1.Cluster{Nodes: []kindv1.Node{{Role: kindv1.ControlPlaneRole,
			ExtraPortMappings: []kindv1.PortMapping{{ContainerPort: 30080, HostPort: 30080, ListenAddress: "0.0.0.0"}}}}}, "only sends load to loopback"},
	}
	for _, b := range bad {
		// Refused before any work: no Docker engine is needed to get this error.
		_, err := Acquire(context.Background(), WithConfig(b.config))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("WithConfig(%+v): error %v, want one containing %q", b.config, err, b.want)
		}
	}
}

func TestBadOptionsAllAtOnce(t *testing.T) {
	_, err := Acquire(context.Background(), nil, WithWorkers(-1), WithNodeImage(""), WithImages("ok:v1", "bad"))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"option 1 is nil", "-1 worker node(s)", `node image ""`, `image "bad"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line", msg)
	}
}

func TestOfflineImageTakesWorkers(t *testing.T) {
	s, err := applyOptions([]Option{WithNodeImage("offline"), WithWorkers(2)})
	if err != nil || s.opts.Workers != 2 {
		t.Fatalf("offline image with 2 workers: %+v, %v", s.opts, err)
	}
}

func TestKubeProxyMode(t *testing.T) {
	s, err := applyOptions([]Option{WithKubeProxyMode("nftables")})
	if err != nil || s.opts.ProxyMode != "nftables" {
		t.Fatalf("nftables: %+v, %v", s.opts, err)
	}
	if _, err := applyOptions([]Option{WithKubeProxyMode("ipvs")}); err == nil || !strings.Contains(err.Error(), `kube-proxy mode "ipvs"`) {
		t.Fatalf("ipvs: %v, want refused", err)
	}
}
