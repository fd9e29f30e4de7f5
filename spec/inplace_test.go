package spec

import (
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
)

const inPlaceHead = `
apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: staging}
disruptions: [{kind: rollout-restart, count: 1}]
`

// An app that already runs is named by its namespace and Deployment: no manifests, and the load
// comes from load pods unless a URL is given.
func TestInPlaceCheck(t *testing.T) {
	plans := inPlacePlans(t, `
app: {namespace: shop, deployment: web, service: web-svc, port: 8080}
variants:
- name: as-is
  expect: {failures: 0}
- name: prestop-5s
  preStop: {sleep: 5s}
  expect: {failures: 0}
`)
	if len(plans) != 2 {
		t.Fatalf("%d plans, want 2", len(plans))
	}
	p := plans[0]
	if !p.InPlace() || p.App.Namespace != "shop" || p.App.Deployment != "web" || p.App.Service != "web-svc" || len(p.App.Objects) != 0 {
		t.Errorf("app %+v, want web in shop, in place, no objects", p.App)
	}
	if p.Load.From != check.LoadFromCluster {
		t.Errorf("load from %q, want cluster (no NodePort reaches an app in place)", p.Load.From)
	}
	if p.RunsAlone() == "" {
		t.Error("an in-place row may run beside others; it must run alone")
	}
	if got := plans[0].Variant.Changes(); len(got) != 0 {
		t.Errorf("as-is changes %v, want none", got)
	}
	if got := plans[1].Variant.Changes(); strings.Join(got, ",") != "preStop" {
		t.Errorf("prestop-5s changes %v, want preStop", got)
	}
	// Load from the host to a URL the host reaches is allowed.
	inPlacePlans(t, `
app: {namespace: shop, deployment: web, port: 8080}
load: {from: host, url: "http://127.0.0.1:8080/"}
variants: [{name: as-is, expect: {failures: 0}}]
`)
	// A headless Service of the app's namespace asked by its full name: its DNS window, measured.
	if p := inPlacePlans(t, `
app: {namespace: shop, deployment: web, port: 8080}
load: {from: cluster, resolve: web-headless.shop.svc}
variants: [{name: as-is, expect: {failures: 0}}]
`); p[0].Load.Resolve != "web-headless.shop.svc" {
		t.Errorf("resolve %q", p[0].Load.Resolve)
	}
}

// inPlacePlans are the plans of a check file that begins with inPlaceHead; a problem fails the test.
func inPlacePlans(t *testing.T, rest string) []check.Plan {
	t.Helper()
	c, err := Parse([]byte(inPlaceHead+rest), "testdata")
	if err == nil {
		var plans []check.Plan
		if plans, _, err = plansOf(c.Plans()); err == nil {
			return plans
		}
	}
	t.Fatal(err)
	return nil
}

// An Argo Rollout in place: app.rollout names it; the plan's workload is a Rollout.
func TestInPlaceRollout(t *testing.T) {
	plans := inPlacePlans(t, `
app: {namespace: shop, rollout: rweb, service: rweb, port: 8080}
variants: [{name: prestop-5s, preStop: {sleep: 5s}, expect: {failures: 0}}]
`)
	a := plans[0].App
	if a.Kind != check.KindRollout || a.Deployment != "rweb" || a.Workload() != "Rollout shop/rweb" {
		t.Errorf("app %+v (%s), want Rollout shop/rweb", a, a.Workload())
	}
	if !strings.Contains(plans[0].RunsAlone(), "Rollout shop/rweb") {
		t.Errorf("RunsAlone: %q", plans[0].RunsAlone())
	}
}

// Each field combination an app in place cannot take is one problem, said once, on one line.
func TestInPlaceRejects(t *testing.T) {
	for _, tc := range []struct{ app, load, variant, want string }{
		{`{namespace: shop, port: 8080}`, ``, ``, "namespace shop: name the Deployment checked there (deployment, or rollout)"},
		{`{namespace: shop, deployment: web, rollout: rweb, port: 8080}`, ``, ``, "app.deployment web and app.rollout rweb: name one workload"},
		{`{manifests: [web.yaml], rollout: rweb, port: 8080}`, ``, ``, "app.rollout rweb: only with app.namespace"},
		{`{namespace: shop, deployment: web, manifests: [web.yaml], port: 8080}`, ``, ``, "app.namespace shop: the app runs there already; leave app.manifests, app.images and app.build empty"},
		{`{namespace: shop, deployment: web, images: ["example/web:dev"], port: 8080}`, ``, ``, "leave app.manifests, app.images and app.build empty"},
		{`{manifests: [web.yaml], service: web, port: 8080}`, ``, ``, "app.service web: only with app.namespace"},
		{`{namespace: Shop_1, deployment: web, port: 8080}`, ``, ``, `namespace "Shop_1": want a namespace name`},
		{`{namespace: shop, deployment: web, service: Web!, port: 8080}`, ``, ``, `service "Web!": want a Service name`},
		{`{namespace: shop, deployment: web, port: 8080}`, `{from: host}`, ``, "load from the host: an app checked in place has no NodePort of rollcheck's"},
		{`{namespace: shop, deployment: web, port: 8080}`, `{from: host, entry: node}`, ``, "load from the host: an app checked in place"},
		{`{namespace: shop, deployment: web, port: 8080}`, ``, `externalTrafficPolicy: Local`, "externalTrafficPolicy Local: an app checked in place has no load Service"},
		{`{namespace: shop, deployment: web, port: 8080}`, `{from: cluster, protocol: grpc, grpc: {balancing: round_robin}}`, ``, "load grpc balancing round_robin: it resolves rollcheck's headless Service"},
		{`{namespace: shop, deployment: web, port: 8080}`, `{from: cluster, url: "http://front/"}`, ``, "load url http://front/: a load pod resolves the short name front in rollcheck's own namespace, not in shop: write front.shop.svc"},
		{`{namespace: shop, deployment: web, port: 8080}`, `{from: cluster, resolve: web-headless}`, ``, "load resolve web-headless: a load pod asks for the short name web-headless in rollcheck's own namespace, not in shop: write web-headless.shop.svc"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			doc := inPlaceHead + "app: " + tc.app + "\n"
			if tc.load != "" {
				doc += "load: " + tc.load + "\n"
			}
			doc += "variants:\n- name: v\n  expect: {failures: 0}\n"
			if tc.variant != "" {
				doc += "  " + tc.variant + "\n"
			}
			c, err := Parse([]byte(doc), "testdata")
			if err == nil {
				_, _, err = plansOf(c.Plans())
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Count(msg, tc.want) != 1 || strings.Contains(msg, "\n") {
				t.Errorf("error %q\nwant it once, on one line: %q", msg, tc.want)
			}
		})
	}
}

// plansOf is Plans' answer with each row as its Plan, for tests that read the rows' fields.
func plansOf(rs []*check.Resolved, warnings []string, err error) ([]check.Plan, []string, error) {
	var out []check.Plan
	for _, r := range rs {
		out = append(out, r.Plan())
	}
	return out, warnings, err
}

// mustResolve is p.Resolve for a plan Plans returned.
func mustResolve(t *testing.T, p check.Plan) *check.Resolved {
	t.Helper()
	r, err := p.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
