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
	"sort"
	"strings"
	"time"
)

// AppImageRepo is the repository of the sample app image; tags are unique per build.
const AppImageRepo = "rollcheck/app"

// AppImagesKept is how many rollcheck/app images BuildAppImage leaves in the Docker engine, the
// one it just built included.
const AppImagesKept = 3

// appTag is the form of the tags BuildAppImage gives: UTC build time, then a hash of the binary.
// Tags of this form sort by build time.
var appTag = regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-[0-9a-f]{12}$`)

// AppPackage is the sample app's Go package; its directory holds the image's Dockerfile.
const AppPackage = "github.com/rollcheck/rollcheck/fixtures/app"

// BuildAppImage builds the sample app (fixtures/app) as a static binary, wraps it in its
// FROM-scratch image with a tag unique to this build (never :latest), and loads the image into
// the cluster's nodes. It returns the image reference. The app is built from the rollcheck
// module as the go command finds it from the working directory: this repository, or the module
// cache when a user's module requires rollcheck; no checkout is needed.
func (c *Cluster) BuildAppImage(ctx context.Context) (string, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "rollcheck-app-image-")
	if err != nil {
		return "", fmt.Errorf("build app image: %w", err)
	}
	defer os.RemoveAll(dir)

	src, err := run(ctx, "go", "list", "-f", "{{.Dir}}", AppPackage)
	if err != nil {
		return "", fmt.Errorf("build app image: the sample app %s is not found from the working directory (run inside a module that requires github.com/rollcheck/rollcheck): %w", AppPackage, err)
	}
	src = strings.TrimSpace(src)
	bin := filepath.Join(dir, "app")
	build := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", bin, AppPackage}
	if _, err := runIn(ctx, "", []string{"CGO_ENABLED=0"}, "go", build...); err != nil {
		return "", fmt.Errorf("build app binary: %w", err)
	}
	if err := copyFile(filepath.Join(src, "Dockerfile"), filepath.Join(dir, "Dockerfile")); err != nil {
		return "", fmt.Errorf("build app image: %w", err)
	}
	sum, err := fileHash(bin)
	if err != nil {
		return "", fmt.Errorf("build app image: %w", err)
	}
	ref := fmt.Sprintf("%s:%s-%s", AppImageRepo, time.Now().UTC().Format("20060102-150405"), sum[:12])
	if _, err := runIn(ctx, dir, []string{"DOCKER_BUILDKIT=0"}, "docker", "build", "-q", "-t", ref, "."); err != nil {
		return "", fmt.Errorf("docker build %s: %w", ref, err)
	}
	PruneAppImages(ctx, ref, c.Logf)
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	c.Logf("app image %s built and loaded in %s", ref, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
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

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PruneAppImages removes older rollcheck/app images from the local Docker engine, keeping the
// AppImagesKept newest, and never current (the one just built). An image a container uses is
// left alone (docker image rm refuses it), as is a tag BuildAppImage did not make. Pruning is
// housekeeping: a failure is logged, not returned.
func PruneAppImages(ctx context.Context, current string, logf func(string, ...any)) {
	out, err := run(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", AppImageRepo)
	if err != nil {
		logf("prune old app images: %v", err)
		return
	}
	var removed, kept []string
	for _, ref := range prunableAppImages(strings.Fields(out), current, AppImagesKept) {
		if _, err := run(ctx, "docker", "image", "rm", ref); err != nil {
			kept = append(kept, ref) // in use, or gone meanwhile
			continue
		}
		removed = append(removed, ref)
	}
	if len(removed) > 0 || len(kept) > 0 {
		logf("pruned %d old app image(s), %d in use left alone", len(removed), len(kept))
	}
}

// prunableAppImages returns the references among refs that PruneAppImages removes: the
// rollcheck/app images with a tag of BuildAppImage's form, except current and the newest others
// up to keep images in all, newest first.
func prunableAppImages(refs []string, current string, keep int) []string {
	seen := map[string]bool{current: true}
	var old []string
	for _, ref := range refs {
		repo, tag, ok := strings.Cut(ref, ":")
		if !ok || repo != AppImageRepo || !appTag.MatchString(tag) || seen[ref] {
			continue
		}
		seen[ref] = true
		old = append(old, ref)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(old)))
	if others := keep - 1; others > 0 {
		old = old[min(others, len(old)):]
	}
	if len(old) == 0 {
		return nil
	}
	return old
}
