package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A gate refuses in one line, before any cluster work, what would change the workload a release
// controller owns or is not a workload where it runs; outside a pod, without a kubeconfig, it
// says so instead of falling back to kind.
func TestGateRefusals(t *testing.T) {
	calls := fakeTools(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	kubeconfig := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "rollcheck gate: nothing to check: give --deployment NS/NAME --port N"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--disruption", "rollout-restart"},
			"rollcheck gate: disruption rollout-restart: a gate does not run it: it changes the pod template, which the release controller takes for a new revision"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--disruption", "scale-down"},
			"rollcheck gate: disruption scale-down: a gate does not run it: it changes the replicas, which the release controller owns"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--disruption", "drain-node"},
			"rollcheck gate: disruption drain-node: a gate does not run it: it cordons a node other workloads share"},
		{[]string{"-f", inPlaceFile(t, true)}, "rollcheck gate: variant prestop-5s would change preStop, pdb of the Deployment: a gate checks the release as it runs"},
		{[]string{"-f", "../../spec/testdata/good.yaml"}, "a gate checks a Deployment where it runs: give --deployment NS/NAME"},
		{[]string{"--deployment", "shop/web", "--port", "8080"}, "rollcheck gate: no kubeconfig given and not in a pod"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--kubeconfig", kubeconfig}, "rollcheck gate: --kubeconfig " + kubeconfig + ": stat"},
		{[]string{"--deployment", "shop/web", "--port", "8080", "--in-place"}, "rollcheck gate: flag provided but not defined: -in-place"},
		// An Argo Rollout's revision: named by its hash, disrupted by pod deletions only.
		{[]string{"--rollout", "shop/web", "--port", "8080"}, "rollcheck gate: --rollout needs --pod-template-hash H"},
		{[]string{"--rollout", "shop/web", "--pod-template-hash", "5D9F", "--port", "8080"}, `--pod-template-hash "5D9F": want the revision's hash`},
		{[]string{"--rollout", "web", "--pod-template-hash", "5d9f", "--port", "8080"}, `--rollout "web": want NS/NAME (or -n NS)`},
		{[]string{"--rollout", "shop/web", "-n", "other", "--pod-template-hash", "5d9f", "--port", "8080"}, "--rollout shop/web and -n other name two namespaces"},
		{[]string{"--rollout", "shop/web", "--deployment", "shop/web", "--pod-template-hash", "5d9f", "--port", "8080"}, "--rollout or --deployment, not both"},
		{[]string{"--deployment", "shop/web", "--pod-template-hash", "5d9f", "--port", "8080"}, "--pod-template-hash: only with --rollout"},
		{[]string{"--rollout", "shop/web", "--pod-template-hash", "5d9f", "--port", "8080", "--disruption", "scale-down"}, "disruption scale-down: a gate does not run it"},
		{[]string{"--rollout", "shop/web", "--pod-template-hash", "5d9f", "--port", "8080"}, "rollcheck gate: no kubeconfig given and not in a pod"},
	} {
		code, stdout, stderr := rollcheck(append([]string{"gate"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != exitBadInput || stdout != "" || !strings.Contains(last, c.want) {
			t.Errorf("gate %q: exit %d, stdout %q, stderr %q; want exit 2 and a line with %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if code, _, stderr := rollcheck("serve", "--deployment", "shop/web", "--port", "8080", "--max-wait", "-1s"); code != exitBadInput || !strings.Contains(stderr, "--max-wait -1s: want 0 or more") {
		t.Errorf("serve --max-wait -1s: exit %d, %q", code, stderr)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("a cluster tool was called: %s", b)
	}
}

// gate and serve take check's flags but those that change the workload, load from the host or
// make a cluster; help lists exactly theirs.
func TestGateFlags(t *testing.T) {
	for _, cmd := range []string{"gate", "serve"} {
		code, stdout, _ := rollcheck("help", cmd)
		if code != exitPass {
			t.Fatalf("help %s: exit %d", cmd, code)
		}
		for _, name := range gateCheckFlags {
			if !strings.Contains(stdout, "  -"+name+" ") && !strings.Contains(stdout, "  --"+name+" ") && !strings.Contains(stdout, "  --"+name+"\n") && !strings.Contains(stdout, "  -"+name+"\n") {
				t.Errorf("help %s does not list -%s", cmd, name)
			}
		}
		for _, name := range []string{"in-place", "prestop-sleep", "grace", "manifest", "image", "keep-cluster", "load-from", "dry-run", "image-registry"} {
			if strings.Contains(stdout, "--"+name+" ") || strings.Contains(stdout, "--"+name+"\n") {
				t.Errorf("help %s lists --%s", cmd, name)
			}
		}
		if strings.Contains(stdout, "runs on kind") {
			t.Errorf("help %s speaks of kind: %s", cmd, stdout)
		}
	}
	if !slices.Contains(gateCheckFlags, "load-namespace") {
		t.Error("gate cannot keep its load pods in a namespace of the user's")
	}
}

// With --rollout, the gate checks the ReplicaSet Argo Rollouts gives the revision (NAME-HASH),
// as a ReplicaSet of the Rollout; serve takes the revision from each Argo call's hash, and
// answers a key that names none (Flagger's checksum) with no verdict.
func TestGateRollout(t *testing.T) {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	f := newGateFlags(fs)
	if err := fs.Parse([]string{"--rollout", "shop/web", "--pod-template-hash", "5d9f8c", "--port", "8080", "--kubeconfig", writeKubeconfig(t, t.TempDir(), "kc", "https://127.0.0.1:1", "c", "c")}); err != nil {
		t.Fatal(err)
	}
	in, target, err := f.Read(func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	a := in.Plans[0].Plan().App
	if a.Namespace != "shop" || a.Deployment != "web-5d9f8c" || a.ReplicaSetOf != "Rollout/web" || target != "Rollout shop/web revision 5d9f8c (ReplicaSet web-5d9f8c)" {
		t.Errorf("app %+v, target %q", a, target)
	}

	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	f = newServeFlags(fs)
	if err := fs.Parse([]string{"--rollout", "web", "-n", "shop", "--port", "8080", "--kubeconfig", writeKubeconfig(t, t.TempDir(), "kc", "https://127.0.0.1:1", "c", "c")}); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("pod-template-hash") != nil {
		t.Error("serve takes --pod-template-hash: the hash is each call's")
	}
	in, target, err = f.Read(func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if target != "Rollout shop/web" {
		t.Errorf("serve's target %q", target)
	}
	plans, target, err := f.RevisionPlans(in, "hash:77c4b")
	if err != nil {
		t.Fatal(err)
	}
	if a := plans[0].Plan().App; a.Deployment != "web-77c4b" || a.ReplicaSetOf != "Rollout/web" || target != "Rollout shop/web revision 77c4b (ReplicaSet web-77c4b)" {
		t.Errorf("revision plans: %+v, %q", a, target)
	}
	if in.Plans[0].Plan().App.Deployment == "web-77c4b" {
		t.Error("revisionPlans changed serve's own plans")
	}
	for _, key := range []string{"checksum:abc", "hash:ABC", "hash:"} {
		if _, _, err := f.RevisionPlans(in, key); err == nil {
			t.Errorf("key %q: no error", key)
		}
	}
}
