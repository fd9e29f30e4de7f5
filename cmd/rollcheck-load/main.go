// Command rollcheck-load is the load pod's program (internal/loadagent, whose doc says what it
// does and which flags it takes), as a program of its own for the FROM-scratch image of this
// directory's Dockerfile. rollcheck itself needs neither: it runs the same code as
// `rollcheck agent load`, in an image made of its own executable.
package main

import (
	"os"

	"github.com/rollcheck/rollcheck/internal/loadagent"
)

func main() {
	os.Exit(loadagent.Main(os.Args[1:], os.Stdout, os.Stderr))
}
