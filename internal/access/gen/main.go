// Command gen writes the manifests of internal/access (access.Manifests) into the directory
// named by its one argument: `make rbac` (go generate ./internal/access) runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rollcheck/rollcheck/internal/access"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
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
