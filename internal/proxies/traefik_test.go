package proxies

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TraefikIngress's static configuration is YAML whose settings are the documented ones: no
// outside contact (no version check, no usage report, nothing that would: API, ACME, hub,
// plugins, tracing, metrics), the Ingress provider confined to the row's namespace and its own
// class with no cluster-scoped watch, the 2 s provider throttle, the timeouts every Config
// shares, and ping on the web entrypoint.
func TestRenderTraefik(t *testing.T) {
	conf, err := Render(TraefikIngress, 8080)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(conf, "rollcheck proxy config traefik-ingress") || strings.Contains(conf, "{{") {
		t.Errorf("not rendered:\n%s", conf)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(conf), &got); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, conf)
	}
	want := map[string]any{
		"global":      map[string]any{"checkNewVersion": false, "sendAnonymousUsage": false},
		"entryPoints": map[string]any{"web": map[string]any{"address": ":8080"}},
		"ping":        map[string]any{"entryPoint": "web"},
		"providers": map[string]any{
			"providersThrottleDuration": "2s",
			"kubernetesIngress": map[string]any{
				"namespaces":                   []any{"${POD_NAMESPACE}"},
				"ingressClass":                 IngressClass,
				"disableClusterScopeResources": true,
				"throttleDuration":             "0s",
			},
		},
		"serversTransport": map[string]any{"forwardingTimeouts": map[string]any{"dialTimeout": "500ms", "responseHeaderTimeout": "1500ms"}},
		"log":              map[string]any{"level": "INFO"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("traefik.yml is\n%v\nwant\n%v", got, want)
	}
	// The app port is the Ingress's, not the static configuration's: every port renders the same.
	if other, err := Render(TraefikIngress, 9090); err != nil || other != conf {
		t.Errorf("app port 9090: %v, or another configuration", err)
	}
}

// The Ingress sends every path to the app's ClusterIP Service on the app's port, of Traefik's
// own class by annotation (a class name would need a cluster-scoped IngressClass); Traefik's
// Role reads what its provider watches, in its namespace only, and writes nothing; the
// RoleBinding gives it to the ServiceAccount the Deployment runs as.
func TestTraefikObjects(t *testing.T) {
	_, deps, svcs, others := objectsOf(t, TraefikIngress)
	ing, ok := others["Ingress/"+IngressName].(*networkingv1.Ingress)
	if !ok {
		t.Fatalf("no Ingress %s: %v", IngressName, keys(others))
	}
	if ing.Annotations["kubernetes.io/ingress.class"] != IngressClass || ing.Spec.IngressClassName != nil || ing.Spec.DefaultBackend != nil || len(ing.Spec.TLS) > 0 {
		t.Errorf("Ingress annotations %v, class name %v, default backend %v, TLS %v", ing.Annotations, ing.Spec.IngressClassName, ing.Spec.DefaultBackend, ing.Spec.TLS)
	}
	if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "" || ing.Spec.Rules[0].HTTP == nil || len(ing.Spec.Rules[0].HTTP.Paths) != 1 {
		t.Fatalf("Ingress rules %+v; want one rule, any host, one path", ing.Spec.Rules)
	}
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	if path.Path != "/" || path.PathType == nil || *path.PathType != networkingv1.PathTypePrefix || path.Backend.Service == nil ||
		path.Backend.Service.Name != ClusterIPServiceName || path.Backend.Service.Port.Number != testApp.Port || svcs[ClusterIPServiceName] == nil {
		t.Errorf("Ingress path %+v; want Prefix / to %s:%d", path, ClusterIPServiceName, testApp.Port)
	}

	role, ok := others["Role/"+ServiceAccountName].(*rbacv1.Role)
	if !ok {
		t.Fatalf("no Role %s: %v", ServiceAccountName, keys(others))
	}
	reads := map[string]bool{}
	for _, r := range role.Rules {
		if !slices.Equal(r.Verbs, []string{"get", "list", "watch"}) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("Role rule %+v: want get, list and watch only", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == "*" || res == "*" {
					t.Errorf("Role rule %+v: a wildcard", r)
				}
				reads[g+"/"+res] = true
			}
		}
	}
	if want := []string{"/secrets", "/services", "discovery.k8s.io/endpointslices", "networking.k8s.io/ingresses"}; !slices.Equal(keys(reads), want) {
		t.Errorf("the Role reads %v, want %v", keys(reads), want)
	}
	rb, ok := others["RoleBinding/"+ServiceAccountName].(*rbacv1.RoleBinding)
	if !ok {
		t.Fatalf("no RoleBinding %s: %v", ServiceAccountName, keys(others))
	}
	if rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}) ||
		!reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName}}) {
		t.Errorf("RoleBinding ref %+v, subjects %+v", rb.RoleRef, rb.Subjects)
	}
	if others["ServiceAccount/"+ServiceAccountName] == nil || deps[FrontName].Spec.Template.Spec.ServiceAccountName != ServiceAccountName {
		t.Errorf("the Deployment runs as %q; ServiceAccounts %v", deps[FrontName].Spec.Template.Spec.ServiceAccountName, keys(others))
	}
}

// Only TraefikIngress leaves the upstream unnamed, and neither it nor NginxKeepalive resolves the
// headless Service.
func TestUpstreamNamedResolves(t *testing.T) {
	for _, c := range Configs {
		if got, want := c.UpstreamNamed(), c != TraefikIngress; got != want {
			t.Errorf("%s: UpstreamNamed %v, want %v", c, got, want)
		}
		if got, want := c.Resolves(), c != TraefikIngress && c != NginxKeepalive; got != want {
			t.Errorf("%s: Resolves %v, want %v", c, got, want)
		}
	}
	if Config("envoy").UpstreamNamed() || Config("envoy").Resolves() {
		t.Error("an unknown config names an upstream or resolves")
	}
}
