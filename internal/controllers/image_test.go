package controllers

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// fakeBinary is a Binary of c whose file holds content.
func fakeBinary(t *testing.T, c Controller, content string) Binary {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return Binary{Controller: c, Path: p, GOARCH: "arm64"}
}

func TestMakeImage(t *testing.T) {
	c, _ := Lookup(string(ArgoRollouts))
	img, err := MakeImage(fakeBinary(t, c, "#!static binary"))
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(img.Ref, ":")
	if repo != c.Repo || len(tag) != 12 {
		t.Errorf("ref %s, want %s:<12 hex digits>", img.Ref, c.Repo)
	}
	d, _ := img.Image.Digest()
	if tag != d.Hex[:12] {
		t.Errorf("tag %s is not of the digest %s", tag, d)
	}
	cf, err := img.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/bin/rollouts-controller" {
		t.Errorf("entrypoint %v", got)
	}
	if cf.Config.User != User || cf.Config.WorkingDir != "/home/argo-rollouts" || cf.OS != "linux" || cf.Architecture != "arm64" {
		t.Errorf("config: user %q, workdir %q, platform %s/%s", cf.Config.User, cf.Config.WorkingDir, cf.OS, cf.Architecture)
	}
	// The layer: the binary (0755), its directory, the working directory, a world-writable /tmp.
	want := map[string]int64{"bin": 0o755, "bin/rollouts-controller": 0o755, "home": 0o755, "home/argo-rollouts": 0o755, "tmp": 0o1777}
	r := mutate.Extract(img.Image)
	defer r.Close()
	tr := tar.NewReader(r)
	got := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimSuffix(h.Name, "/")] = h.Mode
		if h.Name == "bin/rollouts-controller" {
			if b, _ := io.ReadAll(tr); string(b) != "#!static binary" {
				t.Errorf("the binary in the layer is %q", b)
			}
		}
	}
	for name, mode := range want {
		if m, ok := got[name]; !ok || m != mode {
			t.Errorf("%s: in the layer %v, mode %o; want mode %o (layer: %v)", name, ok, m, mode, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("layer holds %v, want %v", got, want)
	}
	if img.Size <= 0 {
		t.Errorf("size %d", img.Size)
	}
}

// The same binary makes the same image (its tag says its content); another binary another.
func TestMakeImageIsDeterministic(t *testing.T) {
	c, _ := Lookup(string(Flagger))
	a, err := MakeImage(fakeBinary(t, c, "one"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := MakeImage(fakeBinary(t, c, "one"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := MakeImage(fakeBinary(t, c, "two"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Ref != b.Ref {
		t.Errorf("the same binary made %s and %s", a.Ref, b.Ref)
	}
	if a.Ref == other.Ref {
		t.Errorf("two binaries made one image %s", a.Ref)
	}
}

func TestMakeImageOfAMissingBinary(t *testing.T) {
	c, _ := Lookup(string(Flagger))
	if _, err := MakeImage(Binary{Controller: c, Path: filepath.Join(t.TempDir(), "none"), GOARCH: "amd64"}); err == nil {
		t.Error("no error for a binary that is not there")
	}
}
