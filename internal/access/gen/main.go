// Command gen writes the manifests of internal/access (access.Manifests) into the directory
// named by its first argument, and their table (access.Table) into the Markdown file named by
// its second, between access.TableBegin and access.TableEnd: `make rbac` (go generate
// ./internal/access) runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollcheck/rollcheck/internal/access"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen DIR DOC.md")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := writeTable(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	files, err := access.Manifests()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeTable replaces the table between the markers of doc.
func writeTable(doc string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, access.TableBegin), strings.Index(s, access.TableEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q … %q", doc, access.TableBegin, access.TableEnd)
	}
	s = s[:i+len(access.TableBegin)] + "\n" + access.Table() + s[j:]
	return os.WriteFile(doc, []byte(s), 0o644)
}
