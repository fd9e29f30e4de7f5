package cluster

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// fakeNodesAPI is an API server on 127.0.0.1 that serves the node list nodes (nil: listing
// nodes is forbidden), and the discovery the client needs to ask for it.
func fakeNodesAPI(t *testing.T, nodes []corev1.Node) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			_, _ = io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"nodes","namespaced":false,"kind":"Node","verbs":["list","get"]}]}`)
		case "/api/v1/nodes":
			if nodes == nil {
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes is forbidden"}`)
				return
			}
			_ = json.NewEncoder(w).Encode(corev1.NodeList{Items: nodes})
		default:
			http.Error(w, "not in this fake", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// On an existing cluster the load image's way is decided from the nodes before anything is
// made: a kind cluster's nodes (provider IDs kind://docker/NAME/...) are loaded into, a
// registry when given is pushed to, and anything else is refused in one line that says what
// would do, as are nodes of several architectures and nodes that cannot be listed.
func TestPlanExistingImages(t *testing.T) {
	arch := runtime.GOARCH
	kindNodes := []corev1.Node{kindNode("dev-control-plane", "kind://docker/dev/dev-control-plane", arch), kindNode("dev-worker", "kind://docker/dev/dev-worker", arch)}
	cloud := []corev1.Node{kindNode("vm-1", "gce://p/z/vm-1", arch)}
	for _, tc := range []struct {
		name     string
		nodes    []corev1.Node
		registry string
		kind     string
		refusal  string
	}{
		{"kind", kindNodes, "", "dev", ""},
		{"kind with a registry", kindNodes, "127.0.0.1:5000", "", ""},
		{"not kind", cloud, "", "", "not a kind cluster rollcheck can load into, and no registry is given: give --image-registry REGISTRY"},
		{"not kind, a registry", cloud, "registry.example/team", "", ""},
		{"nodes not listed", nil, "", "", "the nodes cannot be listed"},
		{"nodes not listed, a registry", nil, "registry.example", "", ""},
		{"several architectures", append(cloud, kindNode("vm-2", "gce://p/z/vm-2", "s390x")), "registry.example", "", "several architectures"},
		{"bad registry", cloud, "https://registry.example", "", "without a scheme"},
	} {
		e, err := PlanExistingImages(t.Context(), fakeNodesAPI(t, tc.nodes), tc.registry)
		switch {
		case tc.refusal != "":
			if err == nil || !strings.Contains(err.Error(), tc.refusal) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v; want one line with %q", tc.name, err, tc.refusal)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case e.Kind != tc.kind || e.Registry != tc.registry:
			t.Errorf("%s: %+v; want kind %q, registry %q", tc.name, e, tc.kind, tc.registry)
		}
	}
}

// With a registry the load image is made for the nodes' architecture and pushed; the pods run
// the registry's reference, which reads back as a linux image of that architecture.
func TestExistingLoadImagePushed(t *testing.T) {
	useExecutable(t, staticExe(t))
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	e, err := PlanExistingImages(t.Context(), fakeNodesAPI(t, []corev1.Node{kindNode("vm-1", "gce://p/z/vm-1", runtime.GOARCH)}), host)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := e.LoadImage(t.Context(), t.Logf)
	if err != nil || !strings.HasPrefix(ref, host+"/rollcheck/load:") {
		t.Fatalf("LoadImage = %q, %v", ref, err)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil || cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("pushed image: %+v, %v", cf, err)
	}
}
