package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// knobsCmd is `rollcheck knobs`: with no argument it checks every knob; `get NAME` prints one
// knob's value by its rule, so that the scripts hold no copy of a default or of a rule; `table`
// prints the table of knobs in docs/maintainers.md; `target NAME` prints the knobs make's target NAME sets
// (knobs.Targets), one NAME=value a line, for scripts/e2e.sh to export.
func knobsCmd(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		return checkKnobs(stderr, "knobs")
	case len(args) == 2 && args[0] == "get":
		v, err := knobs.Get(os.Getenv, args[1])
		if err != nil {
			fmt.Fprintln(stderr, "rollcheck knobs:", err)
			return exitBadInput
		}
		fmt.Fprintln(stdout, v)
		return exitPass
	case len(args) == 2 && args[0] == "target":
		env, err := knobs.TargetEnv(args[1], os.Getenv)
		if err != nil {
			fmt.Fprintln(stderr, "rollcheck knobs:", err)
			return exitBadInput
		}
		for _, kv := range env {
			fmt.Fprintln(stdout, kv)
		}
		return exitPass
	case len(args) == 1 && args[0] == "table":
		if err := knobs.WriteTable(stdout); err != nil {
			fmt.Fprintln(stderr, "rollcheck knobs:", err)
			return 1
		}
		return exitPass
	}
	return badArgs(stderr, "knobs", args)
}

// checkKnobs checks every knob (internal/knobs) and prints one line per problem; exit 2 if any.
func checkKnobs(stderr io.Writer, prefix string) int {
	errs := knobs.Check(os.Getenv, false)
	for _, err := range errs {
		fmt.Fprintf(stderr, "%s [%s] ERROR: %v\n", time.Now().UTC().Format("15:04:05"), prefix, err)
	}
	if len(errs) > 0 {
		return exitBadInput
	}
	return exitPass
}
