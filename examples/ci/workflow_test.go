// Package ci_test checks the GitHub Actions workflow users copy (rollcheck.yaml in this
// directory) against the rollcheck CLI of this module, so that the two cannot drift apart
// silently: every rollcheck command the workflow runs is run here on the example's files, with
// --dry-run where the command has one and on generated conformance.json files for compare.
// scripts/test.sh lints the workflow with actionlint.
package ci_test

import (
	"bytes"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/spec"
)

type workflow struct {
	Env  map[string]string `json:"env"`
	Jobs map[string]struct {
		If    string            `json:"if"`
		Env   map[string]string `json:"env"`
		Steps []step            `json:"steps"`
	} `json:"jobs"`
}

type step struct {
	Name string            `json:"name"`
	If   string            `json:"if"`
	Uses string            `json:"uses"`
	Run  string            `json:"run"`
	Env  map[string]string `json:"env"`
	With map[string]any    `json:"with"`
}

func (s step) String() string {
	if s.Name != "" {
		return fmt.Sprintf("step %q", s.Name)
	}
	return "step " + s.Uses
}

func readWorkflow(t *testing.T) workflow {
	t.Helper()
	b, err := os.ReadFile("rollcheck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("rollcheck.yaml: %v", err)
	}
	if len(w.Jobs) == 0 {
		t.Fatal("rollcheck.yaml: no jobs")
	}
	return w
}

// rollcheckLine matches a shell line that runs rollcheck: as its first command, after ; & | or
// (, or in a command substitution.
var rollcheckLine = regexp.MustCompile(`(^|[;&|(]\s*|\$\(\s*)rollcheck(\s|\)|$)`)

// rollcheckLines are the lines of a run: script that run rollcheck (continuation lines joined,
// comments left out).
func rollcheckLines(script string) []string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "#") && rollcheckLine.MatchString(l) {
			lines = append(lines, l)
		}
	}
	return lines
}

// shim stands in for rollcheck in the workflow's lines: it runs the CLI built from this module
// with --dry-run added for the commands that have one, runs compare, knobs and cluster
// default-image as they are (they create nothing), refuses anything else before it runs, and
// records every call (args, exit code, stdout) under $RC_CALLS.
const shim = `set -euo pipefail
rollcheck() {
  local call rc=0 extra=()
  call=$(mktemp -d "$RC_CALLS/call.XXXXXX")
  printf '%s\n' "$@" >"$call/args"
  case "${1:-} ${2:-}" in
    "check "* | "tune "*) extra=(--dry-run) ;;
    "compare "* | "knobs "* | "cluster default-image") ;;
    *) echo "the test knows no dry run for: rollcheck $*" >&2; echo 99 >"$call/rc"; return 99 ;;
  esac
  "$RC_BIN" "$@" "${extra[@]}" >"$call/stdout" || rc=$?
  echo "$rc" >"$call/rc"
  cat "$call/stdout"
  return "$rc"
}
`

// TestWorkflowRollcheckCommands runs every rollcheck command of the workflow, in a workspace
// laid out as the workflow's checkout is, against the CLI of this module.
func TestWorkflowRollcheckCommands(t *testing.T) {
	w := readWorkflow(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "rollcheck")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rollcheck").CombinedOutput(); err != nil {
		t.Fatalf("go build the rollcheck CLI: %v\n%s", err, out)
	}
	examples, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ws, runner, calls := filepath.Join(tmp, "workspace"), filepath.Join(tmp, "runner"), filepath.Join(tmp, "calls")
	for _, d := range []string{ws, runner, calls} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(examples, filepath.Join(ws, "examples")); err != nil {
		t.Fatal(err)
	}
	github := map[string]string{
		"RUNNER_TEMP": runner, "GITHUB_WORKSPACE": ws, "GITHUB_OUTPUT": filepath.Join(runner, "output"),
		"GITHUB_REPOSITORY": "example/app", "GITHUB_REPOSITORY_OWNER": "Example", "GITHUB_WORKFLOW": "rollcheck", "GITHUB_EVENT_NAME": "pull_request",
		"RC_BIN": bin, "RC_CALLS": calls,
	}
	for _, k := range []string{"CHECK_FILE", "REPORTS", "BASE_REPORTS"} {
		if w.Env[k] == "" || strings.Contains(w.Env[k], "${{") {
			t.Fatalf("the workflow's env has no plain %s: the test reads it", k)
		}
	}
	// What the check step leaves for compare (the check runs dry here, so it writes no
	// report), and what the base step downloads: two runs of the check file's rows.
	writeRun(t, bin, filepath.Join(ws, w.Env["BASE_REPORTS"]), filepath.Join(examples, "..", w.Env["CHECK_FILE"]))
	rows := writeRun(t, bin, filepath.Join(ws, w.Env["REPORTS"]), filepath.Join(examples, "..", w.Env["CHECK_FILE"]))

	// The in-place job's kubeconfig, as its step writes it from the secret: a dry run reads it
	// (its context) and contacts no cluster.
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: staging, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: rollcheck, user: {token: not-a-token}}]
contexts: [{name: staging, context: {cluster: staging, user: rollcheck}}]
current-context: staging
`
	if err := os.WriteFile(filepath.Join(runner, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, job := range w.Jobs {
		for _, s := range job.Steps {
			for _, l := range rollcheckLines(s.Run) {
				lines++
				if strings.Contains(l, "${{") {
					t.Errorf("%s: %q: pass expressions through env, not into a rollcheck line", s, l)
					continue
				}
				env := os.Environ()
				for _, m := range []map[string]string{w.Env, job.Env, s.Env, github} {
					for k, v := range m {
						if strings.Contains(v, "${{") {
							v = "(an expression)"
						}
						env = append(env, k+"="+v)
					}
				}
				cmd := exec.Command("bash", "-c", shim+l)
				cmd.Dir, cmd.Env = ws, env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					t.Errorf("%s: %q: %v\n%s", s, l, err, stderr.String())
				}
			}
		}
	}
	ran := readCalls(t, calls)
	if len(ran) < lines {
		t.Errorf("%d lines run rollcheck, %d calls recorded", lines, len(ran))
	}
	seen := map[string]bool{}
	for _, c := range ran {
		seen[c.args[0]] = true
		t.Logf("ran rollcheck %s: exit %s", strings.Join(c.args, " "), c.rc)
		if c.rc != "0" {
			t.Errorf("rollcheck %s: exit %s, want 0", strings.Join(c.args, " "), c.rc)
		}
		switch c.args[0] {
		case "check":
			switch {
			case slices.Contains(c.args, "--in-place"):
				// In place, the dry run says what each variant would change where it runs.
				if !strings.Contains(c.stdout, "# variant prestop-5s:") {
					t.Errorf("rollcheck %s --dry-run said nothing of the variant prestop-5s:\n%s", strings.Join(c.args, " "), c.stdout)
				}
			case !slices.Contains(c.args, "-f") || !strings.Contains(c.stdout, "kind: Deployment"):
				t.Errorf("rollcheck %s --dry-run printed no Deployment:\n%s", strings.Join(c.args, " "), c.stdout)
			}
		case "compare":
			if !strings.HasPrefix(c.stdout, "## rollcheck compare\n") || !strings.Contains(c.stdout, fmt.Sprintf("compare: %d rows, 0 significant regressions", rows)) {
				t.Errorf("rollcheck %s printed no comparison:\n%s", strings.Join(c.args, " "), c.stdout)
			}
		}
	}
	for _, want := range []string{"check", "compare"} {
		if !seen[want] {
			t.Errorf("the workflow runs no rollcheck %s", want)
		}
	}
}

type call struct {
	args       []string
	rc, stdout string
}

func readCalls(t *testing.T, dir string) []call {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dir, "call.*"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []call
	for _, d := range dirs {
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(d, name))
			return string(b)
		}
		calls = append(calls, call{args: strings.Split(strings.TrimSuffix(read("args"), "\n"), "\n"),
			rc: strings.TrimSpace(read("rc")), stdout: read("stdout")})
	}
	return calls
}

// writeRun writes dir/conformance.json as the check step would leave it: one row of every plan
// of the check file (public API), each written as engine.Run writes its row (rowfile) and merged by
// `rollcheck report` (the CLI built from this module). Each row has the requests the variant's
// expectation predicts: failures in every disruption for a negative control (failuresExpected),
// none otherwise; and each must pass by the check file's own expectation, so the rows agree
// with whatever the check file says. It returns the number of rows.
func writeRun(t *testing.T, bin, dir, checkFile string) int {
	t.Helper()
	c, err := spec.Load(checkFile)
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := c.Plans()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for _, p := range plans {
		a := p.Applied()
		class := loadgen.ClassEOF
		if len(a.Expect.Classes) > 0 {
			class = a.Expect.Classes[0]
		}
		var ds []check.DisruptionResult
		s := loadgen.Summary{Failures: map[loadgen.Class]int{}, Valid: true}
		for n := 1; n <= max(a.Count, 1); n++ {
			d := check.DisruptionResult{Kind: a.Disruption, N: n, Started: start, Settled: start.Add(10 * time.Second), Requests: 300}
			if a.Expect.Kind == check.ExpectFailures {
				d.Failed, d.Failures = 12, map[loadgen.Class]int{class: 12}
				s.Failures[class] += 12
			}
			d.SuccessRatio = float64(d.Requests-d.Failed) / float64(d.Requests)
			s.Requests, s.Failed = s.Requests+d.Requests, s.Failed+d.Failed
			ds = append(ds, d)
		}
		s.OK = s.Requests - s.Failed
		s.SuccessRatio, s.FailureRatio = float64(s.OK)/float64(s.Requests), float64(s.Failed)/float64(s.Requests)
		row := check.Row{Suite: c.Name(), Config: a, Summary: s, Disruptions: ds, Verdict: a.Expect.Judge(s, ds...), Started: start}
		if row.Verdict.Status != check.Pass {
			t.Fatalf("%s: the rows its expectation predicts do not pass it: %s", a.Name, row.Verdict.Reason)
		}
		if _, err := rowfile.Write(dir, row); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(bin, "report", dir).CombinedOutput(); err != nil {
		t.Fatalf("rollcheck report %s: %v\n%s", dir, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "conformance.json")); err != nil {
		t.Fatal(err)
	}
	return len(plans)
}

var (
	dockerBuild = regexp.MustCompile(`docker build (?:.* )?-t (\S+)`)
	pinned      = regexp.MustCompile(`@(v[0-9]+(\.[0-9]+)*|[0-9a-f]{40})$`)
	goDirective = regexp.MustCompile(`(?m)^go ([0-9.]+)$`)
	downloadAs  = regexp.MustCompile(`gh run download .*--name (\S+)`)
)

// TestWorkflowShape pins what the workflow's promises rest on: the image the check file loads
// is the one it builds, every action is pinned, Go is new enough for this module, the reports
// are uploaded also when the check fails, and the base is downloaded under the name they are
// uploaded as.
func TestWorkflowShape(t *testing.T) {
	w := readWorkflow(t)
	c, err := spec.Load(filepath.Join("../..", w.Env["CHECK_FILE"]))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	needGo := goDirective.FindSubmatch(gomod)
	if needGo == nil {
		t.Fatal("go.mod: no go directive")
	}
	var built []string
	uploaded, downloaded := map[string]string{}, map[string]string{}
	for jobName, job := range w.Jobs {
		checks := ""
		for _, s := range job.Steps {
			for _, l := range rollcheckLines(s.Run) {
				if strings.Contains(l, "rollcheck check") {
					checks += l + "\n"
				}
			}
		}
		for _, s := range job.Steps {
			for _, m := range dockerBuild.FindAllStringSubmatch(s.Run, -1) {
				built = append(built, m[1])
			}
			// rollcheck makes the load pods' image of its own binary and refuses a cgo build,
			// which go install gives on a runner with a C compiler.
			if strings.Contains(s.Run, "go install") && !strings.Contains(s.Run, "CGO_ENABLED=0 go install") {
				t.Errorf("%s: go install without CGO_ENABLED=0: a dynamically linked rollcheck cannot make its load image", s)
			}
			if m := downloadAs.FindStringSubmatch(s.Run); m != nil {
				downloaded[jobName] = m[1]
				if !strings.Contains(s.If, "pull_request") {
					t.Errorf("%s runs without a pull request (if: %q)", s, s.If)
				}
			}
			if s.Uses == "" {
				continue
			}
			if !pinned.MatchString(s.Uses) {
				t.Errorf("%s: %s is not pinned to a version tag or a commit", s, s.Uses)
			}
			switch name, _, _ := strings.Cut(s.Uses, "@"); name {
			case "actions/setup-go":
				v, _ := s.With["go-version"].(string)
				if version.Compare("go"+v, "go"+string(needGo[1])) < 0 {
					t.Errorf("%s: go-version %q, want at least %s (go.mod)", s, v, needGo[1])
				}
			case "actions/upload-artifact":
				uploaded[jobName], _ = s.With["name"].(string)
				if !strings.Contains(s.If, "always()") && !strings.Contains(s.If, "!cancelled()") {
					t.Errorf("%s: if %q: the reports must be uploaded also when the check fails", s, s.If)
				}
				// The directory the job's rollcheck check writes its reports into.
				p, _ := s.With["path"].(string)
				m := envRef.FindStringSubmatch(p)
				if m == nil || !strings.Contains(checks, `--artifacts "$`+m[1]+`"`) {
					t.Errorf("job %s, %s: path %q, want ${{ env.NAME }} of the NAME its rollcheck check writes to (--artifacts \"$NAME\")", jobName, s, p)
				}
			}
		}
	}
	for _, img := range c.Images() {
		if !slices.Contains(built, img) {
			t.Errorf("the check file loads %s; the workflow builds %v", img, built)
		}
	}
	if len(downloaded) != 1 {
		t.Errorf("the base is downloaded in jobs %v, want one", downloaded)
	}
	for name, d := range downloaded {
		if uploaded[name] == "" || uploaded[name] != d {
			t.Errorf("job %s: reports uploaded as %q, the base downloaded as %q", name, uploaded[name], d)
		}
	}
}

var envRef = regexp.MustCompile(`^\$\{\{ env\.([A-Z_]+) \}\}$`)

// The job in-place checks a running Deployment: never on a pull request (it restarts a shared
// cluster's pods), with --in-place and a check file that names the Deployment where it runs,
// only once its kubeconfig secret is set, and as the least-privileged ServiceAccount's
// kubeconfig, never the runner's.
func TestWorkflowInPlaceJob(t *testing.T) {
	w := readWorkflow(t)
	job, ok := w.Jobs["in-place"]
	if !ok {
		t.Fatal("the workflow has no job in-place")
	}
	if cond := job.If; strings.Contains(cond, "pull_request") || !strings.Contains(cond, "workflow_dispatch") || !strings.Contains(cond, "schedule") {
		t.Errorf("job in-place runs if %q; want on workflow_dispatch and schedule only", cond)
	}
	file := job.Env["IN_PLACE_FILE"]
	c, err := spec.Load(filepath.Join("../..", file))
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := c.Plans()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plans {
		if p := r.Plan(); !p.InPlace() {
			t.Errorf("%s: variant %s is not checked in place (app.namespace, app.deployment)", file, p.Variant.Name)
		}
	}
	found := false
	for _, s := range job.Steps {
		for _, l := range rollcheckLines(s.Run) {
			if !strings.Contains(l, "rollcheck check") {
				continue
			}
			found = true
			for _, want := range []string{`-f "$IN_PLACE_FILE"`, "--in-place", `--kubeconfig "$RUNNER_TEMP/kubeconfig"`, "--load-namespace"} {
				if !strings.Contains(l, want) {
					t.Errorf("%s: %q lacks %s", s, l, want)
				}
			}
			if !strings.Contains(s.If, "steps.kubeconfig.outputs.found == 'true'") {
				t.Errorf("%s runs if %q: not only once the kubeconfig secret is there", s, s.If)
			}
		}
	}
	if !found {
		t.Error("job in-place runs no rollcheck check")
	}
}

var (
	releaseTag    = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	pseudoVersion = regexp.MustCompile(`^v0\.0\.0-([0-9]{14})-([0-9a-f]{12})$`)
)

// git runs git in the repository this test is in.
func git(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", "../.."}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// The workflow installs a rollcheck that exists: a release tag of this repository, or the
// pseudo-version of a commit on its history (the form go install accepts: v0.0.0, the commit's
// time in UTC, its first 12 hex digits).
func TestWorkflowPinsAVersionThatExists(t *testing.T) {
	checkVersion(t, "ROLLCHECK_PIN", readWorkflow(t).Env["ROLLCHECK_PIN"])
}

// Copied as it is, the workflow's check step exits 0 only if every row of its check file passes.
// The example app exits at SIGTERM at once, and a rollout's endpoint removal races that SIGTERM,
// so a variant without a preStop drops requests: it passes only as a negative control, one that
// expects those failures.
func TestCopiedWorkflowExpectsTheExamplesFailures(t *testing.T) {
	w := readWorkflow(t)
	c, err := spec.Load(filepath.Join("../..", w.Env["CHECK_FILE"]))
	if err != nil {
		t.Fatal(err)
	}
	prestops := 0
	for _, v := range c.Variants {
		if v.PreStop != nil && !v.PreStop.None {
			prestops++
			continue
		}
		if v.Expect.FailuresExpected == nil {
			t.Errorf("variant %s has no preStop, so its rows drop requests, and expects none: the workflow copied as it is would exit 1", v.Name)
		}
	}
	if prestops == 0 {
		t.Error("no variant of the example has a preStop: nothing shows the fix")
	}
}
