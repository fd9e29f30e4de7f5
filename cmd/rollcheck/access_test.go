package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/checktest"
)

// fakeAPIServer answers what rollcheck check asks an existing cluster before any work (the
// version, discovery, SelfSubjectAccessReviews, allowed unless deny says no) and records every
// other request: none may come before the rights are known.
func fakeAPIServer(t *testing.T, deny func(authorizationv1.ResourceAttributes) bool) (kubeconfig string, others func() []string) {
	return fakeAPIServerServing(t, deny, nil)
}

// fakeAPIServerServing is fakeAPIServer that also answers the requests serve has ("GET /path":
// a JSON body), recorded with the others.
func fakeAPIServerServing(t *testing.T, deny func(authorizationv1.ResourceAttributes) bool, serve map[string]string) (kubeconfig string, others func() []string) {
	var mu sync.Mutex
	var rest []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = io.WriteString(w, `{"major":"1","minor":"34","gitVersion":"v1.34.3"}`)
		case "/api":
			_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			_, _ = io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`)
		case "/api/v1":
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"namespaces","namespaced":false,"kind":"Namespace","verbs":["create"]},{"name":"pods","namespaced":true,"kind":"Pod","verbs":["create"]},{"name":"services","namespaced":true,"kind":"Service","verbs":["create"]},{"name":"configmaps","namespaced":true,"kind":"ConfigMap","verbs":["create"]}]}`)
		case "/apis/apps/v1":
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[{"name":"deployments","namespaced":true,"kind":"Deployment","verbs":["create"]}]}`)
		case "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			// client-go sends it as protobuf; the answer may be JSON.
			body, _ := io.ReadAll(r.Body)
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
			review, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
			if err != nil || !ok || review.Spec.ResourceAttributes == nil {
				http.Error(w, "bad review", http.StatusBadRequest)
				return
			}
			review.Status.Allowed = !deny(*review.Spec.ResourceAttributes)
			review.Kind, review.APIVersion = "SelfSubjectAccessReview", "authorization.k8s.io/v1"
			_ = json.NewEncoder(w).Encode(review)
		default:
			mu.Lock()
			rest = append(rest, r.Method+" "+r.URL.Path)
			mu.Unlock()
			if body, ok := serve[r.Method+" "+r.URL.Path]; ok {
				_, _ = io.WriteString(w, body)
				return
			}
			http.Error(w, "not in this fake", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"" + srv.URL + "\"}}]\n" +
		"users: [{name: u, user: {token: rollcheck-test-token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), rest...) }
}

// A missing required right is one line naming the verb, the resource and where, exit 2, and no
// request but the reviews reaches the cluster: nothing is created.
func TestCheckExistingRefusesAMissingRight(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	for _, tc := range []struct {
		name       string
		deny       func(authorizationv1.ResourceAttributes) bool
		disruption string
		want       string
	}{
		{"no load pods", func(a authorizationv1.ResourceAttributes) bool {
			return a.Resource == "pods" && a.Subresource == "" && a.Verb == "create"
		}, "rollout-restart", "this user may not create pods in every namespace (the run's namespaces are made per row): rollcheck needs it before any work; examples/rbac/core.yaml grant(s) it"},
		{"no namespaces", func(a authorizationv1.ResourceAttributes) bool {
			return a.Resource == "namespaces" && a.Verb == "create"
		}, "rollout-restart", "this user may not create namespaces (cluster-scoped)"},
		{"a drain without evictions", func(a authorizationv1.ResourceAttributes) bool {
			return a.Subresource == "eviction"
		}, "drain-node", "this user may not create pods/eviction in every namespace (the run's namespaces are made per row): rollcheck needs it before any work; examples/rbac/drain.yaml grant(s) it"},
	} {
		kubeconfig, others := fakeAPIServer(t, tc.deny)
		code, _, stderr := checkCLI(t, "--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--disruption", tc.disruption,
			"--kubeconfig", kubeconfig, "--artifacts", t.TempDir())
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
		if o := others(); len(o) > 0 {
			t.Errorf("%s: requests beyond the reviews reached the cluster: %q", tc.name, o)
		}
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

// A rollout restart does not need the drain's rights, and a missing optional right
// (kube-proxy's metrics) lets the run go on: the note says what it will not measure and which
// right would give it.
func TestReviewAccessNeedsOnlyWhatThePlansUse(t *testing.T) {
	kubeconfig, others := fakeAPIServer(t, func(a authorizationv1.ResourceAttributes) bool {
		return a.Subresource == "eviction" || (a.Resource == "nodes" && a.Verb == "patch") || a.Namespace == "kube-system"
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := access.ReviewPlans(context.Background(), cfg, checktest.Resolve(t, checktest.WebPlan()), "", nil)
	if err != nil {
		t.Fatalf("a rollout restart was refused: %v", err)
	}
	want := "kube-proxy's network-programming lag and mode: not measured: this user may not list pods in namespace kube-system; get pods/proxy in namespace kube-system (examples/rbac/kube-proxy-metrics.yaml grants it)"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want one: %q", notes, want)
	}
	drain := checktest.WebPlan()
	drain.Disruption.Kind = check.DrainNode
	if _, err := access.ReviewPlans(context.Background(), cfg, checktest.Resolve(t, drain), "", nil); err == nil || !strings.Contains(err.Error(), "create pods/eviction") {
		t.Errorf("a drain without the right to evict: %v", err)
	}
	if o := others(); len(o) > 0 {
		t.Errorf("requests beyond the reviews: %q", o)
	}
}

// untouched fails t when anything but the access reviews reached the fake API server (others) or a
// cluster tool was called (calls, fakeTools'): a refusal before any work.
func untouched(t *testing.T, others func() []string, calls string) {
	t.Helper()
	if o := others(); len(o) > 0 {
		t.Errorf("requests beyond the reviews reached the cluster: %q", o)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}
