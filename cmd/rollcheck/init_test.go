package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
