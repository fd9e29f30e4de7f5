package scaffold

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The files init writes for examples/hello's manifest, a gRPC server's and a third-party
// server's (podinfo's shape) are the golden ones, and each decodes strictly with spec's own
// loader and validates into rows.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name, manifests string
		port            int32
		path            string
		grpc            bool
	}{
		{"hello", "../../examples/check/web.yaml", 8080, "/healthz", false},
		{"grpc", "../../examples/grpc/app.yaml", 8080, "", true},
		{"podinfo", "testdata/podinfo.yaml", 9898, "/readyz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := ReadManifests(tc.manifests)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Find(files.Objects, "")
			if err != nil {
				t.Fatal(err)
			}
			if f.Port != tc.port || f.GRPC != tc.grpc || (!tc.grpc && f.Path != tc.path) {
				t.Errorf("found port %d path %q grpc %v, want %d %q %v", f.Port, f.Path, f.GRPC, tc.port, tc.path, tc.grpc)
			}
			golden := filepath.Join("testdata", tc.name+".check.yaml")
			rel, err := filepath.Rel("testdata", tc.manifests)
			if err != nil {
				t.Fatal(err)
			}
			got := Render(f, Options{Command: "rollcheck init -f " + filepath.Base(tc.manifests), File: "check.yaml", Manifests: []string{rel}})
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/scaffold -update writes it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from what init writes now (go test ./internal/scaffold -update, then read the diff):\n%s", golden, got)
			}
			c, err := spec.Load(golden)
			if err != nil {
				t.Fatalf("spec.Load: %v", err)
			}
			plans, _, err := c.Plans()
			if err != nil {
				t.Fatalf("Plans: %v", err)
			}
			if len(plans) != 2 {
				t.Fatalf("%d rows, want 2 (as-is and prestop-sleep under rollout-restart)", len(plans))
			}
			for _, r := range plans {
				p := r.Plan()
				if e := p.Variant.Expect; e.Kind != check.ExpectAtMost || e.MaxRatio != Threshold {
					t.Errorf("variant %s expects %s, want at most a ratio of %v (init writes no negative control)", p.Variant.Name, e, Threshold)
				}
			}
			pre := plans[1].Applied()
			if d, ok := pre.PreStop.Duration(); !ok || d != PreStop() || pre.GraceSeconds*1e9 <= int64(d) {
				t.Errorf("prestop-sleep runs preStop %s grace %ds, want sleep %s and a longer grace", pre.PreStop, pre.GraceSeconds, PreStop())
			}
			for _, line := range strings.Split(string(got), "\n") {
				if len(line) > 110 {
					t.Errorf("line longer than 110 characters: %q", line)
				}
			}
		})
	}
}

func TestFindChoices(t *testing.T) {
	dep := func(mod func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		d.Spec.Template.Labels = map[string]string{"app": "web"}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "example/web:1",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}}}}
		if mod != nil {
			mod(d)
		}
		return d
	}
	probe := func(port intstr.IntOrString, path string) func(*appsv1.Deployment) {
		return func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Port: port, Path: path}}}
		}
	}
	svc := func(target intstr.IntOrString, name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: name, Port: 80, TargetPort: target}}}}
	}
	for _, tc := range []struct {
		name string
		objs []check.Object
		port int32
		path string
		grpc bool
	}{
		{"service target name", []check.Object{dep(nil), svc(intstr.FromString("metrics"), "m")}, 9090, "/", false},
		{"service target number", []check.Object{dep(nil), svc(intstr.FromInt32(8080), "http")}, 8080, "/", false},
		{"probe port by name", []check.Object{dep(probe(intstr.FromString("http"), "/ready"))}, 8080, "/ready", false},
		{"probe on another port keeps /", []check.Object{dep(probe(intstr.FromString("metrics"), "/ready")), svc(intstr.FromString("http"), "http")}, 8080, "/", false},
		{"service port named grpc", []check.Object{dep(nil), svc(intstr.FromString("http"), "grpc-api")}, 8080, "/", true},
		{"only port", []check.Object{dep(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Ports = d.Spec.Template.Spec.Containers[0].Ports[:1]
		})}, 8080, "/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Find(tc.objs, "")
			if err != nil {
				t.Fatal(err)
			}
			if f.Port != tc.port || f.Path != tc.path || f.GRPC != tc.grpc {
				t.Errorf("port %d path %q grpc %v (%s; %s), want %d %q %v", f.Port, f.Path, f.GRPC, f.PortFrom, f.PathFrom, tc.port, tc.path, tc.grpc)
			}
		})
	}
}

// A preStop the manifest has is read and said; a grace period too short for the rule's preStop is
// raised, a longer one kept.
func TestRenderKeepsWhatTheAppHas(t *testing.T) {
	f := Found{Deployment: "web", Port: 8080, PortFrom: "x", Path: "/", PathFrom: "y", Replicas: 2,
		PreStop: check.PreStop{Sleep: 10 * time.Second}, Grace: 5, GraceSet: true}
	out := string(Render(f, Options{Command: "rollcheck init -f web.yaml", Manifests: []string{"web.yaml"}}))
	for _, want := range []string{"preStop sleep:10s, terminationGracePeriodSeconds 5, 2 replicas.",
		"already holds SIGTERM back 10s", "Raised from 5s", "\n  terminationGracePeriodSeconds: 9\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the file lacks %q:\n%s", want, out)
		}
	}
	f.Grace = 60
	if out := string(Render(f, Options{})); !strings.Contains(out, "\n  terminationGracePeriodSeconds: 60\n") {
		t.Errorf("a grace period of 60s is kept:\n%s", out)
	}
}

// Bad input is one line that says what to add or choose.
func TestFindRefuses(t *testing.T) {
	web := func(name string, ports ...int32) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
		d.Spec.Template.Labels = map[string]string{"app": name}
		c := corev1.Container{Name: name, Image: "example/" + name + ":1"}
		for _, p := range ports {
			c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p})
		}
		d.Spec.Template.Spec.Containers = []corev1.Container{c}
		return d
	}
	undeclared := web("web")
	undeclared.Spec.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	for _, tc := range []struct {
		name       string
		objs       []check.Object
		deployment string
		want       string
	}{
		{"no deployment", []check.Object{&corev1.Service{}}, "", "no Deployment (apps/v1) in the manifests"},
		{"several", []check.Object{web("a", 1), web("b", 2)}, "", "the manifests hold 2 Deployments (a, b): choose one with --deployment NAME"},
		{"not there", []check.Object{web("a", 1)}, "c", "--deployment c: not in the manifests (they hold a)"},
		{"no port", []check.Object{web("web")}, "", "Deployment web: no port found (it declares no containerPort): add a Service"},
		{"two ports", []check.Object{web("web", 1, 2)}, "", "it declares several (web:1, web:2)"},
		{"service target undeclared", []check.Object{web("web"), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}}, "",
			"Service web's targetPort 8080 is declared by no container: add ports: [{containerPort: 8080}]"},
		{"probe port undeclared", []check.Object{undeclared}, "", "add ports: [{containerPort: 8080}] to container web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Find(tc.objs, tc.deployment)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Find: %v, want one line with %q", err, tc.want)
			}
		})
	}
	if _, err := Find([]check.Object{web("a", 1), web("b", 2)}, "b"); err != nil {
		t.Errorf("--deployment b of two: %v", err)
	}
}

// init reads manifests as check and audit do (internal/manifest has the rule's tests): here, a
// kustomization directory whose Deployment gets its selector from the kustomization's labels,
// as go-httpbin's own kustomize directory does; init used to refuse it ("spec.selector.matchLabels
// is empty").
func TestReadManifestsKustomization(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: httpbin}
spec:
  template:
    spec:
      containers:
      - name: httpbin
        image: example/httpbin:1
        ports: [{name: http, containerPort: 8080}]
`)
	write("service.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: httpbin}\nspec: {ports: [{port: 80, targetPort: http}]}\n")
	write("kustomization.yaml", "resources: [deployment.yaml, service.yaml]\nlabels:\n- pairs: {app: httpbin}\n  includeSelectors: true\n")
	fs, err := ReadManifests(dir)
	if err != nil || len(fs.Paths) != 1 || fs.Paths[0] != dir || len(fs.Objects) != 2 {
		t.Fatalf("ReadManifests(dir) = %v, %d objects, %v; want the kustomization's 2", fs.Paths, len(fs.Objects), err)
	}
	f, err := Find(fs.Objects, "")
	if err != nil || f.Deployment != "httpbin" || f.Port != 8080 || f.Service != "httpbin" {
		t.Errorf("Find = %+v, %v; want httpbin on 8080 behind Service httpbin", f, err)
	}
}
