package main

import (
	"bufio"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docCommand is a rollcheck command line of a user document's code block.
type docCommand struct {
	where string // file:line
	args  []string
}

// docCommands reads the rollcheck commands of the code blocks of files: lines that start with
// "rollcheck " (continuations joined), not its output ("rollcheck check: ..."), with their
// comment cut and their synopsis marks taken out: [optional] parts kept, "..." dropped, an
// alternative "a|b" as its first, a placeholder (N, NAME) as 1.
func docCommands(t *testing.T, files []string) []docCommand {
	t.Helper()
	alt := regexp.MustCompile(`^([^|]+)\|.*$`)
	placeholder := regexp.MustCompile(`^[A-Z][A-Z_]*$`)
	var out []docCommand
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		inBlock, n, pending, at := false, 0, "", 0
		for sc.Scan() {
			n++
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if !inBlock {
				continue
			}
			if pending != "" {
				line = pending + " " + strings.TrimSpace(line)
				pending = ""
			} else {
				at = n
			}
			if !strings.HasPrefix(line, "rollcheck ") {
				continue
			}
			if strings.HasSuffix(line, `\`) {
				pending = strings.TrimSuffix(line, `\`)
				continue
			}
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			fields := strings.Fields(strings.NewReplacer("[", " ", "]", " ", "...", " ").Replace(line))
			if len(fields) < 2 || strings.HasSuffix(fields[1], ":") {
				continue // the output of a command, not one
			}
			var args []string
			for _, a := range fields[1:] {
				if a == "|" {
					continue
				}
				if placeholder.MatchString(a) {
					a = "1" // N, NAME, RUN: a value any flag takes
				}
				args = append(args, alt.ReplaceAllString(a, "$1"))
			}
			out = append(out, docCommand{where: filepath.Base(f) + ":" + strconv.Itoa(at), args: args})
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestDocCommandsParse: every rollcheck command the user documents show names a command of the
// table and only flags it has, each given a value where it takes one, as rollcheck itself
// parses them: a flag renamed or dropped fails here, with the document's line.
func TestDocCommandsParse(t *testing.T) {
	files := []string{"../../README.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	cmds := docCommands(t, files)
	if len(cmds) < 30 {
		t.Fatalf("found %d documented commands, want at least 30: the reader lost them", len(cmds))
	}
	t.Logf("%d documented commands", len(cmds))
	for _, dc := range cmds {
		table, args := commands, dc.args
		var c *command
		for len(args) > 0 {
			if args[0] == "help" {
				break
			}
			c = find(table, args[0])
			if c == nil {
				t.Errorf("%s: rollcheck %s: no command %q", dc.where, strings.Join(dc.args, " "), args[0])
				break
			}
			args = args[1:]
			if c.sub == nil {
				break
			}
			table, c = c.sub, nil
		}
		if c == nil || c.setup == nil {
			continue
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.setup(fs)
		if _, err := parse(fs, args); err != nil {
			t.Errorf("%s: rollcheck %s: %v", dc.where, strings.Join(dc.args, " "), err)
		}
	}
}

// The reader itself: a comment cut, synopsis marks taken out, a continuation joined, output
// lines skipped.
func TestDocCommandsReader(t *testing.T) {
	f := filepath.Join(t.TempDir(), "doc.md")
	doc := "text\n```sh\n" +
		"rollcheck audit -f m/ [-o table|json] [--rate 100]   # a comment\n" +
		"rollcheck check: --context staging: refused\n" +
		"rollcheck windows measure --node NAME... \\\n  --grpc\n" +
		"```\nrollcheck outside a block\n"
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got := docCommands(t, []string{f})
	want := []string{"doc.md:3 audit -f m/ -o table --rate 100", "doc.md:5 windows measure --node 1 --grpc"}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %q", got, want)
	}
	for i, g := range got {
		if s := g.where + " " + strings.Join(g.args, " "); s != want[i] {
			t.Errorf("got %q, want %q", s, want[i])
		}
	}
}
