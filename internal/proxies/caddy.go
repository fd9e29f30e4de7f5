package proxies

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// caddyModule is the Go module Caddy is built from, at CaddyVersion.
const caddyModule = "github.com/caddyserver/caddy/v2"

// caddyBuildTimeout bounds each step of Caddy's build: go get (the module and its
// dependencies from the Go module proxy, which may stall silently) and go build.
const caddyBuildTimeout = 15 * time.Minute

// caddyBinary returns the path of Caddy's static binary at version, built by the go command
// of version goVersion with this recipe, in the cache directory dir: built once (CGO_ENABLED=0, -trimpath,
// stripped) in a temporary module that requires Caddy at that version, so that rollcheck's
// own go.mod never does; its dependencies are the versions Caddy's go.mod selects. GOTOOLCHAIN
// is local: the go command on PATH builds it, or says that it is too old.
func caddyBinary(ctx context.Context, dir, version, goVersion string, logf func(string, ...any)) (string, error) {
	recipe, err := recipeSource.ReadFile("caddy.go")
	if err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	sum := sha256.Sum256(recipe) // a change to this recipe builds anew
	bin := filepath.Join(dir, fmt.Sprintf("%s-%s-%x", version, goVersion, sum[:4]), "caddy")
	if _, err := os.Stat(bin); err == nil {
		logf("caddy %s: built already (%s)", version, bin)
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	mod, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	defer os.RemoveAll(mod)
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local"}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module rollcheck.invalid/caddy-build\n"), 0o644); err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	pkg := caddyModule + "/cmd/caddy"
	steps := []command{
		{what: fmt.Sprintf("go get %s@%s (Caddy and its dependencies from the Go module proxy)", pkg, version),
			limit: caddyBuildTimeout, tries: 2, dir: mod, env: env, argv: []string{"go", "get", pkg + "@" + version}},
		{what: fmt.Sprintf("go build caddy %s (static)", version), limit: caddyBuildTimeout, tries: 2, dir: mod, env: env,
			argv: []string{"go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(mod, "caddy"), pkg}},
	}
	for _, s := range steps {
		if _, err := run(ctx, logf, s); err != nil {
			return "", fmt.Errorf("build caddy: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	if err := os.Rename(filepath.Join(mod, "caddy"), bin); err != nil {
		return "", fmt.Errorf("build caddy: %w", err)
	}
	return bin, nil
}
