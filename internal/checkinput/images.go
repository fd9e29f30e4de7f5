package checkinput

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/spec"
)

// Images builds the check's images, then makes sure every image it loads is in the local
// Docker engine: the Docker-side input, checked before any cluster work.
func Images(ctx context.Context, c *spec.Check, stderr io.Writer) error {
	for _, b := range c.App.Build {
		if err := dockerBuild(ctx, c.BuildDir(b), b, stderr); err != nil {
			return err
		}
	}
	missing, err := cluster.LocalImagesMissing(ctx, c.Images())
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("image %s is not in the local Docker engine (docker images lists what is; build or pull it first)", strings.Join(missing, ", "))
	}
	return nil
}

// dockerBuild builds one image of the check, with a time limit.
func dockerBuild(ctx context.Context, dir string, b spec.Build, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	args := []string{"build", "-q", "-t", b.Image}
	if b.Dockerfile != "" {
		args = append(args, "-f", filepath.Join(dir, b.Dockerfile))
	}
	fmt.Fprintf(stderr, "rollcheck check: docker build %s from %s (up to 15m)\n", b.Image, dir)
	cmd := exec.CommandContext(ctx, "docker", append(args, dir)...)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker build %s from %s: %v: %s", b.Image, dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}
