package proxies

import (
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// The proxies' table: everything rollcheck knows of each proxy program, one entry each, and of
// each of its configurations. Adding a proxy is adding here its constant, its Configs' (whose
// doc comments say what each one predicts) and its entry, and its configuration template
// (configs/<configFile>.tmpl): the images (EnsureImage), the objects
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

// The Configs, each with what it predicts (see Config).
//
// What the predictions assume of the cluster: CoreDNS answers cluster.local names from its
// watch of EndpointSlices, uncached (kubeadm's Corefile, kind's: cache 30 with success and
// denial disabled for cluster.local), with TTL 30 (kubernetes ttl 30); a deleted pod leaves the
// headless Service's answer as soon as its endpoint turns not ready, which is at the deletion;
// and the sample app, in its exit mode with no preStop, stops accepting at once on SIGTERM.
const (
	// HAProxyDNS: HAProxy's server-template of 8 servers over the headless Service
	// (app-headless.<namespace>.svc.cluster.local), resolved by its own resolvers section on
	// the cluster DNS, with HAProxy's defaults written out: timeout resolve 1s (a new
	// resolution every second), timeout retry 1s, resolve_retries 3, hold valid 10s (which in
	// 2.6 applies only to do-resolve actions, not to servers), hold nx/refused/timeout/other
	// 30s, hold obsolete 0s (an address an answer lacks is dropped at once: its server takes
	// another address of the answer, or goes into maintenance), accepted_payload_size 512;
	// balance roundrobin; and no retries: retries 0 (the default is 3, with retry-on's default
	// conn-failure, on the same server).
	//
	// Predicted on a pod delete: HAProxy stops choosing the pod at its first resolution after
	// the endpoint change, within about a second. A request sent to it in that second fails if
	// the pod no longer accepts (connection refused, or a 500 ms connect timeout if its address
	// black-holes): HAProxy's own 503, X-Upstream naming the dead pod. So: a burst of 503s
	// of about a second when the app exits at once, none when a preStop keeps it serving
	// longer. New pods get requests within a second of turning ready.
	HAProxyDNS Config = "haproxy-dns"
	// HAProxyDNSRetry is HAProxyDNS plus retries 3, retry-on conn-failure empty-response, and
	// option redispatch 1: every retry goes to another server (redispatch's default, -1, moves
	// only the last retry, and a retry on the same server waits a turn-around of
	// min(timeout connect, 1 s) first). response-timeout is left out of retry-on: it would
	// retry after a whole timeout server, taking the request past the load's timeout. A
	// request spends at most 4 × 500 ms connecting, then 1.5 s waiting for the response.
	//
	// Predicted on a pod delete: the failed connections and the connections closed with no
	// response of HAProxyDNS's second are retried at once on another pod: no errors. Only when
	// no server has a live address does HAProxy answer 503. X-Upstream names the server that
	// answered.
	HAProxyDNSRetry Config = "haproxy-dns-retry"
	// CaddyDNS: Caddy's reverse_proxy with dynamic a upstreams on the headless Service name, at
	// its default refresh of 1m (a lookup's addresses are used for a minute), lb_policy random
	// (the default), no lb_try_duration (default 0: a failed request is not tried again),
	// passive health checks off (fail_duration's default 0), dial_timeout 500ms,
	// response_header_timeout 1.5s. Lookups go through Go's resolver and the pod's resolv.conf.
	//
	// Predicted on a pod delete: Caddy keeps the deleted pod's address until its next lookup,
	// up to a minute later, and sends it about half the requests with two pods: once the pod
	// no longer accepts, each fails with Caddy's own 502 (dial refused, or a 500 ms dial
	// timeout), X-Upstream naming the dead pod. The replacement pod gets nothing until that
	// lookup either: the longest window of the DNS configurations, up to 60 s of errors.
	CaddyDNS Config = "caddy-dns"
	// CaddyDNSTry is CaddyDNS with lb_try_duration 1s, at lb_try_interval's default 250ms:
	// a request whose dial fails is tried again, on an upstream the random policy picks (maybe
	// the same dead one), every 250 ms for up to 1 s, inside the load's ~2 s request timeout, so
	// that Caddy answers (502, naming the last upstream it tried) before the client gives up.
	// With 5 s, measured once on three rollouts, every failure was a client timeout with no
	// answer at all, and a fifth of them could not be tied to a pod.
	//
	// Predicted on a pod delete: dial failures to the dead address are retried and land on the
	// live pod within a few 250 ms intervals: no errors, but 250 ms or more of latency on the
	// requests that picked the dead pod, for as long as CaddyDNS would have failed them. After
	// a rollout, while every address Caddy holds is dead, requests fail: Caddy's own 502s.
	CaddyDNSTry Config = "caddy-dns-try"
	// NginxStatic: a static upstream block naming the headless Service: nginx resolves it once,
	// at start (libc), into one server per pod address, and never again. nginx's defaults
	// otherwise: proxy_next_upstream error timeout (a failed connection is retried on the next
	// server; non-idempotent requests are not), max_fails 1, fail_timeout 10s (a failed server
	// is skipped for 10 s), HTTP/1.0 to the upstream, a connection per request.
	// proxy_next_upstream_timeout 2s bounds the retries. nginx must start after the app's
	// pods are ready: a name with no address fails its start; and with every one of them in the
	// DNS (AppRef.Image and Replicas: an init container waits for them), since for a lone server
	// nginx ignores max_fails and never finds its upstream down.
	//
	// Predicted: the classic negative control. On one pod delete, the dead address's requests
	// are retried on the other pod (few errors, maybe none), and the replacement pod is never
	// used. After a rollout, no address nginx has is alive: every request gets nginx's own 502
	// (X-Upstream naming the dead addresses tried), until nginx restarts.
	NginxStatic Config = "nginx-static"
	// NginxResolver: resolver ${NAMESERVER} valid=1s ipv6=off and a variable in proxy_pass, so
	// nginx resolves the headless Service name at request time and caches the answer for 1 s.
	// Without valid= nginx keeps an answer for its TTL, 30 s here, though CoreDNS's answer
	// changes within a second of an endpoint change; 1 s keeps nginx's own staleness to a
	// second, for one query a second. resolver_timeout 1s. proxy_next_upstream as in
	// NginxStatic, over the addresses of the current answer.
	//
	// Predicted on a pod delete: for up to a second nginx may still choose the pod; a failed
	// connection to it is retried on the other address: few or no errors. After a rollout, new
	// pods get requests within about a second of turning ready.
	NginxResolver Config = "nginx-resolver"
	// NginxKeepalive: an upstream to the ClusterIP Service app-clusterip with keepalive 16,
	// proxy_http_version 1.1 and proxy_set_header Connection "": nginx keeps up to 16 idle
	// connections to the Service's virtual IP, each of which kube-proxy's conntrack entry pinned
	// to one pod when it was opened. X-Upstream is the ClusterIP and port, not a pod's.
	//
	// Predicted on a pod delete: the connections pinned to the terminating pod keep carrying
	// requests for as long as the pod keeps them open: kube-proxy removing the endpoint does not
	// move an established connection. When the app closes them (or exits), a request caught on
	// one fails on that connection, and nginx, for an error on a cached connection, tries once
	// more on a new one, which kube-proxy sends to a live pod once its rules dropped the old
	// one: few errors, more if the pod exits before kube-proxy's rules change. New pods get
	// requests only as connections are opened anew.
	NginxKeepalive Config = "nginx-keepalive"
	// TraefikIngress: Traefik as an ingress controller, with its Kubernetes Ingress provider
	// (providers.kubernetesIngress) on an Ingress of its own (IngressName) to the app's
	// ClusterIP Service app-clusterip. Traefik takes the pods' addresses from the Service's
	// EndpointSlices, through its own watch of the API server, and sends to the pods itself
	// (not to the ClusterIP). The settings, with Traefik's defaults:
	//   - providers.kubernetesIngress.namespaces: the row's namespace only (default: all);
	//     ingressClass: IngressClass, matched against the Ingress's kubernetes.io/ingress.class
	//     annotation (default: empty, which takes Ingresses of class "traefik"), so that Traefik
	//     takes only its own Ingress and no other controller takes it; disableClusterScopeResources
	//     true (default false: it would also watch IngressClasses and Nodes cluster-wide, which
	//     needs a ClusterRole): a Role in the namespace suffices (Objects); throttleDuration 0s
	//     (the default: the provider itself does not wait between events).
	//   - providers.providersThrottleDuration 2s (the default, written out): after Traefik
	//     applies a provider's configuration it waits 2 s before it takes the next one from that
	//     provider, and then only the newest (pkg/provider/aggregator).
	//   - Endpoints (pkg/provider/kubernetes/ingress, loadService): an endpoint whose serving
	//     condition is false is left out; one that is serving but terminating (the pod is being
	//     deleted and still passes its readiness probe) is kept "fenced", and the load balancer
	//     (weighted round robin, the default) sends a fenced server no new request. So a pod
	//     leaves Traefik's choice as soon as its endpoint turns terminating, at its deletion.
	//   - No retry middleware and no health check (neither is on by default): a request whose
	//     dial fails gets Traefik's own 502.
	//   - serversTransport.forwardingTimeouts: dialTimeout 500ms (default 30s),
	//     responseHeaderTimeout 1.5s (default 0s: none); idleConnTimeout (90s) and
	//     maxIdleConnsPerHost (200) stay at their defaults: Traefik keeps connections to the
	//     pods alive.
	//   - global.checkNewVersion false (default true), global.sendAnonymousUsage false (the
	//     default, written out); no API or dashboard, metrics, tracing, ACME, plugins or hub:
	//     Traefik contacts nothing but the API server and the pods.
	//   - entryPoints.web on :8080; ping on it, at /ping (Traefik's fixed path), the readiness
	//     probe's.
	//
	// Traefik cannot name the upstream it chose in a response header (its headers middleware
	// sets fixed values; the address is in its access log only), so this is the one Config with
	// no X-Upstream: the app's X-Pod-Name names the pod of each of the app's answers, and
	// Traefik's own 502s are tied to a pod by time (UpstreamNamed).
	//
	// Predicted on a pod delete in a rollout: the endpoint turns terminating at the deletion,
	// and Traefik's watch sees it within milliseconds; but the Deployment deletes an old pod
	// right after a new one turned ready, a change Traefik applied just before, so the deletion
	// waits out most of providersThrottleDuration. For that window, up to 2 s, Traefik still
	// sends the pod its share of new requests: with no preStop the app closed its listener at
	// SIGTERM, and each of them fails with Traefik's own answer (proxy-propagation). With a 5 s
	// preStop the pod still accepts until well after Traefik fenced it: no errors. New pods get
	// requests once Traefik applies their ready endpoints, within the same throttle.
	//
	// Measured (kind, 100 req/s, three rollouts of 3 pods a run, six runs): with no preStop,
	// 21 to 25 % of all requests failed, every one Traefik's own answer. Traefik sent to each
	// deleted pod for up to 1.95 s after its deletion; the rollout deletes a pod about every
	// second, so the windows overlap into one of the whole rollout plus 2 s. Most failures are
	// 504s, not 502s: the app exits within milliseconds of SIGTERM, its address stops answering
	// once the pod's sandbox is gone (about 0.3 s later), and Traefik's dial waits out its
	// 500 ms dialTimeout; the 502s (refused) are of the moments before. With the 5 s preStop:
	// no errors (0 of about 3,300 requests in each of three runs).
	TraefikIngress Config = "traefik-ingress"
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
