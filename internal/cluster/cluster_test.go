package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
