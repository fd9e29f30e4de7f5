// Command rowmanifests writes the objects recorded rows of the built-in matrix applied, rendered
// from their configuration by audit.RowObjects (the sample app's Deployment as the row changed
// it, rollcheck's load Service, the row's PodDisruptionBudget), one YAML file per row, for static
// checkers to read beside rollcheck audit (scripts/static-checkers.sh).
//
//	go run ./internal/audit/rowmanifests OUT ROWSDIR...
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rowmanifests OUT ROWSDIR...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "rowmanifests:", err)
		os.Exit(1)
	}
}

func run(out string, dirs []string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, dir := range dirs {
		rows, err := rowfile.Read(dir)
		if err != nil {
			return err
		}
		for _, r := range rows {
			a := r.Config
			objs, err := audit.RowObjects(a)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s/%s %s: not rendered: %v\n", r.Suite, a.Name, a.Disruption, err)
				continue
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# %s/%s %s×%d (load from %s), rendered by audit.RowObjects from %s\n", r.Suite, a.Name, a.Disruption, a.Count, a.LoadFrom, dir)
			for _, o := range objs {
				y, err := yaml.Marshal(o)
				if err != nil {
					return err
				}
				b.WriteString("---\n")
				b.Write(y)
			}
			name := fmt.Sprintf("%s--%s--%s--%s.yaml", r.Suite, a.Name, a.Disruption, a.LoadFrom)
			if err := os.WriteFile(filepath.Join(out, name), b.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
