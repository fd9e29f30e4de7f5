package proxies

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// A Proxy is one of the proxy programs rollcheck has an image of.
type Proxy string

// Version is p's pinned upstream version (the table's).
func (p Proxy) Version() string {
	e, _ := lookup(p)
	return e.version
}

// Title is p's name as its own documentation writes it ("HAProxy").
func (p Proxy) Title() string {
	e, _ := lookup(p)
	return e.title
}

// ConfigFile is the name of p's configuration file: the ConfigMap's key (the template), mounted
// at /etc/proxy, and rendered by the image's entrypoint into /tmp under the same name.
func ConfigFile(p Proxy) string {
	e, _ := lookup(p)
	return e.configFile
}

// HealthPathOf is the path of p's own readiness endpoint, answered by the proxy itself:
// HealthPath, or the path the proxy fixes for it.
func HealthPathOf(p Proxy) string {
	e, _ := lookup(p)
	return e.healthPath
}

// ParseProxy returns the Proxy named s.
func ParseProxy(s string) (Proxy, error) {
	if p := Proxy(s); slices.Contains(All, p) {
		return p, nil
	}
	return "", fmt.Errorf("unknown proxy %q: want one of %v", s, All)
}

// A Config is one proxy configuration in front of the app: which proxy, and how it finds the
// app's pods and what it does when one goes away. Its doc comment states the settings that
// decide that, their documented defaults, and the behaviour predicted when one of the app's
// pods is deleted; the measurement wins when a run disagrees.
//
// All of them bound a request's time in the proxy to about 2 s, the load's request timeout:
// connect 500 ms (a deleted pod's address may black-hole a SYN rather than refuse it) and
// 1.5 s for the response's header (HAProxy timeout server, nginx proxy_read_timeout, Caddy
// response_header_timeout, Traefik responseHeaderTimeout). Retries add to that where a Config
// retries: each one says how. None runs active health checks: only DNS (the API server's
// EndpointSlices for TraefikIngress), retries and the proxy's passive failure accounting
// decide which upstream gets a request.
type Config string

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
	// pods are ready: a name with no address fails its start.
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

// ParseConfig returns the Config named s.
func ParseConfig(s string) (Config, error) {
	if c := Config(s); slices.Contains(Configs, c) {
		return c, nil
	}
	return "", fmt.Errorf("unknown proxy config %q: want one of %v", s, Configs)
}

// Proxy is the proxy c configures; empty for a name not in the table.
func (c Config) Proxy() Proxy {
	e, _, _ := lookupConfig(c)
	return e.proxy
}

// UpstreamNamed reports whether c's proxy names the upstream address it chose in the response
// header X-Upstream, on every answer: all but TraefikIngress.
func (c Config) UpstreamNamed() bool {
	_, ce, _ := lookupConfig(c)
	return ce.upstreamNamed
}

// Resolves reports whether c's proxy finds the pods by resolving the headless Service
// HeadlessServiceName in the cluster's DNS: not NginxKeepalive (a ClusterIP) nor TraefikIngress
// (EndpointSlices, from the API server).
func (c Config) Resolves() bool {
	_, ce, _ := lookupConfig(c)
	return ce.resolves
}

// Refresh is how long c's proxy keeps an answer for the headless Service before it resolves the
// name again, and that setting in the proxy's own words, for the recommendation
// (check.Load.ResolveRefresh, ResolveSetting): HAProxy's timeout resolve (hold obsolete 0s drops
// a gone address at once), nginx's resolver valid=, Caddy's dynamic upstreams' refresh;
// check.ResolveOnce for nginx's static upstream, resolved at its start only. Zero for the
// Configs that do not resolve it (Resolves).
func (c Config) Refresh() (time.Duration, string) {
	_, ce, _ := lookupConfig(c)
	return ce.refresh, ce.refreshSetting
}

// Timeouts every Config sets in its proxy (see Config).
const (
	// ConnectTimeout bounds one connection attempt to an upstream.
	ConnectTimeout = 500 * time.Millisecond
	// ResponseTimeout bounds the wait for an upstream's response header once the request is sent.
	ResponseTimeout = 1500 * time.Millisecond
)

// Images are the image references of the proxies, as EnsureImage returns them, by proxy.
type Images map[Proxy]string

// For returns the image of p.
func (im Images) For(p Proxy) string { return im[p] }

// With returns a copy of im with p's image set to ref.
func (im Images) With(p Proxy, ref string) Images {
	out := maps.Clone(im)
	if out == nil {
		out = Images{}
	}
	out[p] = ref
	return out
}

// Unbuilt are placeholder references of every proxy's image (its repository, tag "unbuilt"):
// enough to name and validate objects, never to run them.
func Unbuilt() Images {
	im := Images{}
	for _, e := range table {
		im[e.proxy] = e.image.repo + ":unbuilt"
	}
	return im
}

// AppRef is what the proxy objects need to know of the app under test.
type AppRef struct {
	// Selector is the label selector of the app Deployment's pods (its spec.selector.matchLabels).
	Selector map[string]string
	// Port is the app container's port the proxy sends requests to.
	Port int32
}
