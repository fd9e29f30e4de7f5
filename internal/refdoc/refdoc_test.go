package refdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/fill"
	"github.com/rollcheck/rollcheck/internal/report"
)

const root = "../.."

// The committed documents are what the code generates: a field, a doc comment, a default, a
// report column or a type of conformance.json changed without make docs fails here.
func TestGeneratedDocumentsAreCommitted(t *testing.T) {
	docs, err := Generate(root)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v: run make docs (go generate ./internal/refdoc)", name, err)
			continue
		}
		if want := docs[name]; !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the code generates: run make docs (go generate ./internal/refdoc) and commit it; first difference, line %s", name, firstDiff(got, want))
		}
	}
}

// firstDiff is the first line where got and want differ, with both.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("%d:\n committed: %q\n generated: %q", i+1, gl, wl)
		}
	}
	return "none"
}

// Every field of a check file has a doc comment (a field added without one fails here, and
// make docs refuses to write), each default a comment states agrees with the code's constant,
// and every path internal/refdoc gives a default or values is a field.
func TestEveryCheckFileFieldIsDocumented(t *testing.T) {
	fields, err := CheckFields(root)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			t.Error(line)
		}
	}
	paths := map[string]bool{}
	for _, f := range fields {
		paths[f.Path] = true
	}
	// The fields issues found undocumented are there, with their defaults.
	for path, def := range map[string]string{
		"metadata.name": "the check file's name without its extension", "quiet": "3s", "app.podHeader": "X-Pod-Name",
		"app.build[].dockerfile": "Dockerfile", "variants[].why": "", "cluster.kubeconfig": "", "cluster.context": "",
		"cluster.loadImage": "", "variants[].expect.failures": "",
	} {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Path == path })
		if i < 0 {
			t.Errorf("%s: not listed", path)
			continue
		}
		if f := fields[i]; !strings.HasPrefix(f.Default, def) || (def == "" && f.Default != "") {
			t.Errorf("%s: default %q, want %q", path, f.Default, def)
		}
	}
	if i := slices.IndexFunc(fields, func(f Field) bool { return f.Path == "variants[].expect.failures" }); i >= 0 && !strings.Contains(fields[i].Doc, "0 is the only value taken") {
		t.Errorf("expect.failures does not say it takes only 0: %q", fields[i].Doc)
	}
}

func TestCutDefault(t *testing.T) {
	for _, c := range []struct{ doc, rest, stated string }{
		{"Quiet is the time (default 3s).", "Quiet is the time.", "3s"},
		{"Repeat runs, 1 to 20 (default 1): the report", "Repeat runs, 1 to 20: the report", "1"},
		{"From is host (default) or cluster.", "From is host or cluster.", ""},
		{"Name (default the file's name (without .yaml)) names it.", "Name names it.", "the file's name (without .yaml)"},
		{"No default here.", "No default here.", ""},
	} {
		rest, stated := cutDefault(c.doc)
		if rest != c.rest || stated != c.stated {
			t.Errorf("cutDefault(%q) = %q, %q; want %q, %q", c.doc, rest, stated, c.rest, c.stated)
		}
	}
	if got := yamlName("PodHeader is the header.", "PodHeader", "podHeader"); got != "`podHeader` is the header." {
		t.Errorf("yamlName = %q", got)
	}
	if got := yamlName("Podding is not.", "Pod", "pod"); got != "Podding is not." {
		t.Errorf("yamlName = %q", got)
	}
}

// The schema describes what WriteJSON writes: a Run with every field set, and one with every
// field zero (nil slices, maps and pointers), validate against it, unknown properties included
// as errors (the schema itself allows them, for fields added later).
func TestSchemaDescribesConformanceJSON(t *testing.T) {
	b, err := Schema(root)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var full report.Run
	fill.Every(reflect.ValueOf(&full).Elem())
	for name, run := range map[string]report.Run{"every field set": full, "every field zero": {}, "NewRun(nil)": report.NewRun(nil)} {
		var buf bytes.Buffer
		if err := run.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		v2 := validator{defs: schema["$defs"].(map[string]any)}
		v2.check(schema, v, "$")
		for _, e := range v2.errs {
			t.Errorf("%s: %s", name, e)
		}
	}
	// and the validator sees a wrong document.
	bad := validator{defs: schema["$defs"].(map[string]any)}
	bad.check(schema, map[string]any{"schemaVersion": "1", "rows": []any{map[string]any{"suite": 3}}, "extra": true}, "$")
	if len(bad.errs) < 3 {
		t.Errorf("a wrong document gave only %q", bad.errs)
	}
}

// validator checks a decoded JSON value against the parts of JSON Schema Schema writes: $ref,
// anyOf, type, properties, required, additionalProperties, items, minimum, format date-time.
// A property the schema does not name is an error here.
type validator struct {
	defs map[string]any
	errs []string
}

func (v *validator) bad(path, format string, a ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, a...))
}

func (v *validator) check(s map[string]any, x any, path string) {
	if ref, ok := s["$ref"].(string); ok {
		def, ok := v.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if !ok {
			v.bad(path, "no definition %s", ref)
			return
		}
		v.check(def, x, path)
	}
	if branches, ok := s["anyOf"].([]any); ok {
		var all []string
		for _, b := range branches {
			sub := validator{defs: v.defs}
			sub.check(b.(map[string]any), x, path)
			if len(sub.errs) == 0 {
				all = nil
				break
			}
			all = append(all, sub.errs...)
		}
		v.errs = append(v.errs, all...)
	}
	if ty, ok := s["type"]; ok {
		var types []string
		switch ty := ty.(type) {
		case string:
			types = []string{ty}
		case []any:
			for _, t := range ty {
				types = append(types, t.(string))
			}
		}
		if !slices.Contains(types, jsonType(x)) && !(jsonType(x) == "integer" && slices.Contains(types, "number")) {
			v.bad(path, "%s, want %s", jsonType(x), strings.Join(types, " or "))
			return
		}
	}
	if min, ok := s["minimum"].(float64); ok {
		if n, ok := x.(float64); ok && n < min {
			v.bad(path, "%v below %v", n, min)
		}
	}
	if s["format"] == "date-time" {
		if str, ok := x.(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				v.bad(path, "not a date-time: %q", str)
			}
		}
	}
	switch x := x.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					v.bad(path, "required %s missing", r)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			switch p, ok := props[k].(map[string]any); {
			case ok:
				v.check(p, x[k], path+"."+k)
			case s["additionalProperties"] != nil:
				v.check(s["additionalProperties"].(map[string]any), x[k], path+"."+k)
			case s["properties"] != nil:
				v.bad(path, "property %s is not in the schema", k)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				v.check(items, e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
}

func jsonType(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

// The schemas of rollcheck audit -o json and of a windows file take their documents with every
// field set, every field zero, and the windows file in internal/audit's testdata.
func TestSchemasDescribeAuditJSON(t *testing.T) {
	var report audit.Report
	fill.Every(reflect.ValueOf(&report).Elem())
	var windows audit.WindowsFile
	fill.Every(reflect.ValueOf(&windows).Elem())
	kind, err := os.ReadFile(filepath.Join(root, "internal/audit/windows-kind.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		schema func(string) ([]byte, error)
		docs   map[string]any
	}{
		{AuditSchemaFile, AuditSchema, map[string]any{"every field set": report, "every field zero": audit.Report{}}},
		{WindowsSchemaFile, WindowsSchema, map[string]any{"every field set": windows, "every field zero": audit.WindowsFile{}, "testdata": json.RawMessage(kind)}},
	} {
		b, err := c.schema(root)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for name, doc := range c.docs {
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			val := validator{defs: schema["$defs"].(map[string]any)}
			val.check(schema, v, "$")
			for _, e := range val.errs {
				t.Errorf("%s, %s: %s", c.name, name, e)
			}
		}
	}
}

// The reference's table of disruption kinds has one row per kind of check.Disruptions, in its
// order: a kind added to the table shows in docs/reference.md (after make docs).
func TestReferenceListsEveryDisruption(t *testing.T) {
	doc, err := ReferenceMarkdown(root)
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), DisruptionsMark+"\n")
	var kinds []string
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if k, ok := strings.CutPrefix(line, "| `"); ok {
			kinds = append(kinds, k[:strings.Index(k, "`")])
		}
	}
	want := make([]string, len(check.DisruptionKinds))
	for i, k := range check.DisruptionKinds {
		want[i] = string(k)
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("%s's table of disruptions lists %v, want %v", ReferenceDoc, kinds, want)
	}
}
