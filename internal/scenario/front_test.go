package scenario

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/proxies"
)

// A row with a proxy in front sends its load through the proxy's Service from a load pod, reads
// the upstream from X-Upstream where the proxy names it (not Traefik), asks the DNS for the
// headless Service the DNS-discovered proxies resolve (and how often they resolve it), and loads the proxy's image; the proxy's
// objects come with the app's, and only the app's Deployment is the one under test.
func TestFrontPlan(t *testing.T) {
	images := proxies.Images{}
	for _, p := range proxies.All {
		images[p] = string(p) + ":1"
	}
	for _, c := range proxies.Configs {
		s := Scenario{App: Sample{OnSIGTERM: ShutdownDrain}, Variant: check.Variant{Name: string(c), PreStop: &check.PreStop{None: true}, Expect: check.Zero()},
			Disruption: check.Disruption{Kind: check.RolloutRestart}, Front: &Front{Config: c, Images: images}}
		p, err := s.Plan("matrix", "rollcheck/app:1")
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		l := p.Load
		if l.URL != FrontURL || l.From != check.LoadFromCluster {
			t.Errorf("%s: load %+v", c, l)
		}
		if wantHeader := c != proxies.TraefikIngress; (l.UpstreamHeader == UpstreamHeader) != wantHeader || (!wantHeader && l.UpstreamHeader != "") {
			t.Errorf("%s: upstream header %q", c, l.UpstreamHeader)
		}
		if wantDNS := c != proxies.NginxKeepalive && c != proxies.TraefikIngress; (l.Resolve == proxies.HeadlessServiceName) != wantDNS || (!wantDNS && l.Resolve != "") {
			t.Errorf("%s: resolve %q", c, l.Resolve)
		}
		if every, words := c.Refresh(); l.ResolveRefresh != every || l.ResolveSetting != words || p.Applied().ResolveSetting != words {
			t.Errorf("%s: refresh %s %q, want the proxy's %s %q", c, l.ResolveRefresh, l.ResolveSetting, every, words)
		}
		want := string(c.Proxy()) + ":1"
		if len(p.App.Images) != 2 || p.App.Images[1] != want {
			t.Errorf("%s: images %v, want the app's and %s", c, p.App.Images, want)
		}
		if p.App.Deployment != AppName {
			t.Errorf("%s: deployment under test %q", c, p.App.Deployment)
		}
		objs, err := checktest.Resolve(t, p)[0].Objects("ns", 0)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		names := map[string]bool{}
		for _, o := range objs {
			names[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = true
		}
		if !names["Deployment/"+proxies.FrontName] || !names["Service/"+proxies.FrontName] || !names["Deployment/"+AppName] {
			t.Errorf("%s: objects %v", c, names)
		}
		if c == proxies.TraefikIngress && (!names["Ingress/"+proxies.IngressName] || !names["RoleBinding/"+proxies.ServiceAccountName]) {
			t.Errorf("%s: objects %v; want the Ingress and the RoleBinding", c, names)
		}
	}
}

// A proxy that resolves the pods once waits for as many addresses as the app has replicas (the
// variant's, else the rendered Deployment's), with the app's image.
func TestFrontAwaitsEveryPod(t *testing.T) {
	for _, replicas := range []*int32{nil, ptr.To[int32](2)} {
		s := Scenario{App: Sample{OnSIGTERM: ShutdownDrain}, Variant: check.Variant{Name: "static", PreStop: &check.PreStop{None: true}, Replicas: replicas, Expect: check.Zero()},
			Disruption: check.Disruption{Kind: check.RolloutRestart}, Front: &Front{Config: proxies.NginxStatic}}
		p, err := s.Plan("matrix", "rollcheck/app:1")
		if err != nil {
			t.Fatal(err)
		}
		want := int32(0)
		for _, o := range p.App.Objects {
			if d, ok := o.(*appsv1.Deployment); ok && d.Name == AppName {
				want = *d.Spec.Replicas
			}
		}
		if replicas != nil {
			want = *replicas
		}
		for _, o := range p.App.Objects {
			d, ok := o.(*appsv1.Deployment)
			if !ok || d.Name != proxies.FrontName {
				continue
			}
			ic := d.Spec.Template.Spec.InitContainers
			if len(ic) != 1 || ic[0].Image != "rollcheck/app:1" || ic[0].Command[3] != fmt.Sprint(want) {
				t.Errorf("replicas %v: init containers %+v, want one of rollcheck/app:1 awaiting %d", replicas, ic, want)
			}
		}
	}
}
