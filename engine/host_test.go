package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestHost(t *testing.T) {
	dir := t.TempDir()
	mem, rel := filepath.Join(dir, "meminfo"), filepath.Join(dir, "os-release")
	if err := os.WriteFile(mem, []byte("MemFree:  1000 kB\nMemTotal:       16303284 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rel, []byte("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := memTotalKB(mem); got != 16303284 {
		t.Errorf("memTotalKB = %d", got)
	}
	if got := osRelease(rel); got != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("osRelease = %q", got)
	}
	if memTotalKB(filepath.Join(dir, "none")) != 0 || osRelease(filepath.Join(dir, "none")) != "" {
		t.Error("a missing file gives a value")
	}
	if h := host(); !strings.Contains(h, " cores") || !strings.Contains(h, runtime.GOARCH) {
		t.Errorf("host() = %q, want the cores and the architecture", h)
	}
}

// A gRPC load goes to host:port, never to a URL; a dns:/// target stays as it is.
func TestGRPCTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:30080/":              "127.0.0.1:30080",
		"http://10.96.0.5:80/path?q=1":         "10.96.0.5:80",
		"dns:///svc.ns.svc.cluster.local:8080": "dns:///svc.ns.svc.cluster.local:8080",
	} {
		if got := grpcTarget(in); got != want {
			t.Errorf("grpcTarget(%q) = %q, want %q", in, got, want)
		}
	}
}
