package controllers

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// User is the controllers' images' user: nonroot, as distroless's (numeric, so that
// runAsNonRoot can check it). The upstream images run as 999 (Argo Rollouts) and nobody
// (Flagger); neither writes to its image.
const User = "65532:65532"

// An Image is a controller's image, made in process by MakeImage.
type Image struct {
	Controller Controller
	// Ref is repo:<the first 12 hex digits of the image's digest>: the same binary gives the
	// same reference.
	Ref   string
	Image v1.Image
	// Size is the image's one layer, compressed: what a node stores.
	Size int64
}

// epoch is the time of the image's files and config: fixed, so that the same binary makes the
// same image.
var epoch = time.Unix(0, 0).UTC()

// MakeImage makes b's image FROM nothing, in process: one layer with the binary at
// Controller.Binary (0755), the working directory, and /tmp (1777) for a controller that writes
// temporary files where no volume is mounted there; the config runs the binary as User, for
// linux/b.GOARCH. The controllers need nothing else: they are static, speak only to the API
// server (whose CA the service account's token volume brings) and log to standard error.
func MakeImage(b Binary) (Image, error) {
	c := b.Controller
	bin, err := selfimage.RegularFile(strings.TrimPrefix(c.Binary, "/"), b.Path, 0o755)
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	files := append(dirs(c.Binary, c.WorkDir), bin,
		selfimage.File{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777})
	layer, err := selfimage.Layer(files)
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layer)
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	img, err = withConfig(mutate.ConfigMediaType(img, types.DockerConfigJSON), c, b.GOARCH)
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	ref, err := selfimage.Ref(c.Repo, img)
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	size, err := layer.Size()
	if err != nil {
		return Image{}, fmt.Errorf("%s image: %w", c.Title, err)
	}
	return Image{Controller: c, Ref: ref, Image: img, Size: size}, nil
}

// withConfig sets img's config: c's entrypoint, user and working directory, for linux/goarch,
// at the fixed epoch.
func withConfig(img v1.Image, c Controller, goarch string) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", goarch, v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{c.Binary},
		User:       User,
		WorkingDir: c.WorkDir,
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://" + c.Module,
			"org.opencontainers.image.version": c.Version,
			"org.opencontainers.image.title":   c.Title + ", built from its Go module by rollcheck",
		},
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: epoch}
	}
	return mutate.ConfigFile(img, cf)
}

// dirs are the directory entries of the layer: every parent of the binary and the working
// directory, and the working directory itself, each once, 0755.
func dirs(binary, workDir string) []selfimage.File {
	seen := map[string]bool{}
	var out []selfimage.File
	add := func(d string) {
		for ; d != "/" && d != "." && d != ""; d = path.Dir(d) {
			if !seen[d] {
				seen[d] = true
				out = append(out, selfimage.File{Name: strings.TrimPrefix(d, "/") + "/", Type: tar.TypeDir, Mode: 0o755})
			}
		}
	}
	add(path.Dir(binary))
	add(workDir)
	return out
}

// dockerLoadLimit bounds each try of docker load of a controller's image (some tens of MB).
const dockerLoadLimit = 3 * time.Minute

// ToDocker puts img into the local Docker engine, from which rollcheck's cluster package loads
// images into the kind nodes (cluster.Cluster.LoadImages): nothing when the engine has it
// already (its reference is derived from its content), else docker load of its archive,
// written in a temporary directory.
func ToDocker(ctx context.Context, img Image, logf func(string, ...any)) error {
	if _, err := (step{what: "docker image inspect " + img.Ref, limit: time.Minute, argv: []string{"docker", "image", "inspect", img.Ref}}).
		once(ctx, logf); err == nil {
		logf("%s: in the local Docker engine already", img.Ref)
		return nil
	}
	dir, err := os.MkdirTemp("", "rollcheck-controller-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "image.tar")
	if err := selfimage.WriteTarball(archive, map[string]v1.Image{img.Ref: img.Image}); err != nil {
		return err
	}
	_, err = step{what: "docker load " + img.Ref, limit: dockerLoadLimit, tries: 2,
		argv: []string{"docker", "load", "-q", "-i", archive}}.do(ctx, logf)
	return err
}
