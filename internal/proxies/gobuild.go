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

// goBuilds are the proxies built from Go.
var goBuilds = map[Proxy]goBuild{
	// Caddy's go.mod has no replace or exclude directive.
	Caddy: {module: "github.com/caddyserver/caddy/v2", pkg: "github.com/caddyserver/caddy/v2/cmd/caddy", limit: 15 * time.Minute},
	// Traefik v3.6.12's go.mod's replace and exclude directives, as they are there: its forks of
	// three modules (the originals, at the placeholder versions Traefik requires, are not on the
	// Go module proxy) and a tencentcloud version whose packages clash with its submodules'.
	// Measured on 2 cores shared with another build: the dependencies' download about a minute,
	// a cold build 19 minutes (650 s of CPU), at most 3.2 GB of memory, a 178 MB binary; later
	// builds take the cache's. v3.7.13 does not build from the module proxy: 14 module versions
	// it needs (of lego's DNS providers, which its ACME support imports) are not served, nor its
	// own dynamic/ext, which its go.mod replaces with a directory of its repository.
	Traefik: {module: "github.com/traefik/traefik/v3", pkg: "github.com/traefik/traefik/v3/cmd/traefik", limit: 30 * time.Minute,
		versionVar: "github.com/traefik/traefik/v3/pkg/version.Version", // "dev" otherwise
		goMod: `
replace (
	github.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20200324110947-a37a7636d23e
	github.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59
	github.com/mailgun/minheap => github.com/containous/minheap v0.0.0-20190809180810-6e71eb837595
)

exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible
`},
}

// goBinary returns the path of proxy name's static binary at version, built by the go command
// of version goVersion with this recipe, in the cache directory dir: built once (CGO_ENABLED=0,
// -trimpath, stripped) in a temporary module that requires the proxy's module at that version
// (with the proxy's own replace and exclude directives), so that rollcheck's own go.mod never
// does; its dependencies are the versions the proxy's go.mod selects. GOTOOLCHAIN is local: the
// go command on PATH builds it, or says that it is too old.
func goBinary(ctx context.Context, name Proxy, dir, version, goVersion string, logf func(string, ...any)) (string, error) {
	b, ok := goBuilds[name]
	if !ok {
		return "", fmt.Errorf("build %s: not built from Go", name)
	}
	recipe, err := recipeSource.ReadFile("gobuild.go")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	sum := sha256.Sum256(recipe) // a change to this recipe builds anew
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
