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
	// Image and Replicas, when both are set, make a proxy that resolves HeadlessServiceName
	// once, at its start (check.ResolveOnce: NginxStatic), wait for the DNS to answer Replicas
	// addresses first: an init container of Image (the sample app's, whose "/app await-dns"
	// does it; internal/sampleapp.AwaitDNS). Without it the proxy starts with the pods the DNS
	// answered with at that moment, often the first one ready only; with one server, nginx
	// ignores max_fails and never finds its upstream down, and the row's mechanism changes.
	Image    string
	Replicas int32
}
