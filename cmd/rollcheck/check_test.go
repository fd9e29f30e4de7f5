package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/report"
)

// fakeTools puts a docker that answers `info`, knows no image and records every other call (kind,
// in-process, drives the cluster through it) first on PATH; it returns the file it records into.
func fakeTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "kind-calls")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("docker", `case "$1" in info) echo 28.2.2;; image) exit 1;; *) echo "docker $*" >> `+calls+`; exit 1;; esac`)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return calls
}

func checkCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return rollcheck(append([]string{"check"}, args...)...)
}

func TestCheckImageNotLocal(t *testing.T) {
	calls := fakeTools(t)
	code, _, stderr := checkCLI(t, "-f", "../../spec/testdata/good.yaml", "--artifacts", t.TempDir())
	if code != exitBadInput {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitBadInput, stderr)
	}
	want := "rollcheck check: image example/web:dev is not in the local Docker engine"
	if !strings.HasPrefix(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr %q, want one line starting %q", stderr, want)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called before the input was found bad: %s", b)
	}
}

func TestCheckBadInputExits2(t *testing.T) {
	fakeTools(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to check"},
		{[]string{"-f", "nope.yaml"}, "no such file"},
		{[]string{"-f", "../../spec/testdata/pull-always.yaml"}, "imagePullPolicy Always"},
		{[]string{"--manifest", "../../spec/testdata/web.yaml", "--image", "example/web:dev", "--port", "8080", "--path", "x"}, `path "x"`},
		{[]string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--disruption", "melt=2"}, `disruption "melt"`},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"-f", "a.yaml", "--manifest", "b.yaml"}, "not both"},
	} {
		code, _, stderr := checkCLI(t, tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("check %q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// With -f, a flag that describes what the file describes is refused in one line naming each
// with its field, before any work; it used to be dropped without a word (the dry run listed
// only the file's rows). The cluster's flags still replace the file's cluster section.
func TestCheckFileRefusesItsFlags(t *testing.T) {
	calls := fakeTools(t)
	code, stdout, stderr := checkCLI(t, "-f", "../../spec/testdata/good.yaml", "--disruption", "drain-node", "--rate", "50", "--prestop-sleep", "3s", "--dry-run")
	want := "rollcheck check: with -f the check file says the app, its load, disruptions and variants: --rate (load.rate), --disruption (disruptions), --prestop-sleep (a variant's preStop) would not be used; set them in the file, or drop -f"
	if code != exitBadInput || strings.TrimSpace(stderr) != want || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, want)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a tool was called: %s", b)
	}
	if code, _, stderr := checkCLI(t, "-f", "../../spec/testdata/good.yaml", "--kubeconfig", "/nonexistent/kubeconfig", "--parallel", "1", "--dry-run"); strings.Contains(stderr, "would not be used") {
		t.Errorf("--kubeconfig with -f: exit %d, %s", code, stderr)
	}
}

func TestCheckFlagsDryRun(t *testing.T) {
	code, stdout, stderr := checkCLI(t, "--manifest", "../../spec/testdata/web.yaml", "--image", "example/web:dev",
		"--port", "8080", "--prestop-sleep", "5s", "--grace", "30", "--disruption", "delete-pod=2", "--dry-run")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"# variant prestop-5s", "sleep:\n", "seconds: 5", "terminationGracePeriodSeconds: 30", "imagePullPolicy: Never", "nodePort: 30080"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "row: prestop-5s under delete-pod×2") {
		t.Errorf("stderr %q", stderr)
	}
}

// A bad cluster knob is reported before any Docker work (no image built or inspected).
func TestCheckBadKnobBeforeDocker(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_WORKERS", "abc")
	code, _, stderr := checkCLI(t, "-f", "../../spec/testdata/good.yaml")
	if code != exitBadInput || !strings.Contains(stderr, `ROLLCHECK_WORKERS="abc"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stderr, "not in the local Docker engine") {
		t.Errorf("the images were checked before the knob: %q", stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("tools called: %s", b)
	}
}

// An existing cluster by kubeconfig: every missing or bad piece is one line and exit 2 before
// any work, and no cluster tool is ever called (no kind, no image load).
func TestCheckExistingClusterRefusals(t *testing.T) {
	calls := fakeTools(t)
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "kubeconfig")
	// Nothing listens on port 1 of the loopback address.
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(unreachable, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(kubeconfig string, more ...string) []string {
		return append([]string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--kubeconfig", kubeconfig, "--artifacts", dir}, more...)
	}
	for _, tc := range []struct {
		name, loadImage string
		args            []string
		want            string
	}{
		{"bad image registry", "", args(unreachable, "--image-registry", "https://r.example"), `image registry "https://r.example": want a host[:port][/path] without a scheme`},
		{"bad load image", "rollcheck/load:latest", args(unreachable), "ROLLCHECK_LOAD_IMAGE"},
		{"no kubeconfig file", "rollcheck/load:v1", args(filepath.Join(dir, "nope")), "no such file"},
		{"API server silent", "rollcheck/load:v1", args(unreachable), "the API server at https://127.0.0.1:1 does not answer"},
		{"host load asked", "rollcheck/load:v1", args(unreachable, "--load-from", "host"), "loaded from inside only"},
	} {
		t.Setenv("ROLLCHECK_LOAD_IMAGE", tc.loadImage)
		code, _, stderr := checkCLI(t, tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
	}
	// The same through a check file's cluster section (a path relative to the file).
	file := func(cluster string) string { return webCheckFile(t, dir, cluster) }
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "")
	for _, tc := range []struct{ name, cluster, want string }{
		{"file: bad image registry", "cluster: {kubeconfig: kubeconfig, imageRegistry: 'r.example/'}\n", `cluster.imageRegistry "r.example/"`},
		{"file: API server silent", "cluster: {kubeconfig: kubeconfig, loadImage: 'rollcheck/load:v1'}\n", "the API server at https://127.0.0.1:1 does not answer"},
		{"file: no kubeconfig file", "cluster: {kubeconfig: nope, loadImage: 'rollcheck/load:v1'}\n", "cluster.kubeconfig " + filepath.Join(dir, "nope") + ": no such file"},
		{"file: bad load image", "cluster: {kubeconfig: kubeconfig, loadImage: 'rollcheck/load:latest'}\n", "cluster.loadImage"},
		{"file: host load", "load: {from: host}\ncluster: {kubeconfig: kubeconfig, loadImage: 'rollcheck/load:v1'}\n", "loaded from inside only"},
	} {
		code, _, stderr := checkCLI(t, "-f", file(tc.cluster), "--artifacts", dir)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Rows run in parallel unless they must run alone (check.Plan.RunsAlone): host rows share the
// NodePort, a drain cordons a node. Without --parallel such rows run one at a time; --parallel
// above 1 is refused when every row must, and taken when some may run beside others.
func TestCheckParallel(t *testing.T) {
	calls := fakeTools(t)
	base := []string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--dry-run"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitPass, ""}, // host rows, by default one at a time
		{[]string{"--parallel", "1"}, exitPass, ""},
		{[]string{"--parallel", "2"}, exitBadInput, "--parallel 2: every row must run alone (load from the host: the NodePort is one"},
		{[]string{"--parallel", "9", "--load-from", "cluster"}, exitBadInput, "--parallel 9: want 1 to 8"},
		{[]string{"--parallel", "0"}, exitBadInput, "--parallel 0: want 1 to 8"},
		{[]string{"--parallel", "3", "--load-from", "cluster"}, exitPass, ""},
		{[]string{"--parallel", "2", "--load-from", "cluster", "--disruption", "drain-node"}, exitBadInput, "--parallel 2: every row must run alone (a node drain cordons"},
		{[]string{"--parallel", "3", "--load-from", "cluster", "--disruption", "drain-node", "--disruption", "rollout-restart"}, exitPass, ""},
	} {
		code, _, stderr := checkCLI(t, append(slices.Clone(base), tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	t.Setenv("ROLLCHECK_PROCS", "many")
	if code, _, stderr := checkCLI(t, base...); code != exitBadInput || !strings.Contains(stderr, `ROLLCHECK_PROCS="many"`) {
		t.Errorf("a bad ROLLCHECK_PROCS: exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

// -o takes markdown or json, said before any work.
func TestCheckOutputFormat(t *testing.T) {
	calls := fakeTools(t)
	code, _, stderr := checkCLI(t, "-o", "yaml", "-f", "../../spec/testdata/good.yaml", "--artifacts", t.TempDir())
	if want := `rollcheck check: -o "yaml": want markdown or json`; code != exitBadInput || strings.TrimSpace(stderr) != want {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called before the input was found bad: %s", b)
	}
	if code, help, _ := rollcheck("help", "check"); code != exitPass || !strings.Contains(help, "-o FORMAT") {
		t.Errorf("rollcheck help check (exit %d) does not list -o FORMAT:\n%s", code, help)
	}
}

// With -o json the rows go to stdout as the JSON conformance.json holds, byte for byte; by
// default as the conformance table.
func TestRowsOutPrint(t *testing.T) {
	started := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	run := report.NewRun([]check.Row{
		{Suite: "s", Config: check.Applied{Name: "as-is", Disruption: check.RolloutRestart, Count: 3}, Started: started,
			Verdict: check.Verdict{Status: check.Pass, Reason: "0 failures"}},
		{Suite: "s", Config: check.Applied{Name: "prestop-5s", Disruption: check.RolloutRestart, Count: 3}, Started: started.Add(time.Minute),
			Verdict: check.Verdict{Status: check.Fail, Reason: "2 failures"}},
	})
	dir := t.TempDir()
	if _, err := report.WriteAll(dir, run); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var js, md, table bytes.Buffer
	if err := (rowsOut{w: &js, format: outputJSON}).print(run); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js.Bytes(), file) {
		t.Errorf("-o json printed something else than %s:\n%s\nwant:\n%s", report.JSONFile, js.Bytes(), file)
	}
	got, err := report.ReadRun(&js)
	if err != nil || got.SchemaVersion != report.SchemaVersion || len(got.Rows) != 2 {
		t.Errorf("-o json read back: schemaVersion %d, %d rows, %v", got.SchemaVersion, len(got.Rows), err)
	}
	if err := (rowsOut{w: &md, format: outputMarkdown}).print(run); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteMarkdown(&table); err != nil {
		t.Fatal(err)
	}
	if md.String() != table.String() || !strings.Contains(md.String(), "| as-is: ") {
		t.Errorf("-o markdown printed:\n%s\nwant the conformance table:\n%s", md.String(), table.String())
	}
}

// -o json means JSON in a dry run too: one array, a variant each, with its rows and objects. It
// printed YAML before.
func TestCheckDryRunJSON(t *testing.T) {
	code, stdout, stderr := checkCLI(t, "-f", "../../spec/testdata/good.yaml", "-o", "json", "--dry-run")
	if code != exitPass {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		Variant string
		Rows    []string
		Objects []map[string]any
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if len(got) != 2 || got[0].Variant != "as-is" || got[1].Variant != "prestop-5s" || len(got[1].Rows) != 1 || got[1].Rows[0] != "rollout-restart×3" {
		t.Fatalf("variants %+v", got)
	}
	kinds := ""
	for _, o := range got[1].Objects {
		kinds += fmt.Sprint(o["kind"]) + " "
	}
	if !strings.Contains(kinds, "Deployment") || !strings.Contains(stdout, `"preStop"`) {
		t.Errorf("prestop-5s's objects (%s) lack its Deployment or preStop:\n%s", kinds, stdout)
	}
}

// A run that will make rollcheck's own images (here the load pods') from an executable no pod can
// run, with no Linux build given and no go command to build one, is one line and exit 2 before any
// cluster work: on a Mac without Go, what to set says the line.
func TestCheckOwnImagesPreflight(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	docker := "#!/bin/sh\ncase \"$1\" in info) echo 28.2.2;; image) exit 0;; *) echo \"docker $*\" >> " + calls + "; exit 1;; esac\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(docker), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir) // docker, and no go
	code, _, stderr := checkCLI(t, "--manifest", "../../spec/testdata/web.yaml", "--image", "example/web:dev", "--port", "8080",
		"--load-from", "cluster", "--artifacts", t.TempDir())
	if code != exitBadInput || !strings.Contains(stderr, "ROLLCHECK_LINUX_EXECUTABLE") || !strings.Contains(stderr, "install Go") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want one line naming ROLLCHECK_LINUX_EXECUTABLE and Go", code, stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called before the refusal: %s", b)
	}
}
