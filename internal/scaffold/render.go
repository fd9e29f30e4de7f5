package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/spec"
)

// Threshold is the failure ratio every variant init writes may reach: one request in a thousand.
const Threshold = 0.001

// LoadTimeout is each request's timeout in the file init writes; the grace period is sized as
// if a request took that long (no request of the check's load takes longer).
const LoadTimeout = 2 * time.Second

// Options say where the app is and how init was called.
type Options struct {
	// Command is how init was called, for the file's first line; File is the file's name as
	// the user runs it ("" for FILE).
	Command, File string
	// Manifests are the manifests' paths as the file names them (relative to the file).
	Manifests []string
	// Existing, when set, is a Deployment that runs on a cluster: the file names it instead of
	// manifests, and is checked in place.
	Existing *Existing
}

// Existing is a Deployment that runs on a cluster, and how the cluster was named.
type Existing struct {
	Namespace  string
	Context    string // the kubeconfig's context (always written: the check must not move)
	Kubeconfig string // a kubeconfig file, when one was named
}

// PreStop is the preStop sleep init's prestop-sleep variant sets: rollcheck's own rule
// (internal/analyze's Settings) applied to the routed time it assumes on kind.
func PreStop() time.Duration {
	pre, _ := analyze.Settings(analyze.AssumedKindRouted, 0)
	return pre
}

// GraceFor is the grace period the prestop-sleep variant sets with preStop pre: the rule's for PreStop and a
// request as long as the load's timeout, or the manifest's when that is longer.
func (f Found) GraceFor(pre time.Duration) int64 {
	return max(f.Grace, analyze.Grace(pre, LoadTimeout))
}

// Render writes the check file for f: YAML whose every choice is commented. spec.Load decodes
// it strictly (the tests hold it to that).
func Render(f Found, o Options) []byte {
	w := &writer{}
	file := o.File
	if file == "" {
		file = "FILE"
	}
	w.note(0, "A first check of Deployment "+f.Deployment+", written by `"+o.Command+"`. Every choice below says")
	w.note(0, "why; change what does not fit your app. Every field: docs/check-file.md.")
	if o.Existing != nil {
		w.note(0, "Run it where the Deployment runs: rollcheck check -f "+file+" --in-place (it changes that Deployment")
		w.note(0, "for each variant, rolls it 3 times per variant under load, and restores it).")
	} else {
		w.note(0, "Run it: rollcheck check -f "+file+" (needs a Docker engine: rollcheck creates a kind cluster in it).")
	}
	w.line(0, "apiVersion: "+spec.APIVersion)
	w.line(0, "kind: "+spec.Kind)
	w.line(0, "metadata:")
	w.note(1, "The check's name in the reports (and the suite of its rows): the Deployment's.")
	w.line(1, "name: "+str(checkName(f.Deployment)))
	w.line(0, "app:")
	if e := o.Existing; e != nil {
		w.note(1, "The Deployment as it runs in namespace "+e.Namespace+" (read with a get of it and of the")
		w.note(1, "namespace's Services; nothing was changed). No manifests: the check runs it where it is.")
		w.line(1, "namespace: "+str(e.Namespace))
		w.line(1, "deployment: "+str(f.Deployment))
		if f.Service != "" {
			w.note(1, "The Service whose port gave app.port below.")
			w.line(1, "service: "+str(f.Service))
		}
	} else {
		w.note(1, "rollcheck applies these unchanged into a namespace of its own on a kind cluster, and adds a")
		w.note(1, "Service of its own for the load.")
		w.line(1, "manifests:")
		for _, m := range o.Manifests {
			w.line(1, "- "+str(m))
		}
		if len(f.Others) > 0 {
			w.note(1, "The Deployment under test (the manifests also hold "+strings.Join(f.Others, ", ")+", applied as they are).")
		} else {
			w.note(1, "The Deployment under test, the only one of the manifests.")
		}
		w.line(1, "deployment: "+str(f.Deployment))
		if len(f.Images) > 0 {
			w.note(1, "Every image the Deployment runs, loaded into kind from your local Docker engine (build or")
			w.note(1, "docker pull them first); rollcheck sets imagePullPolicy: Never on them, kind pulls nothing.")
			w.line(1, "images:")
			for _, img := range f.Images {
				w.line(1, "- "+str(img))
			}
		}
	}
	w.note(1, "The port the load is sent to: "+f.PortFrom+".")
	w.line(1, fmt.Sprintf("port: %d", f.Port))
	if f.ContainerField {
		w.note(1, "The app's container: the one that declares the port is a native sidecar in front of it (a")
		w.note(1, "proxy); the variants' preStop goes to the app, the sidecar's exit is timed next to it.")
		w.line(1, "container: "+str(f.Container))
	}
	if !f.GRPC {
		w.note(1, "The request path: "+f.PathFrom+". A path every pod answers cheaply and")
		w.note(1, "at once; use one of your real requests instead to measure what your users get.")
		w.line(1, "path: "+str(f.Path))
	}
	w.line(0, "load:")
	switch {
	case f.GRPC:
		w.note(1, "gRPC ("+f.GRPCFrom+"): unary RPCs, by default the standard health check, which any server")
		w.note(1, "that registers it answers. Name a method of yours (grpc: {method: /pkg.Service/Method, message:")
		w.note(1, "<base64 request>}) to measure what your clients get: a health service may say NOT_SERVING")
		w.note(1, "from SIGTERM where your methods would still be served. From a load pod, as the clients are.")
		w.line(1, "protocol: grpc")
		w.line(1, "from: cluster")
	case f.TLS:
		w.note(1, "TLS: the readiness probe says scheme HTTPS. http2 is HTTP/2 over TLS (ALPN h2, the certificate")
		w.note(1, "not verified); an app that serves only HTTP/1.1 over TLS cannot be loaded yet.")
		w.line(1, "protocol: http2")
	}
	if o.Existing != nil && !f.GRPC {
		w.note(1, "From a load pod in the cluster: an existing cluster is loaded from inside only. To load the")
		w.note(1, "path your users take (an ingress, a cloud load balancer), set url: (and host:) to its address.")
		w.line(1, "from: cluster")
	}
	w.note(1, fmt.Sprintf("%d requests a second, at a constant rate whatever the answers: enough that a window of", check.DefaultRate))
	w.note(1, "100 ms in which new connections fail shows as about ten failures, light enough for kind on")
	w.note(1, "a laptop. Raise it toward your production rate to see rarer failures.")
	w.line(1, fmt.Sprintf("rate: %d", check.DefaultRate))
	if !f.GRPC {
		w.note(1, "A new connection per request, so that each is routed by kube-proxy afresh (kept-alive GETs")
		w.note(1, "that die are silently resent by Go's client, which hides them; set method: POST with it).")
		w.line(1, "keepAlive: false")
	}
	w.note(1, "Short, so that a request sent into a black hole fails within its own second or two.")
	w.line(1, "timeout: "+LoadTimeout.String())
	w.line(0, "disruptions:")
	w.note(0, "Three rollout restarts (kubectl rollout restart), each waited out until the Deployment settled:")
	w.note(0, "every pod replaced three times, as a deploy does. Add delete-pod, drain-node, ... to see more.")
	w.line(0, "- kind: "+string(check.RolloutRestart))
	w.line(0, "  count: 3")
	w.line(0, "variants:")
	w.note(0, fmt.Sprintf("The app as deployed: preStop %s, terminationGracePeriodSeconds %d%s, %s.", f.PreStop, f.Grace, graceNote(f), replicas(f.Replicas)))
	w.line(0, "- name: as-is")
	w.line(0, "  why: "+str("the app as deployed"))
	threshold := func() {
		w.note(1, "At most one request in a thousand may fail (every variant has the same bar, so the rows")
		w.note(1, "compare). Set failures: 0 to allow none, once a configuration reaches it.")
		w.line(1, "expect:")
		w.line(2, "maxFailureRatio: "+strconv.FormatFloat(Threshold, 'f', -1, 64))
	}
	threshold()
	pre := PreStop()
	grace := f.GraceFor(pre)
	w.note(0, "A preStop sleep keeps each pod serving while the EndpointSlices and kube-proxy take it out of")
	w.note(0, "the Service, which they do in parallel with its termination, not before it.")
	w.line(0, "- name: prestop-sleep")
	w.line(0, "  why: "+str(fmt.Sprintf("a preStop sleep of %s outlasts endpoint propagation: SIGTERM comes once no new connection does", pre)))
	w.note(1, fmt.Sprintf("%s: rollcheck's rule, routed time + %s, rounded up to the second, with the routed time", pre, analyze.PreStopMargin))
	w.note(1, fmt.Sprintf("it assumes on kind (%s) before anything was measured. Each run's table", analyze.AssumedKindRouted))
	w.note(1, "\"Propagation and what to set\" gives the measured one: set what it recommends. The native")
	w.note(1, "sleep action needs no shell or sleep binary in the image.")
	if d, ok := f.PreStop.Duration(); ok && d >= pre {
		w.note(1, fmt.Sprintf("The manifest's preStop (%s) already holds SIGTERM back %s: this row compares it with the", f.PreStop, d))
		w.note(1, "rule's native sleep; lengthen this one to see whether more helps.")
	}
	w.line(1, "preStop:")
	w.line(2, fmt.Sprintf("sleep: %ds", int64(pre/time.Second)))
	if grace == f.Grace {
		w.note(1, fmt.Sprintf("The manifest's grace period (%ds) already covers the preStop, a %s request and", f.Grace, LoadTimeout))
		w.note(1, fmt.Sprintf("the kubelet's %s before SIGKILL (rule: %ds).", analyze.KillMinimum, analyze.Grace(pre, LoadTimeout)))
	} else {
		w.note(1, fmt.Sprintf("Raised from %ds: preStop + a request as long as the load's timeout (%s) + the kubelet's", f.Grace, LoadTimeout))
		w.note(1, fmt.Sprintf("%s before SIGKILL, rounded up. Longer requests in production need more.", analyze.KillMinimum))
	}
	w.line(1, fmt.Sprintf("terminationGracePeriodSeconds: %d", grace))
	threshold()
	if e := o.Existing; e != nil {
		w.note(0, "The cluster the Deployment runs on, as init read it; rollcheck check --kubeconfig/--context")
		w.note(0, "replace this section.")
		w.line(0, "cluster:")
		if e.Kubeconfig != "" {
			w.line(1, "kubeconfig: "+str(e.Kubeconfig))
		}
		w.line(1, "context: "+str(e.Context))
		w.note(1, "The load pods' image, one this cluster can pull, when rollcheck asks for one (rollcheck cluster")
		w.note(1, "load-image builds it; ROLLCHECK_LOAD_IMAGE overrides this):")
		w.line(1, "# loadImage: registry.example/rollcheck-load:TAG")
	}
	w.flush()
	return []byte(w.b.String())
}

func replicas(n int32) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

func graceNote(f Found) string {
	if f.GraceSet {
		return ""
	}
	return " (Kubernetes' default)"
}

// checkName is a valid check name made of a Deployment's name: at most 40 characters.
func checkName(dep string) string {
	if len(dep) > 40 {
		dep = strings.TrimRight(dep[:40], "-.")
	}
	return strings.ReplaceAll(dep, ".", "-")
}

// writer writes YAML lines and comments, two spaces an indent level. Comments written one
// after another at the same indent are one paragraph, wrapped at 100 characters when the next
// line comes.
type writer struct {
	b      strings.Builder
	para   string
	indent int
}

func (w *writer) line(indent int, s string) {
	w.flush()
	w.b.WriteString(strings.Repeat("  ", indent) + s + "\n")
}

// note adds s to the paragraph of comments at indent.
func (w *writer) note(indent int, s string) {
	if w.para != "" && w.indent != indent {
		w.flush()
	}
	w.indent = indent
	w.para = strings.TrimSpace(w.para + " " + s)
}

// flush writes the paragraph of comments, in lines of at most 100 characters (a longer word
// stays whole).
func (w *writer) flush() {
	if w.para == "" {
		return
	}
	prefix := strings.Repeat("  ", w.indent) + "#"
	l := prefix
	for _, word := range strings.Fields(w.para) {
		if len(l)+1+len(word) > 100 && l != prefix {
			w.b.WriteString(l + "\n")
			l = prefix
		}
		l += " " + word
	}
	w.b.WriteString(l + "\n")
	w.para = ""
}

// plain is a YAML scalar that needs no quotes and reads as a string.
var plain = regexp.MustCompile(`^[A-Za-z0-9./_][A-Za-z0-9./_:@+-]*$`)

// str is s as a YAML string: plain when it cannot be read as anything else, else double-quoted
// (a JSON string is a YAML double-quoted scalar).
func str(s string) string {
	if plain.MatchString(s) && !strings.Contains(s, ": ") && !ambiguous(s) {
		return s
	}
	return strconv.Quote(s)
}

// ambiguous tells whether a plain scalar s would be read as a bool, null or number.
func ambiguous(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~":
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
