package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

func tuneCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return rollcheck(append([]string{"tune"}, args...)...)
}

// parseTune parses rollcheck tune's flags as the command table does and checks them.
func parseTune(args []string) (*tuneArgs, error) {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := newTuneFlags(fs)
	operands, err := parse(fs, args)
	if err != nil {
		return nil, err
	}
	return f.args(operands)
}

// noToolCalls fails the test when fakeTools recorded a call (into calls).
func noToolCalls(t *testing.T, calls string) {
	t.Helper()
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a Docker or cluster tool was called: %s", b)
	}
}

// Bad input is one line and exit 2, before any Docker or cluster tool runs.
func TestTuneBadInputExits2(t *testing.T) {
	calls := fakeTools(t)
	good := "../../spec/testdata/good.yaml"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to tune"},
		{[]string{"--sample", "exit", "-f", good}, "not both"},
		{[]string{"--sample", "melt"}, `--sample "melt": want exit, drain or ignore`},
		{[]string{"--sample", "exit", "--disruption", "melt"}, `disruption "melt"`},
		{[]string{"--sample", "exit", "--count", "30"}, "--count 30: want 1 to 20"},
		{[]string{"--sample", "exit", "--variant", "x"}, "--variant and --exec are for -f"},
		{[]string{"--sample", "exit", "--min", "5s", "--max", "5s"}, "min 5s is not below max 5s"},
		{[]string{"--sample", "exit", "--max", "11m"}, "max 11m0s: want at most 10m0s"},
		{[]string{"--sample", "exit", "--resolution", "50ms"}, "resolution 50ms: want a multiple of 100ms"},
		{[]string{"--sample", "exit", "extra"}, "unexpected arguments"},
		{[]string{"--sample", "exit", "--bound", "0.5%"}, "bound 0.005: want 0.01 to 0.5"},
		{[]string{"--sample", "exit", "--bound", "lots"}, `invalid value "lots" for flag -bound: want a probability, as 0.05 or 5%`},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"--min", "soon", "--sample", "exit"}, `invalid value "soon" for flag -min`},
		{[]string{"-f", "nope.yaml"}, "no such file"},
		{[]string{"-f", good}, "has 2 variants (as-is, prestop-5s): name the base with --variant"},
		{[]string{"-f", good, "--variant", "nope"}, `--variant "nope": ../../spec/testdata/good.yaml has as-is, prestop-5s`},
		{[]string{"-f", good, "--variant", "as-is", "--exec", "sleep 1"}, "put {} where the seconds go"},
		{[]string{"-f", good, "--variant", "as-is", "--min", "500ms"}, "the native sleep action takes whole seconds"},
	} {
		code, stdout, stderr := tuneCLI(t, tc.args...)
		if code != exitBadInput || !strings.HasPrefix(stderr, "rollcheck tune: ") || !strings.Contains(stderr, tc.want) ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
			t.Errorf("tune %q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	noToolCalls(t, calls)
}

// A bad cluster knob, and then an image missing from the local Docker engine, are bad input
// too, found before any cluster work.
func TestTuneBadKnobAndImageBeforeCluster(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_WORKERS", "abc")
	code, _, stderr := tuneCLI(t, "--sample", "exit")
	if code != exitBadInput || !strings.Contains(stderr, `ROLLCHECK_WORKERS="abc"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	t.Setenv("ROLLCHECK_WORKERS", "")
	code, _, stderr = tuneCLI(t, "-f", "../../spec/testdata/good.yaml", "--variant", "as-is", "--artifacts", t.TempDir())
	if want := "rollcheck tune: image example/web:dev is not in the local Docker engine"; code != exitBadInput || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, stderr, want)
	}
	noToolCalls(t, calls)
}

// --dry-run checks the input and says what would be tuned, with no tool called.
func TestTuneDryRun(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv(knobs.EnvProcs, "3") // the default, whatever the environment says
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "exit"}, "would tune sample-exit under rollout-restart×5: preStop 0s to 20s by 500ms as httpGet " +
			"/prestop?sleep=<d> on the sample app (exit on SIGTERM), grace period 30s; threshold 0 failures; answer bound: a deletion fails " +
			"with p < 5 % at 95 % (59 deletions alone, none failing); 1 probe(s) at once; artifacts in "},
		{[]string{"--sample", "exit", "--bound", "10%"}, "answer bound: a deletion fails with p < 10 % at 95 % (29 deletions alone, none failing)"},
		{[]string{"--sample", "exit", "--bound", "0.2"}, "answer bound: a deletion fails with p < 20 % at 95 % (14 deletions alone, none failing)"},
		{[]string{"-f", "../../spec/testdata/good.yaml", "--variant", "as-is", "--exec", "sleep {}", "--max", "10s"},
			"would tune as-is under rollout-restart×3: preStop 0s to 10s by 500ms as exec sleep 1.5 (for 1.5s); threshold ≥ 99% per disruption;"},
		{[]string{"-f", "../../spec/testdata/good.yaml", "--variant", "prestop-5s"}, "as the native sleep action"},
		// Probes whose load comes from load pods share nothing: as many at once as ROLLCHECK_PROCS allows.
		{[]string{"-f", clusterLoad(t), "--variant", "as-is"}, "; 3 probe(s) at once;"},
		{[]string{"-f", clusterLoad(t), "--variant", "as-is", "--parallel", "2"}, "; 2 probe(s) at once;"},
	} {
		code, stdout, stderr := tuneCLI(t, append(tc.args, "--dry-run")...)
		if code != exitPass || !strings.Contains(stdout, tc.want) {
			t.Errorf("tune %q: exit %d, stdout %q, stderr %q; want %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	noToolCalls(t, calls)
}

func TestTuneHelp(t *testing.T) {
	code, stdout, _ := tuneCLI(t, "-h")
	if code != exitPass || !strings.HasPrefix(stdout, "usage: rollcheck tune [flags] --sample exit|drain|ignore | -f CHECK.yaml") ||
		!strings.Contains(stdout, "  --exec CMD\n") || !strings.Contains(stdout, "the image needs a\n    \tsleep binary") {
		t.Errorf("exit %d, help:\n%s", code, stdout)
	}
}

// The flags reach the input: the base Plan, its settings and the shared flags (tunefront's tests
// check what New builds of them).
func TestParseTuneSample(t *testing.T) {
	t.Setenv("ARTIFACTS", "/tmp/arts")
	ta, err := parseTune([]string{"--sample", "exit"})
	if err != nil {
		t.Fatal(err)
	}
	if b := ta.base; ta.sample != "exit" || b.Variant.Name != "sample-exit" || b.Disruption != (check.Disruption{Kind: check.RolloutRestart, Count: 5}) {
		t.Errorf("base %+v", b)
	}
	if ta.Artifacts != "/tmp/arts/tune" || ta.opts.Max != 20*time.Second || ta.opts.Resolution != 500*time.Millisecond || ta.opts.PreStop == nil {
		t.Errorf("artifacts %s, options %+v", ta.Artifacts, ta.opts)
	}

	ta, err = parseTune([]string{"--sample", "drain", "--disruption", "delete-pod", "--count", "2", "--keep-cluster", "--max", "8s"})
	if err != nil {
		t.Fatal(err)
	}
	if ta.base.Variant.Name != "sample-drain" || ta.base.Disruption != (check.Disruption{Kind: check.DeletePod, Count: 2}) || !ta.KeepCluster || ta.opts.Max != 8*time.Second {
		t.Errorf("args %+v", ta)
	}
}

func TestParseTuneCheckFile(t *testing.T) {
	ta, err := parseTune([]string{"-f", "../../spec/testdata/good.yaml", "--variant", "prestop-5s", "--exec", "/bin/sleep {}", "--count", "4"})
	if err != nil {
		t.Fatal(err)
	}
	if b := ta.base; b.Variant.Name != "prestop-5s" || b.Disruption != (check.Disruption{Kind: check.RolloutRestart, Count: 4}) ||
		b.Variant.Expect.Kind != check.ExpectZero || ta.check == nil || ta.sample != "" {
		t.Errorf("base %+v", b)
	}
	if got := ta.opts.PreStop(1500 * time.Millisecond); !slices.Equal(got.Exec, []string{"/bin/sleep", "1.5"}) {
		t.Errorf("preStop 1.5s: %+v", got)
	}
}

// clusterLoad is spec/testdata/good.yaml with its load from load pods, in a temporary directory.
func clusterLoad(t *testing.T, disruptions ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../spec/testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(disruptions) > 0 {
		b = []byte(strings.Replace(string(b), "disruptions: [{kind: rollout-restart, count: 3}]", "disruptions: ["+strings.Join(disruptions, ", ")+"]", 1))
	}
	dir := t.TempDir()
	for _, m := range []string{"web.yaml"} {
		mb, err := os.ReadFile(filepath.Join("../../spec/testdata", m))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m), mb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := filepath.Join(dir, "check.yaml")
	if err := os.WriteFile(f, []byte(string(b)+"\nload: {from: cluster}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// --parallel above 1 is refused, before any work, for probes that must run alone
// (check.Plan.RunsAlone), with the reason: load from the host, or a node drain from the cluster.
func TestTuneParallelAloneRefused(t *testing.T) {
	calls := fakeTools(t)
	drain := clusterLoad(t, "{kind: rollout-restart}", "{kind: drain-node}")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "exit"}, "--parallel 2: each probe must run alone (load from the host: the NodePort is one"},
		{[]string{"-f", drain, "--variant", "as-is", "--disruption", "drain-node"}, "--parallel 2: each probe must run alone (a node drain cordons"},
	} {
		code, _, stderr := tuneCLI(t, append(tc.args, "--parallel", "2", "--dry-run")...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("tune %q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	// The same check's rollout probes may run beside each other.
	if code, stdout, stderr := tuneCLI(t, "-f", drain, "--variant", "as-is", "--disruption", "rollout-restart", "--parallel", "2", "--dry-run"); code != exitPass || !strings.Contains(stdout, "; 2 probe(s) at once;") {
		t.Errorf("rollout-restart from the cluster: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	noToolCalls(t, calls)
}

// A check file's warnings reach stderr from check and tune alike: settle, quiet's former name,
// gives one. Tune, which runs on its own kind cluster, does not warn about the cluster section's
// images.
func TestSettleWarnsInCheckAndTune(t *testing.T) {
	calls := fakeTools(t)
	base := clusterLoad(t) // beside web.yaml
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	settle, onCluster := filepath.Join(filepath.Dir(base), "settle.yaml"), filepath.Join(filepath.Dir(base), "on-cluster.yaml")
	if err := os.WriteFile(settle, append(b, "settle: 4s\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(onCluster, append(b, "settle: 4s\ncluster: {context: staging}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "warning: settle: deprecated, now named quiet"
	code, stdout, stderr := checkCLI(t, "-f", settle, "--dry-run")
	if code != exitPass || !strings.Contains(stderr, "rollcheck check: "+want) {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout, stderr, want)
	}
	code, stdout, stderr = tuneCLI(t, "-f", onCluster, "--variant", "as-is", "--dry-run")
	if code != exitPass || !strings.Contains(stderr, "rollcheck tune: "+want) || strings.Contains(stderr, "not loaded into an existing cluster") {
		t.Errorf("tune: exit %d, stdout %q, stderr %q; want exit 0 and %q, not the images' warning", code, stdout, stderr, want)
	}
	noToolCalls(t, calls)
}
