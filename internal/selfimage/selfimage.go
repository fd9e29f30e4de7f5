// Package selfimage makes rollcheck's own images, the load pod's (rollcheck/load) and the sample
// app's (rollcheck/app), in process from an executable of rollcheck: no Docker build, no Go
// toolchain, no checkout. Each image is FROM nothing (empty.Image) with one layer holding the
// executable at /rollcheck (mode 0755); the app image has a second, tiny layer with /app, a
// link to it, which exec preStop hooks ("/app sleep 5s") and the entry images' wrappers run
// (rollcheck started under the name app is the sample app). The config runs
// /rollcheck agent load or /rollcheck agent app as user 65532:65532, for linux/<GOARCH>.
//
// Images are deterministic: the same executable gives the same digest (fixed times, owners and
// order in the layer; the compression of the same Go version), and their tags are derived from
// that digest (never :latest).
//
// The executable is the running one when it is rollcheck (MarkRollcheck), a static Linux ELF
// of the nodes' architecture. When it is not usable (a darwin build, a cgo build, another
// architecture, or a test binary that is not rollcheck at all) and a Go toolchain finds
// rollcheck's module, rollcheck is cross-built with CGO_ENABLED=0 for the nodes' architecture
// (Find): the developers' path, and the Ginkgo suites'.
package selfimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"sync/atomic"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The repositories of rollcheck's own images; their tags are derived from their content.
const (
	AppRepo  = "rollcheck/app"
	LoadRepo = "rollcheck/load"
)

// Path is where the executable is in the images; AppLink is the app image's link to it.
const (
	Path    = "/rollcheck"
	AppLink = "/app"
)

// User is the images' user, as the Dockerfiles of cmd/rollcheck-load and fixtures/app say.
const User = "65532:65532"

// A Kind is one of rollcheck's own images.
type Kind string

const (
	Load Kind = "load" // the load pod's: /rollcheck agent load
	App  Kind = "app"  // the sample app's: /rollcheck agent app, with /app
)

// Repo is the repository of k's image.
func (k Kind) Repo() string {
	if k == App {
		return AppRepo
	}
	return LoadRepo
}

// Entrypoint is the config's entrypoint of k's image.
func (k Kind) Entrypoint() []string { return []string{Path, "agent", string(k)} }

// epoch is the time of every file in the layers and of the config: a fixed one, so that the
// same executable gives the same image.
var epoch = time.Unix(0, 0).UTC()

// defaultPath is the PATH a Docker build FROM scratch puts in the config, kept for parity.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// isRollcheck says the running executable is the rollcheck command (MarkRollcheck).
var isRollcheck atomic.Bool

// MarkRollcheck says the running executable is the rollcheck command, whose agent commands the
// images run: cmd/rollcheck's main calls it. Without it (a test binary, a user's program that
// imports rollcheck's packages) the running executable is never put in an image.
func MarkRollcheck() { isRollcheck.Store(true) }

// Executable is a rollcheck binary to make images of, and what it was built for.
type Executable struct {
	Path   string
	GOOS   string
	GOARCH string
	// From says where it comes from, for the log: "this executable (PATH)", "built with go
	// build from MODULE DIR".
	From string
}

// Layer is a deterministic gzipped layer of files, each given by its tar header (the time,
// owner and format are set here) and its content (nil for a link or a directory).
func Layer(files []File) (v1.Layer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		h := &tar.Header{Typeflag: f.Type, Name: f.Name, Linkname: f.Linkname, Mode: f.Mode, Size: f.Size,
			ModTime: epoch, Format: tar.FormatPAX}
		if f.Type == 0 {
			h.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if f.Open != nil {
			if err := f.copy(tw); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// A File is one entry of a Layer.
type File struct {
	Name     string // in the tar: "rollcheck", "bin/sh" (no leading slash)
	Type     byte   // tar.TypeReg (or 0), tar.TypeSymlink, tar.TypeDir
	Linkname string
	Mode     int64
	Size     int64
	Open     func() (io.ReadCloser, error) // the content, Size bytes; nil for none
}

func (f File) copy(w io.Writer) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	n, err := io.Copy(w, r)
	if err == nil && n != f.Size {
		err = fmt.Errorf("%s: %d bytes, want %d (changed while read?)", f.Name, n, f.Size)
	}
	return err
}

// RegularFile is the File name (in the layer) with the content of the file at path and mode.
func RegularFile(name, path string, mode int64) (File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return File{}, err
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file", path)
	}
	return File{Name: name, Mode: mode, Size: st.Size(), Open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil
}

// BytesFile is the File name with content b and mode.
func BytesFile(name string, b []byte, mode int64) File {
	return File{Name: name, Mode: mode, Size: int64(len(b)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// ExecutableLayer is the layer every image of exe shares: exe at /rollcheck, mode 0755.
func ExecutableLayer(exe Executable) (v1.Layer, error) {
	f, err := RegularFile(Path[1:], exe.Path, 0o755)
	if err != nil {
		return nil, fmt.Errorf("the executable: %w", err)
	}
	return Layer([]File{f})
}

// Make makes k's image of exe, which must be usable (Usable): the layer of ExecutableLayer (the
// same for both kinds, so that a node stores it once), the app's link layer for App, and the
// config.
func Make(k Kind, exe Executable, layer v1.Layer) (v1.Image, error) {
	layers := []v1.Layer{layer}
	if k == App {
		link, err := Layer([]File{{Name: AppLink[1:], Type: tar.TypeSymlink, Linkname: Path[1:], Mode: 0o777}})
		if err != nil {
			return nil, err
		}
		layers = append(layers, link)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layers...)
	if err != nil {
		return nil, fmt.Errorf("%s image: %w", k, err)
	}
	img = mutate.ConfigMediaType(img, types.DockerConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("%s image: %w", k, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", exe.GOARCH, v1.Time{Time: epoch}
	cf.Config.Entrypoint = k.Entrypoint()
	cf.Config.User = User
	cf.Config.Env = []string{defaultPath}
	if k == App {
		cf.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "8081/tcp": {}}
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: epoch}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("%s image: %w", k, err)
	}
	return img, nil
}

// Ref is the reference of img in repo: repo:<the first 12 hex digits of its digest>.
func Ref(repo string, img v1.Image) (string, error) {
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return repo + ":" + d.Hex[:12], nil
}

// Tag is repo:<the first 12 hex digits of the SHA-256 of b>: the tag of an image derived from
// other content (EntryImage's variants).
func Tag(repo string, b []byte) string {
	s := sha256.Sum256(b)
	return repo + ":" + hex.EncodeToString(s[:])[:12]
}
