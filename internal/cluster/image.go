package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// AppImageRepo is the repository of the sample app image; its tags are derived from its content.
const AppImageRepo = selfimage.AppRepo

// LoadImageRepo is the repository of the load pod's image (rollcheck agent load); its tags are
// derived from its content.
const LoadImageRepo = selfimage.LoadRepo

// ImagesKept is how many images of each repository rollcheck makes (AppImageRepo,
// LoadImageRepo) it leaves in the local Docker engine when it puts them there (LocalLoadImage),
// the newest included.
const ImagesKept = 3

// imageTagForm is the form of the tags of rollcheck's own images (selfimage.Ref: 12 hex digits
// of the image's digest); earlier versions put the UTC build time before it, and pruning
// removes those too.
var imageTagForm = regexp.MustCompile(`^([0-9]{8}-[0-9]{6}-)?[0-9a-f]{12}$`)

// An image names one repository of rollcheck's images, for pruneImages' lines.
type image struct {
	what string // in messages: "app", "load"
	repo string
}

var appImage = image{what: "app", repo: AppImageRepo}

// finder finds the executable rollcheck's images are made of, once per process and
// architecture (selfimage.Finder: this executable, else the Linux build ROLLCHECK_LINUX_EXECUTABLE
// names, else a build of rollcheck); ownFinder sets it up from the environment first.
var (
	finder     selfimage.Finder
	finderOnce sync.Once
)

func ownFinder() *selfimage.Finder {
	finderOnce.Do(func() { finder.Given = os.Getenv(knobs.EnvLinuxExecutable) })
	return &finder
}

// ImagesPreflight says, in one line and before any cluster work, why rollcheck could not make
// its own images (the load pod's, the sample app's) for nodes of architecture arch (empty: this
// machine's, as kind's nodes are), or nil when it can: this executable serves (a static Linux
// build), or the one ROLLCHECK_LINUX_EXECUTABLE names does, or a go command is there to build one
// (on a Mac: see docs/reference.md, "On a Mac").
func ImagesPreflight(arch string) error { return ownFinder().Check(arch) }

// ownImages are the images this process made (MakeImage, EntryImage), by reference: loading one
// writes it from memory, not from the local Docker engine, which need not have it.
var ownImages = struct {
	sync.Mutex
	m map[string]v1.Image
}{m: map[string]v1.Image{}}

func ownImage(ref string) v1.Image {
	ownImages.Lock()
	defer ownImages.Unlock()
	return ownImages.m[ref]
}

func addOwnImage(ref string, img v1.Image) {
	ownImages.Lock()
	defer ownImages.Unlock()
	ownImages.m[ref] = img
}

// isOwnRef says whether ref is of a repository of rollcheck's own images (rollcheck/load,
// rollcheck/app and its entry variants rollcheck/app-E) with a content tag.
func isOwnRef(ref string) bool {
	repo, tag, ok := strings.Cut(ref, ":")
	return ok && imageTagForm.MatchString(tag) && (repo == LoadImageRepo || repo == AppImageRepo || strings.HasPrefix(repo, AppImageRepo+"-"))
}

// MakeImage makes k's image (selfimage) for nodes of architecture arch (empty: this machine's)
// in process, of this executable or, where it cannot serve, of a build of rollcheck (the
// fallback needs a Go toolchain and rollcheck's module: see selfimage.Finder; it takes minutes
// at most, bounded). It returns the reference (repo:tag, the tag from the digest) and the image,
// which the process keeps so that LoadImages can load it.
func MakeImage(ctx context.Context, k selfimage.Kind, arch string, logf func(string, ...any)) (string, v1.Image, error) {
	exe, layer, err := ownFinder().Find(ctx, arch, logf)
	if err != nil {
		return "", nil, err
	}
	img, err := selfimage.Make(k, exe, layer)
	if err != nil {
		return "", nil, err
	}
	ref, err := selfimage.Ref(k.Repo(), img)
	if err != nil {
		return "", nil, fmt.Errorf("%s image: %w", k, err)
	}
	addOwnImage(ref, img)
	return ref, img, nil
}

// NodeArch is the architecture of the cluster's nodes (node.Status.NodeInfo.Architecture): one,
// or an error that names them when they differ (an image holds one executable). Empty, with no
// error, when the nodes cannot be listed (a user without the right): then it is not checked.
func NodeArch(ctx context.Context, client klient.Client, logf func(string, ...any)) (string, error) {
	nodes, err := listNodes(ctx, client)
	if err != nil {
		logf("the nodes' architecture is not checked: %v", err)
		return "", nil
	}
	return nodesArch(nodes)
}

func listNodes(ctx context.Context, client klient.Client) ([]corev1.Node, error) {
	var nodes corev1.NodeList
	if err := client.Resources().List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return nodes.Items, nil
}

// nodesArch is the one architecture of nodes, or an error naming them when they have several.
func nodesArch(nodes []corev1.Node) (string, error) {
	by := map[string][]string{}
	for _, n := range nodes {
		a := n.Status.NodeInfo.Architecture
		by[a] = append(by[a], n.Name)
	}
	if len(by) > 1 {
		var parts []string
		for _, a := range slices.Sorted(func(yield func(string) bool) {
			for a := range by {
				if !yield(a) {
					return
				}
			}
		}) {
			parts = append(parts, fmt.Sprintf("%s (%s)", a, strings.Join(by[a], ", ")))
		}
		return "", fmt.Errorf("the nodes have several architectures, %s, and rollcheck's images hold one executable: set %s to a multi-platform load image", strings.Join(parts, "; "), knobs.EnvLoadImage)
	}
	for a := range by {
		return a, nil
	}
	return "", nil
}

// BuildAppImage makes the sample app's image (rollcheck agent app) of this executable
// (selfimage), for the nodes' architecture, and loads it into the cluster's nodes. It returns
// the image reference (AppImageRepo, a tag derived from its content, never :latest). No Docker
// build, no Go toolchain and no checkout are needed when this executable is a static Linux
// rollcheck; else a Go toolchain that finds rollcheck's module builds one (selfimage.Finder).
func (c *Cluster) BuildAppImage(ctx context.Context) (string, error) {
	return c.ownImage(ctx, selfimage.App)
}

// BuildLoadImage makes the load pod's image (rollcheck agent load) as BuildAppImage makes the
// app's, and loads it into the cluster's nodes. It returns the image reference (LoadImageRepo, a
// tag derived from its content). LoadPodImage takes ROLLCHECK_LOAD_IMAGE's prebuilt image
// instead when it is set.
func (c *Cluster) BuildLoadImage(ctx context.Context) (string, error) {
	return c.ownImage(ctx, selfimage.Load)
}

// LoadPodImage returns the load pod's image for this cluster: the prebuilt one Options.LoadImage
// names (ROLLCHECK_LOAD_IMAGE), loaded into the nodes when the local Docker engine has it
// (else the nodes are expected to have it already), or else the one BuildLoadImage makes.
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

// ownImage makes k's image for the nodes' architecture and loads it into the nodes.
func (c *Cluster) ownImage(ctx context.Context, k selfimage.Kind) (string, error) {
	start := time.Now()
	arch := ""
	if c.Client != nil {
		var err error
		if arch, err = NodeArch(ctx, c.Client, c.Logf); err != nil {
			return "", err
		}
	}
	ref, _, err := MakeImage(ctx, k, arch, c.Logf)
	if err != nil {
		return "", err
	}
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	c.Logf("%s image %s made in process and loaded in %s", k, ref, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
}

// LocalLoadImage makes the load pod's image for this machine's architecture and puts it into
// the local Docker engine (docker load of its archive, within localLoadTimeout), pruning the
// older ones (ImagesKept): for rollcheck cluster load-image with no cluster to load it into and
// no registry to push it to, so that it can be pushed with docker push. It returns the reference.
func LocalLoadImage(ctx context.Context, logf func(string, ...any)) (string, error) {
	if err := dockerAnswers(ctx); err != nil {
		return "", fmt.Errorf("no cluster to load the load image into and no registry to push it to (--image-registry), and %w", err)
	}
	ref, img, err := MakeImage(ctx, selfimage.Load, runtime.GOARCH, logf)
	if err != nil {
		return "", err
	}
	if _, err := run(ctx, "docker", "image", "inspect", ref); err == nil {
		logf("load image %s is in the local Docker engine already: the same content", ref)
		return ref, nil
	}
	err = withArchive(map[string]v1.Image{ref: img}, func(path string) error {
		lctx, cancel := context.WithTimeout(ctx, localLoadTimeout)
		defer cancel()
		_, err := run(lctx, "docker", "load", "-q", "-i", path)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("docker load %s: %w", ref, err)
	}
	pruneImages(ctx, image{what: "load", repo: LoadImageRepo}, ref, logf)
	return ref, nil
}

// localLoadTimeout bounds docker load of one of rollcheck's images (an archive of some tens of
// MB).
const localLoadTimeout = 2 * time.Minute

// withArchive writes images into a docker archive in a temporary directory and calls f with
// its path; the directory is removed when f returns.
func withArchive(images map[string]v1.Image, f func(path string) error) error {
	dir, err := os.MkdirTemp("", "rollcheck-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "images.tar")
	if err := selfimage.WriteTarball(path, images); err != nil {
		return err
	}
	return f(path)
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
