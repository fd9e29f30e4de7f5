// Command gen writes the generated reference documents (internal/refdoc: docs/check-file.md,
// docs/conformance.schema.json) under the repository root named by its one argument: `make
// docs` (go generate ./internal/refdoc) runs it.
package main

import (
	"fmt"
	"os"

	"github.com/rollcheck/rollcheck/internal/refdoc"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen ROOT")
		os.Exit(2)
	}
	if err := refdoc.Write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
