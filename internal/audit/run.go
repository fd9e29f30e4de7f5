package audit

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// ReadWindows reads the windows file at path (DecodeWindows); its errors name the file.
func ReadWindows(path string) (*WindowsFile, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w, err := DecodeWindows(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// ReadRunRows is a recorded run's rows: a directory's rows/*.json (else its conformance.json),
// or a conformance.json file.
func ReadRunRows(path string) ([]check.Row, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var rows []check.Row
	switch _, rerr := os.Stat(filepath.Join(path, "rows")); {
	case st.IsDir() && rerr == nil:
		rows, err = rowfile.Read(path)
	case st.IsDir():
		path = filepath.Join(path, report.JSONFile)
		fallthrough
	default:
		var run report.Run
		run, err = report.ReadRunFile(path)
		rows = run.Rows
	}
	return rows, err
}

// runName is how a windows file extracted from the recorded run at path names it: the
// directory's (or the file's) base name.
func runName(path string) string { return filepath.Base(filepath.Clean(path)) }

// ExtractRun is the windows file of a recorded run (ReadRunRows: a directory's rows/*.json,
// else its conformance.json, or a conformance.json file).
func ExtractRun(path string) (*WindowsFile, error) {
	return ExtractRunFor(path, &Inventory{}, nil) // no workload: no delay to add
}

// ExtractRunFor is ExtractRun for an audit of inv: it also adds to delays the apps'
// delays after SIGTERM that the run's rows measured (AppDelays, by Deployment), for the
// workloads of inv that delays does not name yet: a delay given wins.
func ExtractRunFor(path string, inv *Inventory, delays map[string]AppDelay) (*WindowsFile, error) {
	rows, err := ReadRunRows(path)
	if err != nil {
		return nil, err
	}
	w, err := Extract(rows, runName(path))
	if err != nil {
		return nil, err
	}
	for name, d := range AppDelays(rows, func(a check.Applied) string { return a.App }, path) {
		if _, given := delays[name]; !given && slices.ContainsFunc(inv.Workloads, func(w *Workload) bool { return w.Name == name }) {
			delays[name] = d
		}
	}
	return w, nil
}

// ParseAppDelays reads --app-delay's values: DURATION for every workload, NAME=DURATION (or
// Kind/ns/name=DURATION) for one; the result is Options.AppDelay.
func ParseAppDelays(vs []string) (map[string]AppDelay, error) {
	out := map[string]AppDelay{}
	for _, v := range vs {
		name, d, found := strings.Cut(v, "=")
		if !found {
			name, d = "", v
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur < 0 {
			return nil, fmt.Errorf("--app-delay %q: want [WORKLOAD=]DURATION, a duration of 0 or more such as 5s", v)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--app-delay %q: %s given twice", v, cmp.Or(name, "every workload's"))
		}
		out[name] = AppDelay{Delay: Duration(dur), From: "given (--app-delay)"}
	}
	return out, nil
}

// GRPCHeadless tells whether a workload of inv serves gRPC behind a headless Service: its
// stale-address prediction wants a gRPC client's window (rollcheck windows measure --grpc).
func (inv *Inventory) GRPCHeadless() bool {
	return slices.ContainsFunc(inv.Workloads, func(w *Workload) bool { return w.GRPC() && w.Headless() != "" })
}

// sameRun tells whether two paths name the same recorded run (a directory, or its
// conformance.json).
func sameRun(a, b string) bool {
	abs := func(p string) string {
		p, _ = filepath.Abs(p)
		if filepath.Base(p) == report.JSONFile {
			p = filepath.Dir(p)
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
}
