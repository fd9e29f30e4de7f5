// Package proxies provides real L7 proxies (HAProxy, nginx, Caddy) as fixtures to put in front
// of an app under test: their images, built offline FROM scratch in the local Docker engine
// (EnsureImage), and each proxy configuration rollcheck knows (Config) as Kubernetes objects
// to apply next to the app (Objects).
//
// The images hold the proxy's binary and the shared libraries it links (HAProxy and nginx from
// Debian 12's packages, Caddy built from its Go module at a pinned version), a small static
// entrypoint (fixtures/proxies/entry) that renders the configuration template from the
// environment into /tmp and execs the proxy, and minimal /etc files. They run as uid 65532 on a
// read-only root filesystem and listen on 8080. Every configuration adds the response header
// X-Upstream, the upstream address (ip:port) the proxy chose for the request, also on the
// proxy's own error responses, and passes the app's X-Pod-Name through: who answered, and
// through which upstream, is in every response.
package proxies
