package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/rollcheck/rollcheck/engine"
)

// Target is the engine's view of this kind cluster: its API server, the NodePort kind maps to
// 127.0.0.1 for the load, images loaded from the local Docker engine into the nodes, and
// conntrack flushed between rows.
func (c *Cluster) Target() engine.Target {
	return engine.Target{
		RESTConfig: c.Client.RESTConfig(),
		NodePort:   c.Config.NodePort,
		LoadURL:    c.AppURL(""),
		LoadImages: c.LoadImages,
		Reset: func(ctx context.Context) error {
			n, err := c.FlushConntrack(ctx)
			if err == nil && n > 0 {
				c.Logf("conntrack: %d entries for NodePort %d flushed", n, c.Config.NodePort)
			}
			return err
		},
		Versions: c.versions(),
		Logf:     c.Logf,
	}
}

// LoadImages loads images from the local Docker engine into the cluster's nodes (kind load
// docker-image, which skips an image a node already has).
func (c *Cluster) LoadImages(ctx context.Context, refs []string) error {
	for _, ref := range refs {
		if err := c.provider.LoadImage(ctx, ref); err != nil {
			return fmt.Errorf("load image %s into cluster %q: %w", ref, c.Name, err)
		}
	}
	return nil
}

// versions describes the cluster for rows: kind's version and the node image.
func (c *Cluster) versions() engine.Versions {
	v := engine.Versions{NodeImage: c.NodeImage, ImageSource: c.ImageSource}
	if out, err := run(context.Background(), c.KindPath, "version"); err == nil {
		v.Kind = strings.TrimSpace(out)
	}
	return v
}

// LocalImagesMissing returns the images of refs that are not in the local Docker engine.
func LocalImagesMissing(ctx context.Context, refs []string) ([]string, error) {
	if err := dockerAnswers(ctx); err != nil {
		return nil, err
	}
	var missing []string
	for _, ref := range refs {
		if _, err := run(ctx, "docker", "image", "inspect", ref); err != nil {
			missing = append(missing, ref)
		}
	}
	return missing, nil
}
