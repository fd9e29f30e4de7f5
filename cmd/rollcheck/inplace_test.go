package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// inPlaceFile writes a check file of a Deployment in place with an as-is variant and, when
// prestop, one that changes its preStop.
func inPlaceFile(t *testing.T, prestop bool) string {
	t.Helper()
	doc := `apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: staging}
app: {namespace: shop, deployment: web, port: 8080}
disruptions: [{kind: rollout-restart, count: 1}]
variants:
- name: as-is
  expect: {failures: 0}
`
	if prestop {
		doc += "- name: prestop-5s\n  preStop: {sleep: 5s}\n  pdb: {maxUnavailable: 1}\n  expect: {failures: 0}\n"
	}
	path := filepath.Join(t.TempDir(), "staging.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A variant that would change a Deployment in place is refused in one line before any work
// unless --in-place allows it; an as-is variant runs without it. --dry-run says what each does.
func TestCheckInPlaceRefusal(t *testing.T) {
	calls := fakeTools(t)
	code, _, stderr := checkCLI(t, "-f", inPlaceFile(t, true), "--artifacts", t.TempDir())
	want := "rollcheck check: variant prestop-5s (preStop, pdb) would change Deployment shop/web where it runs: add --in-place to allow it"
	lines := strings.Split(strings.TrimSpace(stderr), "\n") // a warning first: the budget does nothing under a rollout
	if code != exitBadInput || !strings.HasPrefix(lines[len(lines)-1], want) || len(lines) != 2 {
		t.Errorf("exit %d, stderr %q; want exit 2 and the warning, then one line starting %q", code, stderr, want)
	}
	code, stdout, stderr := checkCLI(t, "-f", inPlaceFile(t, true), "--in-place", "--dry-run")
	if code != exitPass || !strings.Contains(stdout, "# variant as-is: applies nothing; disrupts Deployment shop/web where it runs as it is") ||
		!strings.Contains(stdout, "# variant prestop-5s: applies nothing of the app; changes preStop, pdb of Deployment shop/web where it runs for the row (--in-place), restored after it") {
		t.Errorf("--in-place --dry-run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, stderr := checkCLI(t, "-f", inPlaceFile(t, false), "--dry-run"); code != exitPass || !strings.Contains(stdout, "variant as-is: applies nothing") {
		t.Errorf("as-is without --in-place: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

// The flags-only form names the Deployment by --deployment NS/NAME or -n NS; the flags that
// concern an app in place are refused where they mean nothing.
func TestCheckInPlaceFlags(t *testing.T) {
	fakeTools(t)
	for _, args := range [][]string{
		{"--deployment", "shop/web", "--port", "8080"},
		{"--deployment", "web", "-n", "shop", "--port", "8080"},
		{"--deployment", "web", "--namespace", "shop", "--service", "web", "--port", "8080"},
	} {
		code, stdout, stderr := checkCLI(t, append(args, "--dry-run")...)
		if code != exitPass || !strings.Contains(stdout, "# variant as-is: applies nothing; disrupts Deployment shop/web where it runs") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--deployment", "web", "--port", "8080"}, "--deployment web without --manifest checks it where it already runs: name its namespace (-n NS, or --deployment NS/web)"},
		{[]string{"--deployment", "shop/web", "-n", "prod", "--port", "8080"}, "--deployment shop/web and -n prod name two namespaces"},
		{[]string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "-n", "shop"}, "-n and --service check a Deployment where it already runs"},
		{[]string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--in-place"}, "--in-place: check applies its app into a namespace of its own"},
		{[]string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080", "--load-namespace", "rc"}, "--load-namespace rc: only for an app checked where it already runs"},
		{[]string{"-f", "../../spec/testdata/good.yaml", "-n", "shop"}, "-n (app.namespace) would not be used"},
	} {
		code, _, stderr := checkCLI(t, append(tc.args, "--dry-run")...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	// A variant that changes the Deployment: a dry run shows the change and that it needs
	// --in-place (it was refused before, though docs/in-place.md showed it); a run without
	// --in-place is refused in one line before any work (the kubeconfig is never read).
	changing := []string{"--deployment", "shop/web", "--port", "8080", "--prestop-sleep", "5s"}
	code, stdout, stderr := checkCLI(t, append(changing, "--dry-run")...)
	if want := "# variant prestop-5s: applies nothing of the app; would change preStop of Deployment shop/web where it runs for the row, restored after it: needs --in-place to run"; code != exitPass || !strings.Contains(stdout, want) {
		t.Errorf("dry run without --in-place: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	code, stdout, _ = checkCLI(t, append(changing, "--dry-run", "--in-place")...)
	if want := "changes preStop of Deployment shop/web where it runs for the row (--in-place)"; code != exitPass || !strings.Contains(stdout, want) {
		t.Errorf("dry run with --in-place: exit %d, stdout %q; want %q", code, stdout, want)
	}
	code, _, stderr = checkCLI(t, append(changing, "--kubeconfig", "/nonexistent/kubeconfig")...)
	if want := "variant prestop-5s (preStop) would change Deployment shop/web where it runs: add --in-place"; code != exitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("a run without --in-place: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

// An Argo Rollout is named by --rollout NS/NAME, as a Deployment by --deployment.
func TestCheckInPlaceRolloutFlags(t *testing.T) {
	fakeTools(t)
	rollout := []string{"--rollout", "shop/rweb", "--port", "8080", "--prestop-sleep", "5s"}
	code, stdout, stderr := checkCLI(t, append(rollout, "--dry-run", "--in-place")...)
	if want := "changes preStop of Rollout shop/rweb where it runs for the row (--in-place)"; code != exitPass || !strings.Contains(stdout, want) {
		t.Errorf("--rollout --dry-run --in-place: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	code, _, stderr = checkCLI(t, append(rollout, "--kubeconfig", "/nonexistent/kubeconfig")...)
	if want := "variant prestop-5s (preStop) would change Rollout shop/rweb where it runs: add --in-place"; code != exitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("--rollout without --in-place: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rollout", "rweb", "--port", "8080"}, "--rollout rweb without --manifest checks it where it already runs: name its namespace (-n NS, or --rollout NS/rweb)"},
		{[]string{"--rollout", "shop/rweb", "--deployment", "shop/web", "--port", "8080"}, "--deployment and --rollout: name one workload"},
		{[]string{"-f", "../../spec/testdata/good.yaml", "--rollout", "shop/rweb"}, "--rollout (app.rollout) would not be used"},
	} {
		code, _, stderr := checkCLI(t, append(tc.args, "--dry-run")...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// On an existing cluster, a check in place asks for rights in the app's namespace and the load
// namespace only; one missing is one line naming it, before any work.
func TestCheckInPlaceRefusesAMissingRight(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	kubeconfig, others := fakeAPIServer(t, func(a authorizationv1.ResourceAttributes) bool {
		return a.Namespace == "" && a.Resource != "nodes" || (a.Namespace == "shop" && a.Resource == "deployments" && a.Verb == "update")
	})
	code, _, stderr := checkCLI(t, "--deployment", "shop/web", "--port", "8080", "--kubeconfig", kubeconfig, "--load-namespace", "rc-load", "--artifacts", t.TempDir())
	want := "this user may not update deployments.apps in namespace shop: rollcheck needs it before any work; examples/rbac/in-place.yaml (kubectl apply -n in the app's namespace) grant(s) it"
	if code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q (and no right asked in every namespace)", code, stderr, want)
	}
	untouched(t, others, calls)
}

// With every right, a Deployment that is not there is one line before any work: the only request
// beyond the reviews is its read.
func TestCheckInPlaceDeploymentNotThere(t *testing.T) {
	fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	kubeconfig, others := fakeAPIServer(t, func(authorizationv1.ResourceAttributes) bool { return false })
	code, _, stderr := checkCLI(t, "--deployment", "shop/web", "--port", "8080", "--kubeconfig", kubeconfig, "--artifacts", t.TempDir())
	want := "Deployment shop/web: not found (app.namespace, app.deployment)"
	if code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, want)
	}
	if o := others(); len(o) != 1 || o[0] != "GET /apis/apps/v1/namespaces/shop/deployments/web" {
		t.Errorf("requests beyond the reviews: %q, want the Deployment's read only", o)
	}
}

// rollcheck tune changes the preStop for every probe: it does not take an app in place.
func TestTuneRefusesInPlace(t *testing.T) {
	calls := fakeTools(t)
	code, _, stderr := tuneCLI(t, "-f", inPlaceFile(t, false), "--dry-run")
	if code != exitBadInput || !strings.Contains(stderr, "checks an app where it already runs (app.namespace shop): tune changes its preStop for every probe") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

// A second run of a Deployment that another run checks (its Lease renewed seconds ago) is one
// line naming that run and its last renewal, exit 2, before any change: it only reads.
func TestCheckInPlaceRefusedWhileAnotherRunHoldsIt(t *testing.T) {
	fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	renewed := time.Now().Add(-3 * time.Second).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	kubeconfig, others := fakeAPIServerServing(t, func(authorizationv1.ResourceAttributes) bool { return false }, map[string]string{
		"GET /apis/apps/v1/namespaces/shop/deployments/web": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},
			"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
			"spec":{"containers":[{"name":"web","image":"example/web:1","ports":[{"containerPort":8080}]}]}}}}`,
		"GET /api/v1/namespaces/shop/services": `{"apiVersion":"v1","kind":"ServiceList","items":[{"metadata":{"name":"web","namespace":"shop"},
			"spec":{"clusterIP":"10.96.0.10","selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080}]}}]}`,
		"GET /apis/coordination.k8s.io/v1/namespaces/shop/leases/rollcheck-web": `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
			"metadata":{"name":"rollcheck-web","namespace":"shop"},"spec":{"holderIdentity":"3f2a9c1b04de","leaseDurationSeconds":15,
			"acquireTime":"` + renewed + `","renewTime":"` + renewed + `"}}`,
	})
	code, _, stderr := checkCLI(t, "--deployment", "shop/web", "--port", "8080", "--kubeconfig", kubeconfig, "--load-namespace", "rc-load", "--artifacts", t.TempDir())
	want := "deployment shop/web is held by rollcheck run 3f2a9c1b04de (renewed 3s ago, lease expires in 12s; Lease shop/rollcheck-web): wait for it or let its lease expire"
	if code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, want)
	}
	for _, o := range others() {
		if !strings.HasPrefix(o, "GET ") {
			t.Errorf("the refused run wrote: %s", o)
		}
	}
}
