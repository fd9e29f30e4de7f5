package proxies

import (
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// The proxies' table: everything rollcheck knows of each proxy program, one entry each, and of
// each of its configurations. Adding a proxy is adding an entry here, its constant and its
// Configs' (proxies.go, where their doc comments say what each one predicts) and its
// configuration template (configs/<configFile>.tmpl): the images (EnsureImage), the objects
// (Objects), the CLI (rollcheck cluster proxy-images, which scripts/proxy-images.sh runs) and
// the suites read the table, and nothing else switches on a proxy's name (TestTableComplete,
// TestNoSwitchOnAProxyOutsideTheTable).

// The proxies.
const (
	// HAProxy is Debian 12's haproxy package, /usr/sbin/haproxy.
	HAProxy Proxy = "haproxy"
	// Nginx is Debian 12's nginx, /usr/sbin/nginx. Debian 12's nginx-light is a metapackage
	// (package nginx plus the echo module), so the binary is taken from package nginx and no
	// dynamic module is loaded.
	Nginx Proxy = "nginx"
	// Caddy is Caddy built from its Go module (CGO_ENABLED=0, static), /usr/bin/caddy.
	Caddy Proxy = "caddy"
	// Traefik is Traefik built from its Go module (CGO_ENABLED=0, static), /usr/bin/traefik: an
	// ingress controller that reads the Kubernetes API itself (Ingresses, Services,
	// EndpointSlices), not DNS.
	Traefik Proxy = "traefik"
)

// An entry is one proxy program.
type entry struct {
	proxy Proxy
	// title is the proxy's name as its own documentation writes it ("HAProxy").
	title string
	// version is the pinned upstream version: a Debian package must be of it (its Debian
	// revision may move with security updates), a Go module is built at it.
	version string
	// configFile is the name of the proxy's configuration file: the template
	// configs/<configFile>.tmpl, the ConfigMap's key, mounted at /etc/proxy, and rendered by the
	// image's entrypoint into /tmp under the same name.
	configFile string
	// healthPath is the path of the proxy's own readiness endpoint, answered by the proxy itself.
	healthPath string
	// readsAPI: the proxy reads the API server itself (its pod gets a ServiceAccount's token,
	// and the ServiceAccount a Role of TraefikRules): an ingress controller.
	readsAPI bool
	// image is how the proxy's image is made.
	image recipe
	// configs are the proxy's configurations, in the order Configs lists them.
	configs []configEntry
}

// A configEntry is one configuration of a proxy (Config's doc comment says what it predicts).
type configEntry struct {
	config Config
	// upstreamNamed: the proxy names the upstream address it chose in X-Upstream, on every
	// answer (Config.UpstreamNamed).
	upstreamNamed bool
	// resolves: the proxy finds the pods by resolving HeadlessServiceName in the cluster's DNS
	// (Config.Resolves); refresh and refreshSetting are then how long it keeps an answer, and
	// that setting in the proxy's own words (Config.Refresh).
	resolves       bool
	refresh        time.Duration
	refreshSetting string
	// clusterIP: the configuration sends to (or, ingress, through) the app's ClusterIP Service
	// ClusterIPServiceName, which Objects adds; ingress: Objects adds the Ingress IngressName.
	clusterIP, ingress bool
}

// table is every proxy, in the order the CLI builds and prints them (All).
var table = []entry{
	{proxy: HAProxy, title: "HAProxy", version: "2.6.12", configFile: "haproxy.cfg", healthPath: HealthPath,
		image: recipe{repo: "rollcheck/proxy-haproxy", deb: "haproxy", binary: "/usr/sbin/haproxy",
			args: []string{"-db", "-f", "/tmp/haproxy.cfg"}},
		configs: []configEntry{
			{config: HAProxyDNS, upstreamNamed: true, resolves: true, refresh: time.Second, refreshSetting: "HAProxy timeout resolve 1s"},
			{config: HAProxyDNSRetry, upstreamNamed: true, resolves: true, refresh: time.Second, refreshSetting: "HAProxy timeout resolve 1s"},
		}},
	// Debian 12's nginx-light 1.22.1 is a metapackage: the binary is package nginx's.
	{proxy: Nginx, title: "nginx", version: "1.22.1", configFile: "nginx.conf", healthPath: HealthPath,
		image: recipe{repo: "rollcheck/proxy-nginx", deb: "nginx", binary: "/usr/sbin/nginx",
			args: []string{"-e", "stderr", "-c", "/tmp/nginx.conf"}},
		configs: []configEntry{
			{config: NginxStatic, upstreamNamed: true, resolves: true, refresh: check.ResolveOnce, refreshSetting: "nginx's static upstream, resolved once at its start"},
			{config: NginxResolver, upstreamNamed: true, resolves: true, refresh: time.Second, refreshSetting: "nginx resolver valid=1s"},
			{config: NginxKeepalive, upstreamNamed: true, clusterIP: true},
		}},
	// Caddy keeps its configuration and data under $XDG_*; /tmp is the writable emptyDir.
	{proxy: Caddy, title: "Caddy", version: "v2.11.9", configFile: "Caddyfile", healthPath: HealthPath,
		image: recipe{repo: "rollcheck/proxy-caddy", binary: "/usr/bin/caddy",
			args: []string{"run", "--config", "/tmp/Caddyfile", "--adapter", "caddyfile"},
			env:  []string{"HOME=/tmp", "XDG_CONFIG_HOME=/tmp", "XDG_DATA_HOME=/tmp"},
			// Caddy's go.mod has no replace or exclude directive.
			goBuild: &goBuild{module: "github.com/caddyserver/caddy/v2", pkg: "github.com/caddyserver/caddy/v2/cmd/caddy", limit: 15 * time.Minute}},
		configs: []configEntry{
			{config: CaddyDNS, upstreamNamed: true, resolves: true, refresh: time.Minute, refreshSetting: "Caddy dynamic a refresh 1m"},
			{config: CaddyDNSTry, upstreamNamed: true, resolves: true, refresh: time.Minute, refreshSetting: "Caddy dynamic a refresh 1m"},
		}},
	// Traefik is v3.6.12, not the newest v3: v3.7's dependencies include module versions the
	// Go module proxy this project's machines reach does not serve (see its goBuild). Its static
	// configuration is the file; its dynamic one comes from the Ingress provider. Its ping's
	// path is fixed (/ping).
	{proxy: Traefik, title: "Traefik", version: "v3.6.12", configFile: "traefik.yml", healthPath: "/ping", readsAPI: true,
		image: recipe{repo: "rollcheck/proxy-traefik", binary: "/usr/bin/traefik",
			args: []string{"--configfile=/tmp/traefik.yml"}, env: []string{"HOME=/tmp"},
			// Traefik v3.6.12's go.mod's replace and exclude directives, as they are there: its
			// forks of three modules (the originals, at the placeholder versions Traefik requires,
			// are not on the Go module proxy) and a tencentcloud version whose packages clash with
			// its submodules'. Measured on 2 cores shared with another build: the dependencies'
			// download about a minute, a cold build 19 minutes (650 s of CPU), at most 3.2 GB of
			// memory, a 178 MB binary; later builds take the cache's. v3.7.13 does not build from
			// the module proxy: 14 module versions it needs (of lego's DNS providers, which its
			// ACME support imports) are not served, nor its own dynamic/ext, which its go.mod
			// replaces with a directory of its repository.
			goBuild: &goBuild{module: "github.com/traefik/traefik/v3", pkg: "github.com/traefik/traefik/v3/cmd/traefik", limit: 30 * time.Minute,
				versionVar: "github.com/traefik/traefik/v3/pkg/version.Version", // "dev" otherwise
				goMod: `
replace (
	github.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20200324110947-a37a7636d23e
	github.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59
	github.com/mailgun/minheap => github.com/containous/minheap v0.0.0-20190809180810-6e71eb837595
)

exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible
`}},
		configs: []configEntry{
			{config: TraefikIngress, clusterIP: true, ingress: true},
		}},
}

// All lists every Proxy, in the order the CLI builds and prints them.
var All = func() []Proxy {
	var ps []Proxy
	for _, e := range table {
		ps = append(ps, e.proxy)
	}
	return ps
}()

// Configs lists every Config, proxy by proxy (All's order).
var Configs = func() []Config {
	var cs []Config
	for _, e := range table {
		for _, c := range e.configs {
			cs = append(cs, c.config)
		}
	}
	return cs
}()

// lookup is p's entry; ok false for a name not in the table.
func lookup(p Proxy) (entry, bool) {
	for _, e := range table {
		if e.proxy == p {
			return e, true
		}
	}
	return entry{}, false
}

// lookupConfig is c's entry and its proxy's; ok false for a name not in the table.
func lookupConfig(c Config) (entry, configEntry, bool) {
	for _, e := range table {
		for _, ce := range e.configs {
			if ce.config == c {
				return e, ce, true
			}
		}
	}
	return entry{}, configEntry{}, false
}
