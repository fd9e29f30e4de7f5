package knobs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeRule is one rule of the Makefile: its target, its help text and its recipe.
type makeRule struct{ help, recipe string }

// makefile reads the repository's Makefile: its rules by target (help after "## ", the recipe's
// lines joined) and its .PHONY list.
func makefile(t *testing.T) (rules map[string]makeRule, phony []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rules = map[string]makeRule{}
	head := regexp.MustCompile(`^([a-z0-9-]+):[^#=]*(?:## (.*))?$`)
	var cur string
	for _, l := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(l, ".PHONY:"); ok {
			phony = append(phony, strings.Fields(f)...)
			continue
		}
		if m := head.FindStringSubmatch(l); m != nil {
			cur = m[1]
			rules[cur] = makeRule{help: m[2]}
			continue
		}
		if r, ok := rules[cur]; ok && strings.HasPrefix(l, "\t") {
			r.recipe = strings.TrimSpace(r.recipe + " " + strings.TrimSpace(l))
			rules[cur] = r
			continue
		}
		cur = ""
	}
	if len(rules) < 10 {
		t.Fatalf("found %d rules in the Makefile: the parse missed them", len(rules))
	}
	return rules, phony
}

// Every target of the table is a Makefile target, in .PHONY, whose recipe is only
// `bash scripts/e2e.sh NAME`, and whose help names every label its filter names; and every
// recipe that runs scripts/e2e.sh names a target of the table: no filter is left in the Makefile.
func TestTargetsAreTheMakefiles(t *testing.T) {
	rules, phony := makefile(t)
	for _, tg := range Targets {
		r, ok := rules[tg.Name]
		if !ok {
			t.Errorf("%s: no such Makefile target", tg.Name)
			continue
		}
		if want := "@bash scripts/e2e.sh " + tg.Name; r.recipe != want {
			t.Errorf("make %s runs %q, want %q", tg.Name, r.recipe, want)
		}
		if !slices.Contains(phony, tg.Name) {
			t.Errorf("make %s is not in .PHONY", tg.Name)
		}
		for _, l := range regexp.MustCompile(`[a-z0-9][a-z0-9.-]*`).FindAllString(tg.Labels, -1) {
			if !strings.Contains(r.help, l) {
				t.Errorf("make %s's help %q does not name the label %s its filter %q selects", tg.Name, r.help, l, tg.Labels)
			}
		}
	}
	for name, r := range rules {
		if _, ok := LookupTarget(name); strings.Contains(r.recipe, "scripts/e2e.sh") && !ok {
			t.Errorf("make %s runs scripts/e2e.sh but is not in knobs.Targets: %q", name, r.recipe)
		}
	}
}

// Every value of the table passes its knob's rule (the suite directories from the repository's
// root, where make runs).
func TestTargetValuesPassTheirRules(t *testing.T) {
	for _, tg := range Targets {
		env, err := TargetEnv(tg.Name, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			if k == EnvSuites {
				var dirs []string
				for _, d := range strings.Fields(v) {
					dirs = append(dirs, filepath.Join(root, d))
				}
				v = strings.Join(dirs, " ")
			}
			vals[k] = v
		}
		if errs := Check(func(k string) string { return vals[k] }, false); len(errs) > 0 {
			t.Errorf("%s: %v", tg.Name, errs)
		}
	}
}

// TargetEnv: the target's own values whatever the environment says, the environment's where the
// target gives a default only, ARTIFACTS with the target's subdirectory; nothing for make e2e.
func TestTargetEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(string) string
		want []string
	}{
		{"e2e", env(EnvLabels, "smoke"), nil},
		{"smoke", env(EnvLabels, "proxy", EnvSuites, "examples/check"), []string{"ROLLCHECK_LABELS=smoke", "ROLLCHECK_SUITES=suites"}},
		{"e2e-grpc", env(), []string{"ROLLCHECK_LABELS=http2 || grpc", "ROLLCHECK_SUITES=suites", "ARTIFACTS=_artifacts/grpc"}},
		{"e2e-multinode", env(EnvWorkers, "3", EnvArtifacts, "/tmp/a"), []string{"ROLLCHECK_LABELS=multinode || terminating-endpoints || smoke",
			"ROLLCHECK_SUITES=suites", "ROLLCHECK_CLUSTER_NAME=rollcheck-multinode", "ROLLCHECK_WORKERS=3", "ARTIFACTS=/tmp/a/multinode"}},
		{"e2e-nftables", env(EnvName, "mine", EnvProxyMode, "iptables"), []string{"ROLLCHECK_KUBE_PROXY_MODE=nftables", "ROLLCHECK_CLUSTER_NAME=mine", "ARTIFACTS=_artifacts/nftables"}},
		{"e2e-stopsignal", env(EnvLabels, "smoke", EnvNodeImage, "offline"), []string{"ROLLCHECK_LABELS=stop-signal-field", "ROLLCHECK_SUITES=suites",
			"ROLLCHECK_NODE_IMAGE=offline-containerd2", "ROLLCHECK_CLUSTER_NAME=rollcheck-stopsignal", "ARTIFACTS=_artifacts/stopsignal"}},
	} {
		got, err := TargetEnv(tc.name, tc.env)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("TargetEnv(%s) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := TargetEnv("e2e-nope", env()); err == nil || !strings.Contains(err.Error(), "e2e-grpc") {
		t.Errorf("an unknown target: %v, want an error listing the targets", err)
	}
}

// make e2e-all runs every e2e target of the table but smoke (make e2e selects its specs too) and
// the families targets (CI's selection of rows that the proxy, gRPC and multinode targets run), and
// make e2e-rbac, make e2e-namespaced and make e2e-gate, each a Makefile target already; it is in .PHONY and its help says what it runs.
func TestE2EAllRunsEveryTarget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "scripts/e2e-all.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TARGETS=\(([^)]*)\)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/e2e-all.sh has no TARGETS=(...) line")
	}
	got := strings.Fields(string(m[1]))
	var want []string
	for _, tg := range Targets {
		if tg.Name != "smoke" && !strings.HasPrefix(tg.Name, "e2e-families") {
			want = append(want, tg.Name)
		}
	}
	want = append(want, "e2e-rbac", "e2e-namespaced", "e2e-gate")
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("make e2e-all runs %q, want %q (in any order)", got, want)
	}
	rules, phony := makefile(t)
	all, ok := rules["e2e-all"]
	if !ok || !slices.Contains(phony, "e2e-all") || all.recipe != `@MAKE="$(MAKE)" bash scripts/e2e-all.sh` {
		t.Fatalf("make e2e-all: %+v (in .PHONY: %v), want a .PHONY target running scripts/e2e-all.sh", all, slices.Contains(phony, "e2e-all"))
	}
	for _, name := range got {
		if _, ok := rules[name]; !ok || !slices.Contains(phony, name) {
			t.Errorf("make e2e-all runs %s, which is no .PHONY Makefile target", name)
		}
		if !strings.Contains(all.help, name) {
			t.Errorf("make e2e-all's help does not name %s", name)
		}
	}
}
