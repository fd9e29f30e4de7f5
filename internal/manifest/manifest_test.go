package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write writes files (name → content) under a new directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, s := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	cm      = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	checkFi = "apiVersion: rollcheck.io/v1alpha1\nkind: Check\napp: {port: 1}\n"
)

func cmOf(name string) string { return strings.Replace(cm, "%s", name, 1) }

func kinds(docs []Doc) string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Kind+"/"+filepath.Base(d.Source))
	}
	return strings.Join(out, " ")
}

// The one rule: a file's documents and a List's items; a directory's top-level manifest files
// (a check file, other extensions and subdirectories left out); a kustomization rendered.
func TestRead(t *testing.T) {
	dir := write(t, map[string]string{
		"a.yaml":          cmOf("a") + "---\n# only a comment\n---\n" + cmOf("b"),
		"list.json":       `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}]}`,
		"check.yaml":      checkFi,
		"notes.txt":       "not yaml: [",
		"sub/deeper.yaml": cmOf("deep"),
	})
	docs, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(docs); got != "ConfigMap/a.yaml ConfigMap/a.yaml Secret/list.json" {
		t.Errorf("Read(dir) = %s", got)
	}
	if docs[1].At != filepath.Join(dir, "a.yaml")+": document 3" {
		t.Errorf("At = %q", docs[1].At)
	}
	objs, err := Objects(docs)
	if err != nil || len(objs) != 3 || objs[2].GetName() != "s" {
		t.Errorf("Objects = %v, %v", objs, err)
	}
	if got, err := ReadAll(filepath.Join(dir, "a.yaml"), filepath.Join(dir, "sub")); err != nil || kinds(got) != "ConfigMap/a.yaml ConfigMap/a.yaml ConfigMap/deeper.yaml" {
		t.Errorf("ReadAll(file, subdir) = %s, %v", kinds(got), err)
	}
}

func TestReadKustomization(t *testing.T) {
	dir := write(t, map[string]string{
		"base/cm.yaml":              cmOf("app"),
		"base/kustomization.yaml":   "resources: [cm.yaml]\n",
		"overlay/kustomization.yml": "resources: [../base]\nnamePrefix: prod-\n",
		"overlay/ignored.yaml":      cmOf("not-a-resource"),
	})
	for _, p := range []string{filepath.Join(dir, "overlay"), filepath.Join(dir, "overlay", "kustomization.yml")} {
		docs, err := Read(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(docs) != 1 || !strings.Contains(string(docs[0].Data), "name: prod-app") || docs[0].Source != filepath.Join(dir, "overlay") || !strings.HasPrefix(docs[0].At, filepath.Join(dir, "overlay")+" (kustomization): ") {
			t.Errorf("%s: %d docs, %q from %s", p, len(docs), docs[0].Data, docs[0].Source)
		}
	}
	bad := write(t, map[string]string{"kustomization.yaml": "resources: [missing.yaml]\n"})
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), bad+": kustomize:") {
		t.Errorf("a broken kustomization: %v", err)
	}
}

// Every refusal names the file at fault.
func TestReadRefuses(t *testing.T) {
	dir := write(t, map[string]string{
		"check.yaml":  checkFi,
		"empty.yml":   "# nothing\n",
		"nokind.yaml": "replicas: 3\n",
	})
	for _, tc := range []struct{ path, want string }{
		{"missing.yaml", "missing.yaml: no such file"},
		{"check.yaml", "check.yaml: a rollcheck file (a check file), not Kubernetes manifests"},
		{"empty.yml", "empty.yml: no Kubernetes object in it"},
		{"nokind.yaml", "nokind.yaml: document 1: an object without apiVersion and kind"},
	} {
		_, err := Read(filepath.Join(dir, tc.path))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "nokind.yaml: document 1") {
		t.Errorf("a directory with a bad file: %v, want it named", err)
	}
	only := write(t, map[string]string{"check.yaml": checkFi})
	if _, err := Read(only); err == nil || !strings.Contains(err.Error(), "no Kubernetes object in its .yaml, .yml and .json files") {
		t.Errorf("a directory of a check file only: %v", err)
	}
	bad := write(t, map[string]string{"bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n"})
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml: document 1") {
		t.Errorf("a file that does not decode: %v, want its name", err)
	}
}
