package audit

import (
	"slices"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/internal/scenario"
)

// The reader on the examples' manifests (hello's web app, the gRPC server, nginx in front) and
// on testdata's: every setting the scoring reads.
func TestReadManifests(t *testing.T) {
	inv, err := ReadManifests("../../examples/check/web.yaml", "../../examples/grpc/app.yaml", "../../examples/proxy/nginx.yaml", "testdata/manifests")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Workload{}
	for _, w := range inv.Workloads {
		got[w.ID()] = w
	}
	if len(got) != 6 {
		t.Fatalf("workloads %v, want web, greeter, front, shop, prices, ledger", slices.Collect(func(yield func(string) bool) {
			for k := range got {
				yield(k)
			}
		}))
	}
	web := got["Deployment/web"]
	if web.Replicas != 3 || web.GraceSeconds != 30 || web.Front != "web" || web.PreStop().Kind != "none" || web.Strategy != (Strategy{Type: "RollingUpdate", MaxSurge: 1}) ||
		web.Headless() != "web-headless" || web.PDB != nil || web.Spread || web.GRPC() || web.Containers[0].Readiness.PeriodSeconds != 1 || web.Containers[0].Readiness.FailureThreshold != 3 {
		t.Errorf("web: %+v", web)
	}
	if g := got["Deployment/greeter"]; !g.GRPC() || g.Headless() != "" || g.Containers[0].Ports[0].Protocol != "grpc" {
		t.Errorf("greeter: %+v", g)
	}
	shop := got["Deployment/prod/shop"]
	if shop.Front != "envoy" || shop.App != "shop" || shop.Containers[1].Sidecar != "classic" || shop.GraceSeconds != 20 || !shop.Spread ||
		shop.PDB == nil || shop.PDB.Allows != 1 || !slices.Equal(shop.Routes, []string{"Ingress/shop"}) {
		t.Errorf("shop: %+v", shop)
	}
	if p := shop.Containers[0].PreStop; p.Kind != "exec-sleep" || p.Sleep.D() != 10*time.Second {
		t.Errorf("shop's preStop %+v, want exec sleep 10s", p)
	}
	prices := got["Deployment/prod/prices"]
	if !prices.GRPC() || prices.Headless() != "prices-headless" || prices.Strategy != (Strategy{Type: "RollingUpdate", MaxUnavailable: 1}) ||
		prices.PreStop().Kind != "sleep" || !slices.Equal(prices.Routes, []string{"GRPCRoute/prices"}) || prices.Containers[0].Ports[0].Protocol != "h2c" {
		t.Errorf("prices: %+v %+v", prices, prices.Containers)
	}
	ledger := got["StatefulSet/prod/ledger"]
	if ledger.Replicas != 1 || len(ledger.Containers) != 2 || ledger.Containers[0].Sidecar != "native" || ledger.Front != "proxy" || ledger.App != "ledger" ||
		ledger.Containers[1].PreStop.Kind != "httpGet" || ledger.Strategy.MaxUnavailable != 1 {
		t.Errorf("ledger: %+v %+v", ledger, ledger.Containers)
	}
}

// A document the reader cannot parse is an error naming the file and the document.
func TestReadManifestsBadDocument(t *testing.T) {
	inv := &Inventory{}
	err := inv.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nspec: {replicas: many}\n"))
	if err == nil || !contains(err.Error(), "document 2") {
		t.Errorf("err %v, want document 2's", err)
	}
}

// The sample app's Deployment (fixtures/manifests, rendered as the matrix renders it), with a
// proxy sidecar in front, classic and native, and a Service to port 8080 as the engine's load
// Service: the reader finds the app, the proxy in front and the sidecar's kind.
func TestReadSampleApp(t *testing.T) {
	for _, native := range []bool{false, true} {
		objs, err := scenario.Render("audit", scenario.Sample{OnSIGTERM: scenario.ShutdownDrain, Proxy: &scenario.Proxy{Native: native, PreStop: 5 * time.Second}}, "rollcheck/app:test")
		if err != nil {
			t.Fatal(err)
		}
		inv := &Inventory{}
		for _, o := range objs {
			inv.AddObject(o)
		}
		if err := inv.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: load}\nspec: {selector: {app: " + scenario.AppName + "}, ports: [{port: 80, targetPort: 8080}]}\n")); err != nil {
			t.Fatal(err)
		}
		inv.Join()
		if len(inv.Workloads) != 1 {
			t.Fatalf("native %t: %d workloads", native, len(inv.Workloads))
		}
		w := inv.Workloads[0]
		kind := map[bool]string{false: "classic", true: "native"}[native]
		proxy := w.container("proxy")
		if w.App != "app" || w.Front != "proxy" || proxy == nil || proxy.Sidecar != kind || proxy.PreStop.Kind != "httpGet-sleep" || w.Replicas != 3 || !w.Spread ||
			w.Strategy != (Strategy{Type: "RollingUpdate", MaxSurge: 1}) || w.GraceSeconds != 30 {
			t.Errorf("native %t: %+v %+v", native, w, w.Containers)
		}
	}
}
