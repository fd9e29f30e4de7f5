package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Errorf("file holds %q, %v; want %q", b, err, content)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", st.Mode().Perm(), err)
	}
	// A directory that does not exist: an error naming the path, and nothing left behind.
	missing := filepath.Join(dir, "nope", "report.md")
	if err := Write(missing, []byte("x")); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Write into a missing directory: %v, want an error naming %s", err, missing)
	}
	// The rename fails onto a directory: the temporary file is removed.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "taken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(sub, "taken"), []byte("x")); err == nil {
		t.Error("Write onto a directory: no error")
	}
	ents, _ := os.ReadDir(sub)
	if len(ents) != 1 {
		t.Errorf("%d entries left in %s, want only the directory: %v", len(ents), sub, ents)
	}
}
