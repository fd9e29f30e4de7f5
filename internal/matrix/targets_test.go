//go:build !e2e

// Not in the e2e suite's binary: these tests need no cluster and run with go test ./suites,
// and inside a Ginkgo run their failure would fail the suite with none of their output shown.

package matrix

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

var update = flag.Bool("update", false, "rewrite "+targetsGolden+" with the specs each make target selects now")

// targetsGolden pins the specs each e2e make target selects.
const targetsGolden = "testdata/targets.txt"

// tabled are the matrix entry functions a suite's table may run (suite_test.go's table: one
// DescribeTable whose entries are Specs of the rows it is given).
var tabled = map[string]func() []Entry{
	"RolloutEntries": RolloutEntries, "DeletePodEntries": DeletePodEntries, "ForceDeleteEntries": ForceDeleteEntries,
	"ScaleDownEntries": ScaleDownEntries, "PID1Entries": PID1Entries, "StopSignalEntries": StopSignalEntries,
	"SidecarEntries": SidecarEntries, "KubeletRestartEntries": KubeletRestartEntries, "ProxyEntries": ProxyEntries,
	"DrainEntries": DrainEntries, "ETPEntries": ETPEntries, "TerminatingEntries": TerminatingEntries,
	"HTTP2Entries": HTTP2Entries, "GRPCEntries": GRPCEntries,
}

// A treeSpec is one spec of a suite directory: its full text (its containers' texts and its
// own, as Ginkgo joins them) and the labels Ginkgo filters it by (the suite's, its containers',
// its own). A plain go test function has no labels and plain set: no label filter reaches it.
type treeSpec struct {
	text   string
	labels []string
	plain  bool
}

// treeReader reads a suite's Ginkgo tree from the syntax of its test files.
type treeReader struct {
	t      *testing.T
	fset   *token.FileSet
	mode   knobs.MatrixLoad
	tables map[string][]string // functions that build a DescribeTable from rows → its labels
	specs  []treeSpec
	rows   int // specs read from tables
}

// suiteTree is the tree of the suite directory dir (from the repository's root) as
// `ginkgo --tags=e2e` builds it, read from its test files without building or running them:
// RunSpecs' suite labels; top-level containers (Describe, Context, When) and subjects (It,
// Specify) with literal texts and Label decorators; and a call of a table function of the
// suite's (a function that builds a DescribeTable) on one of the tabled row functions, whose
// specs are Specs of those rows in mode. Anything else Ginkgo would make a spec of stops the
// test: teach it here rather than pin a wrong selection. A directory without RunSpecs is a plain
// go test package: its Test functions are its specs. (A Ginkgo suite's package may hold plain
// unit tests too, as suites does: they run beside the suite and are not listed.)
func suiteTree(t *testing.T, dir string, mode knobs.MatrixLoad) (specs []treeSpec, fromRows int) {
	t.Helper()
	ctx := build.Default
	ctx.BuildTags = []string{"e2e"}
	path := filepath.Join("..", "..", dir)
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &treeReader{t: t, fset: token.NewFileSet(), mode: mode, tables: map[string][]string{}}
	var files []*ast.File
	for _, e := range entries {
		if ok, err := ctx.MatchFile(path, e.Name()); err != nil {
			t.Fatal(err)
		} else if !ok || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(r.fset, filepath.Join(path, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var suiteLabels, plain []string
	ginkgo := false
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if strings.HasPrefix(fd.Name.Name, "Test") && fd.Recv == nil {
				plain = append(plain, fd.Name.Name)
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					switch callName(c) {
					case "RunSpecs":
						ginkgo = true
						suiteLabels = append(suiteLabels, r.labels(c.Args[min(2, len(c.Args)):])...)
					case "DescribeTable":
						r.tables[fd.Name.Name] = r.labels(c.Args[1:])
					}
				}
				return true
			})
		}
	}
	if !ginkgo {
		for _, name := range plain {
			r.specs = append(r.specs, treeSpec{text: name, plain: true})
		}
		return r.specs, 0
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if c, ok := v.(*ast.CallExpr); ok && vs.Names[i].Name == "_" {
						r.node(c, nil, suiteLabels)
					}
				}
			}
		}
	}
	return r.specs, r.rows
}

// callName is the name of the function c calls (Describe, ginkgo.Describe: Describe).
func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// ginkgoNodes are the other calls that make specs, which this reader does not follow.
var ginkgoNodes = []string{"FDescribe", "PDescribe", "XDescribe", "FContext", "PContext", "XContext", "FWhen", "PWhen", "XWhen",
	"FIt", "PIt", "XIt", "FSpecify", "PSpecify", "XSpecify", "DescribeTable", "FDescribeTable", "PDescribeTable", "XDescribeTable",
	"DescribeTableSubtree", "Entry", "FEntry", "PEntry", "XEntry"}

// node reads the call c of a tree node under containers' texts and labels.
func (r *treeReader) node(c *ast.CallExpr, texts, labels []string) {
	name := callName(c)
	switch {
	case name == "Describe" || name == "Context" || name == "When":
		var body *ast.FuncLit
		for _, a := range c.Args {
			if fl, ok := a.(*ast.FuncLit); ok {
				body = fl
			}
		}
		if body == nil {
			r.t.Fatalf("%s: %s without a function literal: teach suiteTree", r.fset.Position(c.Pos()), name)
		}
		texts, labels = append(slices.Clone(texts), r.text(c)), slices.Concat(labels, r.labels(c.Args[1:]))
		ast.Inspect(body.Body, func(n ast.Node) bool {
			if inner, ok := n.(*ast.CallExpr); ok && r.isNode(inner) {
				r.node(inner, texts, labels)
				return false
			}
			return true
		})
	case name == "It" || name == "Specify":
		r.specs = append(r.specs, treeSpec{text: strings.Join(append(slices.Clone(texts), r.text(c)), " "), labels: slices.Concat(labels, r.labels(c.Args[1:]))})
	case r.tables[name] != nil:
		var rows func() []Entry
		for _, a := range c.Args {
			if ac, ok := a.(*ast.CallExpr); ok && tabled[callName(ac)] != nil {
				rows = tabled[callName(ac)]
			}
		}
		if rows == nil {
			r.t.Fatalf("%s: %s on rows this test does not know: add their function to tabled", r.fset.Position(c.Pos()), name)
		}
		title := r.text(c)
		for _, sp := range Specs(rows(), r.mode, 1) {
			r.specs = append(r.specs, treeSpec{text: strings.Join(append(slices.Clone(texts), title, sp.Name), " "), labels: slices.Concat(labels, r.tables[name], sp.Labels)})
			r.rows++
		}
	case slices.Contains(ginkgoNodes, name):
		r.t.Fatalf("%s: %s is not read by suiteTree: teach it, so that the pinned selection stays Ginkgo's", r.fset.Position(c.Pos()), name)
	}
}

func (r *treeReader) isNode(c *ast.CallExpr) bool {
	name := callName(c)
	return slices.Contains([]string{"Describe", "Context", "When", "It", "Specify"}, name) || r.tables[name] != nil || slices.Contains(ginkgoNodes, name)
}

// text is the literal text of a node, its first argument.
func (r *treeReader) text(c *ast.CallExpr) string {
	if len(c.Args) > 0 {
		if lit, ok := c.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			return s
		}
	}
	r.t.Fatalf("%s: %s's text is no string literal: teach suiteTree", r.fset.Position(c.Pos()), callName(c))
	return ""
}

// labels are the labels of the Label decorators among args (literal strings only).
func (r *treeReader) labels(args []ast.Expr) []string {
	var out []string
	for _, a := range args {
		c, ok := a.(*ast.CallExpr)
		if !ok || callName(c) != "Label" && callName(c) != "Labels" {
			continue
		}
		for _, la := range c.Args {
			lit, ok := la.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				r.t.Fatalf("%s: a label that is no string literal: teach suiteTree", r.fset.Position(la.Pos()))
			}
			s, _ := strconv.Unquote(lit.Value)
			out = append(out, s)
		}
	}
	return out
}

// knobOf is the value of knob name in env (a target's), else its default.
func knobOf(env map[string]string, name string) string {
	if v := env[name]; v != "" {
		return v
	}
	k, _ := knobs.Lookup(name)
	return k.Default
}

// Every e2e make target (knobs.Targets) selects at least one Ginkgo spec, and the specs each
// selects, with the knobs' defaults, are pinned in testdata/targets.txt, by Ginkgo's own label
// filter over each suite's tree (suiteTree): a change of a target's filter or suites, of a row's
// labels or of the suites' trees fails here until the pin is rewritten (go test ./suites -run
// TestTargetSelections -update) and the difference reviewed. The pin ends with the specs no
// target selects.
func TestTargetSelections(t *testing.T) {
	mode, err := knobs.LoadMode(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	trees := map[string][]treeSpec{}
	var b strings.Builder
	fmt.Fprintf(&b, "# The specs each e2e make target selects (internal/knobs.Targets), with every other knob at its\n"+
		"# default (%s=%s), by suite directory; pinned by TestTargetSelections, rewritten by\n"+
		"# go test ./internal/matrix -run TestTargetSelections -update\n", knobs.EnvLoadFrom, mode)
	selected := map[string]bool{}
	for _, tg := range knobs.Targets {
		kv, err := knobs.TargetEnv(tg.Name, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, l := range kv {
			k, v, _ := strings.Cut(l, "=")
			env[k] = v
		}
		filter := knobOf(env, knobs.EnvLabels)
		match, err := types.ParseLabelFilter(filter)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		var lines []string
		ginkgoSpecs := 0
		for _, dir := range strings.Fields(knobOf(env, knobs.EnvSuites)) {
			if trees[dir] == nil {
				specs, fromRows := suiteTree(t, dir, mode)
				if want := len(Specs(AllEntries(), mode, 1)); fromRows > 0 && fromRows != want {
					t.Errorf("%s: its tables run %d specs of rows, AllRows makes %d: a row function tabled twice or never", dir, fromRows, want)
				}
				trees[dir] = specs
			}
			for _, sp := range trees[dir] {
				switch {
				case sp.plain:
					lines = append(lines, dir+": "+sp.text+" (plain go test: no label filter reaches it)")
				case match(sp.labels):
					lines = append(lines, dir+": "+sp.text)
					selected[dir+": "+sp.text] = true
					ginkgoSpecs++
				}
			}
		}
		if ginkgoSpecs == 0 {
			t.Errorf("make %s selects no spec: %s=%q", tg.Name, knobs.EnvLabels, filter)
		}
		fmt.Fprintf(&b, "\n## make %s selects %d (%s=%q %s=%q)\n", tg.Name, ginkgoSpecs, knobs.EnvLabels, filter, knobs.EnvSuites, knobOf(env, knobs.EnvSuites))
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n## no target selects\n")
	for _, dir := range slices.Sorted(maps.Keys(trees)) {
		for _, sp := range trees[dir] {
			if l := dir + ": " + sp.text; !sp.plain && !selected[l] {
				b.WriteString(l + "\n")
			}
		}
	}
	got := b.String()
	if *update {
		if err := os.WriteFile(targetsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(targetsGolden)
	if err != nil {
		t.Fatalf("%v: write it with go test ./internal/matrix -run TestTargetSelections -update", err)
	}
	if got != string(want) {
		t.Errorf("the targets' selections differ from %s (review, then go test ./internal/matrix -run TestTargetSelections -update):\n%s", targetsGolden, sectionDiff(string(want), got))
	}
}

// sectionDiff is what changed from want to got, section by section ("## make NAME", "## no
// target selects"): the lines each lost (-) and gained (+).
func sectionDiff(want, got string) string {
	sections := func(s string) (order []string, lines map[string][]string) {
		lines = map[string][]string{}
		key := ""
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "## ") {
				key, _, _ = strings.Cut(l, " selects ")
				order = append(order, key)
			}
			lines[key] = append(lines[key], l)
		}
		return order, lines
	}
	wo, w := sections(want)
	goOrder, g := sections(got)
	var out []string
	seen := map[string]bool{}
	for _, key := range append(goOrder, wo...) {
		if seen[key] {
			continue
		}
		seen[key] = true
		var changed []string
		for _, l := range w[key] {
			if !slices.Contains(g[key], l) {
				changed = append(changed, "- "+l)
			}
		}
		for _, l := range g[key] {
			if !slices.Contains(w[key], l) {
				changed = append(changed, "+ "+l)
			}
		}
		if len(changed) > 0 {
			out = append(append(out, key+":"), changed...)
		}
	}
	return strings.Join(out, "\n")
}
