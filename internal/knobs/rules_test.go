package knobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every knob has one rule; Check reports every problem at once, one error each.
func TestCheckKnobs(t *testing.T) {
	dir := t.TempDir()
	kindConfig := filepath.Join(dir, "kind.yaml")
	if err := os.WriteFile(kindConfig, []byte("kind: Cluster\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		EnvName: "rollcheck-2.x", EnvKindConfig: kindConfig, EnvNodeImage: "kindest/node:v1.34.0",
		EnvWorkers: "5", EnvKeep: "On", EnvIsolateDNS: "auto", EnvRepeat: "20", EnvProcs: "8", EnvLoadFrom: "both", EnvLabels: "smoke && !negative-control || /^rollout/",
		EnvSuites: dir + " " + dir, EnvGinkgoFlags: "--v --flake-attempts=2", "K8S_VERSION": "v1.34.3",
		"ROLLCHECK_PULL_TIMEOUT": "120", "DEBIAN_SUITE": "bookworm", EnvContainerd: "v2.3.7", EnvLoadImage: "registry.example:5000/rollcheck/load:20261123-130506-0123456789ab",
	}
	if errs := Check(func(k string) string { return good[k] }, false); len(errs) > 0 {
		t.Fatalf("good knobs refused: %v", errs)
	}
	bad := map[string]string{
		EnvName:        "Rollcheck",
		EnvKindConfig:  dir,
		EnvNodeImage:   "bad value",
		EnvWorkers:     "6",
		EnvKeep:        "maybe",
		EnvRepeat:      "0",
		EnvProcs:       "9",
		EnvLoadFrom:    "pod",
		EnvLabels:      "(smoke && negative-control",
		EnvSuites:      dir + "/none",
		EnvGinkgoFlags: "-v",
		"K8S_VERSION":  "1.34",
		EnvContainerd:  "2.3",
		EnvLoadImage:   "rollcheck/load",
	}
	errs := Check(func(k string) string { return bad[k] }, false)
	if len(errs) != len(bad) {
		t.Fatalf("%d problems, want %d: %v", len(errs), len(bad), errs)
	}
	for i, err := range errs {
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "ROLLCHECK_") && !strings.HasPrefix(err.Error(), "K8S_") && !strings.HasPrefix(err.Error(), "CONTAINERD_") {
			t.Errorf("problem %d %q: want one line naming its knob", i, err)
		}
	}
	if errs := Check(func(k string) string { return bad[k] }, true); len(errs) != 6 {
		t.Errorf("cluster knobs only: %d problems, want 6: %v", len(errs), errs)
	}
	for _, labels := range []string{"smoke; rm -rf /", "a & b", "(x"} {
		if errs := Check(func(k string) string { return map[string]string{EnvLabels: labels}[k] }, false); len(errs) != 1 {
			t.Errorf("%s=%q: %v, want one problem", EnvLabels, labels, errs)
		}
	}
	// The offline node image runs workers too (containerd's CNI template, routes set by the front end).
	offline := map[string]string{EnvNodeImage: "offline", EnvWorkers: "2"}
	if errs := Check(func(k string) string { return offline[k] }, true); len(errs) != 0 {
		t.Errorf("offline with workers: %v", errs)
	}
	// Its containerd must take lifecycle.stopSignal: 2.3 or later (within containerd 2).
	for v, ok := range map[string]bool{"v2.3.0": true, "v2.3.7": true, "v2.10.1": true, "v2.2.9": false, "v1.7.28": false, "v3.0.0": false, "2.3.7": false, "v2.3": false} {
		if err := Check(env(EnvContainerd, v), false); (len(err) == 0) != ok {
			t.Errorf("%s=%s: %v, want accepted %v", EnvContainerd, v, err, ok)
		}
	}
	// Its containerd 2 variant is a choice of its own, an offline source like it.
	if err := ValidNodeImage(OfflineContainerd2); err != nil || ImageSource(OfflineContainerd2) != SourceOffline {
		t.Errorf("%s: rule %v, source %s; want a valid offline choice", OfflineContainerd2, err, ImageSource(OfflineContainerd2))
	}
}

// TestBoolKnob pins the one meaning of true and false (the scripts ask `rollcheck knobs get`).
func TestBoolKnob(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", "True", "yes", "YES", "on", "On"} {
		if got, err := BoolKnob("K", v); err != nil || !got {
			t.Errorf("BoolKnob(%q) = %v, %v; want true", v, got, err)
		}
	}
	for _, v := range []string{"", "0", "false", "FALSE", "no", "No", "off", "OFF"} {
		if got, err := BoolKnob("K", v); err != nil || got {
			t.Errorf("BoolKnob(%q) = %v, %v; want false", v, got, err)
		}
	}
	for _, v := range []string{"maybe", "2", "-1", " 1", "1 ", "y", "n", "enabled", "ture"} {
		got, err := BoolKnob("K", v)
		if err == nil {
			t.Errorf("BoolKnob(%q) = %v, want an error", v, got)
			continue
		}
		if want := "K=" + v + ": want 1, true"; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("BoolKnob(%q) error %q, want one line starting %q", v, err, want)
		}
	}
}

// env is an environment of the pairs name, value in kv.
func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

// ROLLCHECK_PROCS and ROLLCHECK_LOAD_FROM read by their rules, with their defaults when unset.
func TestProcsAndLoadMode(t *testing.T) {
	defer func(f func() int) { NumCPU = f }(NumCPU)
	for cpus, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 3, 64: 3} {
		NumCPU = func() int { return cpus }
		if n, err := Procs(env()); n != want || err != nil {
			t.Errorf("Procs unset on %d CPUs = %d, %v; want %d", cpus, n, err, want)
		}
	}
	NumCPU = func() int { return 2 }
	if n, err := Procs(env(EnvProcs, "3")); n != 3 || err != nil {
		t.Errorf("Procs 3 on 2 CPUs = %d, %v; the knob wins", n, err)
	}
	if n, err := Procs(env(EnvProcs, "4")); n != 4 || err != nil {
		t.Errorf("Procs 4 = %d, %v", n, err)
	}
	if _, err := Procs(env(EnvProcs, "0")); err == nil || !strings.HasPrefix(err.Error(), EnvProcs) {
		t.Errorf("Procs 0: %v, want an error naming the knob", err)
	}
	if m, err := LoadMode(env()); m != LoadBoth || err != nil {
		t.Errorf("LoadMode unset = %q, %v; want both", m, err)
	}
	if m, err := LoadMode(env(EnvLoadFrom, "host")); m != LoadHost || err != nil {
		t.Errorf("LoadMode host = %q, %v", m, err)
	}
	if _, err := LoadMode(env(EnvLoadFrom, "pod")); err == nil {
		t.Error("LoadMode pod: no error")
	}
}

// ROLLCHECK_LOAD_IMAGE's one rule: an image reference with a tag that names one build.
func TestLoadImageKnob(t *testing.T) {
	for _, v := range []string{"rollcheck/load:20261123-130506-0123456789ab", "localhost:5000/load:v1", "load:v1",
		"rollcheck/load@sha256:" + strings.Repeat("0", 64)} {
		if errs := Check(func(k string) string { return map[string]string{EnvLoadImage: v}[k] }, true); len(errs) > 0 {
			t.Errorf("%q refused: %v", v, errs)
		}
	}
	for _, v := range []string{"rollcheck/load", "rollcheck/load:latest", "Rollcheck/load:v1", "rollcheck/load:", "load:v1 x"} {
		errs := Check(func(k string) string { return map[string]string{EnvLoadImage: v}[k] }, true)
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), EnvLoadImage+"=") || strings.Contains(errs[0].Error(), "\n") {
			t.Errorf("%q: %v; want one problem naming %s", v, errs, EnvLoadImage)
		}
	}
}

// CacheDir: ROLLCHECK_CACHE when set, else rollcheck under $XDG_CACHE_HOME (os.UserCacheDir's
// rule, scripts/lib.sh's too).
func TestCacheDir(t *testing.T) {
	if d, err := CacheDir(func(string) string { return "/srv/cache" }); err != nil || d != "/srv/cache" {
		t.Errorf("set: %q, %v", d, err)
	}
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := CacheDir(func(string) string { return "" }); err != nil || d != "/xdg/rollcheck" {
		t.Errorf("unset: %q, %v; want /xdg/rollcheck", d, err)
	}
}
