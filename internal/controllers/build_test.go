package controllers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cache key changes with everything that makes the binary, so that a changed pin or recipe
// is never served an old binary.
func TestBinaryPathChangesWithWhatMakesTheBinary(t *testing.T) {
	c, _ := Lookup(string(ArgoRollouts))
	base := binaryPath("/cache", c, "amd64", "go1.26.8")
	if !strings.HasPrefix(base, "/cache/argo-rollouts/v1.9.2-go1.26.8-amd64-") || filepath.Base(base) != "rollouts-controller" {
		t.Errorf("binaryPath = %s", base)
	}
	if again := binaryPath("/cache", c, "amd64", "go1.26.8"); again != base {
		t.Errorf("binaryPath is not stable: %s, then %s", base, again)
	}
	other := map[string]string{"arch": binaryPath("/cache", c, "arm64", "go1.26.8"), "go": binaryPath("/cache", c, "amd64", "go1.27.0")}
	v := c
	v.Version = "v1.9.3"
	other["version"] = binaryPath("/cache", v, "amd64", "go1.26.8")
	l := c
	l.LDFlags = nil
	other["ldflags"] = binaryPath("/cache", l, "amd64", "go1.26.8")
	m := c
	m.Main = "./cmd/kubectl-argo-rollouts"
	other["main"] = binaryPath("/cache", m, "amd64", "go1.26.8")
	for what, p := range other {
		if p == base {
			t.Errorf("another %s gives the same path %s", what, p)
		}
	}
}

func TestModuleDirOf(t *testing.T) {
	dir, err := moduleDirOf([]byte(`{"Path":"github.com/fluxcd/flagger","Version":"v1.36.1","Dir":"/mod/github.com/fluxcd/flagger@v1.36.1"}`))
	if err != nil || dir != "/mod/github.com/fluxcd/flagger@v1.36.1" {
		t.Errorf("moduleDirOf = %q, %v", dir, err)
	}
	_, err = moduleDirOf([]byte(`{"Path":"github.com/fluxcd/flagger","Version":"v9.9.9","Error":"unknown revision v9.9.9"}`))
	if err == nil || !strings.Contains(err.Error(), "unknown revision v9.9.9") {
		t.Errorf("err = %v, want the go command's", err)
	}
	if _, err = moduleDirOf([]byte(`not json`)); err == nil {
		t.Error("no error for an answer that is not JSON")
	}
}

// The module cache's files are read-only: the copy must be writable (go may complete go.sum).
func TestCopyTreeMakesAWritableCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "mod@v1.0.0")
	if err := os.MkdirAll(filepath.Join(src, "cmd", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"go.mod": "module example.com/mod\n", "cmd/x/main.go": "package main\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(src, "cmd", "x"), filepath.Join(src, "cmd"), src} {
		os.Chmod(d, 0o555)
	}
	t.Cleanup(func() {
		filepath.WalkDir(src, func(p string, _ os.DirEntry, _ error) error { return os.Chmod(p, 0o755) })
	})
	dst := filepath.Join(t.TempDir(), "src")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(b) != content {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "go.sum"), []byte("x"), 0o644); err != nil {
		t.Errorf("the copy is not writable: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dst, "go.mod"), []byte("x"), 0o644); err != nil {
		t.Errorf("the copy's files are not writable: %v", err)
	}
}
