package analyze

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

var timeType = reflect.TypeFor[time.Time]()

// fill sets every time.Time reachable from v to now, with its monotonic reading, making one
// element of each slice and a value for each pointer on the way.
func fill(v reflect.Value, now time.Time) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(now))
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), now)
	case v.Kind() == reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := range v.Len() {
			fill(v.Index(i), now)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), now)
			}
		}
	}
}

// monotonic lists the paths of the times reachable from v that carry a monotonic reading.
func monotonic(v reflect.Value, path string) []string {
	switch {
	case v.Type() == timeType:
		if strings.Contains(v.Interface().(time.Time).String(), " m=") {
			return []string{path}
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		return monotonic(v.Elem(), path)
	case v.Kind() == reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, monotonic(v.Index(i), path+"[]")...)
		}
		return out
	case v.Kind() == reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, monotonic(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	}
	return nil
}

// The analysis reads every time of its input as a row records it, without the monotonic
// reading of the process that ran it (a field added later with a time in it fails here until
// wallClock takes it), and leaves its caller's input as it was.
func TestWallClock(t *testing.T) {
	var in Input
	in.Load = &loadgen.Result{}
	fill(reflect.ValueOf(&in).Elem(), time.Now())
	all := monotonic(reflect.ValueOf(in), "Input")
	if got := monotonic(reflect.ValueOf(wallClock(in)), "Input"); len(got) > 0 {
		t.Errorf("times with a monotonic reading: %v", got)
	}
	if got := monotonic(reflect.ValueOf(in), "Input"); len(got) != len(all) {
		t.Errorf("wallClock changed its caller's input: %d of its %d times kept their monotonic reading", len(got), len(all))
	}
}
