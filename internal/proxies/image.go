package proxies

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// The image build is Go, not a bash script: EnsureImage is a library call that needs no
// scripts/ directory beside it (the recipe is compiled in, and hashed from its own embedded
// source; only the entrypoint's package is looked up, from the module), it takes ctx for every
// time limit and cancellation, and its parts (the Debian dependency plan, ldd's output) are
// unit-tested without Debian or Docker. The external programs it runs are apt-cache, apt-get, dpkg-query,
// dpkg-deb, ldd, go and docker, each under a time limit, logged with what it waits for.

// A recipe is how one proxy's image is made (the table's entry.image).
type recipe struct {
	repo   string   // the image repository; the tag is a hash of the inputs
	deb    string   // the Debian package holding the binary; empty: built from Go (goBuild)
	binary string   // the binary's path in the image (and in the Debian package)
	args   []string // the proxy's arguments, after the entrypoint's
	env    []string // the image's environment
	// goBuild is how the binary is built from the proxy's Go module, when deb is empty.
	goBuild *goBuild
}

// tools are the programs making the image runs on the host, besides docker and go.
func (r recipe) tools() []string {
	if r.deb != "" {
		return []string{"apt-cache", "apt-get", "dpkg-query", "dpkg-deb", "ldd"}
	}
	return nil
}

// source says where the binary comes from, for help texts and errors.
func (r recipe) source() string {
	if r.deb != "" {
		return "Debian 12's package " + r.deb + " (apt-get download)"
	}
	return "its Go module " + r.goBuild.module
}

// CheckHost checks that this host has the programs that make the images of ps (all: every
// proxy's): one error naming every program missing and the proxies that need it.
func CheckHost(ps ...Proxy) error {
	if len(ps) == 0 {
		ps = All
	}
	var missing []string
	for _, p := range ps {
		e, ok := lookup(p)
		if !ok {
			return fmt.Errorf("unknown proxy %q: want one of %v", p, All)
		}
		for _, t := range append([]string{"docker", "go"}, e.image.tools()...) {
			if _, err := exec.LookPath(t); err != nil {
				missing = append(missing, fmt.Sprintf("%s (%s's image is made from %s)", t, p, e.image.source()))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("proxy images: not on this host's PATH: %s; the Debian packages need a Debian 12 (bookworm) host", strings.Join(missing, "; "))
	}
	return nil
}

// Sources says, a line per proxy, what its image is and where its binary comes from:
// "rollcheck/proxy-haproxy: HAProxy 2.6.12 from Debian 12's package haproxy (apt-get download)".
func Sources() []string {
	var lines []string
	for _, e := range table {
		lines = append(lines, fmt.Sprintf("%s: %s %s from %s", e.image.repo, e.title, e.version, e.image.source()))
	}
	return lines
}

// EntryPackage is the entrypoint of the images (package main, standard library only).
const EntryPackage = "github.com/rollcheck/rollcheck/fixtures/proxies/entry"

// recipeSource is this recipe's own source: a change to how the images are made changes their
// tags (as does a change to a proxy's recipe in the table: inputsHash).
//
//go:embed image.go debian.go gobuild.go
var recipeSource embed.FS

// Time limits of the local build steps (the downloads have theirs: debTimeout, goBuild.limit).
const (
	entryBuildTimeout  = 5 * time.Minute
	dockerBuildTimeout = 5 * time.Minute
)

// imagesKept is how many images of a proxy's repository a build leaves, the new one included.
const imagesKept = 3

// EnsureImage returns the reference of proxy name's image in the local Docker engine,
// repo:<12 hex digits of the hash of its inputs> (never :latest), building it if the engine
// does not have it: the pinned version (for HAProxy and nginx, apt's candidate of that upstream
// version and the versions of the library packages it links), the recipe's source, the
// entrypoint's source and the go command's version. Nothing changed: it takes seconds and
// builds nothing. Downloads (Debian packages, the Caddy and Traefik binaries) are kept in
// ROLLCHECK_CACHE/proxy-images. A build leaves the imagesKept newest images of the repository.
// logf gets a line before every step that waits, saying for what and how long at most.
//
// Run it where the go command finds the rollcheck module (this repository, or a module that
// requires it): the entrypoint is built from it.
func EnsureImage(ctx context.Context, name Proxy, logf func(string, ...any)) (ref string, err error) {
	e, ok := lookup(name)
	r := e.image
	if !ok {
		return "", fmt.Errorf("proxy image: unknown proxy %q (want one of %v)", name, All)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s image: %w", name, err)
		}
	}()
	if logf == nil {
		logf = func(string, ...any) {}
	}
	start := time.Now()
	cache, err := knobs.CacheDir(os.Getenv)
	if err != nil {
		return "", err
	}
	goVersion, err := quick(ctx, "go", "env", "GOVERSION")
	if err != nil {
		return "", fmt.Errorf("the go command, which builds the entrypoint: %w", err)
	}
	goVersion = strings.TrimSpace(goVersion)
	entryDir, entryFiles, err := entrySource(ctx)
	if err != nil {
		return "", err
	}
	var plan []debPackage
	if r.deb != "" {
		if plan, err = debPlan(ctx, r.deb, name.Version(), logf); err != nil {
			return "", err
		}
	}
	dockerfile := r.dockerfile(name, plan)
	sum, err := inputsHash(name, r, plan, goVersion, dockerfile, entryDir, entryFiles)
	if err != nil {
		return "", err
	}
	ref = r.repo + ":" + sum[:12]
	if _, err := quick(ctx, "docker", "image", "inspect", ref); err == nil {
		logf("%s image %s is in the local Docker engine already: its inputs did not change, nothing built", name, ref)
		return ref, nil
	}

	work, err := os.MkdirTemp("", "rollcheck-proxy-"+string(name)+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	ctxDir := filepath.Join(work, "context")
	rootfs := filepath.Join(ctxDir, "rootfs")
	if err := baseRootfs(rootfs); err != nil {
		return "", err
	}
	if _, err := run(ctx, logf, command{what: "go build the entrypoint (" + EntryPackage + ")", limit: entryBuildTimeout, tries: 2,
		env:  []string{"CGO_ENABLED=0"},
		argv: []string{"go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", filepath.Join(rootfs, "entry"), EntryPackage}}); err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "proxy-images")
	if r.deb != "" {
		debs := filepath.Join(dir, "debs")
		if err := os.MkdirAll(debs, 0o755); err != nil {
			return "", err
		}
		if err := debRootfs(ctx, plan, r.binary, debs, filepath.Join(work, "extract"), rootfs, logf); err != nil {
			return "", err
		}
	} else {
		bin, err := goBinary(ctx, name, r.goBuild, filepath.Join(dir, string(name)), name.Version(), goVersion, logf)
		if err != nil {
			return "", err
		}
		if err := copyFollowing(bin, filepath.Join(rootfs, r.binary)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", err
	}
	if _, err := run(ctx, logf, command{what: "docker build " + ref, limit: dockerBuildTimeout, tries: 2, dir: ctxDir,
		env: []string{"DOCKER_BUILDKIT=0"}, argv: []string{"docker", "build", "-q", "-t", ref, "."}}); err != nil {
		return "", err
	}
	logf("%s image %s built in %s", name, ref, time.Since(start).Round(100*time.Millisecond))
	prune(ctx, r.repo, ref, logf)
	return ref, nil
}

// dockerfile is the image's Dockerfile: FROM scratch, the rootfs, uid 65532, the entrypoint
// rendering /etc/proxy/<file> into /tmp/<file> and then running the proxy on it.
func (r recipe) dockerfile(name Proxy, plan []debPackage) string {
	file := ConfigFile(name)
	entry := append([]string{"/entry", "-in", "/etc/proxy/" + file, "-out", "/tmp/" + file, "--", r.binary}, r.args...)
	ep, _ := json.Marshal(entry)
	version := name.Version()
	if len(plan) > 0 {
		version = plan[0].version
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# rollcheck's %s image (internal/proxies): built offline, nothing pulled.\n", name)
	b.WriteString("FROM scratch\nCOPY rootfs/ /\n")
	for _, e := range r.env {
		fmt.Fprintf(&b, "ENV %s\n", e)
	}
	fmt.Fprintf(&b, "LABEL org.opencontainers.image.title=%q org.opencontainers.image.version=%q\n", "rollcheck-proxy-"+string(name), version)
	fmt.Fprintf(&b, "USER %d:%d\nEXPOSE %d\nENTRYPOINT %s\n", UID, UID, Port, ep)
	return b.String()
}

// baseRootfs makes the image's files besides the binaries: /etc/passwd and /etc/group naming
// root and nonroot (65532), /etc/nsswitch.conf (files, then DNS), /tmp and /var/tmp (1777),
// /run with /var/run linking to it, and /etc/proxy (where the ConfigMap is mounted).
func baseRootfs(rootfs string) error {
	for _, d := range []string{"etc/proxy", "run", "var", "usr/sbin", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{"tmp", "var/tmp"} {
		p := filepath.Join(rootfs, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(p, 0o777|fs.ModeSticky); err != nil {
			return err
		}
	}
	if err := os.Symlink("../run", filepath.Join(rootfs, "var/run")); err != nil {
		return err
	}
	files := map[string]string{
		"etc/passwd":        fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/tmp:/sbin/nologin\n", UID, UID),
		"etc/group":         fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID),
		"etc/nsswitch.conf": "hosts: files dns\n",
	}
	for p, content := range files {
		if err := os.WriteFile(filepath.Join(rootfs, p), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// entrySource is the entrypoint package's directory and its Go files (tests left out), as the
// go command finds them from the working directory.
func entrySource(ctx context.Context) (string, []string, error) {
	out, err := quick(ctx, "go", "list", "-f", "{{.Dir}}{{range .GoFiles}} {{.}}{{end}}", EntryPackage)
	if err != nil {
		return "", nil, fmt.Errorf("find the entrypoint %s from the working directory (run inside a module that requires github.com/rollcheck/rollcheck): %w", EntryPackage, err)
	}
	f := strings.Fields(out)
	if len(f) < 2 {
		return "", nil, fmt.Errorf("the entrypoint %s has no Go files", EntryPackage)
	}
	return f[0], f[1:], nil
}

// inputsHash is the SHA-256 (hex) of what makes the image, each part named and preceded by its
// length: the proxy, its pinned version and Debian plan, the go command's version, its recipe
// in the table, the Dockerfile, the recipe's source and the entrypoint's.
func inputsHash(name Proxy, r recipe, plan []debPackage, goVersion, dockerfile, entryDir string, entryFiles []string) (string, error) {
	h := sha256.New()
	part := func(label string, b []byte) {
		fmt.Fprintf(h, "%s %d\n", label, len(b))
		h.Write(b)
	}
	part("proxy", []byte(name))
	part("version", []byte(name.Version()))
	for _, p := range plan {
		part("deb", []byte(p.String()))
	}
	part("go", []byte(goVersion))
	// The table's recipe of the proxy (not the whole table, whose Configs do not make images).
	entry := r
	entry.goBuild = nil // a pointer: its value, not its address
	recipe := fmt.Sprintf("%+v", entry)
	if r.goBuild != nil {
		recipe += fmt.Sprintf(" %+v", *r.goBuild)
	}
	part("recipe entry", []byte(recipe))
	part("dockerfile", []byte(dockerfile))
	err := fs.WalkDir(recipeSource, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := recipeSource.ReadFile(p)
		part("recipe "+p, b)
		return err
	})
	if err != nil {
		return "", err
	}
	for _, f := range entryFiles {
		b, err := os.ReadFile(filepath.Join(entryDir, f))
		if err != nil {
			return "", fmt.Errorf("read the entrypoint's source: %w", err)
		}
		part("entry "+f, b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tagForm is the form of the tags EnsureImage gives.
var tagForm = regexp.MustCompile(`^[0-9a-f]{12}$`)

// prune removes repo's images of EnsureImage's tag form but current and the imagesKept-1
// newest others (docker image ls lists the newest first). An image a container uses stays
// (docker image rm refuses it). Housekeeping: a failure is logged, not returned.
func prune(ctx context.Context, repo, current string, logf func(string, ...any)) {
	out, err := quick(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", repo)
	if err != nil {
		logf("prune old %s images: %v", repo, err)
		return
	}
	others := 0
	for _, ref := range strings.Fields(out) {
		r, tag, _ := strings.Cut(ref, ":")
		if r != repo || ref == current || !tagForm.MatchString(tag) {
			continue
		}
		if others++; others < imagesKept {
			continue
		}
		if _, err := quick(ctx, "docker", "image", "rm", ref); err != nil {
			logf("prune old %s images: %s left: %v", repo, ref, err)
			continue
		}
		logf("pruned the old image %s", ref)
	}
}
