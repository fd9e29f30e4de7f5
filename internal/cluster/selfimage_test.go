package cluster

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// staticExe is a minimal static ELF of this machine's architecture (a header and one PT_LOAD),
// as selfimage.Usable reads one.
func staticExe(t *testing.T) selfimage.Executable {
	t.Helper()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if machine == 0 {
		t.Skipf("no test ELF for %s", runtime.GOARCH)
	}
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1, Shentsize: 64}
	copy(h.Ident[:], []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	_ = binary.Write(&b, binary.LittleEndian, h)
	_ = binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(elf.PT_LOAD), Filesz: 120, Memsz: 120})
	p := filepath.Join(t.TempDir(), "rollcheck")
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return selfimage.Executable{Path: p, GOOS: "linux", GOARCH: runtime.GOARCH, From: "test"}
}

// useExecutable makes rollcheck's images of exe for the rest of the test.
func useExecutable(t *testing.T, exe selfimage.Executable) {
	t.Helper()
	finder = selfimage.Finder{Self: func() (selfimage.Executable, error) { return exe, nil }}
	t.Cleanup(func() { finder = selfimage.Finder{} })
}

// The load and app images are made in process and loaded into every node from memory: no
// Docker engine is asked (its CLI here fails every call), each node imports each image once, and
// the tags are content tags of rollcheck's repositories. A process that joined the cluster, which
// made neither image, finds them on every node; an image of a user that the Docker engine lacks
// is still an error.
func TestOwnImagesLoadedFromMemory(t *testing.T) {
	calls := failingDocker(t)
	useExecutable(t, staticExe(t))
	workers := []*fakeNode{{name: "rc-control-plane"}, {name: "rc-worker"}}
	c := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, kind: &fakeKind{nodes: []nodes.Node{workers[0], workers[1]}}}

	load, err := c.BuildLoadImage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(load, LoadImageRepo+":") || !isOwnRef(load) || check.ValidLoadImage(load) != nil {
		t.Errorf("load image %q: not a content tag of %s", load, LoadImageRepo)
	}
	again, err := c.BuildLoadImage(context.Background())
	if err != nil || again != load {
		t.Errorf("made again: %q, %v; want %q", again, err, load)
	}
	for _, n := range workers {
		if n.imports != 1 {
			t.Errorf("node %s: %d imports, want 1", n, n.imports)
		}
	}
	if b, _ := os.ReadFile(calls); len(b) > 0 {
		t.Errorf("the Docker engine was asked:\n%s", b)
	}

	joined := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, kind: &fakeKind{nodes: []nodes.Node{workers[0], workers[1]}}}
	ownImages.Lock()
	delete(ownImages.m, load)
	ownImages.Unlock()
	if err := joined.LoadImages(context.Background(), []string{load}); err != nil {
		t.Errorf("a joined process's load of %s: %v", load, err)
	}
	for _, n := range workers {
		n.noCrictl = true // the offline node's crictl shim: ctr's list tells
	}
	if err := joined.LoadImages(context.Background(), []string{load}); err != nil {
		t.Errorf("a joined process's load of %s, crictl answering no inspecti: %v", load, err)
	}
	fresh := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, kind: &fakeKind{nodes: []nodes.Node{&fakeNode{name: "rc-control-plane", noCrictl: true}}}}
	if err := fresh.LoadImages(context.Background(), []string{load}); err == nil || !strings.Contains(err.Error(), "not in the local Docker engine") {
		t.Errorf("an image of rollcheck's that neither this process, Docker nor the nodes have: %v", err)
	}
	if err := joined.LoadImages(context.Background(), []string{"example/app:dev"}); err == nil || !strings.Contains(err.Error(), "not in the local Docker engine") {
		t.Errorf("a user's image that Docker lacks: %v", err)
	}
}

// The entry images are made in process over the app image: the stop-signal one sets SIGQUIT and
// keeps the app's layers and entrypoint, and is tagged <app repo>-stopsignal:<app tag>.
func TestEntryImageStopSignal(t *testing.T) {
	dir := t.TempDir()
	fakeTool(t, dir, "docker", "exit 1\n")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	useExecutable(t, staticExe(t))
	c := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, kind: &fakeKind{nodes: []nodes.Node{&fakeNode{name: "rc-control-plane"}}}}
	app, err := c.BuildAppImage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := c.EntryImage(context.Background(), app, EntryStopSignal)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(app, ":", "-stopsignal:", 1); ref != want || !isOwnRef(ref) {
		t.Errorf("entry image %q; want %q", ref, want)
	}
	cf, err := ownImage(ref).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := ownImage(app).Layers()
	got, _ := ownImage(ref).Layers()
	if cf.Config.StopSignal != "SIGQUIT" || strings.Join(cf.Config.Entrypoint, " ") != "/rollcheck agent app" || len(got) != len(base) {
		t.Errorf("stop signal %q, entrypoint %q, %d layers (app: %d)", cf.Config.StopSignal, cf.Config.Entrypoint, len(got), len(base))
	}
	if _, err := c.EntryImage(context.Background(), "example/app:dev", EntryStopSignal); err == nil {
		t.Error("an entry image over an app image this process did not make")
	}
}

func kindNode(name, providerID, arch string) corev1.Node {
	n := corev1.Node{Spec: corev1.NodeSpec{ProviderID: providerID}}
	n.Name, n.Status.NodeInfo.Architecture = name, arch
	return n
}

func TestContainerdName(t *testing.T) {
	for ref, want := range map[string]string{"rollcheck/app:abc": "docker.io/rollcheck/app:abc", "busybox:1": "docker.io/library/busybox:1",
		"localhost:5000/x/y:z": "localhost:5000/x/y:z", "ghcr.io/me/x:1": "ghcr.io/me/x:1", "localhost/x:1": "localhost/x:1"} {
		if got := containerdName(ref); got != want {
			t.Errorf("containerdName(%q) = %q; want %q", ref, got, want)
		}
	}
}

// A kind cluster is told by its nodes' provider IDs, all of one cluster on Docker.
func TestKindClusterOf(t *testing.T) {
	for _, tc := range []struct {
		nodes []corev1.Node
		want  string
	}{
		{[]corev1.Node{kindNode("a", "kind://docker/dev/dev-control-plane", "amd64"), kindNode("b", "kind://docker/dev/dev-worker", "amd64")}, "dev"},
		{[]corev1.Node{kindNode("a", "kind://docker/dev/dev-control-plane", "amd64"), kindNode("b", "kind://docker/other/other-worker", "amd64")}, ""},
		{[]corev1.Node{kindNode("a", "kind://podman/dev/dev-control-plane", "amd64")}, ""},
		{[]corev1.Node{kindNode("a", "gce://project/zone/vm", "amd64")}, ""},
		{[]corev1.Node{kindNode("a", "", "amd64")}, ""},
		{nil, ""},
	} {
		if got := kindClusterOf(tc.nodes); got != tc.want {
			t.Errorf("kindClusterOf(%v) = %q; want %q", tc.nodes, got, tc.want)
		}
	}
}

// The nodes' one architecture; several are refused in one line that names them.
func TestNodesArch(t *testing.T) {
	if a, err := nodesArch([]corev1.Node{kindNode("a", "", "arm64"), kindNode("b", "", "arm64")}); a != "arm64" || err != nil {
		t.Errorf("nodesArch = %q, %v", a, err)
	}
	_, err := nodesArch([]corev1.Node{kindNode("a", "", "arm64"), kindNode("b", "", "amd64"), kindNode("c", "", "amd64")})
	if err == nil || !strings.Contains(err.Error(), "amd64 (b, c); arm64 (a)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("mixed architectures: %v", err)
	}
}

// The setting the finder reads (knobs, validated with every knob) is the one selfimage's lines
// name: two constants of one name, kept equal here.
func TestLinuxExecutableSettingName(t *testing.T) {
	if knobs.EnvLinuxExecutable != selfimage.EnvLinuxExecutable {
		t.Errorf("knobs names %s, selfimage's lines name %s", knobs.EnvLinuxExecutable, selfimage.EnvLinuxExecutable)
	}
}
