package suiterun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// args: the label filter and suites from the knobs (their defaults when unset), the merged
// reports in the artifacts, and --fail-on-empty only for one suite directory: Ginkgo applies it
// to each suite, and with several a suite the filter leaves empty must not fail the run.
func TestArgs(t *testing.T) {
	t.Chdir("../..") // ROLLCHECK_SUITES's rule: directories from where make runs
	defLabels, _ := knobs.Get(func(string) string { return "" }, knobs.EnvLabels)
	defSuites, _ := knobs.Get(func(string) string { return "" }, knobs.EnvSuites)
	for _, tc := range []struct {
		name, labels, suites string
		wantLabels           string
		wantSuites           []string
		failOnEmpty          bool
	}{
		{"make e2e's defaults", "", "", defLabels, strings.Fields(defSuites), false},
		{"one suite, a misspelt filter", "grcp || http2x", "suites", "grcp || http2x", []string{"suites"}, true},
		{"several suites", "rollout-restart", "suites examples/check", "rollout-restart", []string{"suites", "examples/check"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(knobs.EnvLabels, tc.labels)
			t.Setenv(knobs.EnvSuites, tc.suites)
			t.Setenv(knobs.EnvGinkgoFlags, "--v")
			t.Setenv(knobs.EnvProcs, "2")
			t.Setenv(knobs.EnvRepeat, "")
			line := args("/art", os.Getenv)
			for _, want := range []string{"-r", "--tags=e2e", "--timeout=1h0m0s", "--procs=2", "--label-filter=" + tc.wantLabels,
				"--output-dir=/art", "--json-report=" + reportFile, "--junit-report=junit.xml", "--v"} {
				if !slices.Contains(line, want) {
					t.Errorf("%q lacks %q", line, want)
				}
			}
			if got := slices.Contains(line, "--fail-on-empty"); got != tc.failOnEmpty {
				t.Errorf("%q: --fail-on-empty %v, want %v", line, got, tc.failOnEmpty)
			}
			if got := line[len(line)-len(tc.wantSuites):]; !slices.Equal(got, tc.wantSuites) {
				t.Errorf("%q ends with %q, want the suites %q", line, got, tc.wantSuites)
			}
		})
	}
}

// readSelection counts the specs the filter selected over every suite of ginkgo's merged report,
// and says nothing when the report cannot tell (missing, empty, a suite whose tree was never built).
func TestReadSelection(t *testing.T) {
	suite := func(ok bool, total, selected int, labels ...[]string) types.Report {
		r := types.Report{SuiteSucceeded: ok, PreRunStats: types.PreRunStats{TotalSpecs: total, SpecsThatWillRun: selected}}
		for _, l := range labels {
			r.SpecReports = append(r.SpecReports, types.SpecReport{ContainerHierarchyLabels: [][]string{{"conformance"}}, LeafNodeLabels: l})
		}
		return r
	}
	examples := suite(true, 2, 0)
	examples.SuiteLabels = []string{"examples"}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		reports []types.Report // nil: no file
		ok      bool
		specs   int
		labels  string
	}{
		{"rows in one suite, none in the other", []types.Report{suite(true, 3, 2, []string{"grpc"}, []string{"http2"}, []string{"smoke"}), examples}, true, 2, "conformance examples grpc http2 smoke"},
		{"a misspelt filter: none anywhere", []types.Report{suite(false, 3, 0, []string{"grpc"}, []string{"smoke", "offline"}), examples}, true, 0, "conformance examples grpc offline smoke"},
		{"a suite that did not compile", []types.Report{suite(false, 0, 0), examples}, false, 0, ""},
		{"no suite", []types.Report{}, false, 0, ""},
		{"no report", nil, false, 0, ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if tc.reports != nil {
			b, err := json.Marshal(tc.reports)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sel, ok := readSelection(path)
		if ok != tc.ok || sel.specs != tc.specs || strings.Join(sel.labels, " ") != tc.labels {
			t.Errorf("%s: %+v, %v; want %d specs, labels %q, %v", tc.name, sel, ok, tc.specs, tc.labels, tc.ok)
		}
	}
}

// CheckSelection fails a run whose label filter selected no spec anywhere, naming the knobs and
// the suites' labels, and says nothing when the report cannot tell.
func TestCheckSelection(t *testing.T) {
	t.Chdir("../..") // ROLLCHECK_SUITES's rule: directories from where make runs
	t.Setenv(knobs.EnvLabels, "grcp")
	t.Setenv(knobs.EnvSuites, "suites")
	art := t.TempDir()
	if err := CheckSelection(art, os.Getenv); err != nil {
		t.Errorf("no report: %v, want nil", err)
	}
	write := func(selected int) {
		b, err := json.Marshal([]types.Report{{PreRunStats: types.PreRunStats{TotalSpecs: 1, SpecsThatWillRun: selected},
			SpecReports: []types.SpecReport{{ContainerHierarchyLabels: [][]string{{"conformance"}}, LeafNodeLabels: []string{"grpc"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(art, reportFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	want := `ROLLCHECK_LABELS="grcp" selects no spec of ROLLCHECK_SUITES="suites": a misspelt label? The suites' labels: conformance, grpc`
	if err := CheckSelection(art, os.Getenv); err == nil || err.Error() != want {
		t.Errorf("none selected: %v, want %q", err, want)
	}
	write(1)
	if err := CheckSelection(art, os.Getenv); err != nil {
		t.Errorf("one selected: %v, want nil", err)
	}
	if err := ClearOutputs(art); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(art, reportFile)); !os.IsNotExist(err) {
		t.Errorf("the report is still there after ClearOutputs: %v", err)
	}
}

// runGinkgo returns ginkgo's exit code, -1 when it was killed (by the time limit here), whether
// a signal came, and an error only when ginkgo could not be started.
func TestRunGinkgo(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "ginkgo")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$1\" = sleep ] && exec sleep 30\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	if r, err := runGinkgo(fake, []string{"-r"}, nil, time.Minute, logf); err != nil || r != (Result{Code: 3}) {
		t.Errorf("exit 3: %+v, %v", r, err)
	}
	if r, err := runGinkgo(fake, []string{"sleep"}, nil, 100*time.Millisecond, logf); err != nil || r != (Result{Code: -1}) {
		t.Errorf("past the limit: %+v, %v; want code -1", r, err)
	}
	if !slices.Contains(lines, "ginkgo still runs after 100ms: stopping it") || !slices.Contains(lines, "ginkgo: signal: terminated") {
		t.Errorf("past the limit, logged %q", lines)
	}
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	if r, err := runGinkgo(fake, []string{"sleep"}, sigs, time.Minute, logf); err != nil || !r.Interrupted {
		t.Errorf("SIGTERM: %+v, %v; want interrupted", r, err)
	}
	if _, err := runGinkgo(filepath.Join(dir, "nope"), nil, nil, time.Minute, logf); err == nil || !strings.HasPrefix(err.Error(), "start ginkgo: ") {
		t.Errorf("no ginkgo: %v, want start ginkgo: ...", err)
	}
}
