package proxies

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every entry of the table is complete: adding a proxy is adding an entry (and its template),
// and an entry missing a part fails here, not on a cluster.
func TestTableComplete(t *testing.T) {
	seenProxy, seenConfig := map[Proxy]bool{}, map[Config]bool{}
	for _, e := range table {
		p := e.proxy
		if p == "" || seenProxy[p] {
			t.Errorf("entry %q: empty or listed twice", p)
		}
		seenProxy[p] = true
		if got, err := ParseProxy(string(p)); err != nil || got != p {
			t.Errorf("%s: ParseProxy = %q, %v", p, got, err)
		}
		if e.title == "" || e.version == "" || p.Version() != e.version || p.Title() != e.title {
			t.Errorf("%s: title %q, version %q", p, e.title, e.version)
		}
		if _, err := fs.Stat(configFS, "configs/"+e.configFile+".tmpl"); e.configFile == "" || err != nil {
			t.Errorf("%s: config file %q has no template configs/%s.tmpl: %v", p, e.configFile, e.configFile, err)
		}
		if !strings.HasPrefix(e.healthPath, "/") || HealthPathOf(p) != e.healthPath {
			t.Errorf("%s: health path %q", p, e.healthPath)
		}
		r := e.image
		if r.repo != "rollcheck/proxy-"+string(p) || !strings.HasPrefix(r.binary, "/") || len(r.args) == 0 {
			t.Errorf("%s: image recipe %+v: want repository rollcheck/proxy-%s, an absolute binary, arguments", p, r, p)
		}
		if !slices.ContainsFunc(r.args, func(a string) bool { return strings.HasSuffix(a, "/tmp/"+e.configFile) }) {
			t.Errorf("%s: the arguments %q do not name the rendered configuration /tmp/%s", p, r.args, e.configFile)
		}
		if (r.deb == "") == (r.goBuild == nil) {
			t.Errorf("%s: the binary comes from a Debian package or a Go build, exactly one: deb %q, goBuild %v", p, r.deb, r.goBuild)
		}
		if b := r.goBuild; b != nil && (b.module == "" || !strings.HasPrefix(b.pkg, b.module) || b.limit <= 0) {
			t.Errorf("%s: go build %+v: want a module, a main package in it and a time limit", p, *b)
		}
		if Unbuilt().For(p) != r.repo+":unbuilt" || !slices.Contains(Sources(), r.repo+": "+e.title+" "+e.version+" from "+r.source()) {
			t.Errorf("%s: not in Unbuilt or Sources", p)
		}
		if len(e.configs) == 0 {
			t.Errorf("%s: no configurations", p)
		}
		for _, ce := range e.configs {
			c := ce.config
			if !strings.HasPrefix(string(c), string(p)+"-") || seenConfig[c] {
				t.Errorf("%s: config %q: want a name %s-..., listed once", p, c, p)
			}
			seenConfig[c] = true
			if got, err := ParseConfig(string(c)); err != nil || got != c || c.Proxy() != p {
				t.Errorf("%s: ParseConfig = %q, %v; Proxy %q", c, got, err, c.Proxy())
			}
			every, words := c.Refresh()
			if ce.resolves != (every != 0) || ce.resolves != (words != "") || c.Resolves() != ce.resolves {
				t.Errorf("%s: resolves %v with refresh %s %q: a Config that resolves says how often, only it", c, ce.resolves, every, words)
			}
			if !ce.resolves && !ce.clusterIP {
				t.Errorf("%s: finds the pods neither by DNS nor through the ClusterIP Service", c)
			}
			if conf, err := Render(c, 8080); err != nil || !strings.Contains(conf, "rollcheck proxy config "+string(c)) {
				t.Errorf("%s: Render: %v\n%s", c, err, conf)
			}
		}
	}
	if len(All) != len(table) || len(Configs) != len(seenConfig) {
		t.Errorf("All %v, Configs %v: not the table's", All, Configs)
	}
}

// The table is the one place that names a proxy: no Go file of the module (the table's own
// package's tests aside) refers to a Proxy constant or spells a proxy's name, and
// scripts/proxy-images.sh names no proxy, version or package: it runs rollcheck cluster
// proxy-images, which reads the table (as the suites read All).
func TestNoSwitchOnAProxyOutsideTheTable(t *testing.T) {
	fset := token.NewFileSet()
	tf, err := parser.ParseFile(fset, "table.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{} // the Proxy constants' identifiers
	for _, d := range tf.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				if v := s.(*ast.ValueSpec); v.Type != nil && types(v.Type) == "Proxy" {
					for _, n := range v.Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}
	if len(consts) != len(table) {
		t.Fatalf("table.go declares %d Proxy constants, the table has %d entries", len(consts), len(table))
	}
	names := map[string]bool{}
	for _, e := range table {
		names[strconv.Quote(string(e.proxy))] = true
	}
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		own := filepath.Dir(rel) == filepath.Join("internal", "proxies")
		if rel == filepath.Join("internal", "proxies", "table.go") || own && strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "proxies" && consts[n.Sel.Name] {
					t.Errorf("%s: proxies.%s: a proxy named outside the table (add what you need to its entry)", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.Ident:
				if own && consts[n.Name] {
					t.Errorf("%s: %s: a proxy named outside the table (add what you need to its entry)", fset.Position(n.Pos()), n.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && names[n.Value] {
					t.Errorf("%s: %s: a proxy named outside the table", fset.Position(n.Pos()), n.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	script, err := os.ReadFile(filepath.Join(root, "scripts", "proxy-images.sh"))
	if err != nil {
		t.Fatal(err)
	}
	lower := strings.ToLower(string(script))
	for _, e := range table {
		for _, v := range []string{string(e.proxy), e.version, e.image.deb, e.image.repo} {
			if v != "" && strings.Contains(lower, strings.ToLower(v)) {
				t.Errorf("scripts/proxy-images.sh names %q of the table's %s: ask rollcheck cluster proxy-images instead", v, e.proxy)
			}
		}
	}
	if !strings.Contains(lower, `"$rc" cluster proxy-images`) {
		t.Errorf("scripts/proxy-images.sh does not run rollcheck cluster proxy-images, which reads the table")
	}
}

// types is the name of a type expression (an identifier), empty for others.
func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// An image's tag follows its recipe in the table (a Go build's directives included), and not
// the rest of the table.
func TestImageHashFollowsTheRecipe(t *testing.T) {
	dir := t.TempDir()
	hash := func(r recipe) string {
		h, err := inputsHash(Traefik, r, nil, "go1.25", "FROM scratch", dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	e, _ := lookup(Traefik)
	b := *e.image.goBuild
	same := e.image
	same.goBuild = &b // another pointer, the same value
	if hash(e.image) != hash(same) {
		t.Errorf("the hash depends on the goBuild's address")
	}
	b2 := b
	b2.goMod += "\nexclude example.com/x v1.0.0\n"
	other := e.image
	other.goBuild = &b2
	if hash(e.image) == hash(other) {
		t.Errorf("a change to the go build's directives does not change the image's tag")
	}
}
