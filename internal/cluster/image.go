package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// AppImageRepo is the repository of the sample app image; its tags are derived from its content.
const AppImageRepo = "rollcheck/app"

// LoadImageRepo is the repository of the load pod's image (cmd/rollcheck-load); its tags are
// derived from its content.
const LoadImageRepo = "rollcheck/load"

// ImagesKept is how many images of each repository rollcheck builds (AppImageRepo,
// LoadImageRepo) a build leaves in the Docker engine, the one it just built included.
const ImagesKept = 3

// imageBuildTimeout bounds one docker build of a FROM-scratch image (a COPY of one binary).
const imageBuildTimeout = 2 * time.Minute

// imageTagForm is the form of the tags rollcheck's image builds give (imageTag): a hash of the
// build context; earlier versions put the UTC build time before it, and pruning removes those too.
var imageTagForm = regexp.MustCompile(`^([0-9]{8}-[0-9]{6}-)?[0-9a-f]{12}$`)

// AppPackage is the sample app's Go package; its directory holds the image's Dockerfile.
const AppPackage = "github.com/rollcheck/rollcheck/fixtures/app"

// LoadPackage is the load pod's program; its directory holds the image's Dockerfile.
const LoadPackage = "github.com/rollcheck/rollcheck/cmd/rollcheck-load"

// An image is one of the FROM-scratch images rollcheck builds from its own module: the static
// binary of a Go package, copied by the Dockerfile in that package's directory.
type image struct {
	what string // in messages: "app", "load"
	repo string
	pkg  string
	bin  string // the binary's name in the build context, as the Dockerfile's COPY names it
}

var (
	appImage  = image{what: "app", repo: AppImageRepo, pkg: AppPackage, bin: "app"}
	loadImage = image{what: "load", repo: LoadImageRepo, pkg: LoadPackage, bin: "rollcheck-load"}
)

// BuildAppImage builds the sample app (fixtures/app) as a static binary, wraps it in its
// FROM-scratch image with a tag derived from its content (never :latest), and loads the image into
// the cluster's nodes. It returns the image reference. The app is built from the rollcheck
// module as the go command finds it from the working directory: this repository, or the module
// cache when a user's module requires rollcheck; no checkout is needed.
func (c *Cluster) BuildAppImage(ctx context.Context) (string, error) {
	return c.buildImage(ctx, appImage)
}

// BuildLoadImage builds the load pod's program (cmd/rollcheck-load) and its FROM-scratch image
// as BuildAppImage builds the app's, and loads it into the cluster's nodes. It returns the
// image reference (LoadImageRepo, a tag derived from its content). LoadPodImage takes
// ROLLCHECK_LOAD_IMAGE's prebuilt image instead when it is set.
func (c *Cluster) BuildLoadImage(ctx context.Context) (string, error) {
	return c.buildImage(ctx, loadImage)
}

// LoadPodImage returns the load pod's image for this cluster: the prebuilt one Options.LoadImage
// names (ROLLCHECK_LOAD_IMAGE), loaded into the nodes when the local Docker engine has it
// (else the nodes are expected to have it already), or else the one BuildLoadImage builds.
func (c *Cluster) LoadPodImage(ctx context.Context) (string, error) {
	ref := c.LoadImage
	if ref == "" {
		return c.BuildLoadImage(ctx)
	}
	if _, err := run(ctx, "docker", "image", "inspect", ref); err != nil {
		c.Logf("load image %s (%s) is not in the local Docker engine: not loaded, the nodes must have it", ref, knobs.EnvLoadImage)
		return ref, nil
	}
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	return ref, nil
}

// BuildLoadPodImage builds the load pod's image as BuildLoadImage does, in the local Docker
// engine only: it loads it into no cluster. It returns the image reference, to push where a
// cluster rollcheck does not own can pull it.
func BuildLoadPodImage(ctx context.Context, logf func(string, ...any)) (string, error) {
	return localImage(ctx, loadImage, logf)
}

// buildImage builds im in the local Docker engine (localImage) and loads it into the cluster's
// nodes. It returns the image reference.
func (c *Cluster) buildImage(ctx context.Context, im image) (string, error) {
	start := time.Now()
	ref, err := localImage(ctx, im, c.Logf)
	if err != nil {
		return "", err
	}
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	c.Logf("%s image %s built and loaded in %s", im.what, ref, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
}

// localImage builds im's binary from the rollcheck module (CGO_ENABLED=0, no VCS stamp: the
// same code gives the same binary), then its image tagged by the hash of the build context
// (binary and Dockerfile), unless the local Docker engine has that tag already: the same
// content keeps one tag. It prunes the repository's older images and returns the reference.
func localImage(ctx context.Context, im image, logf func(string, ...any)) (string, error) {
	dir, err := os.MkdirTemp("", "rollcheck-"+im.what+"-image-")
	if err != nil {
		return "", fmt.Errorf("build %s image: %w", im.what, err)
	}
	defer os.RemoveAll(dir)

	src, err := run(ctx, "go", "list", "-f", "{{.Dir}}", im.pkg)
	if err != nil {
		return "", fmt.Errorf("build %s image: %s is not found from the working directory (run inside a module that requires github.com/rollcheck/rollcheck): %w", im.what, im.pkg, err)
	}
	src = strings.TrimSpace(src)
	bin := filepath.Join(dir, im.bin)
	build := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, im.pkg}
	if _, err := runIn(ctx, "", []string{"CGO_ENABLED=0"}, "go", build...); err != nil {
		return "", fmt.Errorf("build %s binary: %w", im.what, err)
	}
	if err := copyFile(filepath.Join(src, "Dockerfile"), filepath.Join(dir, "Dockerfile")); err != nil {
		return "", fmt.Errorf("build %s image: %w", im.what, err)
	}
	sum, err := filesHash(filepath.Join(dir, "Dockerfile"), bin)
	if err != nil {
		return "", fmt.Errorf("build %s image: %w", im.what, err)
	}
	ref := imageTag(im.repo, sum)
	if _, err := run(ctx, "docker", "image", "inspect", ref); err == nil {
		logf("%s image %s is in the local Docker engine already: the same content, not built again", im.what, ref)
		return ref, nil
	}
	bctx, cancel := context.WithTimeout(ctx, imageBuildTimeout)
	defer cancel()
	if _, err := runIn(bctx, dir, []string{"DOCKER_BUILDKIT=0"}, "docker", "build", "-q", "-t", ref, "."); err != nil {
		return "", fmt.Errorf("docker build %s: %w", ref, err)
	}
	pruneImages(ctx, im, ref, logf)
	return ref, nil
}

// imageTag is the reference of an image of repo whose build context has the SHA-256 sum (hex):
// repo:<12 hex digits>, the same for the same content and never :latest.
func imageTag(repo, sum string) string {
	return fmt.Sprintf("%s:%s", repo, sum[:12])
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// filesHash is the SHA-256 (hex) of the files' contents, each preceded by its length.
func filesHash(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d\n", len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PruneAppImages removes older rollcheck/app images from the local Docker engine, keeping the
// ImagesKept newest, and never current (the one just built). An image a container uses is left
// alone (docker image rm refuses it), as is a tag BuildAppImage did not make. Pruning is
// housekeeping: a failure is logged, not returned.
func PruneAppImages(ctx context.Context, current string, logf func(string, ...any)) {
	pruneImages(ctx, appImage, current, logf)
}

// pruneImages is PruneAppImages for the repository of im.
func pruneImages(ctx context.Context, im image, current string, logf func(string, ...any)) {
	out, err := run(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", im.repo)
	if err != nil {
		logf("prune old %s images: %v", im.what, err)
		return
	}
	var removed, kept []string
	for _, ref := range prunableImages(im.repo, strings.Fields(out), current, ImagesKept) {
		if _, err := run(ctx, "docker", "image", "rm", ref); err != nil {
			kept = append(kept, ref) // in use, or gone meanwhile
			continue
		}
		removed = append(removed, ref)
	}
	if len(removed) > 0 || len(kept) > 0 {
		logf("pruned %d old %s image(s), %d in use left alone", len(removed), im.what, len(kept))
	}
}

// prunableImages returns the references among refs that pruneImages removes: the images of repo
// with a tag of imageTag's form, except current and the newest others up to keep images in all.
// refs are in docker image ls's order, newest first (the Docker engine lists images by creation
// time, newest first; a content tag says nothing of time).
func prunableImages(repo string, refs []string, current string, keep int) []string {
	seen := map[string]bool{current: true}
	var old []string
	for _, ref := range refs {
		r, tag, ok := strings.Cut(ref, ":")
		if !ok || r != repo || !imageTagForm.MatchString(tag) || seen[ref] {
			continue
		}
		seen[ref] = true
		old = append(old, ref)
	}
	if others := keep - 1; others > 0 {
		old = old[min(others, len(old)):]
	}
	if len(old) == 0 {
		return nil
	}
	return old
}
