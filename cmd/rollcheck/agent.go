package main

import (
	"io"
	"path/filepath"

	"github.com/rollcheck/rollcheck/internal/loadagent"
	"github.com/rollcheck/rollcheck/internal/sampleapp"
)

// agentCommands are rollcheck agent's: the programs of the images rollcheck makes of its own
// executable (internal/selfimage), run in the cluster's pods. They are internal: rollcheck help
// does not list agent, and their flags are their programs' own, not a stable interface.
var agentCommands = []command{
	{name: "load", args: "--target URL --rate N --duration D [flags]",
		summary: "the load pod's program (internal/loadagent): one attack, its stream on stdout",
		about:   "The load pod's program: one constant-rate attack on a Service of the cluster, its ledger on stdout\nas loadgen's stream (internal/loadagent; the same as cmd/rollcheck-load). rollcheck agent load -h\nlists its flags. Exit 0 done, 1 the stream could not be written, 2 bad flags, 3 the target never served.",
		program: loadagent.Main},
	{name: "app", args: "[flags] | sleep DURATION",
		summary: "the sample app (internal/sampleapp): an HTTP/gRPC server whose behaviour on SIGTERM its flags choose",
		about:   "The sample app (internal/sampleapp; the same as fixtures/app), the program of rollcheck's app image,\nwhere /app is a link to the executable: run under the name app, rollcheck is the sample app.\nrollcheck agent app -h lists its flags. Exit 2 bad flags or variables.",
		program: sampleapp.Main},
}

const agentAbout = `Internal: the programs of the images rollcheck makes of its own executable, which its pods run
(the load pod's image runs /rollcheck agent load, the sample app's /rollcheck agent app). Each takes
its own flags, which are not a stable interface: they follow rollcheck's version.`

// asProgram is the agent program the executable runs as when it is started under another name
// than rollcheck's: "app" (the app image's /app link, which exec preStop hooks such as
// "/app sleep 5s" and the entry images' wrappers run) is the sample app. Nil otherwise.
func asProgram(arg0 string) func(args []string, stdout, stderr io.Writer) int {
	if filepath.Base(arg0) == "app" {
		return sampleapp.Main
	}
	return nil
}

// agentProgram is the program args (rollcheck's arguments) run when they name an agent
// command ("agent load ..."), else nil; it runs before main installs any signal handling.
func agentProgram(args []string) (func(args []string, stdout, stderr io.Writer) int, []string) {
	if len(args) < 2 || args[0] != "agent" {
		return nil, nil
	}
	if c := find(agentCommands, args[1]); c != nil {
		return c.program, args[2:]
	}
	return nil, nil
}
