package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// loadedImages remembers the images a Cluster loaded, by reference, with their image ID.
type loadedImages struct {
	// loading is held across a whole LoadImages, so that rows started together wait for the
	// one load in progress instead of each importing the same archive into the same nodes.
	loading sync.Mutex
	loaded  map[string]string
}

// Target is the engine's view of this kind cluster: its API server, the NodePort kind maps to
// 127.0.0.1 for the load, images loaded from the local Docker engine into the nodes, and
// conntrack flushed between rows.
func (c *Cluster) Target() engine.Target {
	return engine.Target{
		RESTConfig: c.Client.RESTConfig(),
		NodePort:   c.Config.NodePort,
		LoadURL:    c.AppURL(""),
		EntryURL:   c.EntryURL(""),
		EntryNode:  c.entryNode(),
		LoadNode:   c.loadNode(),
		// kind's nodes are containers on this machine: one kernel, one clock.
		SharedClock: true,
		// Images loaded, conntrack flushed between rows, the kubelet restarted.
		Cluster:         c,
		RunID:           c.RunID,
		NamespaceLabels: knobs.NamespaceLabels(c.PodSecurity),
		Versions:        c.versions(),
		Logf:            c.Logf,
	}
}

// Reset flushes the nodes' conntrack entries for the NodePort (FlushConntrack) between rows: the
// engine's Resetter.
func (c *Cluster) Reset(ctx context.Context) error {
	n, err := c.FlushConntrack(ctx)
	if err == nil && n > 0 {
		c.Logf("conntrack: %d entries for NodePort %d flushed", n, c.Config.NodePort)
	}
	return err
}

// RestartKubelet restarts the kubelet of the named node (systemctl restart in the node's
// container) and waits until systemd says it is active again: 30 s at most. The pods keep
// running; only the kubelet's own state (its pod workers, the terminations it was waiting for)
// starts over.
func (c *Cluster) RestartKubelet(ctx context.Context, node string) error {
	all, err := c.kind.ListNodes(c.Name)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range all {
		if n.String() != node {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := n.CommandContext(ctx, "systemctl", "restart", "kubelet").Run(); err != nil {
			return fmt.Errorf("systemctl restart kubelet in %s: %w", node, err)
		}
		for {
			if n.CommandContext(ctx, "systemctl", "is-active", "--quiet", "kubelet").Run() == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("the kubelet of %s not active again: %w", node, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("no node %q in cluster %q", node, c.Name)
}

// LoadImages loads images into the cluster's nodes, as kind load docker-image does: an image
// this process made (MakeImage, EntryImage) from memory, any other from the local Docker engine
// (docker save); the archive is imported into every node that does not have the image with
// that image ID (nodeutils.LoadImageArchive). An image of rollcheck's own repositories with a
// content tag that neither this process nor the Docker engine has, but every node has, was
// loaded by another process of the run (a Ginkgo process that joined the cluster): it is taken
// as it is. An image this Cluster loaded already, with the same image ID, is not looked at
// again: every row of a check names the same images. Calls wait for each other (rows run in
// parallel): an image is loaded once, by the first call that needs it, and the calls waiting
// find it loaded.
func (c *Cluster) LoadImages(ctx context.Context, refs []string) error {
	c.loading.Lock()
	defer c.loading.Unlock()
	var all []nodes.Node
	listNodes := func() ([]nodes.Node, error) {
		if all != nil {
			return all, nil
		}
		var err error
		if all, err = c.kind.ListNodes(c.Name); err != nil {
			return nil, fmt.Errorf("load images into cluster %q: list nodes: %w", c.Name, err)
		}
		if len(all) == 0 {
			return nil, fmt.Errorf("load images into cluster %q: no nodes", c.Name)
		}
		return all, nil
	}
	ids := map[string]string{}
	var todo []string
	for _, ref := range refs {
		if img := ownImage(ref); img != nil {
			id, err := img.ConfigName()
			if err != nil {
				return fmt.Errorf("image %s: %w", ref, err)
			}
			ids[ref] = id.String()
		} else if id, err := run(ctx, "docker", "image", "inspect", "-f", "{{.Id}}", ref); err == nil {
			ids[ref] = strings.TrimSpace(id)
		} else if ns, lerr := listNodes(); lerr != nil {
			return lerr
		} else if isOwnRef(ref) && onEveryNode(ns, ref) {
			c.Logf("image %s: on every node already (loaded by another process of this run)", ref)
			continue
		} else {
			return fmt.Errorf("image %s is not in the local Docker engine: %w", ref, err)
		}
		if c.loaded[ref] != ids[ref] && !slices.Contains(todo, ref) {
			todo = append(todo, ref)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if _, err := listNodes(); err != nil {
		return err
	}
	if err := loadInto(ctx, all, todo, ids, c.Logf); err != nil {
		return fmt.Errorf("load %s into cluster %q: %w", strings.Join(todo, ", "), c.Name, err)
	}
	if c.loaded == nil {
		c.loaded = map[string]string{}
	}
	for _, ref := range todo {
		c.loaded[ref] = ids[ref]
	}
	return nil
}

// onEveryNode says whether every node has an image named ref: crictl inspecti says so, or
// else (the offline node's crictl shim answers no inspecti) ctr's list of the CRI's images
// holds it, by containerd's full name.
func onEveryNode(all []nodes.Node, ref string) bool {
	for _, n := range all {
		if _, err := nodeutils.ImageID(n, ref); err == nil {
			continue
		}
		var out bytes.Buffer
		err := n.Command("ctr", "--namespace=k8s.io", "images", "ls", "-q", "name=="+containerdName(ref)).SetStdout(&out).Run()
		if err != nil || strings.TrimSpace(out.String()) == "" {
			return false
		}
	}
	return true
}

// containerdName is ref as containerd names it: with Docker Hub's host (and library/ for a
// name of one part) when ref names no registry.
func containerdName(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	switch {
	case !ok:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref
	}
	return "docker.io/" + ref
}

// loadInto imports refs into every node of all that lacks one of them with its image ID ids[ref]
// (the offline node's crictl shim cannot answer: the images are loaded then), from one archive:
// the images this process made written from memory, the others saved from the Docker engine.
func loadInto(ctx context.Context, all []nodes.Node, refs []string, ids map[string]string, logf func(string, ...any)) error {
	var need []nodes.Node
	for _, n := range all {
		for _, ref := range refs {
			if id, err := nodeutils.ImageID(n, ref); err != nil || id != ids[ref] {
				need = append(need, n)
				break
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	start := time.Now()
	own := map[string]v1.Image{}
	var docker []string
	for _, ref := range refs {
		if img := ownImage(ref); img != nil {
			own[ref] = img
		} else {
			docker = append(docker, ref)
		}
	}
	dir, err := os.MkdirTemp("", "rollcheck-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var archives []string
	if len(own) > 0 {
		p := filepath.Join(dir, "own.tar")
		if err := selfimage.WriteTarball(p, own); err != nil {
			return err
		}
		archives = append(archives, p)
	}
	if len(docker) > 0 {
		p := filepath.Join(dir, "docker.tar")
		if _, err := run(ctx, "docker", append([]string{"save", "-o", p}, docker...)...); err != nil {
			return err
		}
		archives = append(archives, p)
	}
	for _, n := range need {
		for _, p := range archives {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			err = nodeutils.LoadImageArchive(n, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("node %s: %w", n, err)
			}
		}
	}
	logf("loaded %s into %d node(s) in %s", strings.Join(refs, ", "), len(need), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// versions describes the cluster for rows: kind's version and the node image.
func (c *Cluster) versions() check.Versions {
	return check.Versions{NodeImage: c.NodeImage, ImageSource: c.ImageSource, Kind: KindVersion()}
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

// Shared is what a process that acquired a cluster hands to the other processes of a parallel
// run (Ginkgo's SynchronizedBeforeSuite) so that they can Join it: the cluster's name and node
// image, its workers, its NodePort mapping and the load pod's image. It holds no credentials: Join reads the
// kubeconfig from kind, as Up does.
type Shared struct {
	Name        string `json:"name"`
	NodeImage   string `json:"nodeImage"`
	ImageSource string `json:"imageSource"`
	LoadImage   string `json:"loadImage,omitempty"`
	PodSecurity string `json:"podSecurity,omitempty"`
	Workers     int    `json:"workers,omitempty"`
	NodePort    int32  `json:"nodePort"`
	HostPort    int32  `json:"hostPort"`
	// RunID is the run's (Cluster.RunID): every process labels its namespaces with it.
	RunID string `json:"runID,omitempty"`
}

// Share describes c for Join.
func (c *Cluster) Share() Shared {
	s := Shared{Name: c.Name, NodeImage: c.NodeImage, ImageSource: c.ImageSource, LoadImage: c.LoadImage, PodSecurity: c.PodSecurity, Workers: c.Workers, RunID: c.RunID}
	if c.Config != nil {
		s.NodePort, s.HostPort = c.Config.NodePort, c.Config.HostPort
	}
	return s
}

// Join returns a handle on the running cluster s describes, for another process of the same run:
// it creates nothing, sweeps nothing and never deletes the cluster (the process that acquired it
// releases it once every process is done).
func Join(ctx context.Context, s Shared, logf func(string, ...any)) (*Cluster, error) {
	c, err := Existing(ctx, Options{Name: s.Name, NodeImage: s.NodeImage, ImageSource: s.ImageSource, LoadImage: s.LoadImage, PodSecurity: s.PodSecurity, Workers: s.Workers, Logf: logf})
	if err != nil {
		return nil, fmt.Errorf("join cluster %q: %w", s.Name, err)
	}
	c.Config = &KindConfig{NodePort: s.NodePort, HostPort: s.HostPort}
	c.RunID = s.RunID
	return c, nil
}

// entryNode is the node whose NodePort EntryURL reaches: the first worker; none without workers.
func (c *Cluster) entryNode() string {
	if c.Workers == 0 {
		return ""
	}
	return EntryNodeName(c.Name)
}

// loadNode is the node load pods run on: with workers, the control plane (kind taints it, so no
// pod of the rows runs there and every request crosses nodes); on one node, no choice.
func (c *Cluster) loadNode() string {
	if c.Workers == 0 {
		return ""
	}
	return c.Name + "-control-plane"
}
