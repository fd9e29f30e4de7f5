package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// ginkgoArgs: the label filter and suites from the knobs (their defaults when unset), the merged
// reports in the artifacts, and --fail-on-empty only for one suite directory: Ginkgo applies it
// to each suite, and with several a suite the filter leaves empty must not fail the run.
func TestGinkgoArgs(t *testing.T) {
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
			args := ginkgoArgs("/art")
			for _, want := range []string{"-r", "--tags=e2e", "--timeout=1h0m0s", "--procs=2", "--label-filter=" + tc.wantLabels,
				"--output-dir=/art", "--json-report=" + ginkgoReport, "--junit-report=junit.xml", "--v"} {
				if !slices.Contains(args, want) {
					t.Errorf("%q lacks %q", args, want)
				}
			}
			if got := slices.Contains(args, "--fail-on-empty"); got != tc.failOnEmpty {
				t.Errorf("%q: --fail-on-empty %v, want %v", args, got, tc.failOnEmpty)
			}
			if got := args[len(args)-len(tc.wantSuites):]; !slices.Equal(got, tc.wantSuites) {
				t.Errorf("%q ends with %q, want the suites %q", args, got, tc.wantSuites)
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
