package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// A command is one of rollcheck's subcommands. main dispatches on the table (commands), and a
// command's help is generated from it and from its flags, so that help lists every flag.
type command struct {
	name    string
	aliases []string // other names it answers to: --version
	args    string   // the operands after the flags in the synopsis: "BASE NEW", "DIR"
	summary string   // one line, listed by rollcheck help
	about   string   // what it does and its exit codes, above the flags in rollcheck help NAME
	// setup is the flags constructor: it registers the command's flags on fs and returns the
	// run function, which reads them after the parse.
	setup func(fs *flag.FlagSet) runFunc
	sub   []command // a command of commands (cluster): setup is nil
	// ownSignals: the command handles SIGINT and SIGTERM itself (e2e passes them on to ginkgo).
	ownSignals bool
	// program, when set, is the whole command: it gets every argument after the command's
	// name, flags included, unparsed (agent's programs parse their own), and no context: main
	// runs it before it installs any signal handling. setup is nil.
	program func(args []string, stdout, stderr io.Writer) int
	// hidden: rollcheck help does not list it (rollcheck help NAME still describes it).
	hidden bool
	// maintainers: a command for rollcheck's own suites and maintainers (make e2e), listed by
	// rollcheck help apart from the users' commands.
	maintainers bool
}

// listed is c's line in rollcheck help: its summary and, for a command of commands, the
// subcommands its table has, so that the list cannot miss one.
func (c command) listed() string {
	if c.sub == nil {
		return c.summary
	}
	var names []string
	for _, s := range c.sub {
		if !s.hidden {
			names = append(names, s.name)
		}
	}
	return c.summary + ": " + strings.Join(names, ", ")
}

// A runFunc runs a command on the operands left after its flags and returns the exit code.
type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// withFlags is a command's setup from its flags constructor and its run function.
func withFlags[F any](newFlags func(*flag.FlagSet) *F, run func(context.Context, *F, []string, io.Writer, io.Writer) int) func(*flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		f := newFlags(fs)
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return run(ctx, f, args, stdout, stderr)
		}
	}
}

// noFlags is the flags of a command that has none.
type noFlags struct{}

func newNoFlags(*flag.FlagSet) *noFlags { return &noFlags{} }

// commands is rollcheck's table of subcommands, in the order rollcheck help lists them.
var commands = []command{
	{name: "check", args: "-f CHECK.yaml | --manifest FILE --image REF --port N",
		summary: "check an app's shutdown configuration under load: a check file's variants × disruptions",
		about:   checkAbout, setup: withFlags(newCheckFlags, runCheck)},
	{name: "init",
		summary: "write a first check file for your app, from its manifests or a Deployment on a cluster",
		about:   initAbout, setup: withFlags(newInitFlags, runInit)},
	{name: "tune", args: "--sample exit|drain|ignore | -f CHECK.yaml [--variant NAME]",
		summary: "find the smallest preStop with which the app meets its threshold",
		about:   tuneAbout, setup: withFlags(newTuneFlags, runTuneCmd)},
	{name: "gate", args: "--deployment NS/NAME | --rollout NS/NAME --pod-template-hash H [--service S] [--disruption delete-pod=N]",
		summary: "a release controller's gate: check a Deployment (or an Argo Rollout's revision) where it runs, as it is; exit 0 pass, 1 fail, 2 no verdict",
		about:   gateAbout, setup: withFlags(newGateFlags, runGate)},
	{name: "serve", args: "--deployment NS/NAME | --rollout NS/NAME [--listen :8080]",
		summary: "serve rollcheck gate over HTTP: Argo Rollouts' Web metric provider, Flagger's webhooks",
		about:   serveAbout, setup: withFlags(newServeFlags, runServe)},
	{name: "compare", args: "BASE NEW",
		summary: "compare two conformance.json files row by row (Fisher's exact test)",
		about:   compareAbout, setup: withFlags(newCompareFlags, runCompare)},
	{name: "audit", args: "-f FILE|DIR --windows FILE | --windows-from DIR",
		summary: "score every Deployment and StatefulSet of manifests (or a cluster) against a cluster's measured windows",
		about:   auditAbout, setup: withFlags(newAuditFlags, runAudit)},
	{name: "windows", args: "COMMAND",
		summary: "a cluster's measured windows for rollcheck audit",
		about:   "Makes windows files, a cluster's measured windows, which rollcheck audit scores workloads against.\nExit 0 done, 2 bad input.",
		sub:     windowsCommands},
	{name: "e2e",
		summary: "the conformance suites (make e2e): acquire the cluster, run ginkgo, write the report, release",
		about:   e2eAbout, setup: withFlags(newE2EFlags, runE2E), ownSignals: true, maintainers: true},
	{name: "knobs", args: "[get NAME | table | target NAME]",
		summary: "check every ROLLCHECK_* knob: one line per problem and exit 2, or nothing",
		about:   "With no argument, checks every knob. get NAME prints a knob's value by its rule (its default when unset;\nexit 2 when bad), so that scripts hold no copy of a rule; table prints every knob, its default and\nmeaning (docs/maintainers.md's table); target NAME prints the knobs make's e2e target NAME sets (e2e-grpc,\nsmoke, ...), one NAME=value a line, as scripts/e2e.sh NAME exports them (exit 2: no such target).",
		setup:   withFlags(newNoFlags, runKnobs), maintainers: true},
	{name: "cluster", args: "COMMAND",
		summary: "manage rollcheck's kind cluster",
		about:   "Manages the kind cluster the checks and the suites run on (kind in-process: no kind binary is needed).\nExit 0 done, 1 failed, 2 bad input.",
		sub:     clusterCommands},
	{name: "report", args: "DIR",
		summary: "merge DIR/rows/*.json into DIR's reports and print the Markdown table",
		about: "Merges the rows the suites wrote (DIR/rows/*.json) into DIR/conformance.{json,md,junit.xml} and\nDIR/timeline.html, and prints the Markdown table. Exit 0 when every row passed, 1 otherwise, 2 bad input.\n" +
			"With --figures FILE it writes instead the figures document of the run in DIR (its conformance.json):\nwhat it ran on, its rows and the lifecycle claims, generated (docs/matrix.md is one). Exit 0 written, 1 not, 2 bad input.\n" +
			"With --reanalyze it writes nothing: it judges each row of DIR again from what it recorded (DIR/rows/*.json and\nDIR/raw/<row>.ledger.json; no cluster) with the current analysis, and prints per row what changed against\nthe record (verdict, phase counts, recommendation) and what it could not derive again. Exit 0 no change, 1 a\nchange, 2 bad input.",
		setup: withFlags(newReportFlags, runReport), maintainers: true},
	{name: "version", aliases: []string{"--version", "-version"},
		summary: "print rollcheck's version (also: rollcheck --version)",
		setup:   withFlags(newNoFlags, runVersion)},
	{name: "agent", args: "COMMAND", hidden: true,
		summary: "internal: the programs rollcheck's own images run in the cluster (the load pod's, the sample app)",
		about:   agentAbout, sub: agentCommands},
}

// dispatch runs the command args name (args[0]) from table, prefix naming the table's parent
// ("rollcheck", "rollcheck cluster"), and returns the exit code: help on stdout and exit 0
// for help, -h or --help; one line on stderr and exit 2 for a command the table does not have.
func dispatch(ctx context.Context, table []command, prefix string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s: no command given\n", prefix)
		listCommands(stderr, table, prefix)
		return exitBadInput
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		return help(table, prefix, args[1:], stdout, stderr)
	}
	c := find(table, name)
	if c == nil {
		fmt.Fprintf(stderr, "%s: unknown command %q (%s help lists the commands)\n", prefix, name, prefix)
		return exitBadInput
	}
	path := prefix + " " + c.name
	if c.sub != nil {
		return dispatch(ctx, c.sub, path, args[1:], stdout, stderr)
	}
	if c.program != nil {
		return c.program(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.setup(fs)
	operands, err := parse(fs, args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		commandHelp(stdout, c, path, fs)
		return exitPass
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v (%s help %s)\n", path, err, prefix, c.name)
		return exitBadInput
	}
	return run(ctx, operands, stdout, stderr)
}

// parse parses args into fs; flags may come before, between and after the operands, which it
// returns.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// help writes the help of the command args names (a path: "cluster load-image"), or the list
// of table's commands.
func help(table []command, prefix string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stdout, "usage: %s COMMAND [flags] [ARGS]\n", prefix)
		if prefix == "rollcheck" {
			fmt.Fprintln(stdout, "Checks an app's shutdown configuration under load on a kind cluster (or an existing one) and\nmanages the kind cluster the checks and the conformance suites run on.")
		}
		fmt.Fprintln(stdout)
		listCommands(stdout, table, prefix)
		return exitPass
	}
	c := find(table, args[0])
	if c == nil {
		fmt.Fprintf(stderr, "%s help: unknown command %q (%s help lists the commands)\n", prefix, args[0], prefix)
		return exitBadInput
	}
	path := prefix + " " + c.name
	if c.sub != nil {
		if len(args) > 1 {
			return help(c.sub, path, args[1:], stdout, stderr)
		}
		fmt.Fprintf(stdout, "usage: %s COMMAND [flags] [ARGS]\n%s\n\n", path, c.about)
		listCommands(stdout, c.sub, path)
		return exitPass
	}
	if c.program != nil {
		fmt.Fprintf(stdout, "usage: %s %s\n%s\n", path, c.args, c.about)
		return exitPass
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	c.setup(fs)
	commandHelp(stdout, c, path, fs)
	return exitPass
}

// listCommands writes table's commands, one line each, and how to get one's help.
func listCommands(w io.Writer, table []command, prefix string) {
	fmt.Fprintln(w, "commands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range table {
		if !c.hidden && !c.maintainers {
			fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.listed())
		}
	}
	fmt.Fprintf(tw, "  help [COMMAND]\tthis list, or a command's flags\n")
	_ = tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, c := range slices.DeleteFunc(slices.Clone(table), func(c command) bool { return c.hidden || !c.maintainers }) {
		if i == 0 {
			fmt.Fprintln(w, "\nfor rollcheck's own conformance suites and its maintainers:")
		}
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.listed())
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%s help COMMAND, or %s COMMAND -h, lists a command's flags.\n", prefix, prefix)
}

// commandHelp writes c's help: its synopsis, what it does, and every flag fs has.
func commandHelp(w io.Writer, c *command, path string, fs *flag.FlagSet) {
	flags := 0
	fs.VisitAll(func(*flag.Flag) { flags++ })
	synopsis := path
	if flags > 0 {
		synopsis += " [flags]"
	}
	if c.args != "" {
		synopsis += " " + c.args
	}
	fmt.Fprintf(w, "usage: %s\n", synopsis)
	if about := c.about; about != "" {
		fmt.Fprintln(w, about)
	} else {
		fmt.Fprintln(w, strings.ToUpper(c.summary[:1])+c.summary[1:]+".")
	}
	if flags > 0 {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, fs)
	}
}

// printFlags writes fs's flags as flag.PrintDefaults does (its usage lines, its defaults), but
// each named as the docs and kubectl write it: --name, or -n for a name of one letter. The flag
// package takes either form of each.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	// PrintDefaults starts the line of each flag with "  -name", then a space, a tab or the
	// end of the line; usage lines start with four spaces and a tab.
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, "  -")
		if !ok {
			continue
		}
		name := rest
		if end := strings.IndexAny(rest, " \t\n"); end >= 0 {
			name = rest[:end]
		}
		if names[name] && len([]rune(name)) > 1 {
			lines[i] = "  --" + rest
		}
	}
	_, _ = io.WriteString(w, strings.Join(lines, ""))
}

// find is the command of table named name (or by an alias), or nil.
func find(table []command, name string) *command {
	for i := range table {
		if table[i].name == name || slices.Contains(table[i].aliases, name) {
			return &table[i]
		}
	}
	return nil
}
