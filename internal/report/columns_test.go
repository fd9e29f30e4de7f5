package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every column of every table says what it means.
func TestEveryColumnHasAMeaning(t *testing.T) {
	for _, tb := range Tables {
		if tb.Name == "" || tb.Where == "" {
			t.Errorf("table %q: give it a Name and say Where it appears", tb.Headers())
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns {
			switch {
			case c.Header == "":
				t.Errorf("%s: a column without a header", tb.Name)
			case seen[c.Header]:
				t.Errorf("%s: column %q twice", tb.Name, c.Header)
			case strings.TrimSpace(c.Meaning) == "":
				t.Errorf("%s: column %q has no meaning: say in one line what it holds (internal/report/columns.go)", tb.Name, c.Header)
			case strings.Contains(c.Meaning, "\n"):
				t.Errorf("%s: column %q: its meaning is one line", tb.Name, c.Header)
			}
			seen[c.Header] = true
		}
	}
}

func TestMarkdownHeader(t *testing.T) {
	tb := Table{Columns: []Column{{Header: "a"}, {Header: "n %", Numeric: true}}}
	if got, want := tb.markdownHeader(), "| a | n % |\n|---|--:|\n"; got != want {
		t.Errorf("markdownHeader = %q, want %q", got, want)
	}
}

var (
	separatorLine = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+$`)
	// thText is a table header cell of a template with text in it, not an action.
	thText = regexp.MustCompile(`<th[^>]*>\s*[^<{\s]`)
)

// A table header is written only from a Table of Tables, whose columns say what they mean: a
// Markdown separator line in a string literal (a header written by hand) or a header cell with
// text in a template is one without a meaning. A table whose header cells are all empty (the
// figures document's facts) has no column to define.
func TestNoTableHeaderOutsideTables(t *testing.T) {
	files := sourceFiles(t)
	for name, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				if !separatorLine.MatchString(strings.TrimSpace(l)) {
					continue
				}
				if i > 0 && strings.Trim(lines[i-1], "| ") == "" && strings.HasPrefix(lines[i-1], "|") {
					continue // a header of empty cells
				}
				t.Errorf("%s:%d: a Markdown table header written by hand (%q): declare the table in columns.go, with what each column means, and write its markdownHeader",
					name, f.fset.Position(lit.Pos()).Line, s)
			}
			return true
		})
	}
	tmpls, err := filepath.Glob("*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tmpls {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if thText.MatchString(l) {
				t.Errorf("%s:%d: a table header cell written in the template (%q): range over a Table's Headers, declared in columns.go", name, i+1, strings.TrimSpace(l))
			}
		}
	}
}

// Every table declared in columns.go is in Tables and written by some writer.
func TestEveryTableIsListedAndWritten(t *testing.T) {
	files := sourceFiles(t)
	declared := map[string]bool{}
	for _, d := range files["columns.go"].ast.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if cl, ok := v.(*ast.CompositeLit); ok {
					if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "Table" {
						declared[vs.Names[i].Name] = true
					}
				}
			}
		}
	}
	if len(declared) != len(Tables) {
		t.Errorf("columns.go declares %d tables, Tables lists %d: list every one", len(declared), len(Tables))
	}
	used := map[string]bool{}
	for name, f := range files {
		if name == "columns.go" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && declared[id.Name] {
				used[id.Name] = true
			}
			return true
		})
	}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if !used[name] {
			t.Errorf("table %s is declared in columns.go but no report writes it", name)
		}
	}
}

type sourceFile struct {
	fset *token.FileSet
	ast  *ast.File
}

// sourceFiles parses the package's non-test Go files.
func sourceFiles(t *testing.T) map[string]sourceFile {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sourceFile{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = sourceFile{fset, f}
	}
	return out
}
