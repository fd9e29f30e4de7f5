package refdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/report"
)

// SchemaID is the $id of conformance.json's schema.
const SchemaID = "https://github.com/rollcheck/rollcheck/blob/main/" + SchemaFile

// Schema is the JSON Schema (draft 2020-12) of conformance.json, made by reflection over
// report.Run as encoding/json writes it: a named struct type is a definition of its own
// ($defs, named "package.Type"), a field is required unless its tag says omitempty or
// omitzero, a nil slice, map or pointer without omitempty may be null, and the doc comments
// of the module under root are the descriptions. Unknown properties are allowed: a field
// added leaves report.SchemaVersion as it is.
func Schema(root string) ([]byte, error) {
	return schemaOf(root, reflect.TypeFor[report.Run](), SchemaID, "rollcheck conformance.json",
		fmt.Sprintf("A rollcheck run: every row and what it found, as rollcheck writes it to conformance.json "+
			"(and rollcheck check -o json prints it), schemaVersion %d. Generated from the Go type report.Run by "+
			"`make docs`: do not edit.", report.SchemaVersion))
}

// AuditSchema is the JSON Schema of rollcheck audit -o json (audit.Report), made as Schema is.
func AuditSchema(root string) ([]byte, error) {
	return schemaOf(root, reflect.TypeFor[audit.Report](), baseID+AuditSchemaFile, "rollcheck audit -o json",
		fmt.Sprintf("Every workload scored against a cluster's measured windows, as rollcheck audit -o json prints it, "+
			"schemaVersion %d. Generated from the Go type audit.Report by `make docs`: do not edit.", audit.SchemaVersion))
}

// WindowsSchema is the JSON Schema of a windows file (audit.WindowsFile), made as Schema is;
// rollcheck reads a windows file strictly (an unknown field is an error), whatever the schema allows.
func WindowsSchema(root string) ([]byte, error) {
	return schemaOf(root, reflect.TypeFor[audit.WindowsFile](), baseID+WindowsSchemaFile, "rollcheck windows file",
		fmt.Sprintf("A cluster's measured windows, as rollcheck windows extract writes them and rollcheck audit reads them, "+
			"schemaVersion %d. Generated from the Go type audit.WindowsFile by `make docs`: do not edit.", audit.WindowsSchemaVersion))
}

const baseID = "https://github.com/rollcheck/rollcheck/blob/main/"

// schemaOf is the JSON Schema of the Go type top as encoding/json writes it.
func schemaOf(root string, top reflect.Type, id, title, description string) ([]byte, error) {
	c, err := newComments(root)
	if err != nil {
		return nil, err
	}
	g := &schemaGen{c: c, defs: map[string]any{}}
	obj := g.object(top, typeKey(top))
	if g.err != nil {
		return nil, g.err
	}
	doc := clone(obj)
	doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	doc["$id"] = id
	doc["title"] = title
	doc["description"] = description
	doc["$defs"] = g.defs
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil { // maps are written sorted by key
		return nil, err
	}
	return b.Bytes(), nil
}

type schemaGen struct {
	c    *comments
	defs map[string]any
	err  error
}

// defName is a named type's name in $defs: "check.Row".
func defName(t reflect.Type) string {
	return t.String()
}

// of is the schema of a value of Go type t.
func (g *schemaGen) of(t reflect.Type) map[string]any {
	switch t {
	case reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case reflect.TypeFor[time.Duration]():
		return map[string]any{"type": "integer", "description": "a duration in nanoseconds"}
	case reflect.TypeFor[intstr.IntOrString]():
		return map[string]any{"type": []string{"integer", "string"}}
	case reflect.TypeFor[json.RawMessage]():
		return map[string]any{}
	case reflect.TypeFor[audit.Duration]():
		return map[string]any{"type": "string", "description": "a Go duration: \"1.5s\", \"250ms\""}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.of(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String && !t.Key().Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) {
			switch t.Key().Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			default:
				g.fail("%s: a map whose keys JSON cannot write", t)
			}
		}
		return map[string]any{"type": "object", "additionalProperties": g.of(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t, "")
		}
		name := defName(t)
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // taken: a type that holds itself refers to it
			g.defs[name] = g.object(t, typeKey(t))
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	g.fail("%s: a type the schema generator does not know (internal/refdoc)", t)
	return map[string]any{}
}

// object is the schema of a struct: its properties as encoding/json writes them (an embedded
// struct without a name in its tag gives its fields to the outer one).
func (g *schemaGen) object(t reflect.Type, key string) map[string]any {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()) || t.Implements(reflect.TypeFor[json.Marshaler]()) {
		g.fail("%s marshals itself: say in internal/refdoc what it writes", t)
	}
	props := map[string]any{}
	var required []string
	g.fields(t, key, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if key != "" {
		if d, err := g.c.typeDoc(t); err != nil {
			g.fail("%v", err)
		} else if d != "" {
			s["description"] = d
		}
	}
	return s
}

func (g *schemaGen) fields(t reflect.Type, key string, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := sf.Type
		if sf.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				g.fields(et, typeKey(et), props, required)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := props[name]; dup {
			g.fail("%s: two fields named %q", t, name)
		}
		s := g.of(ft)
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		switch ft.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if !optional {
				s = nullable(s)
			}
		}
		if key != "" {
			pkg := t.PkgPath()
			d, err := g.c.field(pkg, key, sf.Name)
			if err != nil {
				g.fail("%v", err)
			}
			if d != "" {
				s = described(s, d)
			}
		}
		props[name] = s
		if !optional {
			*required = append(*required, name)
		}
	}
}

// nullable lets s be null too.
func nullable(s map[string]any) map[string]any {
	if ty, ok := s["type"].(string); ok {
		out := clone(s)
		out["type"] = []string{ty, "null"}
		return out
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// described is s with the description d (a $ref's, beside it: draft 2020-12 allows that).
func described(s map[string]any, d string) map[string]any {
	out := clone(s)
	if old, ok := out["description"].(string); ok {
		d += " Value: " + old + "."
	}
	out["description"] = d
	return out
}

func clone(s map[string]any) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	return out
}

func (g *schemaGen) fail(format string, a ...any) {
	if g.err == nil {
		g.err = fmt.Errorf(format, a...)
	}
}
