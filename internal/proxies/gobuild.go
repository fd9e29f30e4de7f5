package proxies

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A goBuild is how a proxy's binary is built from its Go module.
type goBuild struct {
	module string // the module, built at the proxy's pinned version
	pkg    string // its main package
	// goMod is added to the temporary module's go.mod: the proxy's own replace and exclude
	// directives, which the go command applies only in the main module, never in a module it
	// requires.
	goMod string
	// versionVar is a string variable the build sets to the version (-ldflags -X), where the
	// program does not read it from its module's build information; empty: none.
	versionVar string
	// limit bounds each step: go get (the module and its dependencies from the Go module proxy,
	// which may stall silently) and go build.
	limit time.Duration
}

// goBinary returns the path of proxy name's static binary at version, built by the go command
// of version goVersion with this recipe (b, the table's), in the cache directory dir: built once (CGO_ENABLED=0,
// -trimpath, stripped) in a temporary module that requires the proxy's module at that version
// (with the proxy's own replace and exclude directives), so that rollcheck's own go.mod never
// does; its dependencies are the versions the proxy's go.mod selects. GOTOOLCHAIN is local: the
// go command on PATH builds it, or says that it is too old.
func goBinary(ctx context.Context, name Proxy, b *goBuild, dir, version, goVersion string, logf func(string, ...any)) (string, error) {
	if b == nil {
		return "", fmt.Errorf("build %s: not built from Go", name)
	}
	recipe, err := recipeSource.ReadFile("gobuild.go")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	// A change to this recipe, or to the proxy's build in the table, builds anew.
	sum := sha256.Sum256(fmt.Appendf(recipe, "\n%+v", *b))
	bin := filepath.Join(dir, fmt.Sprintf("%s-%s-%x", version, goVersion, sum[:4]), string(name))
	if _, err := os.Stat(bin); err == nil {
		logf("%s %s: built already (%s)", name, version, bin)
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	mod, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	defer os.RemoveAll(mod)
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local"}
	goMod := fmt.Sprintf("module rollcheck.invalid/%s-build\n%s", name, b.goMod)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(goMod), 0o644); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	ldflags := "-s -w"
	if b.versionVar != "" {
		ldflags += " -X " + b.versionVar + "=" + version
	}
	steps := []command{
		{what: fmt.Sprintf("go get %s@%s (%s and its dependencies from the Go module proxy)", b.pkg, version, name),
			limit: b.limit, tries: 2, dir: mod, env: env, argv: []string{"go", "get", b.pkg + "@" + version}},
		{what: fmt.Sprintf("go build %s %s (static)", name, version), limit: b.limit, tries: 2, dir: mod, env: env,
			argv: []string{"go", "build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(mod, string(name)), b.pkg}},
	}
	for _, s := range steps {
		if _, err := run(ctx, logf, s); err != nil {
			return "", fmt.Errorf("build %s: %w", name, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	if err := os.Rename(filepath.Join(mod, string(name)), bin); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	return bin, nil
}
