package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterVersionsCreatesNothing: `rollcheck cluster versions` reads an existing cluster; with
// none it fails in one line, and all it asks Docker is the list of kind's node containers.
func TestClusterVersionsCreatesNothing(t *testing.T) {
	calls := noKindCluster(t)
	code, _, stderr := rollcheck("cluster", "versions")
	if want := `rollcheck cluster: no kind cluster "rollcheck-test"`; code != exitFail || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit 1 and one line starting %q", code, stderr, want)
	}
	b, _ := os.ReadFile(calls)
	if got := strings.TrimSpace(string(b)); !strings.HasPrefix(got, "docker ps -a --filter label=io.x-k8s.kind.cluster") || strings.Contains(got, "\n") {
		t.Fatalf("calls:\n%s\nwant only: docker ps -a --filter label=io.x-k8s.kind.cluster ...", got)
	}
}

// rollcheck runs the command line args as main does (without its signal handling) and returns
// the exit code, stdout and stderr.
func rollcheck(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), commands, "rollcheck", args, &out, &errb)
	return code, out.String(), errb.String()
}

// With no rollcheck kind cluster, load-image loads into none (it used to fail): here the image
// ROLLCHECK_LOAD_IMAGE names, which is printed; --no-load does not even look for the cluster.
func TestLoadImageWithoutCluster(t *testing.T) {
	calls := noKindCluster(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "registry.example/rollcheck/load:v1")
	for _, tc := range []struct {
		args       []string
		look, logs bool
	}{{[]string{"cluster", "load-image"}, true, true}, {[]string{"cluster", "load-image", "--no-load"}, false, false}} {
		_ = os.Remove(calls)
		code, stdout, stderr := rollcheck(tc.args...)
		if code != exitPass || stdout != "registry.example/rollcheck/load:v1\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, stdout, stderr)
		}
		if got := strings.Contains(stderr, `no kind cluster "rollcheck-test": the image is loaded into no cluster`); got != tc.logs {
			t.Errorf("%q: stderr %q", tc.args, stderr)
		}
		b, _ := os.ReadFile(calls)
		if looked := strings.HasPrefix(string(b), "docker ps -a --filter label=io.x-k8s.kind.cluster"); looked != tc.look || strings.Count(string(b), "\n") > 1 {
			t.Errorf("%q: docker calls %q; want the cluster looked for: %v, and nothing else", tc.args, b, tc.look)
		}
	}
}

// noKindCluster puts first on PATH a docker that records its calls (into the file it returns)
// and answers docker ps with no kind node container, names the cluster rollcheck-test, and
// unsets the cluster knobs the caller may have set.
func noKindCluster(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte("#!/bin/sh\necho \"docker $*\" >>"+calls+"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ROLLCHECK_CLUSTER_NAME", "rollcheck-test")
	for _, k := range []string{"ROLLCHECK_WORKERS", "ROLLCHECK_KEEP_CLUSTER", "ROLLCHECK_KIND_CONFIG", "ROLLCHECK_NODE_IMAGE", "ROLLCHECK_NODE_IMAGE_REF", "ROLLCHECK_LOAD_IMAGE"} {
		t.Setenv(k, "") // the caller's choices must not leak in
	}
	return calls
}
