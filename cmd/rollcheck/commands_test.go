package main

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/engine"
)

// leaves are every runnable command of the table as its path ("check", "cluster load-image").
func leaves(t *testing.T) map[string]*command {
	t.Helper()
	out := map[string]*command{}
	var walk func(table []command, prefix string)
	walk = func(table []command, prefix string) {
		for i := range table {
			c := &table[i]
			path := strings.TrimSpace(prefix + " " + c.name)
			if c.sub != nil {
				walk(c.sub, path)
				continue
			}
			if c.program != nil {
				continue // agent's programs parse their own flags (TestAgentDispatch)
			}
			out[path] = c
		}
	}
	walk(commands, "")
	if len(out) < 13 { // check tune compare e2e knobs report version, cluster's six
		t.Fatalf("%d commands in the table: %v", len(out), out)
	}
	return out
}

// Every command's help, by rollcheck help CMD and by rollcheck CMD -h, lists every flag the
// command parses, on stdout, with exit 0.
func TestHelpListsEveryFlag(t *testing.T) {
	for path, c := range leaves(t) {
		fs := flag.NewFlagSet(path, flag.ContinueOnError)
		c.setup(fs)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		words := strings.Fields(path)
		for _, args := range [][]string{append([]string{"help"}, words...), append(slices.Clone(words), "-h")} {
			code, stdout, stderr := rollcheck(args...)
			if code != exitPass || stderr != "" || !strings.HasPrefix(stdout, "usage: rollcheck "+path) {
				t.Errorf("rollcheck %q: exit %d, stderr %q, stdout:\n%s", args, code, stderr, stdout)
				continue
			}
			for _, n := range names {
				if d := dashed(n); !strings.Contains(stdout, "\n  "+d+" ") && !strings.Contains(stdout, "\n  "+d+"\n") && !strings.Contains(stdout, "\n  "+d+"\t") {
					t.Errorf("rollcheck %q does not list %s:\n%s", args, d, stdout)
				}
			}
			if len(names) == 0 && strings.Contains(stdout, "flags:") {
				t.Errorf("rollcheck %q lists flags for a command that has none:\n%s", args, stdout)
			}
		}
	}
}

// dashed is a flag's name as help writes it: -f, --artifacts.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Help names each flag as the docs do, --name (-n for a name of one letter), and keeps what
// flag.PrintDefaults prints about it: the argument's name, every line of the usage, the default.
func TestPrintFlagsTwoDashes(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("v", false, "a bool of one letter")
	fs.String("f", "", "the `FILE`")
	fs.String("kubeconfig", "", "a kubeconfig `FILE`;\nsee -f and --context")
	fs.Int("parallel", 3, "`N` at once")
	fs.Bool("dry-run", false, "stop early")
	var b strings.Builder
	printFlags(&b, fs)
	want := "  --dry-run\n    \tstop early\n" +
		"  -f FILE\n    \tthe FILE\n" +
		"  --kubeconfig FILE\n    \ta kubeconfig FILE;\n    \tsee -f and --context\n" +
		"  --parallel N\n    \tN at once (default 3)\n" +
		"  -v\ta bool of one letter\n"
	if b.String() != want {
		t.Errorf("printFlags:\n%s\nwant:\n%s", b.String(), want)
	}
}

// No command's help names a flag of more than one letter with one dash.
func TestHelpNoSingleDashLongFlags(t *testing.T) {
	for path := range leaves(t) {
		_, stdout, _ := rollcheck(append(strings.Fields(path), "-h")...)
		for _, l := range strings.Split(stdout, "\n") {
			rest, ok := strings.CutPrefix(l, "  -")
			if name := strings.Fields(rest); ok && len(name) > 0 && !strings.HasPrefix(rest, "-") && len(name[0]) > 1 {
				t.Errorf("rollcheck %s -h: %q names a flag with one dash", path, l)
			}
		}
	}
}

// The shared flags are the same in check and tune, and check has those of its flags-only form.
func TestCheckAndTuneShareFlags(t *testing.T) {
	for _, cmd := range []string{"check", "tune"} {
		_, stdout, _ := rollcheck(cmd, "-h")
		for _, f := range []string{"-f FILE", "--artifacts DIR", "--dry-run", "--keep-cluster", "--parallel N"} {
			if !strings.Contains(stdout, "\n  "+f+"\n") {
				t.Errorf("%s -h lacks %q:\n%s", cmd, f, stdout)
			}
		}
	}
}

// rollcheck help lists every command of the table; rollcheck help cluster, cluster's.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		table []command
	}{{[]string{"help"}, commands}, {nil, commands}, {[]string{"--help"}, commands}, {[]string{"help", "cluster"}, clusterCommands}, {[]string{"cluster", "help"}, clusterCommands}} {
		code, stdout, stderr := rollcheck(tc.args...)
		if tc.args == nil { // no command: the list on stderr, and exit 2
			code, stdout = code-exitBadInput, stderr
		}
		if code != exitPass {
			t.Errorf("rollcheck %q: exit %d", tc.args, code)
		}
		for _, c := range tc.table {
			listed := strings.Contains(stdout, "\n  "+c.name+" ") && strings.Contains(stdout, c.summary)
			if listed == c.hidden {
				t.Errorf("rollcheck %q lists %s: %v, want %v:\n%s", tc.args, c.name, listed, !c.hidden, stdout)
			}
		}
	}
}

// An unknown command, subcommand or flag is one line on stderr and exit 2; nothing on stdout.
func TestUnknownCommandExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"chekc"}, `rollcheck: unknown command "chekc" (rollcheck help lists the commands)`},
		{[]string{"cluster", "upp"}, `rollcheck cluster: unknown command "upp" (rollcheck cluster help lists the commands)`},
		{[]string{"help", "chekc"}, `rollcheck help: unknown command "chekc"`},
		{[]string{"help", "cluster", "upp"}, `rollcheck cluster help: unknown command "upp"`},
		{[]string{"compare", "--bogus"}, "rollcheck compare: flag provided but not defined: -bogus (rollcheck help compare)"},
		{[]string{"cluster", "load-image", "--bogus"}, "rollcheck cluster load-image: flag provided but not defined: -bogus (rollcheck cluster help load-image)"},
		{[]string{"cluster", "proxy-images", "envoy"}, `rollcheck cluster proxy-images: unknown proxy "envoy": want one of [haproxy nginx caddy traefik] (rollcheck cluster help proxy-images)`},
		{[]string{"knobs", "extra"}, `rollcheck knobs: unexpected arguments ["extra"]`},
		{[]string{"knobs", "target", "e2e-nope"}, `rollcheck knobs: e2e-nope: no such target (make's e2e targets: e2e, `},
		{[]string{"report"}, "rollcheck report: want one directory, got 0 arguments"},
		{[]string{"cluster", "logs"}, "rollcheck cluster logs: want one directory, got 0 arguments"},
		{[]string{"e2e", "extra"}, `rollcheck e2e: unexpected arguments ["extra"]`},
	} {
		code, stdout, stderr := rollcheck(tc.args...)
		if code != exitBadInput || stdout != "" || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rollcheck %q: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// rollcheck knobs target NAME prints the knobs make's target sets, one NAME=value a line, for
// scripts/e2e.sh to export.
func TestKnobsTarget(t *testing.T) {
	t.Setenv("ARTIFACTS", "/tmp/art")
	code, stdout, stderr := rollcheck("knobs", "target", "e2e-grpc")
	if want := "ROLLCHECK_LABELS=http2 || grpc\nROLLCHECK_SUITES=suites\nARTIFACTS=/tmp/art/grpc\n"; code != exitPass || stdout != want || stderr != "" {
		t.Errorf("rollcheck knobs target e2e-grpc: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
}

func TestVersion(t *testing.T) {
	t.Setenv("ROLLCHECK_VERSION", "")
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, stdout, _ := rollcheck(args...)
		if want := "rollcheck " + engine.Version() + "\n"; code != exitPass || stdout != want {
			t.Errorf("rollcheck %q: exit %d, stdout %q; want %q", args, code, stdout, want)
		}
	}
}

// rollcheck help lists every command of the table that is not hidden, and every subcommand of a
// command of commands (the list is made from the table: windows measure and cluster node-image
// were missing when it was written by hand); the maintainers' commands stand apart.
func TestHelpListsEverySubcommand(t *testing.T) {
	code, out, _ := rollcheck("help")
	if code != exitPass {
		t.Fatalf("exit %d", code)
	}
	users, maint, ok := strings.Cut(out, "for rollcheck's own conformance suites and its maintainers:")
	if !ok {
		t.Fatalf("no maintainers' section:\n%s", out)
	}
	for _, c := range commands {
		if c.hidden {
			if strings.Contains(out, "\n  "+c.name+" ") {
				t.Errorf("hidden command %s listed", c.name)
			}
			continue
		}
		in := users
		if c.maintainers {
			in = maint
		}
		line := ""
		for _, l := range strings.Split(in, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == c.name {
				line = l
			}
		}
		if line == "" {
			t.Errorf("%s is not listed where it belongs (maintainers: %t)", c.name, c.maintainers)
			continue
		}
		for _, s := range c.sub {
			if !s.hidden && !strings.Contains(line, " "+s.name) {
				t.Errorf("%s's line does not name its subcommand %s: %q", c.name, s.name, line)
			}
		}
	}
}
