package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterVersionsCreatesNothing: `rollcheck cluster versions` reads an existing cluster; with
// none it fails in one line, and it never runs kind create nor touches Docker.
func TestClusterVersionsCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho \""+name+" $*\" >>"+calls+"\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("kind", "exit 0\n") // kind get clusters: none
	write("docker", "exit 1\n")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ROLLCHECK_KIND", filepath.Join(dir, "kind"))
	t.Setenv("ROLLCHECK_CLUSTER_NAME", "rollcheck-test")
	for _, k := range []string{"ROLLCHECK_WORKERS", "ROLLCHECK_KEEP_CLUSTER", "ROLLCHECK_KIND_CONFIG", "ROLLCHECK_NODE_IMAGE_SOURCE", "ROLLCHECK_NODE_IMAGE_REF"} {
		t.Setenv(k, "") // the caller's choices must not leak in
	}
	err := run(context.Background(), []string{"cluster", "versions"})
	if want := `no kind cluster "rollcheck-test"`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line containing %q", err, want)
	}
	b, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(b)); got != "kind get clusters" {
		t.Fatalf("calls:\n%s\nwant only: kind get clusters", got)
	}
}
