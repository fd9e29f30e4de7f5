package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/internal/audit"
)

// rollcheck audit: 0 under --fail-above, 1 above it, 2 for bad input in one line.
func TestAuditExitCodes(t *testing.T) {
	const win = "../../internal/audit/windows-kind.json"
	const web = "../../examples/check/web.yaml"
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"audit", "-f", web, "--windows", win}, exitPass, ""},
		{[]string{"audit", "-f", web, "--windows", win, "--fail-above", "1000"}, exitPass, ""},
		// web has no preStop: 100 req/s × 0.393s (the data plane's mean window) × 3 pods = 118
		// expected per rollout (at most 100 × 1.045s × 3 = 314).
		{[]string{"audit", "-f", web, "--windows", win, "--fail-above", "100"}, exitFail, ""},
		{[]string{"audit", "-f", web, "--windows", win, "--fail-above", "300"}, exitPass, ""},
		// An app that keeps serving 2 s after SIGTERM on its own: past the routed window (the
		// drain's 300 stays).
		{[]string{"audit", "-f", web, "--windows", win, "--fail-above", "300", "--app-delay", "web=2s"}, exitPass, ""},
		{[]string{"audit", "-f", web, "--windows", win, "--app-delay", "web=soon"}, exitBadInput, `rollcheck audit: --app-delay "web=soon": want [WORKLOAD=]DURATION`},
		{[]string{"audit", "-f", web, "--windows", win, "--app-delay", "1s", "--app-delay", "2s"}, exitBadInput, `rollcheck audit: --app-delay "2s": every workload's given twice`},
		{[]string{"audit", "-f", web, "--windows-from", "../../internal/audit/testdata/kind-run", "--fail-above", "100"}, exitFail, ""},
		{[]string{"audit", "-f", web, "--windows", win, "--windows-from", "../../internal/audit/testdata/kind-run"}, exitBadInput, "rollcheck audit: give one of --windows FILE, --windows-from DIR and --measure"},
		{[]string{"audit", "-f", web, "--measure"}, exitBadInput, "rollcheck audit: --measure measures the cluster read: give --kubeconfig FILE or --context NAME"},
		{[]string{"audit", "--context", "prod", "--measure", "--windows", win}, exitBadInput, "rollcheck audit: give one of --windows FILE, --windows-from DIR and --measure"},
		{[]string{"audit", "-f", web, "--windows", win, "--image-registry", "r.example"}, exitBadInput, "rollcheck audit: --image-registry is for --measure"},
		{[]string{"audit", "--windows", win}, exitBadInput, "rollcheck audit: no manifests"},
		{[]string{"audit", "-f", web, "--windows", web}, exitBadInput, "rollcheck audit: " + web + ": windows file:"},
		{[]string{"audit", "-f", win, "--windows", win}, exitBadInput, "rollcheck audit: read manifests: " + win + ": document 1: an object without apiVersion and kind"},
		{[]string{"audit", "-f", "../../spec/testdata/configmap-only.yaml", "--windows", win}, exitBadInput, "rollcheck audit: no Deployment or StatefulSet"},
		{[]string{"audit", "-f", web, "--windows", win, "-o", "yaml"}, exitBadInput, `rollcheck audit: -o "yaml": want table or json`},
		{[]string{"windows", "extract"}, exitBadInput, "rollcheck windows extract: want one directory or conformance.json, got 0 arguments"},
	} {
		code, stdout, stderr := rollcheck(tc.args...)
		if code != tc.code || (tc.err != "" && (!strings.HasPrefix(stderr, tc.err) || strings.Count(stderr, "\n") != 1)) {
			t.Errorf("rollcheck %q: exit %d, stderr %q; want %d %q\n%s", tc.args, code, stderr, tc.code, tc.err, stdout)
		}
	}
	// Day one, no windows given: the bundled ones, named as such on stderr and in the report,
	// with the same prediction as the same file given.
	code, stdout, stderr := rollcheck("audit", "-f", web)
	_, given, _ := rollcheck("audit", "-f", web, "--windows", win)
	if code != exitPass || !strings.HasPrefix(stderr, "rollcheck audit: no --windows, --windows-from or --measure: scoring against the windows bundled with rollcheck, a recorded kind run's") ||
		!strings.HasPrefix(stdout, "windows: bundled with rollcheck, not your cluster's: ") ||
		stdout != strings.Replace(given, "windows: ", "windows: bundled with rollcheck, not your cluster's: ", 1) {
		t.Errorf("no windows: exit %d, stderr %q\n%s\nwant the report with --windows %s, named bundled:\n%s", code, stderr, stdout, win, given)
	}
	if code, stdout, _ := rollcheck("audit", "-f", web, "--windows", win, "--app-delay", "web=2s"); code != exitPass || !strings.Contains(stdout, "covered propagation (rollout): the app keeps accepting 2s after SIGTERM on its own (given (--app-delay))") {
		t.Errorf("--app-delay web=2s: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = rollcheck("audit", "-f", web, "--windows", win, "-o", "json")
	var rep struct {
		SchemaVersion int `json:"schemaVersion"`
		Workloads     []struct {
			PredictedPerRollout float64 `json:"predictedPerRollout"`
			UpperPerRollout     float64 `json:"upperPerRollout"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); code != exitPass || err != nil || rep.SchemaVersion != 2 || len(rep.Workloads) != 1 || int(rep.Workloads[0].PredictedPerRollout) != 117 || int(rep.Workloads[0].UpperPerRollout) != 313 {
		t.Errorf("-o json: exit %d, %v, %+v", code, err, rep)
	}
}

// The cluster flags: read only, named as rollcheck check names a cluster; their bad uses are one
// line and exit 2 before any cluster is read.
func TestAuditClusterFlags(t *testing.T) {
	const win = "../../internal/audit/windows-kind.json"
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"audit", "-f", "x.yaml", "--context", "prod", "--windows", win}, "rollcheck audit: give manifests (-f) or a cluster (--context prod), not both"},
		{[]string{"audit", "-f", "x.yaml", "-n", "shop", "--windows", win}, "rollcheck audit: -n and --all-namespaces read a cluster"},
		{[]string{"audit", "--context", "prod", "-n", "shop", "--all-namespaces", "--windows", win}, "rollcheck audit: give -n NAMESPACE or --all-namespaces, not both"},
		{[]string{"audit", "--kubeconfig", "/nonexistent/kubeconfig", "--windows", win}, "rollcheck audit: --kubeconfig /nonexistent/kubeconfig: stat /nonexistent/kubeconfig"},
		{[]string{"audit", "-f", "x.yaml", "--windows", win, "--fail-above", "-1"}, "rollcheck audit: --fail-above -1: want 0 or more"},
	} {
		code, stdout, stderr := rollcheck(tc.args...)
		if code != exitBadInput || stdout != "" || !strings.HasPrefix(stderr, tc.err) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("rollcheck %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.err)
		}
	}
}

// rollcheck windows extract writes what audit.Extract makes of the rows, with the cluster named.
func TestWindowsExtract(t *testing.T) {
	out := t.TempDir() + "/windows.json"
	code, _, stderr := rollcheck("windows", "extract", "../../internal/audit/testdata/kind-run", "--cluster", "kind-rollcheck", "-o", out)
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	w, err := audit.ReadWindows(out)
	if err != nil || w.Measured.Cluster != "kind-rollcheck" || w.Windows.DataPlane == nil || w.Windows.DataPlane.N != 133 {
		t.Errorf("%v %+v", err, w)
	}
}

// rollcheck windows agreement: out of sample (another run's windows, or folds of one run); an
// in-sample agreement is refused in one line unless asked for.
func TestWindowsAgreement(t *testing.T) {
	const kind, e2e = "../../internal/audit/testdata/kind-run", "../../internal/audit/testdata/e2e-run"
	const win = "../../internal/audit/windows-kind.json"
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"windows", "agreement", e2e, "--windows-from", kind}, exitPass, "**out of sample**"},
		{[]string{"windows", "agreement", kind, "--cross", "5"}, exitPass, "5 folds"},
		{[]string{"windows", "agreement", e2e, "--windows", win}, exitPass, "counts: 6 of 7 within 2×"},
		{[]string{"windows", "agreement", kind, "--windows-from", kind, "--in-sample"}, exitPass, "asked in sample"},
		{[]string{"windows", "agreement", kind, "--windows-from", kind}, exitBadInput, "rollcheck windows agreement: the windows of " + kind + " are the same run's: measured on the rows they predict"},
		{[]string{"windows", "agreement", kind, "--windows", win}, exitBadInput, "rollcheck windows agreement: the windows of " + win + " were measured while the rows ran: measured on the rows they predict"},
		{[]string{"windows", "agreement", kind}, exitBadInput, "rollcheck windows agreement: give exactly one of --windows FILE, --windows-from OTHER_RUN and --cross N"},
		{[]string{"windows", "agreement", kind, "--cross", "1"}, exitBadInput, "rollcheck windows agreement: --cross 1: want 2 folds or more"},
	} {
		code, stdout, stderr := rollcheck(tc.args...)
		out := stdout
		if code != exitPass {
			out = stderr
		}
		if code != tc.code || !strings.Contains(out, tc.out) || code != exitPass && strings.Count(stderr, "\n") != 1 {
			t.Errorf("rollcheck %q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, tc.code, tc.out)
		}
	}
	code, stdout, _ := rollcheck("windows", "agreement", e2e, "--windows-from", kind, "-o", "json")
	var got struct {
		Summary struct{ Rows, Predicted, Within2x int }
		Rows    []struct {
			Ratio    float64 `json:"ratio"`
			Within2x bool    `json:"within2x"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); code != exitPass || err != nil || got.Summary.Rows != 9 || got.Summary.Within2x != 6 || len(got.Rows) != 9 {
		t.Errorf("-o json: exit %d, %v, %+v", code, err, got)
	}
}
