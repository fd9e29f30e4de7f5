package proxies

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/podsecurity"
)

var (
	testImages = Images{HAProxy: "rollcheck/proxy-haproxy:0123456789ab", Nginx: "rollcheck/proxy-nginx:0123456789ab", Caddy: "rollcheck/proxy-caddy:0123456789ab",
		Traefik: "rollcheck/proxy-traefik:0123456789ab"}
	testApp = AppRef{Selector: map[string]string{"app": "app"}, Port: 8080, Image: "rollcheck/app:0123456789ab", Replicas: 3}
)

// objectsOf returns Objects' ConfigMaps, Deployments and Services by name; the other objects
// (TraefikIngress's) by kind/name.
func objectsOf(t *testing.T, c Config) (map[string]*corev1.ConfigMap, map[string]*appsv1.Deployment, map[string]*corev1.Service, map[string]check.Object) {
	t.Helper()
	objs, err := Objects(c, testImages, testApp)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	cms, deps, svcs, others := map[string]*corev1.ConfigMap{}, map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]check.Object{}
	for _, o := range objs {
		if errs := validation.IsDNS1123Label(o.GetName()); len(errs) > 0 {
			t.Errorf("%s: name %q: %v", c, o.GetName(), errs)
		}
		if o.GetNamespace() != "" {
			t.Errorf("%s: %s names namespace %q; the caller sets it", c, o.GetName(), o.GetNamespace())
		}
		if o.GetObjectKind().GroupVersionKind().Kind == "" {
			t.Errorf("%s: %s has no kind", c, o.GetName())
		}
		switch o := o.(type) {
		case *corev1.ConfigMap:
			cms[o.Name] = o
		case *appsv1.Deployment:
			deps[o.Name] = o
			// Every proxy pod meets the restricted Pod Security Standard.
			why, err := podsecurity.Restricted(o.Spec.Template.ObjectMeta, o.Spec.Template.Spec)
			if err != nil || len(why) > 0 {
				t.Errorf("%s: Deployment %s violates the restricted Pod Security Standard: %v %v", c, o.Name, why, err)
			}
		case *corev1.Service:
			svcs[o.Name] = o
		case *networkingv1.Ingress, *corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding:
			others[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = o
		default:
			t.Errorf("%s: unexpected object %T %s", c, o, o.GetName())
		}
	}
	return cms, deps, svcs, others
}

func TestObjects(t *testing.T) {
	for _, c := range Configs {
		cms, deps, svcs, others := objectsOf(t, c)
		wantSvcs := []string{FrontName, HeadlessServiceName}
		if c == NginxKeepalive || c == TraefikIngress {
			wantSvcs = append(wantSvcs, ClusterIPServiceName)
		}
		var wantOthers []string
		if c == TraefikIngress {
			wantOthers = []string{"Ingress/" + IngressName, "Role/" + ServiceAccountName, "RoleBinding/" + ServiceAccountName, "ServiceAccount/" + ServiceAccountName}
		}
		if len(cms) != 1 || cms[ConfigMapName] == nil || len(deps) != 1 || deps[FrontName] == nil || len(svcs) != len(wantSvcs) ||
			!slices.Equal(keys(others), wantOthers) {
			t.Fatalf("%s: ConfigMaps %v, Deployments %v, Services %v, others %v; want %s, %s, %v, %v", c, keys(cms), keys(deps), keys(svcs), keys(others),
				ConfigMapName, FrontName, wantSvcs, wantOthers)
		}
		if conf := cms[ConfigMapName].Data[ConfigFile(c.Proxy())]; !strings.Contains(conf, "rollcheck proxy config "+string(c)) {
			t.Errorf("%s: the ConfigMap's %s is not its config:\n%s", c, ConfigFile(c.Proxy()), conf)
		}

		d := deps[FrontName]
		pod := d.Spec.Template
		if *d.Spec.Replicas != 1 || !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(pod.Labels)) {
			t.Errorf("%s: replicas %d, selector %v, pod labels %v", c, *d.Spec.Replicas, d.Spec.Selector.MatchLabels, pod.Labels)
		}
		if pod.Labels["rollcheck.io/proxy-config"] != string(c) || pod.Annotations["rollcheck.io/config-sha256"] == "" {
			t.Errorf("%s: pod labels %v, annotations %v", c, pod.Labels, pod.Annotations)
		}
		if len(pod.Spec.Containers) != 1 {
			t.Fatalf("%s: %d containers", c, len(pod.Spec.Containers))
		}
		ct := pod.Spec.Containers[0]
		if ct.Image != testImages.For(c.Proxy()) || ct.ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s: image %s, pull policy %s", c, ct.Image, ct.ImagePullPolicy)
		}
		if len(ct.Ports) != 1 || ct.Ports[0].ContainerPort != Port || ct.Ports[0].Name != "http" {
			t.Errorf("%s: ports %v", c, ct.Ports)
		}
		if p := ct.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != HealthPathOf(c.Proxy()) || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s: readiness probe %+v", c, p)
		}
		// Only the proxy that reads the API server gets a token, its own ServiceAccount's.
		if reads := c == TraefikIngress; reads != (pod.Spec.AutomountServiceAccountToken != nil && *pod.Spec.AutomountServiceAccountToken) ||
			reads != (pod.Spec.ServiceAccountName == ServiceAccountName) {
			t.Errorf("%s: automount token %v, service account %q", c, pod.Spec.AutomountServiceAccountToken, pod.Spec.ServiceAccountName)
		}
		if len(ct.Env) != 1 || ct.Env[0].Name != "POD_NAMESPACE" || ct.Env[0].ValueFrom == nil || ct.Env[0].ValueFrom.FieldRef == nil || ct.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
			t.Errorf("%s: env %+v; want POD_NAMESPACE from metadata.namespace", c, ct.Env)
		}
		if ct.Resources.Requests.Cpu().IsZero() || ct.Resources.Requests.Memory().IsZero() || ct.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: resources %+v", c, ct.Resources)
		}
		sc := ct.SecurityContext
		switch {
		case sc == nil:
			t.Fatalf("%s: no securityContext", c)
		case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot,
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation,
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem,
			sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0,
			sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
			t.Errorf("%s: securityContext %+v", c, sc)
		}
		if psc := pod.Spec.SecurityContext; psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != UID || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext %+v; want non-root uid %d", c, psc, UID)
		}
		mounts := map[string]string{}
		for _, m := range ct.VolumeMounts {
			mounts[m.MountPath] = m.Name
		}
		vols := map[string]corev1.VolumeSource{}
		for _, v := range pod.Spec.Volumes {
			vols[v.Name] = v.VolumeSource
		}
		if cm := vols[mounts["/etc/proxy"]].ConfigMap; cm == nil || cm.Name != ConfigMapName {
			t.Errorf("%s: /etc/proxy is not the ConfigMap: mounts %v, volumes %v", c, mounts, vols)
		}
		if vols[mounts["/tmp"]].EmptyDir == nil {
			t.Errorf("%s: /tmp is not an emptyDir: mounts %v", c, mounts)
		}

		front := svcs[FrontName]
		if front.Spec.Type != corev1.ServiceTypeClusterIP || front.Spec.ClusterIP != "" || len(front.Spec.Ports) != 1 ||
			front.Spec.Ports[0].Port != ServicePort || front.Spec.Ports[0].TargetPort.String() != "http" ||
			!labels.SelectorFromSet(front.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			t.Errorf("%s: front Service %+v", c, front.Spec)
		}
		for _, name := range wantSvcs[1:] {
			s := svcs[name]
			wantIP := map[string]string{HeadlessServiceName: corev1.ClusterIPNone, ClusterIPServiceName: ""}[name]
			if s == nil || s.Spec.ClusterIP != wantIP || s.Spec.PublishNotReadyAddresses || !reflect.DeepEqual(s.Spec.Selector, testApp.Selector) ||
				len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != testApp.Port || s.Spec.Ports[0].TargetPort.IntValue() != int(testApp.Port) {
				t.Errorf("%s: Service %s %+v; want clusterIP %q selecting the app on %d", c, name, s, wantIP, testApp.Port)
				continue
			}
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				t.Errorf("%s: Service %s selects the proxy's pods", c, name)
			}
		}
	}
}

// Objects refuses what cannot work: an unknown config, no image, no selector, a selector that
// takes the proxy's own pods, no port.
// A proxy that resolves the pods once, at its start, waits for every one of them in the DNS
// first (an init container of the app's image); the others start at once; without the app's
// image or replicas no proxy waits.
func TestAwaitPods(t *testing.T) {
	for _, c := range Configs {
		_, deps, _, _ := objectsOf(t, c)
		inits := deps[FrontName].Spec.Template.Spec.InitContainers
		if refresh, _ := c.Refresh(); refresh == check.ResolveOnce {
			if len(inits) != 1 {
				t.Fatalf("%s: %d init containers, want the await-pods one", c, len(inits))
			}
			ic := inits[0]
			if ic.Image != testApp.Image || !slices.Equal(ic.Command, []string{"/app", "await-dns", HeadlessServiceName, "3", AwaitPodsWithin.String()}) ||
				ic.SecurityContext == nil || *ic.SecurityContext.ReadOnlyRootFilesystem != true {
				t.Errorf("%s: init container %s %v, security %+v", c, ic.Image, ic.Command, ic.SecurityContext)
			}
			continue
		}
		if len(inits) != 0 {
			t.Errorf("%s: %d init containers, want none (it does not resolve once)", c, len(inits))
		}
	}
	for _, app := range []AppRef{{Selector: testApp.Selector, Port: 8080}, {Selector: testApp.Selector, Port: 8080, Image: testApp.Image}} {
		objs, err := Objects(NginxStatic, testImages, app)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok && len(d.Spec.Template.Spec.InitContainers) != 0 {
				t.Errorf("app %+v: an init container without the app's image and replicas", app)
			}
		}
	}
}

func TestObjectsRefuses(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		images Images
		app    AppRef
		want   string
	}{
		{"envoy", testImages, testApp, `unknown config "envoy"`},
		{HAProxyDNS, Images{Nginx: "x:1"}, testApp, "no haproxy image"},
		{NginxStatic, testImages, AppRef{Port: 8080}, "selector is empty"},
		{CaddyDNS, testImages, AppRef{Selector: map[string]string{"app.kubernetes.io/name": FrontName}, Port: 8080}, "selects the proxy's pods"},
		{CaddyDNS, testImages, AppRef{Selector: map[string]string{"app": "a b"}, Port: 8080}, `app selector app="a b"`},
		{NginxKeepalive, testImages, AppRef{Selector: testApp.Selector}, "app port 0 out of 1-65535"},
	} {
		if _, err := Objects(tc.c, tc.images, tc.app); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Objects(%s, %+v, %+v): %v; want an error containing %q", tc.c, tc.images, tc.app, err, tc.want)
		}
	}
}

// Each configuration renders with its key settings: the upstream it names, how it resolves,
// retries and times out, and the X-Upstream header on every response, the proxy's own errors
// included. Nothing removes the app's response headers (X-Pod-Name).
func TestRender(t *testing.T) {
	headless := "app-headless.${POD_NAMESPACE}.svc.cluster.local"
	haproxy := []string{
		"timeout connect 500ms", "timeout server 1500ms",
		"nameserver dns ${NAMESERVER}:53", "resolve_retries 3", "timeout resolve 1s", "timeout retry 1s",
		"hold valid 10s", "hold nx 30s", "hold refused 30s", "hold timeout 30s", "hold other 30s", "hold obsolete 0s",
		"accepted_payload_size 512", "bind :8080", "monitor-uri " + HealthPath,
		`http-after-response set-header X-Upstream "%si:%sp"`,
		"server-template app 8 " + headless + ":8080 resolvers cluster init-addr none",
	}
	nginx := []string{
		"pid /tmp/nginx.pid;", "error_log stderr notice;", "listen 8080;", "location = " + HealthPath,
		"proxy_temp_path /tmp/", "client_body_temp_path /tmp/",
		"proxy_connect_timeout 500ms;", "proxy_read_timeout 1500ms;", "proxy_next_upstream_timeout 2s;",
		"add_header X-Upstream $upstream_addr always;",
	}
	caddy := []string{
		"admin off", "auto_https off", ":8080 {", "handle " + HealthPath,
		"dynamic a {", "name " + headless, "port 8080", "refresh 1m",
		"dial_timeout 500ms", "response_header_timeout 1500ms",
		"header_down X-Upstream {rp.upstream.hostport}",
		"handle_errors {", "header X-Upstream {rp.upstream.hostport}",
	}
	for _, tc := range []struct {
		c         Config
		want, not []string
	}{
		{HAProxyDNS, append(slices.Clone(haproxy), "retries 0"), []string{"retry-on", "option redispatch", "retries 3"}},
		{HAProxyDNSRetry, append(slices.Clone(haproxy), "retries 3", "retry-on conn-failure empty-response", "option redispatch 1"), []string{"retries 0"}},
		{CaddyDNS, caddy, []string{"lb_try_duration", "lb_try_interval"}},
		{CaddyDNSTry, append(slices.Clone(caddy), "lb_try_duration 1s", "lb_try_interval 250ms"), nil},
		{NginxStatic, append(slices.Clone(nginx), "upstream app {", "server "+headless+":8080;", "proxy_pass http://app;"),
			[]string{"resolver ", "keepalive", "proxy_http_version"}},
		{NginxResolver, append(slices.Clone(nginx), "resolver ${NAMESERVER} valid=1s ipv6=off;", "resolver_timeout 1s;",
			"set $app_upstream "+headless+";", "proxy_pass http://$app_upstream:8080;"), []string{"upstream app", "keepalive"}},
		{NginxKeepalive, append(slices.Clone(nginx), "server app-clusterip.${POD_NAMESPACE}.svc.cluster.local:8080;", "keepalive 16;",
			"proxy_http_version 1.1;", `proxy_set_header Connection "";`, "proxy_pass http://app;"), []string{"resolver ", "app-headless"}},
	} {
		conf, err := Render(tc.c, 8080)
		if err != nil {
			t.Fatalf("%s: %v", tc.c, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(conf, w) {
				t.Errorf("%s lacks %q:\n%s", tc.c, w, conf)
			}
		}
		// tc.not: no directive (a line, comments aside) starts with it.
		for _, l := range strings.Split(conf, "\n") {
			l = strings.TrimSpace(l)
			for _, n := range append(tc.not, "proxy_hide_header", "header_down -", "http-response del-header", "header -") {
				if !strings.HasPrefix(l, "#") && strings.HasPrefix(l, n) {
					t.Errorf("%s has %q:\n%s", tc.c, l, conf)
				}
			}
		}
		if strings.Contains(conf, "{{") || strings.Contains(conf, "<no value>") {
			t.Errorf("%s: a template action is left:\n%s", tc.c, conf)
		}
	}
	if conf, err := Render(NginxStatic, 9090); err != nil || !strings.Contains(conf, headless+":9090;") {
		t.Errorf("app port 9090: %v\n%s", err, conf)
	}
	if _, err := Render(NginxStatic, 0); err == nil {
		t.Error("app port 0: no error")
	}
}

// Every Config that resolves the headless Service says how often, in words its rendered
// configuration bears out (the setting named is in it); the others say nothing.
func TestRefresh(t *testing.T) {
	for _, tc := range []struct {
		c         Config
		every     time.Duration
		directive string // in the rendered configuration
	}{
		{HAProxyDNS, time.Second, "timeout resolve 1s"},
		{HAProxyDNSRetry, time.Second, "timeout resolve 1s"},
		{CaddyDNS, time.Minute, "refresh 1m"},
		{CaddyDNSTry, time.Minute, "refresh 1m"},
		{NginxStatic, check.ResolveOnce, "server app-headless"},
		{NginxResolver, time.Second, "valid=1s"},
		{NginxKeepalive, 0, ""},
		{TraefikIngress, 0, ""},
	} {
		every, words := tc.c.Refresh()
		if every != tc.every || (every == 0) != (words == "") || (every != 0) != tc.c.Resolves() {
			t.Errorf("%s: refresh %s %q, want %s (resolves: %t)", tc.c, every, words, tc.every, tc.c.Resolves())
		}
		if tc.directive == "" {
			continue
		}
		if conf, err := Render(tc.c, 8080); err != nil || !strings.Contains(conf, tc.directive) {
			t.Errorf("%s: its configuration lacks %q (%v)", tc.c, tc.directive, err)
		}
		if every > 0 && !strings.Contains(words, tc.directive) {
			t.Errorf("%s: %q does not name %q", tc.c, words, tc.directive)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range Configs {
		if got, err := ParseConfig(string(c)); err != nil || got != c || c.Proxy() == "" || ConfigFile(c.Proxy()) == "" {
			t.Errorf("ParseConfig(%q) = %q, %v; proxy %q", c, got, err, c.Proxy())
		}
	}
	if _, err := ParseConfig("nginx"); err == nil {
		t.Error("ParseConfig(nginx): no error")
	}
	for _, p := range All {
		if got, err := ParseProxy(string(p)); err != nil || got != p {
			t.Errorf("ParseProxy(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := ParseProxy("envoy"); err == nil {
		t.Error("ParseProxy(envoy): no error")
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}
