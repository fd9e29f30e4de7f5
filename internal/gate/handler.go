package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
)

// The paths Handler serves.
const (
	// ArgoPath is Argo Rollouts' Web metric provider's: GET ?hash=<pod-template hash>.
	ArgoPath = "/v1/argo"
	// FlaggerPath is Flagger's webhooks': POST with Flagger's payload.
	FlaggerPath = "/v1/flagger"
	// HealthPath answers 200 while the server runs (the pod's probes).
	HealthPath = "/healthz"
)

// keyPart is what a hash or a checksum may be: what Kubernetes' pod-template hashes and
// Flagger's checksums are made of.
var keyPart = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// FlaggerPayload is what Flagger POSTs to a webhook (fluxcd/flagger pkg/controller/webhook.go's
// CanaryWebhookPayload).
type FlaggerPayload struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Phase     string            `json:"phase"`
	Checksum  string            `json:"checksum"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Handler serves Checks to the release controllers.
type Handler struct {
	Checks *Checks
	// Namespace, when set, is the only namespace whose Canaries the Flagger endpoint answers:
	// the namespace of the workload the server checks (another Canary's webhook pointed here is
	// refused, 400, instead of checking this one).
	Namespace string
	// MaxWait bounds how long a request waits for a verdict before it is answered Running
	// (Argo: 200 with state running; Flagger: 503); 0: as long as the caller waits.
	MaxWait time.Duration
	// Logf logs each request and its answer.
	Logf func(string, ...any)
}

// ServeHTTP routes to the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case HealthPath:
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "ok\n")
	case ArgoPath:
		h.argo(w, r)
	case FlaggerPath:
		h.flagger(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) logf(format string, a ...any) {
	if h.Logf != nil {
		h.Logf(format, a...)
	}
}

// argo answers Argo Rollouts' Web metric provider: 200 and the Verdict's JSON, Running or
// Done. The AnalysisTemplate's successCondition reads result.verdict == "pass" and its
// failureCondition result.verdict == "fail" (docs/gate.md); its timeoutSeconds must outlast the
// check, or the request is answered Running and the next measurement asks again.
func (h *Handler) argo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	hash := r.URL.Query().Get("hash")
	if !keyPart.MatchString(hash) {
		http.Error(w, fmt.Sprintf("hash=%q: want the pod-template hash ({{args.hash}}, from podTemplateHashValue)", hash), http.StatusBadRequest)
		return
	}
	wait := h.MaxWait
	if s := r.URL.Query().Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			http.Error(w, fmt.Sprintf("wait=%q: want a positive duration (30s)", s), http.StatusBadRequest)
			return
		}
		if wait == 0 || d < wait {
			wait = d
		}
	}
	v := h.Checks.Get(r.Context(), "hash:"+hash, wait)
	h.logf("argo hash %s: %s %s", hash, v.State, v.Verdict)
	writeJSON(w, http.StatusOK, v)
}

// flagger answers a Flagger webhook: 200 and the Verdict's JSON on a pass; 500 and a Markdown
// summary on a fail or no verdict (Flagger counts it toward analysis.threshold, then rolls
// back); 503 when the verdict is not there within MaxWait. The webhook's timeout must outlast the
// check: a call Flagger gave up on leaves the check running, and its next call gets its verdict.
func (h *Handler) flagger(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var p FlaggerPayload
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	if err := dec.Decode(&p); err != nil {
		http.Error(w, "Flagger's webhook payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case !keyPart.MatchString(p.Checksum):
		http.Error(w, fmt.Sprintf("checksum %q: want Flagger's canary checksum", p.Checksum), http.StatusBadRequest)
		return
	case h.Namespace != "" && p.Namespace != h.Namespace:
		http.Error(w, fmt.Sprintf("Canary %s/%s: this gate checks namespace %s only", p.Namespace, p.Name, h.Namespace), http.StatusBadRequest)
		return
	}
	v := h.Checks.Get(r.Context(), "checksum:"+p.Checksum, h.MaxWait)
	h.logf("flagger %s/%s phase %s checksum %s: %s %s", p.Namespace, p.Name, p.Phase, p.Checksum, v.State, v.Verdict)
	switch {
	case r.Context().Err() != nil:
		return // Flagger gave up: nobody reads the answer; the check goes on
	case v.State != Done:
		w.Header().Set("Retry-After", "10")
		http.Error(w, "rollcheck: the check runs (started "+v.Started.Format(time.RFC3339)+"); ask again", http.StatusServiceUnavailable)
	case v.Verdict == Pass:
		writeJSON(w, http.StatusOK, v)
	default:
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, v.Markdown())
	}
}

func writeJSON(w http.ResponseWriter, code int, v Verdict) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
