package selfimage

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Module is rollcheck's module, and Command its command, which the fallback builds.
const (
	Module  = "github.com/rollcheck/rollcheck"
	Command = Module + "/cmd/rollcheck"
)

// Timeouts of the fallback build (Find): go list answers in seconds once the module is there;
// go build of rollcheck takes seconds with a warm build cache, minutes with a cold one (its
// dependencies: client-go, kind, grpc), as scripts/tools.sh allows it.
const (
	listTimeout  = time.Minute
	buildTimeout = 10 * time.Minute
)

// machines are the ELF machines of the architectures rollcheck is released for and a few more.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM, "386": elf.EM_386,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV, "loong64": elf.EM_LOONGARCH,
}

// Usable says, in one line, why exe cannot run in a Linux pod on nodes of architecture arch
// (empty: not known, not checked), or nil when it can: it must be built for linux, a static ELF
// (no PT_INTERP: built with CGO_ENABLED=0) for arch.
func Usable(exe Executable, arch string) error {
	if exe.GOOS != "linux" {
		return fmt.Errorf("%s is a %s/%s build, which no Linux pod can run: set ROLLCHECK_LOAD_IMAGE to a prebuilt load image, or run the linux build of rollcheck", exe.Path, exe.GOOS, exe.GOARCH)
	}
	f, err := elf.Open(exe.Path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", exe.Path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (built with cgo), and the images hold nothing but it: install a static build, CGO_ENABLED=0 go install %s@VERSION", exe.Path, Command)
		}
	}
	if m, ok := machines[exe.GOARCH]; ok && f.Machine != m {
		return fmt.Errorf("%s is an ELF for %s, not for %s as it says", exe.Path, f.Machine, exe.GOARCH)
	}
	if arch != "" && arch != exe.GOARCH {
		return fmt.Errorf("%s is built for %s and the nodes are %s: run rollcheck's linux/%s build, or set ROLLCHECK_LOAD_IMAGE to a prebuilt load image", exe.Path, exe.GOARCH, arch, arch)
	}
	return nil
}

// Self is the running executable, when it is rollcheck (MarkRollcheck).
func Self() (Executable, error) {
	p, err := os.Executable()
	if err == nil {
		p, err = filepath.EvalSymlinks(p)
	}
	if err != nil {
		return Executable{}, fmt.Errorf("the running executable: %w", err)
	}
	exe := Executable{Path: p, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, From: "this executable (" + p + ")"}
	if !isRollcheck.Load() {
		return exe, fmt.Errorf("%s is not the rollcheck command (a test binary, or a program that imports rollcheck's packages)", p)
	}
	return exe, nil
}

// A Finder finds the rollcheck executable to make images of, and makes the layer every image of
// it shares (ExecutableLayer), once per architecture: the running one when usable, else one
// built by the fallback, which is removed once its layer is made (the layer is in memory). Its
// zero value is ready; it is safe for concurrent use.
type Finder struct {
	// Self is the running executable (selfimage.Self when nil; tests replace it).
	Self func() (Executable, error)
	// Given is the path of a Linux build of rollcheck the user gave (ROLLCHECK_LINUX_EXECUTABLE:
	// on a Mac, the release's linux binary of the same version), used when the running one
	// cannot serve, before any build; it must be Usable and the running one's build (SameBuild).
	// Empty: none given.
	Given string
	// BuildOf reads which build of rollcheck the executable at path is ("": the running one);
	// ReadBuild when nil (tests replace it).
	BuildOf func(path string) (Build, error)
	// Build builds rollcheck for linux/arch into dir (goBuild when nil; tests replace it).
	Build func(ctx context.Context, dir, arch string, logf func(string, ...any)) (Executable, error)

	mu    sync.Mutex
	found map[string]found
}

type found struct {
	exe   Executable
	layer v1.Layer
}

// Find returns the executable for nodes of architecture arch (empty: the running one's), and
// its layer:
// the running executable when it is rollcheck and Usable, else, when a Go toolchain finds
// rollcheck's module from the working directory (this repository, or the module cache of a
// module that requires rollcheck), rollcheck built from it with CGO_ENABLED=0 for linux/arch,
// within buildTimeout. Every refusal is one line that says why the running executable is not
// used and why the build could not stand in.
func (f *Finder) Find(ctx context.Context, arch string, logf func(string, ...any)) (Executable, v1.Layer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if arch == "" {
		arch = runtime.GOARCH
	}
	if fd, ok := f.found[arch]; ok {
		return fd.exe, fd.layer, nil
	}
	exe, why := f.running(arch)
	switch {
	case why == nil:
	case f.Given != "":
		var err error
		if exe, err = f.given(arch); err != nil {
			return Executable{}, nil, fmt.Errorf("rollcheck's images: %v; and %w", why, err)
		}
		logf("rollcheck's images are made of %s (%v)", exe.From, why)
	default:
		var err error
		if exe, err = f.build(ctx, arch, logf); err != nil {
			return Executable{}, nil, fmt.Errorf("rollcheck's images: %v; and no rollcheck to build instead: %w (or set %s to rollcheck's linux/%s build of this version)", why, err, EnvLinuxExecutable, arch)
		}
		defer os.RemoveAll(filepath.Dir(exe.Path))
		if err := Usable(exe, arch); err != nil {
			return Executable{}, nil, fmt.Errorf("rollcheck's images: the build: %w", err)
		}
		logf("rollcheck's images are made of a build of rollcheck for linux/%s (%v)", arch, why)
	}
	layer, err := ExecutableLayer(exe)
	if err != nil {
		return Executable{}, nil, err
	}
	if f.found == nil {
		f.found = map[string]found{}
	}
	f.found[arch] = found{exe, layer}
	return exe, layer, nil
}

// EnvLinuxExecutable names the setting of Finder.Given (read by rollcheck's cluster front ends).
const EnvLinuxExecutable = "ROLLCHECK_LINUX_EXECUTABLE"

// Check says, in one line and without building anything, why Find could not give an executable
// for nodes of architecture arch (empty: this machine's), or nil when it can or may: the
// running executable serves, or the one Given does, or a go command is there to build one (the
// build itself may still fail, within its time limit). Front ends call it before any cluster
// work when the run will make images.
func (f *Finder) Check(arch string) error {
	if arch == "" {
		arch = runtime.GOARCH
	}
	_, why := f.running(arch)
	switch {
	case why == nil:
		return nil
	case f.Given != "":
		if _, err := f.given(arch); err != nil {
			return fmt.Errorf("rollcheck's images: %v; and %w", why, err)
		}
		return nil
	case f.Build != nil:
		return nil // a test's builder
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("rollcheck's images: %v; set %s to rollcheck's linux/%s build of this version (a release's rollcheck-VERSION-linux-%s), or install Go (rollcheck then builds one)", why, EnvLinuxExecutable, arch, arch)
	}
	return nil
}

// running is the running executable, and why it cannot make images for nodes of architecture
// arch (nil: it can).
func (f *Finder) running(arch string) (Executable, error) {
	self := f.Self
	if self == nil {
		self = Self
	}
	exe, why := self()
	if why == nil {
		why = Usable(exe, arch)
	}
	return exe, why
}

// given is the executable Finder.Given names, for nodes of architecture arch: a Linux build of
// rollcheck the nodes can run, and the running one's build (SameBuild), else one line saying why
// not.
func (f *Finder) given(arch string) (Executable, error) {
	p := f.Given
	exe := Executable{Path: p, GOOS: "linux", GOARCH: arch, From: fmt.Sprintf("%s (%s)", p, EnvLinuxExecutable)}
	st, err := os.Stat(p)
	if err != nil {
		return Executable{}, fmt.Errorf("%s=%s: %w", EnvLinuxExecutable, p, err)
	}
	if !st.Mode().IsRegular() {
		return Executable{}, fmt.Errorf("%s=%s: not a regular file", EnvLinuxExecutable, p)
	}
	if err := Usable(exe, arch); err != nil {
		return Executable{}, fmt.Errorf("%s: %w", EnvLinuxExecutable, err)
	}
	buildOf := f.BuildOf
	if buildOf == nil {
		buildOf = ReadBuild
	}
	mine, err := buildOf("")
	if err != nil {
		return Executable{}, fmt.Errorf("%s=%s: which rollcheck this one is: %w", EnvLinuxExecutable, p, err)
	}
	its, err := buildOf(p)
	if err != nil {
		return Executable{}, fmt.Errorf("%s=%s: %w", EnvLinuxExecutable, p, err)
	}
	if err := SameBuild(mine, its); err != nil {
		return Executable{}, fmt.Errorf("%s=%s: %w", EnvLinuxExecutable, p, err)
	}
	return exe, nil
}

// build builds rollcheck for linux/arch into a new temporary directory (Find removes it).
func (f *Finder) build(ctx context.Context, arch string, logf func(string, ...any)) (Executable, error) {
	build := f.Build
	if build == nil {
		build = goBuild
	}
	dir, err := os.MkdirTemp("", "rollcheck-selfimage-")
	if err != nil {
		return Executable{}, err
	}
	exe, err := build(ctx, dir, arch, logf)
	if err != nil || filepath.Dir(exe.Path) != dir {
		_ = os.RemoveAll(dir)
	}
	return exe, err
}

// goBuild builds rollcheck's command for linux/arch into dir: go list finds the module from
// the working directory (within listTimeout), then go build (CGO_ENABLED=0, -trimpath, no VCS
// stamp, stripped: the same code gives the same binary) within buildTimeout.
func goBuild(ctx context.Context, dir, arch string, logf func(string, ...any)) (Executable, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return Executable{}, errors.New("no go command on PATH")
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	src, err := goCmd(lctx, nil, "list", "-f", "{{.Dir}}", Command)
	if err != nil {
		// Outside rollcheck's module (a binary user's machine): the same version, installed
		// from the module proxy as go install does it.
		mine, berr := ReadBuild("")
		if q := mine.Query(); berr == nil && q != "" {
			return goInstall(ctx, dir, arch, q, logf)
		}
		return Executable{}, fmt.Errorf("%s is not found from the working directory (run inside a module that requires %s), and this rollcheck (%s) names no version go install could build: %w", Command, Module, mine, err)
	}
	bin := filepath.Join(dir, "rollcheck-linux-"+arch)
	logf("building rollcheck for linux/%s from %s (go build, at most %s; seconds with a warm build cache)", arch, strings.TrimSpace(src), buildTimeout)
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	env := []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + arch}
	if _, err := goCmd(bctx, env, "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, Command); err != nil {
		if bctx.Err() != nil && ctx.Err() == nil {
			return Executable{}, fmt.Errorf("go build %s took longer than %s: %w", Command, buildTimeout, err)
		}
		return Executable{}, err
	}
	logf("built rollcheck for linux/%s in %s", arch, time.Since(start).Round(100*time.Millisecond))
	return Executable{Path: bin, GOOS: "linux", GOARCH: arch, From: "a build of " + Command + " from " + strings.TrimSpace(src)}, nil
}

// goInstall builds rollcheck's command at version query (a module version or a commit) for
// linux/arch into dir, as `go install COMMAND@QUERY` does (CGO_ENABLED=0, -trimpath, stripped),
// within buildTimeout: the module comes from the module proxy (GOPROXY as the user set it) into
// the user's module cache, and the binary into dir (a GOPATH of its own: go install writes a
// cross-built binary only there).
func goInstall(ctx context.Context, dir, arch, query string, logf func(string, ...any)) (Executable, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	modcache, err := goCmd(lctx, nil, "env", "GOMODCACHE")
	if err != nil {
		return Executable{}, err
	}
	logf("building rollcheck %s for linux/%s with go install (at most %s; the module from the module proxy, minutes with a cold build cache)", query, arch, buildTimeout)
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	env := []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + arch, "GOPATH=" + dir, "GOMODCACHE=" + strings.TrimSpace(modcache), "GOBIN=", "GOFLAGS=-modcacherw"}
	if _, err := goCmd(bctx, env, "install", "-trimpath", "-ldflags", "-s -w", Command+"@"+query); err != nil {
		if bctx.Err() != nil && ctx.Err() == nil {
			return Executable{}, fmt.Errorf("go install %s@%s took longer than %s: %w", Command, query, buildTimeout, err)
		}
		return Executable{}, err
	}
	// go install writes a cross-built binary into GOPATH/bin/GOOS_GOARCH, a native one into
	// GOPATH/bin.
	bin := ""
	for _, p := range []string{filepath.Join(dir, "bin", "linux_"+arch, "rollcheck"), filepath.Join(dir, "bin", "rollcheck")} {
		if _, err := os.Stat(p); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return Executable{}, fmt.Errorf("go install %s@%s wrote no rollcheck into %s", Command, query, filepath.Join(dir, "bin"))
	}
	// Find removes the directory the executable is in: keep it directly in dir.
	out := filepath.Join(dir, "rollcheck-linux-"+arch)
	if err := os.Rename(bin, out); err != nil {
		return Executable{}, err
	}
	logf("built rollcheck %s for linux/%s in %s", query, arch, time.Since(start).Round(100*time.Millisecond))
	return Executable{Path: out, GOOS: "linux", GOARCH: arch, From: "a go install of " + Command + "@" + query}, nil
}

// goCmd runs the go command with env added; the error carries its stderr, on one line.
func goCmd(ctx context.Context, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.Join(strings.Fields(stderr.String()), " ")
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return stdout.String(), nil
}
