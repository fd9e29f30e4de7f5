// Package fill gives a value every field set, for tests that must see every field of a type.
package fill

import (
	"encoding/json"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Every sets every exported field under v, each pointer to a new value, each list and map to one
// item: strings "x", numbers 1 (floats 0.5), true, a time, an IntOrString "50%", a raw JSON {}.
// Tests that must see every field of a type (a schema's, a check file's) encode such a value.
func Every(v reflect.Value) { fill(v, 0) }

func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
		return
	case reflect.TypeFor[intstr.IntOrString]():
		v.Set(reflect.ValueOf(intstr.FromString("50%")))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(`{}`)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	}
}
