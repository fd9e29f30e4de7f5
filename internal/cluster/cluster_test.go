package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/engine"
)

// fakeAPIServer answers the few requests SweepNamespaces makes: discovery, listing namespaces by
// label, deleting one. A namespace named "*-stuck" is only marked terminating, as one whose
// finalizers never finish.
type fakeAPIServer struct {
	mu      sync.Mutex
	ns      map[string]*corev1.Namespace
	deleted []string
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	switch {
	case r.URL.Path == "/api":
		reply(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		reply(metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}})
	case r.URL.Path == "/api/v1":
		reply(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Kind: "Namespace", Verbs: metav1.Verbs{"list", "delete", "get"}},
		}})
	case r.URL.Path == "/api/v1/namespaces" && r.Method == http.MethodGet:
		sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		list := corev1.NamespaceList{TypeMeta: metav1.TypeMeta{Kind: "NamespaceList", APIVersion: "v1"}}
		for _, n := range f.ns {
			if sel.Matches(labels.Set(n.Labels)) {
				list.Items = append(list.Items, *n)
			}
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		reply(list)
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && r.Method == http.MethodDelete:
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/")
		n, ok := f.ns[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			reply(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: 404})
			return
		}
		f.deleted = append(f.deleted, name)
		if strings.HasSuffix(name, "-stuck") {
			now := metav1.Now()
			n.DeletionTimestamp = &now
		} else {
			delete(f.ns, name)
		}
		reply(n)
	default:
		http.Error(w, "fake API server: unexpected "+r.Method+" "+r.URL.String(), http.StatusNotImplemented)
	}
}

func clusterOn(t *testing.T, f *fakeAPIServer) *Cluster {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cl, err := klient.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Options: Options{Name: "test", Logf: t.Logf}, Client: cl}
}

func namespaces(names ...string) map[string]*corev1.Namespace {
	m := map[string]*corev1.Namespace{}
	for _, n := range names {
		name, value, labelled := strings.Cut(n, "=")
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if labelled {
			ns.Labels = map[string]string{engine.PartOfLabel: value}
		}
		m[name] = ns
	}
	return m
}

func TestSweepNamespaces(t *testing.T) {
	f := &fakeAPIServer{ns: namespaces("rc-old-1=rollcheck", "rc-old-2=rollcheck", "someone-else=other", "kube-system")}
	c := clusterOn(t, f)
	n, err := c.SweepNamespaces(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("swept %d, error %v; want 2, nil", n, err)
	}
	sort.Strings(f.deleted)
	if want := []string{"rc-old-1", "rc-old-2"}; !reflect.DeepEqual(f.deleted, want) {
		t.Fatalf("deleted %v, want %v", f.deleted, want)
	}
	if _, ok := f.ns["someone-else"]; !ok || len(f.ns) != 2 {
		t.Fatalf("left %v, want someone-else and kube-system", f.ns)
	}
	// Nothing left: nothing to do.
	if n, err := c.SweepNamespaces(context.Background()); n != 0 || err != nil {
		t.Fatalf("second sweep: %d, %v; want 0, nil", n, err)
	}
}

func TestSweepNamespacesGivesUpOnAStuckNamespace(t *testing.T) {
	f := &fakeAPIServer{ns: namespaces("rc-stuck=rollcheck")}
	c := clusterOn(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.SweepNamespaces(ctx)
	if err == nil || n != 1 || !strings.Contains(err.Error(), "rc-stuck") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("swept %d, error %v; want 1 and a one-line error naming rc-stuck", n, err)
	}
}

// fakeTool writes an executable shell script named name into dir and returns its path.
func fakeTool(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExistingCreatesNothing: Existing (behind `rollcheck cluster versions`) only looks for the
// cluster; with none it says so in one line and never runs kind create nor docker.
func TestExistingCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	kind := fakeTool(t, dir, "kind", `echo "kind $*" >>`+calls+`
case "$1 $2" in
  "get clusters") echo other-cluster ;;
esac
`)
	fakeTool(t, dir, "docker", `echo "docker $*" >>`+calls+"\nexit 1\n")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	o := Options{Name: "rollcheck", KindPath: kind, NodeImage: "kindest/node:v1", ImageSource: SourceUpstream}
	c, err := Existing(context.Background(), o)
	if err == nil || c != nil {
		t.Fatalf("Existing with no cluster: %v, %v; want an error", c, err)
	}
	if want := `no kind cluster "rollcheck"`; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q, want one line containing %q", err, want)
	}
	b, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(b)); got != "kind get clusters" {
		t.Fatalf("calls:\n%s\nwant only: kind get clusters", got)
	}
}

func TestImageSource(t *testing.T) {
	for ref, want := range map[string]string{
		"rollcheck/kind-node:v1.34.3-0123456789ab": SourceOffline,
		"kindest/node:v1.34.0@sha256:0123":         SourceUpstream,
		"example.com/rollcheck/kind-node:v1":       SourceUpstream,
	} {
		if got := imageSource(ref); got != want {
			t.Errorf("imageSource(%q) = %q, want %q", ref, got, want)
		}
	}
}
