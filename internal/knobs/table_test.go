package knobs

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const root = "../.."

// tableDoc is the document that holds the knob table: maintainers' material.
const tableDoc = "docs/maintainers.md"

// docTable is the Markdown table of tableDoc's "Knobs" section, found by its heading.
func docTable(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, tableDoc))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	in, found := false, 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == Heading:
			in, found = true, found+1
		case in && strings.HasPrefix(l, "## "):
			in = false
		case in && strings.HasPrefix(l, "|"):
			table.WriteString(l + "\n")
		}
	}
	if found != 1 {
		t.Fatalf("%s has %d %q sections, want one", tableDoc, found, Heading)
	}
	return table.String()
}

// The documented table is the one the code has: written by WriteTable (rollcheck knobs table).
func TestDocTableIsTheCodesTable(t *testing.T) {
	var want strings.Builder
	if err := WriteTable(&want); err != nil {
		t.Fatal(err)
	}
	if got := docTable(t); got != want.String() {
		t.Errorf("%s's %q table differs from the code's: replace it with the output of `go run ./cmd/rollcheck knobs table`\ngot:\n%s\nwant:\n%s", tableDoc, Heading, got, want.String())
	}
}

var knobName = regexp.MustCompile(`\bROLLCHECK_[A-Z_]*[A-Z]\b`)

// sources are the files whose knobs count: every Go file but tests (their fakes and hooks are
// no knobs), and the scripts and CI files bash runs, but the scripts' own tests.
func sources(t *testing.T) (goFiles, bashFiles []string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".git" || rel == "_artifacts" || strings.HasPrefix(d.Name(), ".") && rel != "." && rel != ".ci" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, "_test.go"), rel == "scripts/test-scripts.sh":
		case strings.HasSuffix(rel, ".go"):
			goFiles = append(goFiles, p)
		case strings.HasSuffix(rel, ".sh"), rel == "Makefile", rel == ".ci/run", strings.HasPrefix(rel, "scripts/runtime/"):
			bashFiles = append(bashFiles, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(goFiles) < 20 || len(bashFiles) < 5 {
		t.Fatalf("found %d Go and %d bash files: the walk missed the repository", len(goFiles), len(bashFiles))
	}
	return goFiles, bashFiles
}

// Every ROLLCHECK_* name in the code (Go and bash, comments too) is a knob of the table, so
// every knob the code reads is documented; and every knob of the table is read somewhere: a
// bash line that is no comment names it, or Go names it in a string or through its constant
// (outside the table itself).
func TestEveryKnobReadIsInTheTableAndBack(t *testing.T) {
	table := docTable(t)
	inTable := map[string]bool{}
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Split(l, "|"); len(f) > 2 {
			if n := strings.Trim(strings.TrimSpace(f[1]), "`"); n != "knob" && n != "---" {
				inTable[n] = true
			}
		}
	}
	goFiles, bashFiles := sources(t)
	mentioned := map[string][]string{}
	for _, p := range append(slices.Clone(goFiles), bashFiles...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range knobName.FindAllString(string(b), -1) {
			mentioned[n] = append(mentioned[n], p)
		}
	}
	for n, files := range mentioned {
		if !inTable[n] {
			t.Errorf("%s (in %s) is not in the knob table of %s", n, strings.Join(slices.Compact(files), ", "), tableDoc)
		}
	}

	read := map[string]bool{}
	for _, p := range bashFiles {
		b, _ := os.ReadFile(p)
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "#") {
				continue
			}
			for _, k := range All {
				if regexp.MustCompile(`\b` + k.Name + `\b`).MatchString(l) {
					read[k.Name] = true
				}
			}
		}
	}
	byConst := goRead(t, goFiles, read)
	for n := range inTable {
		if !read[n] {
			t.Errorf("%s is in the knob table of %s, but nothing reads it", n, tableDoc)
		}
	}
	if len(byConst) == 0 {
		t.Error("no knob read through its constant: the scan of Go identifiers finds nothing")
	}
}

// goRead marks in read the knobs Go names in a string literal or through their constants
// (knobs.EnvX, or EnvX inside this package outside the All table), and returns those read
// through a constant.
func goRead(t *testing.T, files []string, read map[string]bool) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	consts := map[string]string{} // constant name → knob name
	parsed := map[string]*ast.File{}
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed[p] = f
		if filepath.Base(p) != "knobs.go" || f.Name.Name != "knobs" {
			continue
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	byConst := map[string]bool{}
	for p, f := range parsed {
		inKnobs := f.Name.Name == "knobs" && strings.Contains(filepath.ToSlash(p), "internal/knobs/")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok == token.CONST && inKnobs {
					return false // the names' declarations
				}
				if n.Tok == token.VAR && inKnobs {
					for _, s := range n.Specs {
						if slices.ContainsFunc(s.(*ast.ValueSpec).Names, func(id *ast.Ident) bool { return id.Name == "All" }) {
							return false // the table itself
						}
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					v, _ := strconv.Unquote(n.Value)
					for _, k := range All {
						if v == k.Name {
							read[k.Name] = true
						}
					}
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "knobs" && consts[n.Sel.Name] != "" {
					read[consts[n.Sel.Name]], byConst[consts[n.Sel.Name]] = true, true
				}
			case *ast.Ident:
				if inKnobs && consts[n.Name] != "" {
					read[consts[n.Name]], byConst[consts[n.Name]] = true, true
				}
			}
			return true
		})
	}
	return byConst
}
