package controllers

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// How a controller is built, in steps, each bounded (the compilation by Controller.BuildLimit):
//
//  1. go mod download -json MODULE@VERSION: the module's source, from the Go module proxy into
//     the module cache, whose directory it names;
//  2. that directory copied into a temporary one (the module cache is read-only, and the go
//     command may complete go.sum);
//  3. go list -deps MAIN there: the modules its packages need, downloaded (only those: not
//     every module of the graph), a step of its own so that the log tells a download that
//     stalls from a long compilation;
//  4. go build there, static (CGO_ENABLED=0), -trimpath, stripped.
//
// The build is the module's own, as its release builds it: its go.mod and go.sum choose every
// dependency and apply its replace directives (which a module that required it would not: the
// go command applies them only in the main module). GOTOOLCHAIN=local: the go command on PATH
// builds it, or says that it is too old. GOWORK=off: no workspace of the caller's is used.

// buildSource is this file, hashed into the cache key: a change to how a binary is built builds
// it anew.
//
//go:embed build.go
var buildSource []byte

// downloadLimit bounds each try of go mod download of a controller's module (some tens of MB).
const downloadLimit = 5 * time.Minute

// A Binary is a controller's static Linux binary, built by Build.
type Binary struct {
	Controller Controller
	Path       string // in the cache directory
	GOARCH     string
	GoVersion  string // of the go command that built it: "go1.26.8"
	Cached     bool   // Build found it built already
}

// CacheDir is where the binaries are kept: ROLLCHECK_CACHE/controllers.
func CacheDir() (string, error) {
	d, err := knobs.CacheDir(os.Getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "controllers"), nil
}

// goEnv is the environment of every go command here.
func goEnv(goarch string) []string {
	return []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + goarch, "GOFLAGS=-mod=mod -buildvcs=false",
		"GOWORK=off", "GOTOOLCHAIN=local"}
}

// goVersion is the go command's version ("go1.26.8").
func goVersion(ctx context.Context) (string, error) {
	out, err := step{what: "go env GOVERSION", limit: time.Minute, argv: []string{"go", "env", "GOVERSION"}}.do(ctx, func(string, ...any) {})
	if err != nil {
		return "", fmt.Errorf("the go command, which builds the controllers: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// binaryPath is where Build keeps c's binary for goarch, built by the go command of version gov:
// in a directory named by the version, gov, goarch and a hash of what else makes the binary
// (this file, the module, its main package, the link flags).
func binaryPath(root string, c Controller, goarch, gov string) string {
	sum := sha256.Sum256(fmt.Appendf(buildSource, "\n%s\n%s\n%q", c.ModuleVersion(), c.Main, c.LDFlags))
	return filepath.Join(root, string(c.Name), fmt.Sprintf("%s-%s-%s-%x", c.Version, gov, goarch, sum[:4]), filepath.Base(c.Binary))
}

// ModuleDir returns the directory of c's module source in the module cache, downloading it from
// the Go module proxy when the cache does not have it (go mod download -json, bounded and
// retried). The directory is read-only.
func ModuleDir(ctx context.Context, c Controller, logf func(string, ...any)) (string, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, err := step{what: fmt.Sprintf("go mod download %s (%s's source, from the Go module proxy unless cached)", c.ModuleVersion(), c.Title),
		limit: downloadLimit, tries: 3, dir: dir, env: goEnv(runtime.GOARCH),
		argv: []string{"go", "mod", "download", "-json", c.ModuleVersion()}}.do(ctx, logf)
	if err != nil {
		return "", err
	}
	return moduleDirOf(out)
}

// moduleDirOf reads the Dir of go mod download -json's answer, or the error it gives.
func moduleDirOf(out []byte) (string, error) {
	var m struct{ Path, Version, Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download -json: %w", err)
	}
	switch {
	case m.Error != "":
		return "", fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, m.Error)
	case m.Dir == "":
		return "", fmt.Errorf("go mod download %s@%s: no directory in its answer", m.Path, m.Version)
	}
	return m.Dir, nil
}

// Build returns c's static binary for linux/goarch (empty: this machine's architecture), built
// once and kept in CacheDir; later calls find it there and take well under a second. logf gets
// a line before every step that waits, saying for what and how long at most, and every minute
// while one lasts.
func Build(ctx context.Context, c Controller, goarch string, logf func(string, ...any)) (b Binary, err error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("build %s %s: %w", c.Title, c.Version, err)
		}
	}()
	gov, err := goVersion(ctx)
	if err != nil {
		return Binary{}, err
	}
	root, err := CacheDir()
	if err != nil {
		return Binary{}, err
	}
	b = Binary{Controller: c, Path: binaryPath(root, c, goarch, gov), GOARCH: goarch, GoVersion: gov}
	if _, err := os.Stat(b.Path); err == nil {
		b.Cached = true
		logf("%s %s for linux/%s: built already (%s)", c.Title, c.Version, goarch, b.Path)
		return b, nil
	}
	start := time.Now()
	src, err := ModuleDir(ctx, c, logf)
	if err != nil {
		return Binary{}, err
	}
	parent := filepath.Join(root, string(c.Name))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Binary{}, err
	}
	work, err := os.MkdirTemp(parent, "build-")
	if err != nil {
		return Binary{}, err
	}
	defer os.RemoveAll(work)
	mod := filepath.Join(work, "src")
	if err := copyTree(src, mod); err != nil {
		return Binary{}, fmt.Errorf("copy the module's source out of the module cache: %w", err)
	}
	env := goEnv(goarch)
	out := filepath.Join(work, filepath.Base(c.Binary))
	ldflags := strings.Join(append([]string{"-s", "-w"}, c.LDFlags...), " ")
	steps := []step{
		{what: fmt.Sprintf("go list -deps %s (the modules %s needs, from the Go module proxy unless cached)", c.Main, c.Title),
			limit: c.BuildLimit, tries: 3, dir: mod, env: env, argv: []string{"go", "list", "-deps", "-f", "{{.ImportPath}}", c.Main}},
		{what: fmt.Sprintf("go build %s %s for linux/%s (static)", c.Title, c.Version, goarch),
			limit: c.BuildLimit, tries: 2, dir: mod, env: env,
			argv: []string{"go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, c.Main}},
	}
	for _, s := range steps {
		if _, err := s.do(ctx, logf); err != nil {
			return Binary{}, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(b.Path), 0o755); err != nil {
		return Binary{}, err
	}
	if err := os.Rename(out, b.Path); err != nil {
		return Binary{}, err
	}
	logf("%s %s for linux/%s built in %s: %s", c.Title, c.Version, goarch, time.Since(start).Round(time.Second), b.Path)
	return b, nil
}

// copyTree copies the directory tree src to dst (which must not exist), writable: the module
// cache's copies are read-only. A module's zip holds only directories and regular files, the
// only kinds os.CopyFS copies.
func copyTree(src, dst string) error { return os.CopyFS(dst, os.DirFS(src)) }
