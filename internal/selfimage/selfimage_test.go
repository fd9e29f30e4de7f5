package selfimage

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeExe writes content as an executable file and returns it as a linux/amd64 Executable.
func fakeExe(t *testing.T, content []byte) Executable {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rollcheck")
	if err := os.WriteFile(p, content, 0o700); err != nil {
		t.Fatal(err)
	}
	return Executable{Path: p, GOOS: "linux", GOARCH: "amd64", From: "test"}
}

func makeImage(t *testing.T, k Kind, exe Executable) v1.Image {
	t.Helper()
	l, err := ExecutableLayer(exe)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Make(k, exe, l)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// entry is one file of a layer, as the tests compare them.
type entry struct {
	Name, Link string
	Type       byte
	Mode       int64
	Content    string
}

func layerEntries(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []entry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: time %s, owner %d:%d; want the epoch and 0:0", h.Name, h.ModTime, h.Uid, h.Gid)
		}
		out = append(out, entry{h.Name, h.Linkname, h.Typeflag, h.Mode, string(b)})
	}
}

// The load image: one layer holding exactly /rollcheck, the executable's bytes, mode 0755; the
// config runs /rollcheck agent load as 65532:65532 on linux/amd64. The app image shares that
// layer and adds /app, a link to it, and runs /rollcheck agent app.
func TestMakeImages(t *testing.T) {
	content := []byte("\x7fELF not really, but the bytes must come through unchanged")
	exe := fakeExe(t, content)
	load, app := makeImage(t, Load, exe), makeImage(t, App, exe)

	ll, err := load.Layers()
	if err != nil || len(ll) != 1 {
		t.Fatalf("load image: %d layers, %v; want 1", len(ll), err)
	}
	if got, want := layerEntries(t, ll[0]), []entry{{Name: "rollcheck", Type: tar.TypeReg, Mode: 0o755, Content: string(content)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("load image's layer: %+v; want %+v", got, want)
	}
	al, err := app.Layers()
	if err != nil || len(al) != 2 {
		t.Fatalf("app image: %d layers, %v; want 2", len(al), err)
	}
	d0, _ := ll[0].Digest()
	d1, _ := al[0].Digest()
	if d0 != d1 {
		t.Errorf("the app image's first layer %s is not the load image's %s", d1, d0)
	}
	if got, want := layerEntries(t, al[1]), []entry{{Name: "app", Link: "rollcheck", Type: tar.TypeSymlink, Mode: 0o777}}; !reflect.DeepEqual(got, want) {
		t.Errorf("app image's link layer: %+v; want %+v", got, want)
	}

	for _, tc := range []struct {
		img   v1.Image
		entry []string
		ports bool
	}{{load, []string{"/rollcheck", "agent", "load"}, false}, {app, []string{"/rollcheck", "agent", "app"}, true}} {
		cf, err := tc.img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != "amd64" || !reflect.DeepEqual(cf.Config.Entrypoint, tc.entry) || cf.Config.User != "65532:65532" || len(cf.Config.Cmd) != 0 {
			t.Errorf("config: os %q arch %q entrypoint %q cmd %q user %q", cf.OS, cf.Architecture, cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User)
		}
		if p := cf.Platform(); p == nil || p.String() != "linux/amd64" {
			t.Errorf("platform %v; want linux/amd64", p)
		}
		if _, ok := cf.Config.ExposedPorts["8080/tcp"]; ok != tc.ports {
			t.Errorf("%q: exposes 8080: %v", tc.entry, ok)
		}
		if !cf.Created.Time.Equal(epoch) {
			t.Errorf("created %s; want the epoch", cf.Created)
		}
	}
}

// The same executable gives the same digest, wherever it lies and whenever it was written;
// another gives another. The reference is repo:<12 hex digits of the digest>.
func TestDeterministic(t *testing.T) {
	content := bytes.Repeat([]byte("rollcheck"), 100000)
	a := makeImage(t, Load, fakeExe(t, content))
	b := makeImage(t, Load, fakeExe(t, content))
	c := makeImage(t, Load, fakeExe(t, append(content, '!')))
	da, _ := a.Digest()
	db, _ := b.Digest()
	dc, _ := c.Digest()
	if da != db || da == dc {
		t.Errorf("digests %s, %s (same executable), %s (another): want the first two equal, the third not", da, db, dc)
	}
	ref, err := Ref(LoadRepo, a)
	if err != nil || ref != "rollcheck/load:"+da.Hex[:12] || !regexp.MustCompile(`^rollcheck/load:[0-9a-f]{12}$`).MatchString(ref) {
		t.Errorf("Ref = %q, %v", ref, err)
	}
	if ref, _ := Ref(AppRepo, makeImage(t, App, fakeExe(t, content))); !strings.HasPrefix(ref, "rollcheck/app:") {
		t.Errorf("app Ref = %q", ref)
	}
}

// writeELF writes a minimal 64-bit little-endian ELF header for machine with one program header
// of type prog (PT_INTERP: dynamically linked; PT_LOAD: static), enough for debug/elf.
func writeELF(t *testing.T, machine elf.Machine, prog elf.ProgType) string {
	t.Helper()
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1, Shentsize: 64}
	copy(h.Ident[:], []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	_ = binary.Write(&b, binary.LittleEndian, h)
	_ = binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(prog), Off: 0, Filesz: 64 + 56, Memsz: 64 + 56})
	p := filepath.Join(t.TempDir(), "exe")
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Usable refuses, in one line that says what to do, a build for another OS, a dynamically
// linked ELF (cgo), an ELF of another machine than it says, and nodes of another architecture.
func TestUsable(t *testing.T) {
	static := writeELF(t, elf.EM_X86_64, elf.PT_LOAD)
	dynamic := writeELF(t, elf.EM_X86_64, elf.PT_INTERP)
	arm := writeELF(t, elf.EM_AARCH64, elf.PT_LOAD)
	notELF := fakeExe(t, []byte("#!/bin/sh\n")).Path
	for _, tc := range []struct {
		exe  Executable
		arch string
		want string // "" usable; else a part of the refusal
	}{
		{Executable{Path: static, GOOS: "linux", GOARCH: "amd64"}, "amd64", ""},
		{Executable{Path: static, GOOS: "linux", GOARCH: "amd64"}, "", ""},
		{Executable{Path: arm, GOOS: "linux", GOARCH: "arm64"}, "arm64", ""},
		{Executable{Path: static, GOOS: "darwin", GOARCH: "arm64"}, "arm64", "is a darwin/arm64 build, which no Linux pod can run: set ROLLCHECK_LOAD_IMAGE"},
		{Executable{Path: dynamic, GOOS: "linux", GOARCH: "amd64"}, "amd64", `is dynamically linked \(built with cgo\).*CGO_ENABLED=0 go install github.com/rollcheck/rollcheck/cmd/rollcheck@`},
		{Executable{Path: static, GOOS: "linux", GOARCH: "amd64"}, "arm64", "is built for amd64 and the nodes are arm64: run rollcheck's linux/arm64 build"},
		{Executable{Path: arm, GOOS: "linux", GOARCH: "amd64"}, "amd64", "is an ELF for EM_AARCH64, not for amd64"},
		{Executable{Path: notELF, GOOS: "linux", GOARCH: "amd64"}, "amd64", "not an ELF executable"},
	} {
		err := Usable(tc.exe, tc.arch)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Usable(%+v, %q) = %v; want nil", tc.exe, tc.arch, err)
		case tc.want != "" && (err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) || strings.Contains(err.Error(), "\n")):
			t.Errorf("Usable(%+v, %q) = %v; want one line matching %q", tc.exe, tc.arch, err, tc.want)
		}
	}
}

// Find takes the running executable when it is rollcheck and usable, and builds otherwise, once
// per architecture; when neither can be had, one line says why for both.
func TestFind(t *testing.T) {
	static := Executable{Path: writeELF(t, elf.EM_X86_64, elf.PT_LOAD), GOOS: "linux", GOARCH: "amd64"}
	built := Executable{Path: writeELF(t, elf.EM_AARCH64, elf.PT_LOAD), GOOS: "linux", GOARCH: "arm64"}
	var builds []string
	var dirs []string
	build := func(_ context.Context, dir, arch string, _ func(string, ...any)) (Executable, error) {
		builds = append(builds, arch)
		dirs = append(dirs, dir)
		if arch != "arm64" {
			return Executable{}, errors.New("go list: no module")
		}
		b, err := os.ReadFile(built.Path)
		if err != nil {
			return Executable{}, err
		}
		exe := built
		exe.Path = filepath.Join(dir, "rollcheck")
		return exe, os.WriteFile(exe.Path, b, 0o755)
	}
	f := &Finder{Self: func() (Executable, error) { return static, nil }, Build: build}
	for range 2 {
		if exe, l, err := f.Find(t.Context(), "amd64", t.Logf); err != nil || exe != static || l == nil {
			t.Errorf("Find(amd64) = %+v, %v, %v; want the running executable", exe, l, err)
		}
		if exe, l, err := f.Find(t.Context(), "arm64", t.Logf); err != nil || exe.GOARCH != "arm64" || l == nil {
			t.Errorf("Find(arm64) = %+v, %v, %v; want the build", exe, l, err)
		}
	}
	if !reflect.DeepEqual(builds, []string{"arm64"}) {
		t.Errorf("builds %q; want one, for arm64", builds)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the build's directory is left once its layer is made: %v", err)
	}
	notRollcheck := &Finder{Self: func() (Executable, error) { return static, errors.New("x.test is not the rollcheck command") }, Build: build}
	_, _, err := notRollcheck.Find(t.Context(), "amd64", t.Logf)
	if err == nil || !strings.Contains(err.Error(), "x.test is not the rollcheck command") || !strings.Contains(err.Error(), "go list: no module") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Find with neither = %v; want one line with both reasons", err)
	}
}

// Self is refused until MarkRollcheck: a test binary is not rollcheck.
func TestSelfNeedsMark(t *testing.T) {
	if isRollcheck.Load() {
		t.Skip("marked already")
	}
	exe, err := Self()
	if err == nil || !strings.Contains(err.Error(), "is not the rollcheck command") {
		t.Errorf("Self() = %+v, %v; want a refusal", exe, err)
	}
	if exe.GOOS != runtime.GOOS || exe.GOARCH != runtime.GOARCH || exe.Path == "" {
		t.Errorf("Self() = %+v", exe)
	}
}

// The archive WriteTarball writes reads back (tarball.ImageFromPath) as the same images, the
// layer they share written once.
func TestTarballRoundTrip(t *testing.T) {
	exe := fakeExe(t, bytes.Repeat([]byte{1, 2, 3}, 5000))
	load, app := makeImage(t, Load, exe), makeImage(t, App, exe)
	lref, _ := Ref(LoadRepo, load)
	aref, _ := Ref(AppRepo, app)
	path := filepath.Join(t.TempDir(), "images.tar")
	if err := WriteTarball(path, map[string]v1.Image{lref: load, aref: app}); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]v1.Image{lref: load, aref: app} {
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tarball.ImageFromPath(path, &tag)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		gd, err := got.Digest()
		wd, _ := want.Digest()
		if err != nil || gd != wd {
			t.Errorf("%s read back with digest %s, %v; want %s", ref, gd, err, wd)
		}
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil || len(m) != 2 {
		t.Fatalf("manifest: %+v, %v", m, err)
	}
	if m[0].Layers[0] != m[1].Layers[0] {
		t.Errorf("the shared layer is written twice: %q, %q", m[0].Layers[0], m[1].Layers[0])
	}
}

// Push writes to a registry on 127.0.0.1 over plain HTTP (an in-process registry) and the image
// reads back with the same digest under REGISTRY/rollcheck/load:<tag>.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img := makeImage(t, Load, fakeExe(t, []byte("agent")))
	ref, _ := Ref(LoadRepo, img)
	got, err := Push(t.Context(), host+"/team", ref, img)
	if err != nil || got != host+"/team/"+ref {
		t.Fatalf("Push = %q, %v; want %q", got, err, host+"/team/"+ref)
	}
	tag, err := name.NewTag(got, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	back, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	bd, _ := back.Digest()
	wd, _ := img.Digest()
	if bd != wd {
		t.Errorf("read back %s; want %s", bd, wd)
	}
	if _, err := Push(t.Context(), "http://"+host, ref, img); err == nil || !strings.Contains(err.Error(), "without a scheme") {
		t.Errorf("Push to a URL: %v; want a refusal", err)
	}
}

func TestRegistries(t *testing.T) {
	for reg, ok := range map[string]bool{"registry.example:5000": true, "ghcr.io/me": true, "localhost:5000": true, "127.0.0.1:5000/x/y": true,
		"": false, "https://ghcr.io": false, "ghcr.io/": false, "ghcr.io/me@sha256:00": false, "Bad Host": false} {
		if err := ValidRegistry(reg); (err == nil) != ok {
			t.Errorf("ValidRegistry(%q) = %v; want ok %v", reg, err, ok)
		}
	}
	for reg, loop := range map[string]bool{"localhost:5000": true, "127.0.0.1:5000/x": true, "[::1]:5000": true, "localhost": true,
		"registry.example:5000": false, "10.0.0.1:5000": false, "localhost.example.com": false} {
		if got := loopbackRegistry(reg); got != loop {
			t.Errorf("loopbackRegistry(%q) = %v; want %v", reg, got, loop)
		}
	}
}

// A Linux build the user gives (ROLLCHECK_LINUX_EXECUTABLE) stands in for a running executable no
// pod can run (a darwin build) only when it is the same rollcheck; every refusal is one line.
func TestFindGiven(t *testing.T) {
	darwin := Executable{Path: "/usr/local/bin/rollcheck", GOOS: "darwin", GOARCH: "arm64"}
	linux := writeELF(t, elf.EM_AARCH64, elf.PT_LOAD)
	dynamic := writeELF(t, elf.EM_AARCH64, elf.PT_INTERP)
	mine := Build{Path: Command, Version: "v0.0.0-20261129120000-abcdef123456"}
	builds := map[string]Build{"": mine, linux: mine}
	buildOf := func(p string) (Build, error) {
		b, ok := builds[p]
		if !ok {
			return Build{}, errors.New("no build information")
		}
		return b, nil
	}
	noBuild := func(context.Context, string, string, func(string, ...any)) (Executable, error) {
		t.Fatal("a build although an executable was given")
		return Executable{}, nil
	}
	f := &Finder{Self: func() (Executable, error) { return darwin, nil }, Given: linux, BuildOf: buildOf, Build: noBuild}
	exe, l, err := f.Find(t.Context(), "arm64", t.Logf)
	if err != nil || exe.Path != linux || l == nil || !strings.Contains(exe.From, EnvLinuxExecutable) {
		t.Fatalf("Find = %+v, %v, %v; want the given executable", exe, l, err)
	}
	if err := f.Check("arm64"); err != nil {
		t.Errorf("Check = %v; want nil", err)
	}
	for name, tc := range map[string]struct {
		given string
		its   Build
		arch  string
		want  string
	}{
		"another version":  {linux, Build{Path: Command, Version: "v0.0.0-20261101000000-0123456789ab"}, "arm64", "not the same version"},
		"another command":  {linux, Build{Path: "example.com/other", Version: mine.Version}, "arm64", "not the rollcheck command"},
		"a dirty checkout": {linux, Build{Path: Command, Version: "(devel)", Revision: "abcdef123456ffff", Modified: true}, "arm64", "uncommitted changes"},
		"another arch":     {linux, mine, "amd64", "is an ELF for EM_AARCH64"},
		"a cgo build":      {dynamic, mine, "arm64", "dynamically linked"},
		"no such file":     {filepath.Join(t.TempDir(), "nope"), mine, "arm64", "no such file"},
	} {
		builds[tc.given] = tc.its
		g := &Finder{Self: func() (Executable, error) { return darwin, nil }, Given: tc.given, BuildOf: buildOf, Build: noBuild}
		_, _, err := g.Find(t.Context(), tc.arch, t.Logf)
		cerr := g.Check(tc.arch)
		for _, e := range []error{err, cerr} {
			if e == nil || !strings.Contains(e.Error(), tc.want) || !strings.Contains(e.Error(), "darwin/arm64 build") || strings.Contains(e.Error(), "\n") {
				t.Errorf("%s: %v; want one line with %q and why the running one cannot serve", name, e, tc.want)
			}
		}
		builds[linux] = mine
	}
}

// With neither a usable executable nor a given one, Check refuses in one line before any
// cluster work when no go command could build one, naming both ways out.
func TestCheckWithoutGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	darwin := Executable{Path: "/usr/local/bin/rollcheck", GOOS: "darwin", GOARCH: "arm64"}
	f := &Finder{Self: func() (Executable, error) { return darwin, nil }}
	err := f.Check("arm64")
	if err == nil || !strings.Contains(err.Error(), EnvLinuxExecutable) || !strings.Contains(err.Error(), "install Go") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check without go = %v; want one line naming %s and Go", err, EnvLinuxExecutable)
	}
	static := Executable{Path: writeELF(t, elf.EM_X86_64, elf.PT_LOAD), GOOS: "linux", GOARCH: "amd64"}
	if err := (&Finder{Self: func() (Executable, error) { return static, nil }}).Check("amd64"); err != nil {
		t.Errorf("Check of a usable running executable = %v; want nil, go or not", err)
	}
}

func TestSameBuild(t *testing.T) {
	const rev = "abcdef1234567890abcdef1234567890abcdef12"
	pseudo := Build{Path: Command, Version: "v0.0.0-20261129120000-abcdef123456"}
	checkout := Build{Path: Command, Version: "(devel)", Revision: rev}
	for _, tc := range []struct {
		a, b Build
		same bool
	}{
		{pseudo, pseudo, true},
		{Build{Path: Command, Version: "v1.2.3"}, Build{Path: Command, Version: "v1.2.3"}, true},
		{Build{Path: Command, Version: "v1.2.3"}, Build{Path: Command, Version: "v1.2.4"}, false},
		{pseudo, checkout, true}, // go install @pseudo and a release built in the checkout of that commit
		{checkout, Build{Path: Command, Version: "(devel)", Revision: "0123456789ab"}, false},
		{checkout, Build{Path: Command, Version: "(devel)", Revision: rev, Modified: true}, false},
		{Build{Path: Command, Version: "(devel)"}, Build{Path: Command, Version: "(devel)"}, false},
		{pseudo, Build{Path: "example.com/x", Version: pseudo.Version}, false}, // the given one is not rollcheck
		// make release with -buildvcs=false: the stamp is all there is.
		{Build{Path: Command, Version: "(devel)", Stamp: "abc1234"}, Build{Path: Command, Version: "(devel)", Stamp: "abc1234"}, true},
		{Build{Path: Command, Version: "(devel)", Stamp: "abc1234"}, Build{Path: Command, Version: "(devel)", Stamp: "def5678"}, false},
		{Build{Path: Command, Version: "(devel)", Stamp: "abc1234-dirty"}, Build{Path: Command, Version: "(devel)", Stamp: "abc1234-dirty"}, false},
	} {
		if err := SameBuild(tc.a, tc.b); (err == nil) != tc.same || (err != nil && strings.Contains(err.Error(), "\n")) {
			t.Errorf("SameBuild(%s, %s) = %v; want same %v", tc.a, tc.b, err, tc.same)
		}
	}
	if q := checkout.Query(); q != rev {
		t.Errorf("Query of a clean checkout = %q; want its commit", q)
	}
	if q := (Build{Version: "(devel)", Revision: rev, Modified: true}).Query(); q != "" {
		t.Errorf("Query of a dirty checkout = %q; want none", q)
	}
	if q := pseudo.Query(); q != pseudo.Version {
		t.Errorf("Query = %q; want the version", q)
	}
}

// ReadBuild reads what Go records in an executable: this test binary's, from its file.
func TestReadBuild(t *testing.T) {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBuild(p)
	if err != nil || !strings.HasSuffix(b.Path, "internal/selfimage.test") {
		t.Errorf("ReadBuild(test binary) = %+v, %v", b, err)
	}
	if _, err := ReadBuild(writeELF(t, elf.EM_X86_64, elf.PT_LOAD)); err == nil {
		t.Error("ReadBuild of an ELF with no Go build information: no error")
	}
}

// Outside rollcheck's module, the build is `go install COMMAND@VERSION` cross-built into a GOPATH
// of its own, with the user's module cache: here a go command that records what it was asked.
func TestGoInstall(t *testing.T) {
	bin := t.TempDir()
	elfPath := writeELF(t, elf.EM_AARCH64, elf.PT_LOAD)
	script := `#!/bin/sh
echo "$@" "GOOS=$GOOS GOARCH=$GOARCH CGO_ENABLED=$CGO_ENABLED GOMODCACHE=$GOMODCACHE" >> "$RECORD"
case "$1" in
env) echo /home/u/go/pkg/mod ;;
install) mkdir -p "$GOPATH/bin/linux_$GOARCH" && cp "$ELF" "$GOPATH/bin/linux_$GOARCH/rollcheck" ;;
*) exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"/usr/bin"+string(os.PathListSeparator)+"/bin") // the fake go first; mkdir and cp
	t.Setenv("RECORD", record)
	t.Setenv("ELF", elfPath)
	dir := t.TempDir()
	exe, err := goInstall(t.Context(), dir, "arm64", "v0.0.0-20261129120000-abcdef123456", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if exe.Path != filepath.Join(dir, "rollcheck-linux-arm64") || exe.GOOS != "linux" || exe.GOARCH != "arm64" {
		t.Errorf("goInstall = %+v", exe)
	}
	if err := Usable(exe, "arm64"); err != nil {
		t.Errorf("the installed executable: %v", err)
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	want := "install -trimpath -ldflags -s -w " + Command + "@v0.0.0-20261129120000-abcdef123456 GOOS=linux GOARCH=arm64 CGO_ENABLED=0 GOMODCACHE=/home/u/go/pkg/mod"
	if !strings.Contains(string(b), want) {
		t.Errorf("the go command was asked:\n%s\nwant a line %q", b, want)
	}
}

// The stamp make release gives each binary is read from the linker flags Go records.
func TestBuildOfStamp(t *testing.T) {
	bi := &debug.BuildInfo{Path: Command, Main: debug.Module{Path: Module, Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-s -w -X " + Module + "/engine.version=v1.2.3-4-gabcdef1 -X other=y"}}}
	if b := buildOf(bi); b.Stamp != "v1.2.3-4-gabcdef1" || b.Revision != "" {
		t.Errorf("buildOf = %+v; want the stamp v1.2.3-4-gabcdef1", b)
	}
	// A user's program that imports rollcheck (a test binary of rctest, say): the rollcheck it
	// requires is its version, and its own commit is not rollcheck's.
	user := &debug.BuildInfo{Path: "example.com/app/suite.test", Main: debug.Module{Path: "example.com/app", Version: "v0.3.0"},
		Deps:     []*debug.Module{{Path: Module, Version: "v0.0.0-20261129120000-abcdef123456"}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}}
	b := buildOf(user)
	if b.Version != "v0.0.0-20261129120000-abcdef123456" || b.Revision != "" || b.Query() != b.Version {
		t.Errorf("buildOf(a user's program) = %+v; want rollcheck's required version, no commit", b)
	}
	if err := SameBuild(b, Build{Path: Command, Version: "v0.0.0-20261129120000-abcdef123456"}); err != nil {
		t.Errorf("a user's program and the rollcheck it requires: %v", err)
	}
	user.Deps[0].Replace = &debug.Module{Path: "../rollcheck"}
	if b := buildOf(user); b.Version != "" || b.Query() != "" {
		t.Errorf("buildOf(a program that replaces rollcheck) = %+v; want no version", b)
	}
}
