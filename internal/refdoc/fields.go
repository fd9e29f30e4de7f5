package refdoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/spec"
	"github.com/rollcheck/rollcheck/timeline"
)

// A Field is one field of a check file.
type Field struct {
	// Path is its YAML path: "load.grpc.method"; "[]" stands for each item of a list
	// ("variants[].preStop.sleep").
	Path string
	// Type is what it takes, with the values it takes when the code lists them.
	Type string
	// Default is "required", the default (from a constant of the code, or the doc comment's
	// "(default …)"), or "" for none: left out, the field does nothing.
	Default string
	// Doc is its doc comment as one line, the "(default …)" taken out and its Go name replaced
	// by its YAML name.
	Doc string
}

// constDefaults are the defaults the code holds in constants, by path: the generated document
// takes them from here, not from the comments, and a comment that says another is an error.
var constDefaults = map[string]constDefault{
	"app.path":                         {"check.DefaultPath", check.DefaultPath},
	"app.podHeader":                    {"loadgen.DefaultPodHeader", loadgen.DefaultPodHeader},
	"app.build[].dockerfile":           {"spec.DefaultDockerfile", spec.DefaultDockerfile},
	"load.protocol":                    {"loadgen.ProtocolHTTP1", loadgen.ProtocolHTTP1},
	"load.grpc.method":                 {"loadgen.DefaultGRPCMethod", loadgen.DefaultGRPCMethod},
	"load.grpc.balancing":              {"loadgen.BalancingPickFirst", loadgen.BalancingPickFirst},
	"load.rate":                        {"check.DefaultRate", check.DefaultRate},
	"load.method":                      {"loadgen.DefaultMethod", loadgen.DefaultMethod},
	"load.from":                        {"check.LoadFromHost", check.LoadFromHost},
	"load.timeout":                     {"loadgen.DefaultTimeout", loadgen.DefaultTimeout},
	"disruptions[].count":              {"check.DefaultCount", check.DefaultCount},
	"disruptions[].drainTimeout":       {"check.DefaultDrainTimeout", check.DefaultDrainTimeout},
	"quiet":                            {"check.DefaultQuiet", check.DefaultQuiet},
	"variants[].externalTrafficPolicy": {"corev1.ServiceExternalTrafficPolicyCluster", corev1.ServiceExternalTrafficPolicyCluster},
}

type constDefault struct {
	name  string
	value any
}

// values are the values a field takes where the code lists them, by path.
var values = map[string][]string{
	"apiVersion":                       {spec.APIVersion},
	"kind":                             {spec.Kind},
	"load.protocol":                    strs(loadgen.Protocols),
	"load.grpc.balancing":              strs([]loadgen.Balancing{loadgen.BalancingPickFirst, loadgen.BalancingRoundRobin}),
	"load.method":                      {"GET", "POST"},
	"load.from":                        strs([]check.LoadFrom{check.LoadFromHost, check.LoadFromCluster}),
	"load.entry":                       {string(check.EntryNode)},
	"disruptions[].kind":               strs(check.DisruptionKinds),
	"disruptions[].node":               {string(check.DrainEntry)},
	"variants[].externalTrafficPolicy": strs([]corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}),
	"variants[].expect.failuresExpected.phases": strs(timeline.Phases),
}

func strs[S ~string](xs []S) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// CheckFields lists every field of a check file, from spec.Check's types and the doc comments
// of the module under root. Every problem is an error, all at once: a field without a doc
// comment, a comment whose "(default …)" is not the constant's, a default or value list for a
// path that is not a field.
func CheckFields(root string) ([]Field, error) {
	c, err := newComments(root)
	if err != nil {
		return nil, err
	}
	w := &fieldWalk{c: c, seen: map[string]bool{}}
	w.walk(reflect.TypeFor[spec.Check](), "", typeKey(reflect.TypeFor[spec.Check]()), reflect.TypeFor[spec.Check]().PkgPath())
	for _, m := range []map[string]bool{keys(constDefaults), keys(values)} {
		for p := range m {
			if !w.seen[p] {
				w.errs = append(w.errs, fmt.Errorf("%s: a default or values for a path that is no field of a check file (internal/refdoc)", p))
			}
		}
	}
	return w.fields, errors.Join(w.errs...)
}

func keys[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

type fieldWalk struct {
	c      *comments
	fields []Field
	seen   map[string]bool
	errs   []error
}

// walk lists the fields of struct type t at path prefix; key is the key of its fields'
// comments (typeKey, or the field's for a struct written inline) and pkg the package they are
// read from.
func (w *fieldWalk) walk(t reflect.Type, prefix, key, pkg string) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		path := join(prefix, name)
		w.seen[path] = true
		doc, err := w.c.field(pkg, key, sf.Name)
		if err != nil {
			w.errs = append(w.errs, err)
		}
		if doc == "" {
			w.errs = append(w.errs, fmt.Errorf("%s (%s.%s): no doc comment: say above the field what it is (docs/check-file.md is generated from it)", path, key, sf.Name))
		}
		doc, stated := cutDefault(doc)
		f := Field{Path: path, Type: w.typeName(sf.Type, path), Doc: yamlName(doc, sf.Name, name)}
		switch cd, ok := constDefaults[path]; {
		case ok:
			f.Default = format(cd.value)
			if stated != "" && !strings.Contains(stated, f.Default) && !strings.Contains(stated, cd.name[strings.Index(cd.name, ".")+1:]) {
				w.errs = append(w.errs, fmt.Errorf("%s: its comment says (default %s), the code's %s is %s", path, stated, cd.name, f.Default))
			}
		case stated != "":
			f.Default = stated
		case !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero"):
			f.Default = "required"
		}
		w.fields = append(w.fields, f)

		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		sub := path
		if ft.Kind() == reflect.Slice && !leaf(ft) {
			ft, sub = ft.Elem(), path+"[]"
		}
		if ft.Kind() == reflect.Struct && !leaf(ft) {
			if k := typeKey(ft); k != "" {
				w.walk(ft, sub, k, ft.PkgPath())
			} else {
				w.walk(ft, sub, key+"."+sf.Name, pkg)
			}
		}
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// leaf reports whether t is a value of its own in a check file, not an object of fields.
func leaf(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[metav1.Duration](), reflect.TypeFor[intstr.IntOrString](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[[]byte]():
		return true
	}
	return t.Kind() != reflect.Struct && t.Kind() != reflect.Slice
}

// typeName says what a field of Go type t at path takes.
func (w *fieldWalk) typeName(t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := ""
	switch t {
	case reflect.TypeFor[metav1.Duration]():
		s = "duration"
	case reflect.TypeFor[intstr.IntOrString]():
		s = "integer or percentage"
	case reflect.TypeFor[json.RawMessage]():
		s = "object"
	case reflect.TypeFor[[]byte]():
		s = "string (base64)"
	}
	if s == "" {
		switch t.Kind() {
		case reflect.String:
			s = "string"
		case reflect.Bool:
			s = "boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			s = "integer"
		case reflect.Float32, reflect.Float64:
			s = "number"
		case reflect.Struct:
			s = "object"
		case reflect.Slice:
			s = "list of " + plural(w.typeName(t.Elem(), ""))
		default:
			w.errs = append(w.errs, fmt.Errorf("%s: a field of Go type %s: say in internal/refdoc what it takes", path, t))
			s = t.String()
		}
	}
	if vs := values[path]; len(vs) > 0 {
		s += ": `" + strings.Join(vs, "`, `") + "`"
	}
	return s
}

func plural(s string) string {
	switch s {
	case "integer or percentage":
		return "integers or percentages"
	case "string (base64)":
		return "strings (base64)"
	}
	return s + "s"
}

// cutDefault takes the default a doc comment states, "(default X)", out of it: the comment
// without it, and X ("" when it says none).
func cutDefault(doc string) (rest, stated string) {
	i := strings.Index(doc, "(default")
	if i < 0 {
		return doc, ""
	}
	depth, end := 0, -1
	for j := i; j < len(doc) && end < 0; j++ {
		switch doc[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				end = j
			}
		}
	}
	if end < 0 {
		return doc, ""
	}
	inner := strings.TrimSpace(strings.TrimPrefix(doc[i+1:end], "default"))
	rest = strings.TrimRight(doc[:i], " ") + doc[end+1:]
	return strings.Join(strings.Fields(rest), " "), inner
}

// yamlName replaces the Go name a doc comment starts with ("Quiet is …") by the field's YAML
// name ("`quiet` is …").
func yamlName(doc, goName, name string) string {
	if rest, ok := strings.CutPrefix(doc, goName); ok && (rest == "" || strings.ContainsRune(" :,", rune(rest[0]))) {
		return "`" + name + "`" + rest
	}
	return doc
}

// format is a default as the document shows it: durations in seconds when whole ("60s").
func format(v any) string {
	if d, ok := v.(time.Duration); ok {
		if d%time.Second == 0 {
			return fmt.Sprintf("%ds", d/time.Second)
		}
		return d.String()
	}
	return fmt.Sprint(v)
}
