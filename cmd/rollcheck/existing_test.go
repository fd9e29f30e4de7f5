package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
)

// writeKubeconfig writes a kubeconfig of one context per name, each with a cluster of its own
// at server, and current as its current context ("" for none); it returns the file's path.
func writeKubeconfig(t *testing.T, dir, file, server, current string, contexts ...string) string {
	t.Helper()
	var clusters, ctxs []string
	for _, c := range contexts {
		clusters = append(clusters, fmt.Sprintf("{name: %q, cluster: {server: %q}}", c+"-cluster", server))
		ctxs = append(ctxs, fmt.Sprintf("{name: %q, context: {cluster: %q, user: u}}", c, c+"-cluster"))
	}
	doc := "apiVersion: v1\nkind: Config\nclusters: [" + strings.Join(clusters, ", ") + "]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [" + strings.Join(ctxs, ", ") + "]\n"
	if current != "" {
		doc += fmt.Sprintf("current-context: %q\n", current)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An existing cluster is read as kubectl reads it: --kubeconfig's file alone, else KUBECONFIG's
// list merged (the first file that sets a context or the current context wins, a missing file
// is skipped), else ~/.kube/config; the context named, else the current one. resolve says which,
// in one line, and a context that is not there is an error that lists those that are.
func TestClusterRefResolve(t *testing.T) {
	dir := t.TempDir()
	a := writeKubeconfig(t, dir, "a", "https://127.0.0.1:6441", "ctx-a", "ctx-a")
	b := writeKubeconfig(t, dir, "b", "https://127.0.0.1:6442", "ctx-b", "ctx-b", "ctx-a")
	home := writeKubeconfig(t, dir, "home", "https://127.0.0.1:6443", "home", "home")
	none := writeKubeconfig(t, dir, "none", "https://127.0.0.1:6444", "", "one", "two")
	missing := filepath.Join(dir, "missing")
	defer func(h string) { kubeconfig.HomeFile = h }(kubeconfig.HomeFile)
	list := func(files ...string) string { return strings.Join(files, string(os.PathListSeparator)) }
	for _, tc := range []struct {
		name, env, home string
		ref             clusterRef
		host, which     string // which: the line resolve gives; or the error's text
	}{
		{"KUBECONFIG's list, the first file's current context", list(a, b), home, clusterRef{}, "https://127.0.0.1:6441",
			`context "ctx-a" (cluster "ctx-a-cluster", server https://127.0.0.1:6441) from KUBECONFIG (` + a + ", " + b + ")"},
		{"KUBECONFIG's list, a context of its second file", list(a, b), home, clusterRef{Context: "ctx-b"}, "https://127.0.0.1:6442",
			`context "ctx-b" (cluster "ctx-b-cluster", server https://127.0.0.1:6442) from KUBECONFIG (`},
		{"KUBECONFIG's list: the first file that names a context wins", list(b, a), home, clusterRef{Context: "ctx-a"}, "https://127.0.0.1:6442", `context "ctx-a"`},
		{"KUBECONFIG's list: a missing file is skipped", list(missing, b), home, clusterRef{}, "https://127.0.0.1:6442", `context "ctx-b"`},
		{"no KUBECONFIG: ~/.kube/config", "", home, clusterRef{}, "https://127.0.0.1:6443",
			`context "home" (cluster "home-cluster", server https://127.0.0.1:6443) from ` + home},
		{"--kubeconfig alone: KUBECONFIG is not read", list(a, b), home, clusterRef{Kubeconfig: home, Context: "ctx-a", By: "--kubeconfig home --context ctx-a"}, "",
			`--kubeconfig home --context ctx-a: no context "ctx-a" in ` + home + " (it has home)"},
		{"--kubeconfig, its current context", list(a, b), home, clusterRef{Kubeconfig: b}, "https://127.0.0.1:6442", `context "ctx-b" (cluster "ctx-b-cluster", server https://127.0.0.1:6442) from ` + b},
		{"no such context", a, home, clusterRef{Context: "prod", By: "--context prod"}, "",
			`--context prod: no context "prod" in KUBECONFIG (` + a + ") (it has ctx-a)"},
		{"no current context", none, home, clusterRef{By: "the check file's cluster section"}, "",
			"the check file's cluster section: KUBECONFIG (" + none + ") names no current context: name one with --context (it has one, two)"},
		{"no kubeconfig at all", "", missing, clusterRef{Context: "x", By: "--context x"}, "", "--context x: no context in " + missing},
		{"no --kubeconfig file", "", home, clusterRef{Kubeconfig: missing, By: "--kubeconfig missing"}, "", "--kubeconfig missing: stat " + missing + ": no such file"},
	} {
		t.Setenv("KUBECONFIG", tc.env)
		kubeconfig.HomeFile = tc.home
		cfg, which, err := tc.ref.Resolve()
		switch {
		case tc.host == "" && (err == nil || !strings.HasPrefix(err.Error(), tc.which)):
			t.Errorf("%s: error %v, want one starting %q", tc.name, err, tc.which)
		case tc.host != "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.host != "" && (cfg.Host != tc.host || !strings.HasPrefix(which, tc.which)):
			t.Errorf("%s: server %s, %q; want %s, %q", tc.name, cfg.Host, which, tc.host, tc.which)
		}
	}
}

// webCheckFile writes dir/check.yaml, a check of spec/testdata/web.yaml (one variant, a rollout
// restart) with more (its load or cluster section) appended; it returns the file's path.
func webCheckFile(t *testing.T, dir, more string) string {
	t.Helper()
	f := filepath.Join(dir, "check.yaml")
	doc := "apiVersion: rollcheck.io/v1alpha1\nkind: Check\napp: {manifests: [" + filepath.Join(mustAbs(t, "../../spec/testdata"), "web.yaml") + "], port: 8080}\n" +
		"disruptions: [{kind: rollout-restart}]\nvariants: [{name: as-is, expect: {failures: 0}}]\n" + more
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// inputOf is rollcheck check's input from args, or the error.
func inputOf(t *testing.T, args ...string) (*checkInput, error) {
	t.Helper()
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	f := newCheckFlags(fs)
	if _, err := parse(fs, args); err != nil {
		t.Fatal(err)
	}
	return f.input(io.Discard)
}

// Which cluster a check runs on: --kubeconfig and --context, which replace the check file's
// cluster section (its load image still counts), else that section, else kind, whatever
// KUBECONFIG says: a KUBECONFIG in the user's shell never moves a check onto that cluster.
func TestCheckWhichCluster(t *testing.T) {
	dir := t.TempDir()
	kc := writeKubeconfig(t, dir, "kubeconfig", "https://127.0.0.1:1", "x", "x")
	t.Setenv("KUBECONFIG", kc)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "")
	web := []string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080"}
	file := webCheckFile(t, dir, "cluster: {kubeconfig: kubeconfig, context: x, loadImage: 'rollcheck/load:v1'}\n")
	for _, tc := range []struct {
		name      string
		args      []string
		want      *clusterRef
		loadImage string
	}{
		{"no flag, no section: kind, KUBECONFIG set or not", web, nil, ""},
		{"--context: KUBECONFIG's files", append(web, "--context", "x"), &clusterRef{Context: "x", By: "--context x"}, ""},
		{"--kubeconfig", append(web, "--kubeconfig", kc), &clusterRef{Kubeconfig: kc, By: "--kubeconfig " + kc}, ""},
		{"both", append(web, "--kubeconfig", kc, "--context", "x"), &clusterRef{Kubeconfig: kc, Context: "x", By: "--kubeconfig " + kc + " --context x"}, ""},
		{"the check file's section", []string{"-f", file}, &clusterRef{Kubeconfig: kc, Context: "x", By: "the check file's cluster section"}, "rollcheck/load:v1"},
		{"--context replaces the section, its load image stays", []string{"-f", file, "--context", "y"}, &clusterRef{Context: "y", By: "--context y"}, "rollcheck/load:v1"},
	} {
		in, err := inputOf(t, tc.args...)
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case (in.Existing == nil) != (tc.want == nil) || in.Existing != nil && *in.Existing != *tc.want:
			t.Errorf("%s: cluster %+v, want %+v", tc.name, in.Existing, tc.want)
		case in.LoadImage != tc.loadImage:
			t.Errorf("%s: load image %q, want %q", tc.name, in.LoadImage, tc.loadImage)
		case in.Existing != nil:
			for _, p := range checkinput.Plans(in.Plans) {
				if p.Load.From != "cluster" || len(p.App.Images) > 0 {
					t.Errorf("%s: an existing cluster's plan loads from %q with images %v", tc.name, p.Load.From, p.App.Images)
				}
			}
		}
	}
	if _, err := inputOf(t, append(web, "--context", "x", "--load-from", "host")...); err == nil || !strings.Contains(err.Error(), "--context x: an existing cluster is loaded from inside only") {
		t.Errorf("--context with load from the host: %v", err)
	}
}

// --dry-run says which cluster the check would run on, reading the kubeconfig and asking no
// API server; on kind, with KUBECONFIG set, that KUBECONFIG is not read.
func TestCheckDryRunSaysWhichCluster(t *testing.T) {
	dir := t.TempDir()
	// Nothing listens on port 1 of the loopback address: a request would fail the run.
	kc := writeKubeconfig(t, dir, "kubeconfig", "https://127.0.0.1:1", "x", "x", "y")
	t.Setenv("KUBECONFIG", kc)
	web := []string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--dry-run"}
	code, _, stderr := checkCLI(t, append(web, "--context", "y")...)
	if want := `cluster: existing, context "y" (cluster "y-cluster", server https://127.0.0.1:1) from KUBECONFIG (` + kc + ")\n"; code != exitPass || !strings.HasPrefix(stderr, want) {
		t.Errorf("--context y --dry-run: exit %d, stderr %q; want it to start %q", code, stderr, want)
	}
	if strings.Contains(stderr, "not loaded") {
		t.Errorf("--context y --dry-run without images warns of images: %q", stderr)
	}
	// Images the check names are not loaded into a cluster rollcheck does not own: one line
	// says so before any work, with what to do on a kind cluster made by hand.
	code, _, stderr = checkCLI(t, append(web, "--context", "y", "--image", "example/web:dev")...)
	if want := "rollcheck check: warning: example/web:dev not loaded: rollcheck loads nothing into a cluster it does not own, so its nodes must pull them or hold them already (a kind cluster you made: kind load docker-image REF --name CLUSTER)\n"; code != exitPass || !strings.Contains(stderr, want) {
		t.Errorf("--context y --image --dry-run: exit %d, stderr %q; want it to hold %q", code, stderr, want)
	}
	code, _, stderr = checkCLI(t, append(web, "--context", "z")...)
	if want := `rollcheck check: --context z: no context "z" in KUBECONFIG (` + kc + ") (it has x, y)\n"; code != exitBadInput || stderr != want {
		t.Errorf("--context z --dry-run: exit %d, stderr %q; want %q", code, stderr, want)
	}
	code, _, stderr = checkCLI(t, web...)
	if want := "cluster: rollcheck's kind cluster\nKUBECONFIG is set but not read: rollcheck check runs on its own kind cluster unless --context NAME"; code != exitPass || !strings.HasPrefix(stderr, want) {
		t.Errorf("--dry-run with KUBECONFIG set: exit %d, stderr %q; want it to start %q", code, stderr, want)
	}
	t.Setenv("KUBECONFIG", "")
	if code, _, stderr = checkCLI(t, web...); code != exitPass || strings.Contains(stderr, "KUBECONFIG") {
		t.Errorf("--dry-run without KUBECONFIG: exit %d, stderr %q", code, stderr)
	}
}

// --context alone takes the context from KUBECONFIG's list and goes on to the API server: its
// rights are asked before any work.
func TestCheckContextFromKUBECONFIG(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	fake, others := fakeAPIServer(t, func(a authorizationv1.ResourceAttributes) bool { return a.Resource == "namespaces" })
	other := writeKubeconfig(t, t.TempDir(), "other", "https://127.0.0.1:1", "elsewhere", "elsewhere")
	t.Setenv("KUBECONFIG", other+string(os.PathListSeparator)+fake)
	code, _, stderr := checkCLI(t, "--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--context", "x", "--artifacts", t.TempDir())
	if want := "rollcheck check: --context x: this user may not create namespaces"; code != exitBadInput || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	untouched(t, others, calls)
}

// rollcheck tune runs on kind only: it says that KUBECONFIG, when set, and a check file's
// cluster section are not used.
func TestTuneClusterNotes(t *testing.T) {
	file := webCheckFile(t, t.TempDir(), "cluster: {context: staging}\n")
	for _, tc := range []struct {
		kubeconfig string
		args       []string
		want       []string
	}{
		{"", []string{"--sample", "exit"}, nil},
		{"/some/kubeconfig", []string{"--sample", "exit"}, []string{"KUBECONFIG is set but not read: rollcheck tune runs on its own kind cluster"}},
		{"/some/kubeconfig", []string{"-f", file}, []string{"KUBECONFIG is set but not read: rollcheck tune runs on its own kind cluster",
			file + "'s cluster section is not used: rollcheck tune runs on its own kind cluster only"}},
	} {
		t.Setenv("KUBECONFIG", tc.kubeconfig)
		ta, err := parseTune(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := ta.clusterNotes(); !slices.Equal(got, tc.want) {
			t.Errorf("KUBECONFIG=%q tune %q: notes %q, want %q", tc.kubeconfig, tc.args, got, tc.want)
		}
	}
}

// With no load image named and no registry, an existing cluster whose nodes cannot be listed
// (this fake serves no nodes) is refused in one line that says what would do, before any
// image is made; nothing but the reviews and the node list reaches the cluster.
func TestCheckExistingNoImageRefused(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "")
	fake, others := fakeAPIServer(t, func(authorizationv1.ResourceAttributes) bool { return false })
	code, _, stderr := checkCLI(t, "--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--kubeconfig", fake, "--artifacts", t.TempDir())
	want := "the nodes cannot be listed to tell whether this is a kind cluster it can load into"
	if code != exitBadInput || !strings.Contains(stderr, want) || !strings.Contains(stderr, "give --image-registry REGISTRY") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, want)
	}
	if o := others(); len(o) > 1 || (len(o) == 1 && o[0] != "GET /api/v1/nodes") {
		t.Errorf("requests beyond the reviews: %q; want the node list at most", o)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}
