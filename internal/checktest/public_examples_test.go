package checktest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// internalPrefix is the import path prefix a user cannot import from another module.
const internalPrefix = "github.com/rollcheck/rollcheck/internal/"

// A user copies the Examples (go doc shows them) and the example module under examples/gotest;
// neither may import an internal package, this one included, or the copy would not compile.
func TestExamplesUsePublicPackagesOnly(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.HasPrefix(rel, filepath.Join("examples", "gotest")+string(filepath.Separator)) {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !strings.Contains(string(src), "\nfunc Example") {
				return nil
			}
		}
		checked++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, internalPrefix) {
				t.Errorf("%s imports %s: examples use public packages only", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The engine, tune, rctest and kindcluster Examples and the example module at least.
	if checked < 6 {
		t.Errorf("checked %d files, want the Examples and examples/gotest", checked)
	}
}
