package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rollcheck/rollcheck/engine"
)

// loadedImages remembers the images a Cluster loaded, by reference, with their image ID.
type loadedImages struct {
	loadedMu sync.Mutex
	loaded   map[string]string
}

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
// docker-image). An image this Cluster loaded already, with the same image ID, is not loaded
// again: every row of a check names the same images.
func (c *Cluster) LoadImages(ctx context.Context, refs []string) error {
	for _, ref := range refs {
		id, err := run(ctx, "docker", "image", "inspect", "-f", "{{.Id}}", ref)
		if err != nil {
			return fmt.Errorf("image %s is not in the local Docker engine: %w", ref, err)
		}
		id = strings.TrimSpace(id)
		c.loadedMu.Lock()
		done := c.loaded[ref] == id
		c.loadedMu.Unlock()
		if done {
			continue
		}
		if err := c.provider.LoadImage(ctx, ref); err != nil {
			return fmt.Errorf("load image %s into cluster %q: %w", ref, c.Name, err)
		}
		c.loadedMu.Lock()
		if c.loaded == nil {
			c.loaded = map[string]string{}
		}
		c.loaded[ref] = id
		c.loadedMu.Unlock()
	}
	return nil
}

// versions describes the cluster for rows: kind's version and the node image.
func (c *Cluster) versions() engine.Versions {
	v := engine.Versions{NodeImage: c.NodeImage, ImageSource: c.ImageSource}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := run(ctx, c.KindPath, "version"); err == nil {
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
