package refdoc

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// comments are the doc comments of a module's struct types and their fields, read from the
// source (reflection does not carry them), keyed by "pkgpath.Type" and "pkgpath.Type.Field"; a
// field of a struct type written inline (spec.Check's Metadata) is "pkgpath.Type.Field.Sub".
type comments struct {
	root, module string
	docs         map[string]string
	parsed       map[string]bool // package paths read
}

// newComments reads the module's path from root/go.mod; packages are read when first asked.
func newComments(root string) (*comments, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return &comments{root: root, module: strings.TrimSpace(m), docs: map[string]string{}, parsed: map[string]bool{}}, nil
		}
	}
	return nil, fmt.Errorf("%s/go.mod: no module line", root)
}

// typeKey is the key of a named type's comment; "" for a type without a name.
func typeKey(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		return ""
	}
	return t.PkgPath() + "." + t.Name()
}

// field is the doc comment of the field name of the struct whose key is key (typeKey, or a
// field's key for a struct written inline), reading the type's package when it is the
// module's; "" when it has none or the package is not the module's.
func (c *comments) field(pkg, key, name string) (string, error) {
	if err := c.read(pkg); err != nil {
		return "", err
	}
	return c.docs[key+"."+name], nil
}

// typeDoc is the doc comment of a named type of the module.
func (c *comments) typeDoc(t reflect.Type) (string, error) {
	if err := c.read(t.PkgPath()); err != nil {
		return "", err
	}
	return c.docs[typeKey(t)], nil
}

// read parses the package's non-test files once, when it is one of the module's.
func (c *comments) read(pkg string) error {
	if c.parsed[pkg] {
		return nil
	}
	c.parsed[pkg] = true
	rel, ok := strings.CutPrefix(pkg, c.module)
	if !ok || (rel != "" && rel[0] != '/') {
		return nil // not the module's: no comments
	}
	dir := filepath.Join(c.root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				key := pkg + "." + ts.Name.Name
				c.docs[key] = text(doc)
				if st, ok := ts.Type.(*ast.StructType); ok {
					c.structFields(key, st)
				}
			}
		}
	}
	return nil
}

// structFields records the doc comment of each field of st under key, and of the fields of a
// struct written inline under the field's key.
func (c *comments) structFields(key string, st *ast.StructType) {
	for _, f := range st.Fields.List {
		names := f.Names
		if len(names) == 0 { // embedded: named by its type
			switch t := f.Type.(type) {
			case *ast.Ident:
				names = []*ast.Ident{t}
			case *ast.StarExpr:
				if id, ok := t.X.(*ast.Ident); ok {
					names = []*ast.Ident{id}
				}
			case *ast.SelectorExpr:
				names = []*ast.Ident{t.Sel}
			}
		}
		for _, n := range names {
			fk := key + "." + n.Name
			c.docs[fk] = text(f.Doc)
			if inner, ok := f.Type.(*ast.StructType); ok {
				c.structFields(fk, inner)
			}
		}
	}
}

// text is a comment's text as one line.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}
