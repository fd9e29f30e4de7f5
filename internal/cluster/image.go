package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// AppImageRepo is the repository of the sample app image; tags are unique per build.
const AppImageRepo = "rollcheck/app"

// BuildAppImage builds the sample app (fixtures/app) as a static binary, wraps it in its
// FROM-scratch image with a tag unique to this build (never :latest), and loads the image into
// the cluster's nodes. It returns the image reference.
func (c *Cluster) BuildAppImage(ctx context.Context) (string, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "rollcheck-app-image-")
	if err != nil {
		return "", fmt.Errorf("build app image: %w", err)
	}
	defer os.RemoveAll(dir)

	src := filepath.Join(c.RepoRoot, "fixtures", "app")
	bin := filepath.Join(dir, "app")
	build := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./fixtures/app"}
	if _, err := runIn(ctx, c.RepoRoot, []string{"CGO_ENABLED=0"}, "go", build...); err != nil {
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
	if err := c.provider.LoadImage(ctx, ref); err != nil {
		return "", fmt.Errorf("load %s into cluster %q: %w", ref, c.Name, err)
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
