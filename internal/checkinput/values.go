package checkinput

import (
	"fmt"
	"strconv"
	"strings"
)

// Multi is a flag given several times (flag.Value).
type Multi []string

func (m *Multi) String() string     { return strings.Join(*m, ",") }
func (m *Multi) Set(v string) error { *m = append(*m, v); return nil }

// Optional is a number flag that may be left unset (flag.Value): then the input's own value
// holds.
type Optional[T int | float64] struct {
	Value T
	Given bool
}

func (o *Optional[T]) String() string {
	if !o.Given {
		return ""
	}
	return fmt.Sprint(o.Value)
}

// Set sets o from s, a number.
func (o *Optional[T]) Set(s string) error {
	var err error
	want := "a number"
	switch p := any(&o.Value).(type) {
	case *int:
		want = "a whole number"
		*p, err = strconv.Atoi(s)
	case *float64:
		*p, err = strconv.ParseFloat(s, 64)
	}
	if err != nil {
		return fmt.Errorf("%q is not %s", s, want)
	}
	o.Given = true
	return nil
}
