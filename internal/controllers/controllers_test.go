package controllers

import (
	"path"
	"strings"
	"testing"
)

func TestTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Table {
		for what, v := range map[string]string{"Name": string(c.Name), "Title": c.Title, "Module": c.Module, "Version": c.Version,
			"Main": c.Main, "Repo": c.Repo, "Binary": c.Binary, "Namespace": c.Namespace, "Deployment": c.Deployment, "HealthPath": c.HealthPath} {
			if v == "" {
				t.Errorf("%s: no %s", c.Name, what)
			}
		}
		for what, v := range map[string]string{"Repo": c.Repo, "Namespace": c.Namespace, "Name": string(c.Name)} {
			if seen[what+v] {
				t.Errorf("%s: %s %q is another controller's too", c.Name, what, v)
			}
			seen[what+v] = true
		}
		if !strings.HasPrefix(c.Version, "v") || strings.Contains(c.Version, "latest") {
			t.Errorf("%s: version %q, want a pinned vX.Y.Z", c.Name, c.Version)
		}
		if !strings.HasPrefix(c.Main, "./") {
			t.Errorf("%s: main package %q, want one relative to the module's root (./cmd/…)", c.Name, c.Main)
		}
		if !path.IsAbs(c.Binary) || (c.WorkDir != "" && !path.IsAbs(c.WorkDir)) {
			t.Errorf("%s: binary %q and working directory %q must be absolute", c.Name, c.Binary, c.WorkDir)
		}
		if len(c.CRDs) == 0 || len(c.Manifests) == 0 {
			t.Errorf("%s: CRDs %v, manifests %v: want both", c.Name, c.CRDs, c.Manifests)
		}
		if c.HealthPort == 0 || c.BuildLimit == 0 {
			t.Errorf("%s: health port %d, build limit %s", c.Name, c.HealthPort, c.BuildLimit)
		}
		if got, err := Lookup(string(c.Name)); err != nil || got.Module != c.Module {
			t.Errorf("Lookup(%s) = %v, %v", c.Name, got.Module, err)
		}
	}
	if _, err := Lookup("istio"); err == nil || !strings.Contains(err.Error(), "argo-rollouts, flagger") {
		t.Errorf("Lookup(istio) = %v, want an error naming the controllers", err)
	}
}

// Flagger must run without a mesh and never ask a Prometheus outside the pod.
func TestFlaggerArgs(t *testing.T) {
	c, _ := Lookup(string(Flagger))
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"-mesh-provider=kubernetes", "-metrics-server=http://127.0.0.1:"} {
		if !strings.Contains(args, want) {
			t.Errorf("Flagger's args %q lack %q", args, want)
		}
	}
}
