package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rollcheck/rollcheck/internal/scaffold"
	"github.com/rollcheck/rollcheck/spec"
)

// rollcheck init -f writes a file rollcheck check takes, names the manifests relative to it,
// and refuses to replace a file unless --force.
func TestInitWrites(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "check.yaml")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../examples/check/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := rollcheck("init", "-f", manifest, "-o", out)
	if code != exitPass || stdout != "" || !strings.Contains(stderr, "wrote "+out+": Deployment web, port 8080, path /healthz") || !strings.Contains(stderr, "next: rollcheck check -f "+out+"\n") {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	c, err := spec.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Plans(); err != nil {
		t.Fatalf("the file init wrote: %v", err)
	}
	if m := c.App.Manifests; len(m) != 1 || m[0] != "../web.yaml" {
		t.Errorf("app.manifests %q: want [../web.yaml], the manifest relative to the file", m)
	}
	code, _, stderr = rollcheck("init", "-f", manifest, "-o", out)
	if code != exitBadInput || stderr != "rollcheck init: -o "+out+": the file exists: choose another -o, or --force to overwrite it\n" {
		t.Errorf("init over an existing file: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr = rollcheck("init", "-f", manifest, "-o", out, "--force"); code != exitPass {
		t.Errorf("init --force: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ = rollcheck("init", "-f", manifest, "-o", "-")
	if code != exitPass || !strings.HasPrefix(stdout, "# A first check of Deployment web") {
		t.Errorf("init -o -: exit %d, stdout %.80q", code, stdout)
	}
}

// Bad input is one line on stderr and exit 2, and no file is written.
func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "check.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "rollcheck init: give the app's manifests (-f FILE or DIR), or a Deployment on a cluster"},
		{[]string{"-f", "../../spec/testdata/configmap-only.yaml"}, "rollcheck init: -f ../../spec/testdata/configmap-only.yaml: no Deployment (apps/v1) in the manifests"},
		{[]string{"-f", "../../spec/testdata/two.yaml"}, "choose one with --deployment NAME"},
		{[]string{"-f", filepath.Join(dir, "missing.yaml")}, "rollcheck init: -f " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		{[]string{"-f", "../../spec/testdata/always.yaml"}, "imagePullPolicy Always on image example/web:dev"},
		{[]string{"-f", "x.yaml", "--namespace", "shop"}, "rollcheck init: -f and --namespace: give the manifests or a Deployment on a cluster, not both"},
		{[]string{"--namespace", "shop"}, "rollcheck init: --namespace shop: name the Deployment too (--deployment NAME)"},
		{[]string{"-f", "x.yaml", "--context", "kind-x"}, "rollcheck init: --kubeconfig and --context name the cluster of a Deployment"},
		{[]string{"-f", "x.yaml", "extra"}, `rollcheck init: unexpected arguments ["extra"]`},
	} {
		code, stdout, stderr := rollcheck(append(append([]string{"init"}, tc.args...), "-o", out)...)
		if code != exitBadInput || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rollcheck init %q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("rollcheck init %q wrote %s", tc.args, out)
		}
	}
}

// A Deployment on a cluster is read with a get and a list, and the file names it by namespace,
// name and Service, with no manifests, load from a pod, and the context it was read from.
func TestInitFromCluster(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d.Spec.Template.Labels = map[string]string{"app": "web"}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "registry.example/web:1.2",
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 5432}}}}
	cs := fake.NewClientset(d, svc, other)
	if _, err := clusterObjects(context.Background(), cs, "shop", "nope"); err == nil || !strings.Contains(err.Error(), "Deployment shop/nope") {
		t.Errorf("a Deployment that is not there: %v", err)
	}
	objs, err := clusterObjects(context.Background(), cs, "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cs.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("init %s %s: it only reads", v, a.GetResource().Resource)
		}
	}
	f, err := scaffold.Find(objs, "web")
	if err != nil {
		t.Fatal(err)
	}
	out := string(scaffold.Render(f, scaffold.Options{Command: "rollcheck init --namespace shop --deployment web",
		Existing: &scaffold.Existing{Namespace: "shop", Context: "staging"}}))
	for _, want := range []string{"\n  namespace: shop\n", "\n  deployment: web\n", "\n  service: web\n", "\n  port: 8080\n", "\n  path: /ready\n",
		"\n  from: cluster\n", "\ncluster:\n  context: staging\n", "--in-place"} {
		if !strings.Contains(out, want) {
			t.Errorf("the file lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n  manifests:") || strings.Contains(out, "\n  images:") {
		t.Errorf("a Deployment on a cluster: no manifests and no images to load:\n%s", out)
	}
	// The check file's names for a Deployment in place (app.namespace, app.service) come with
	// rollcheck check --in-place; until spec decodes them, this part of the test waits.
	c, err := spec.Parse([]byte(out), ".")
	if err != nil && strings.Contains(err.Error(), "unknown field") {
		t.Skipf("spec does not decode the in-place fields yet: %v", err)
	}
	if err != nil {
		t.Fatalf("spec.Parse: %v", err)
	}
	if c.App.Deployment != "web" {
		t.Errorf("app.deployment %q", c.App.Deployment)
	}
}
