package main

import (
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
)

var webManifest = []string{"--manifest", "../../spec/testdata/web.yaml", "--port", "8080"}

// --row-namespace is refused in one line where it means nothing or cannot hold, before any work.
func TestCheckRowNamespaceRefusals(t *testing.T) {
	fakeTools(t)
	kubeconfig, _ := fakeAPIServer(t, func(authorizationv1.ResourceAttributes) bool { return false })
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{append(webManifest, "--row-namespace", "team-a"), "", "--row-namespace team-a: only on an existing cluster"},
		{append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "Team_A"), "", `--row-namespace "Team_A": not a namespace's name`},
		{append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a,team-a"), "", "--row-namespace team-a: given twice"},
		{append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a", "--parallel", "2"), "", "--parallel 2: one row at a time runs in each --row-namespace, and 1 are named"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--kubeconfig", kubeconfig, "--row-namespace", "team-a"}, "", "an app checked where it already runs applies nothing; its load pods' namespace is --load-namespace"},
		{append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a"), "restricted", "ROLLCHECK_POD_SECURITY=restricted labels the namespaces rollcheck creates"},
	} {
		t.Setenv("ROLLCHECK_POD_SECURITY", tc.env)
		code, _, stderr := checkCLI(t, append(tc.args, "--dry-run")...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	t.Setenv("ROLLCHECK_POD_SECURITY", "")
	code, _, stderr := checkCLI(t, append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a", "--row-namespace", "team-b", "--dry-run")...)
	if want := "rows: in your namespaces team-a, team-b, one row at a time in each"; code != exitPass || !strings.Contains(stderr, want) {
		t.Errorf("dry run: exit %d, stderr %q; want %q", code, stderr, want)
	}
}

// With --row-namespace a run asks for rights in the named namespaces only: a missing one is one
// line naming it and namespaced.yaml, and no right in every namespace is asked (all of those are
// denied here), before any work.
func TestCheckRowNamespaceRefusesAMissingRight(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	kubeconfig, others := fakeAPIServer(t, func(a authorizationv1.ResourceAttributes) bool {
		return a.Namespace == "" && a.Resource != "nodes" || (a.Namespace == "team-b" && a.Resource == "deployments" && a.Verb == "delete")
	})
	code, _, stderr := checkCLI(t, append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a,team-b", "--artifacts", t.TempDir())...)
	want := "this user may not delete deployments.apps in namespace team-b: rollcheck needs it before any work; examples/rbac/namespaced.yaml (kubectl apply -n in each rows namespace) grant(s) it"
	if code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q (and no right asked in every namespace)", code, stderr, want)
	}
	untouched(t, others, calls)
}

// A rows namespace another live run holds (its Lease renewed seconds ago) is one line naming that
// run, exit 2, before anything is written.
func TestCheckRowNamespaceHeld(t *testing.T) {
	fakeTools(t)
	t.Setenv("ROLLCHECK_LOAD_IMAGE", "rollcheck/load:v1")
	renewed := time.Now().Add(-3 * time.Second).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	kubeconfig, others := fakeAPIServerServing(t, func(authorizationv1.ResourceAttributes) bool { return false }, map[string]string{
		"GET /apis/coordination.k8s.io/v1/namespaces/team-a/leases/rollcheck-rows": `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
			"metadata":{"name":"rollcheck-rows","namespace":"team-a"},"spec":{"holderIdentity":"3f2a9c1b04de","leaseDurationSeconds":15,
			"acquireTime":"` + renewed + `","renewTime":"` + renewed + `"}}`,
	})
	code, _, stderr := checkCLI(t, append(webManifest, "--kubeconfig", kubeconfig, "--row-namespace", "team-a", "--artifacts", t.TempDir())...)
	want := "namespace team-a (the rows of a rollcheck run) is held by rollcheck run 3f2a9c1b04de"
	if code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, want)
	}
	for _, o := range others() {
		if !strings.HasPrefix(o, "GET ") {
			t.Errorf("the refused run wrote: %s", o)
		}
	}
}
