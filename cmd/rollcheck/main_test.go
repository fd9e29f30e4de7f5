package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterVersionsCreatesNothing: `rollcheck cluster versions` reads an existing cluster; with
// none it fails in one line, and all it asks Docker is the list of kind's node containers.
func TestClusterVersionsCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho \""+name+" $*\" >>"+calls+"\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("docker", "exit 0\n") // docker ps: no kind node container
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ROLLCHECK_CLUSTER_NAME", "rollcheck-test")
	for _, k := range []string{"ROLLCHECK_WORKERS", "ROLLCHECK_KEEP_CLUSTER", "ROLLCHECK_KIND_CONFIG", "ROLLCHECK_NODE_IMAGE", "ROLLCHECK_NODE_IMAGE_REF"} {
		t.Setenv(k, "") // the caller's choices must not leak in
	}
	err := run(context.Background(), []string{"cluster", "versions"})
	if want := `no kind cluster "rollcheck-test"`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line containing %q", err, want)
	}
	b, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(b)); !strings.HasPrefix(got, "docker ps -a --filter label=io.x-k8s.kind.cluster") || strings.Contains(got, "\n") {
		t.Fatalf("calls:\n%s\nwant only: docker ps -a --filter label=io.x-k8s.kind.cluster ...", got)
	}
}
