package engine

import (
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// The load pods ask the cluster's DNS for Load.Resolve with or without a proxy in front; only a
// load to a URL is through a proxy (its own answers classed, its upstream header read).
func TestLoadConfigResolves(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  check.Load
		proxy bool
	}{
		{"to the load Service, the name measured only", check.Load{From: check.LoadFromCluster, Resolve: "app-headless"}, false},
		{"through a proxy that resolves it", check.Load{From: check.LoadFromCluster, URL: "http://front/", UpstreamHeader: "X-Upstream", Resolve: "app-headless"}, true},
	} {
		r := &runner{p: check.Plan{Load: c.load, App: check.App{PodHeader: "X-Pod"}}}
		cfg := r.loadConfig(loadgen.Config{Target: "http://10.96.0.10:80/"})
		if cfg.Resolve != "app-headless" || cfg.Proxy != c.proxy || cfg.PodHeader != "X-Pod" || (cfg.UpstreamHeader != "") != c.proxy {
			t.Errorf("%s: resolve %q, proxy %t, upstream header %q", c.name, cfg.Resolve, cfg.Proxy, cfg.UpstreamHeader)
		}
	}
}
