package checkinput

import (
	"slices"
	"strconv"
	"testing"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// By default as many rows from load pods run at once as ROLLCHECK_PROCS allows (3 unless set, on
// a machine of 3 CPUs or more), and never more than there are.
func TestRunAtOnce(t *testing.T) {
	defer func(f func() int) { knobs.NumCPU = f }(knobs.NumCPU)
	knobs.NumCPU = func() int { return 8 }
	host, pods := check.Plan{}, check.Plan{Load: check.Load{From: check.LoadFromCluster}}
	drain := pods
	drain.Disruption.Kind = check.DrainNode
	rows := func(p check.Plan, n int) []check.Plan { return slices.Repeat([]check.Plan{p}, n) }
	for _, tc := range []struct {
		procs string
		args  []string
		plans []check.Plan
		want  int
	}{
		{"", nil, rows(pods, 6), 3},
		{"", nil, rows(pods, 2), 2},
		{"5", nil, rows(pods, 6), 5},
		{"1", nil, rows(pods, 6), 1},
		{"", nil, rows(host, 6), 1},
		{"", nil, append(rows(host, 2), rows(pods, 4)...), 3}, // the host rows alone, the others 3 at a time
		{"", nil, rows(drain, 3), 1},
		{"", nil, append(rows(drain, 2), pods), 1},                                     // the one row beside no other
		{"", []string{"--parallel", "3"}, append(rows(drain, 2), rows(pods, 4)...), 3}, // the drains alone
		{"", []string{"--parallel", "6"}, rows(pods, 6), 6},
		{"2", []string{"--parallel", "4"}, rows(pods, 6), 4}, // the flag over the knob
	} {
		t.Setenv("ROLLCHECK_PROCS", tc.procs)
		f := Run{Given: func(name string) bool { return len(tc.args) > 0 && tc.args[0] == "--"+name }}
		if len(tc.args) > 0 {
			f.Parallel, _ = strconv.Atoi(tc.args[1])
		}
		if got, err := f.AtOnce(tc.plans); err != nil || got != tc.want {
			t.Errorf("ROLLCHECK_PROCS=%q %q, %d plans: %d at once (%v), want %d", tc.procs, tc.args, len(tc.plans), got, err, tc.want)
		}
	}
}

// FileFields names each flag of the file's fields that was given, with its field; the run's
// flags are not among them.
func TestFileFields(t *testing.T) {
	given := map[string]bool{"rate": true, "n": true, "parallel": true, "in-place": true}
	f := Flags{Run: Run{Given: func(name string) bool { return given[name] }}}
	got, want := f.FileFields(), []string{"-n (app.namespace)", "--rate (load.rate)"}
	if !slices.Equal(got, want) {
		t.Errorf("FileFields() = %q, want %q", got, want)
	}
	if got := (&Flags{}).FileFields(); got != nil {
		t.Errorf("no flag given: FileFields() = %q, want none", got)
	}
}

// An Optional is unset until set; a bad number is said in its words.
func TestOptional(t *testing.T) {
	var o Optional[int]
	if o.String() != "" || o.Given {
		t.Fatalf("zero Optional: %q, given %v", o.String(), o.Given)
	}
	if err := o.Set("1.5"); err == nil || err.Error() != `"1.5" is not a whole number` {
		t.Errorf("Set(1.5) = %v", err)
	}
	if err := o.Set("0"); err != nil || !o.Given || o.Value != 0 || o.String() != "0" {
		t.Errorf("Set(0) = %v: %+v", err, o)
	}
}
