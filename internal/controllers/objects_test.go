package controllers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/e2e-framework/klient/k8s"
)

const testCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`

const testDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      serviceAccountName: x
      containers:
      - name: x
        image: ghcr.io/example/x:1.0.0
        imagePullPolicy: Always
        args: [-upstream]
        readinessProbe:
          exec: {command: [wget, --spider, http://localhost:8080/healthz]}
          timeoutSeconds: 5
        securityContext:
          readOnlyRootFilesystem: true
          runAsUser: 10001
`

const testRBAC = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: x
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: x
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: x}
subjects:
- kind: ServiceAccount
  name: x
---
apiVersion: v1
kind: Namespace
metadata:
  name: upstreams-own
`

// testModule writes a module tree with a CRD file and a kustomization (which repeats the CRD
// and has a Namespace of its own, both to be left out), and the Controller that reads it.
func testModule(t *testing.T) (string, Controller) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"crds/widget-crd.yaml":         testCRD,
		"crds/kustomization.yaml":      "resources: [widget-crd.yaml]\n",
		"deploy/kustomization.yaml":    "resources: [rbac.yaml, deployment.yaml, ../crds]\ncommonLabels: {app: x}\n",
		"deploy/deployment.yaml":       testDeployment,
		"deploy/rbac.yaml":             testRBAC,
		"deploy/other/deployment.yaml": testDeployment,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, Controller{Name: "x", Title: "X", CRDs: []string{"crds/*-crd.yaml"}, Manifests: []string{"deploy"},
		Namespace: "x-system", Deployment: "x", Args: []string{"-mesh-provider=kubernetes"}, HealthPort: 8080, HealthPath: "/healthz"}
}

func kinds(objs []k8s.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
	}
	return out
}

func TestObjectsIn(t *testing.T) {
	dir, c := testModule(t)
	objs, err := objectsIn(dir, c, "rollcheck/controller-x:0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(kinds(objs), " ")
	if want := "Namespace/x-system CustomResourceDefinition/widgets.example.com ServiceAccount/x ClusterRoleBinding/x Deployment/x"; got != want {
		t.Fatalf("objects %s, want %s", got, want)
	}
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if ns := o.GetNamespace(); (kind == "ServiceAccount" || kind == "Deployment") != (ns == "x-system") {
			t.Errorf("%s %s in namespace %q", kind, o.GetName(), ns)
		}
		switch o := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			if o.Subjects[0].Namespace != "x-system" {
				t.Errorf("binding's subject %+v, want namespace x-system", o.Subjects[0])
			}
		case *appsv1.Deployment:
			k := o.Spec.Template.Spec.Containers[0]
			if k.Image != "rollcheck/controller-x:0123456789ab" || k.ImagePullPolicy != corev1.PullNever {
				t.Errorf("container runs %s, pull policy %s", k.Image, k.ImagePullPolicy)
			}
			if strings.Join(k.Args, " ") != "-mesh-provider=kubernetes" {
				t.Errorf("args %v", k.Args)
			}
			p := k.ReadinessProbe
			if p.Exec != nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.IntValue() != 8080 || p.TimeoutSeconds != 5 {
				t.Errorf("readiness probe %+v, want an HTTP GET of :8080/healthz keeping its timing", p)
			}
			s := k.SecurityContext
			if !*s.ReadOnlyRootFilesystem || *s.RunAsUser != 10001 || *s.AllowPrivilegeEscalation || !*s.RunAsNonRoot ||
				s.Capabilities.Drop[0] != "ALL" || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("security context %+v: want the upstream's, hardened", s)
			}
			if o.Spec.Template.Labels["app"] != "x" {
				t.Errorf("the kustomization's labels are lost: %v", o.Spec.Template.Labels)
			}
		}
	}
}

func TestObjectsInRefusesWhatItCannotInstall(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(dir string, c *Controller)
		want   string
	}{
		"no CRD file":        {func(_ string, c *Controller) { c.CRDs = []string{"crds/none-*.yaml"} }, "no file matches crds/none-*.yaml"},
		"no such Deployment": {func(_ string, c *Controller) { c.Deployment = "y" }, "0 Deployments named y"},
		"another namespace": {func(dir string, _ *Controller) {
			os.WriteFile(filepath.Join(dir, "deploy", "kustomization.yaml"), []byte("namespace: elsewhere\nresources: [rbac.yaml, deployment.yaml]\n"), 0o644)
		}, "is in namespace elsewhere, want x-system"},
		"a CRD file holding something else": {func(dir string, _ *Controller) {
			os.WriteFile(filepath.Join(dir, "crds", "widget-crd.yaml"), []byte(testRBAC), 0o644)
		}, "where CustomResourceDefinitions were expected"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, c := testModule(t)
			tc.change(dir, &c)
			if objs, err := objectsIn(dir, c, "img:1"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q; objects %v", err, tc.want, kinds(objs))
			}
		})
	}
}

// The table's paths against the real modules: run unless -short. The modules come from the Go
// module proxy unless cached, as everything this project builds does: a proxy that cannot be
// reached fails the test.
func TestObjectsOfTheRealModules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads the controllers' modules, from the Go module proxy unless cached")
	}
	want := map[Name][]string{
		ArgoRollouts: {"CustomResourceDefinition/rollouts.argoproj.io", "CustomResourceDefinition/analysistemplates.argoproj.io",
			"ServiceAccount/argo-rollouts", "ClusterRole/argo-rollouts", "ClusterRoleBinding/argo-rollouts", "Deployment/argo-rollouts"},
		Flagger: {"CustomResourceDefinition/canaries.flagger.app", "CustomResourceDefinition/metrictemplates.flagger.app",
			"ServiceAccount/flagger", "ClusterRole/flagger", "ClusterRoleBinding/flagger", "Deployment/flagger"},
	}
	for _, c := range Table {
		t.Run(string(c.Name), func(t *testing.T) {
			dir, err := ModuleDir(context.Background(), c, t.Logf)
			if err != nil {
				t.Fatalf("the module is not to be had: %v", err)
			}
			objs, err := objectsIn(dir, c, c.Repo+":0123456789ab")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %v", c.Name, kinds(objs))
			got := " " + strings.Join(kinds(objs), " ") + " "
			for _, w := range append(want[c.Name], "Namespace/"+c.Namespace) {
				if !strings.Contains(got, " "+w+" ") {
					t.Errorf("no %s among %s", w, got)
				}
			}
			if all := kinds(objs); all[0] != "Namespace/"+c.Namespace || all[len(all)-1] != "Deployment/"+c.Deployment {
				t.Errorf("the namespace is not first or the Deployment not last: %v", all)
			}
			for _, o := range objs {
				if d, ok := o.(*appsv1.Deployment); ok {
					for _, k := range d.Spec.Template.Spec.Containers {
						if k.ImagePullPolicy != corev1.PullNever || !strings.HasPrefix(k.Image, c.Repo+":") {
							t.Errorf("container %s runs %s, pull policy %s", k.Name, k.Image, k.ImagePullPolicy)
						}
						for _, p := range []*corev1.Probe{k.LivenessProbe, k.ReadinessProbe} {
							if p != nil && p.Exec != nil {
								t.Errorf("container %s still execs %v, which the image does not have", k.Name, p.Exec.Command)
							}
						}
					}
				}
			}
		})
	}
}
