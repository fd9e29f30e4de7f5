// Package proxies provides real L7 proxies (HAProxy, nginx, Caddy, Traefik) as fixtures to put
// in front of an app under test: their images, built offline FROM scratch in the local Docker
// engine (EnsureImage), and each proxy configuration rollcheck knows (Config) as Kubernetes
// objects to apply next to the app (Objects).
//
// One table (table.go) holds everything rollcheck knows of each proxy: its name, pinned
// version, image recipe, configuration template, health path, whether it reads the API
// server, and its Configs with whether each names its upstream, resolves by DNS and how often.
// Nothing else switches on a proxy's name; adding a proxy is adding an entry and its template.
//
// The images hold the proxy's binary and the shared libraries it links (HAProxy and nginx from
// Debian 12's packages, Caddy and Traefik built from their Go modules at pinned versions), a
// small static entrypoint (fixtures/proxies/entry) that renders the configuration template from
// the environment into /tmp and execs the proxy, and minimal /etc files. They run as uid 65532
// on a read-only root filesystem and listen on 8080. Every configuration but TraefikIngress adds
// the response header X-Upstream, the upstream address (ip:port) the proxy chose for the
// request, also on the proxy's own error responses (Traefik cannot: Config.UpstreamNamed), and
// every one passes the app's X-Pod-Name through: who answered, and through which upstream, is
// in every response.
//
// HAProxy, nginx and Caddy find the app's pods by DNS (a headless Service) or through a
// ClusterIP; Traefik (TraefikIngress) is an ingress controller: it reads an Ingress and the
// Service's EndpointSlices from the API server, with a ServiceAccount and a Role of its
// namespace.
package proxies
