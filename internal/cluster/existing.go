package cluster

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// kindProviderPrefix starts the provider ID kind gives its nodes: kind://docker/<cluster>/<node>.
const kindProviderPrefix = "kind://"

// kindClusterOf is the name of the kind cluster whose nodes these are, from their provider IDs
// (kind://docker/<cluster>/<node>), or "" when they are not all nodes of one kind cluster on
// Docker (another provider, another kind of cluster).
func kindClusterOf(nodes []corev1.Node) string {
	name := ""
	for _, n := range nodes {
		rest, ok := strings.CutPrefix(n.Spec.ProviderID, kindProviderPrefix+"docker/")
		parts := strings.Split(rest, "/")
		if !ok || len(parts) != 2 || parts[0] == "" || (name != "" && parts[0] != name) {
			return ""
		}
		name = parts[0]
	}
	return name
}

// ExistingImages is how the load pod's image reaches an existing cluster (one rollcheck did not
// create, named by --kubeconfig or --context), decided before any work by PlanExistingImages:
// pushed to Registry, or loaded into the nodes of the kind cluster Kind through kind's provider.
type ExistingImages struct {
	Registry string
	Kind     string
	Arch     string // the nodes' architecture; empty: not known (not checked)
	client   klient.Client
}

// PlanExistingImages decides how rollcheck's load image reaches the cluster cfg reaches: through
// registry when one is given (--image-registry, the check file's cluster.imageRegistry), else
// by loading it into the nodes when they are those of a kind cluster on this machine's Docker
// (their provider IDs, kind://docker/<cluster>/<node>); else it refuses, in one line that says
// what would do. It lists the nodes (one request) and makes nothing.
func PlanExistingImages(ctx context.Context, cfg *rest.Config, registry string) (*ExistingImages, error) {
	if registry != "" {
		if err := selfimage.ValidRegistry(registry); err != nil {
			return nil, fmt.Errorf("image registry %q: %w", registry, err)
		}
	}
	client, err := klient.New(cfg)
	if err != nil {
		return nil, err
	}
	e := &ExistingImages{Registry: registry, client: client}
	nodes, err := listNodes(ctx, client)
	if err != nil {
		if registry != "" {
			return e, nil // the architecture is not checked: MakeImage's is this machine's
		}
		return nil, fmt.Errorf("rollcheck's load image: the nodes cannot be listed to tell whether this is a kind cluster it can load into (%v): give --image-registry REGISTRY, or set %s to a prebuilt load image the cluster can pull", err, knobs.EnvLoadImage)
	}
	if e.Arch, err = nodesArch(nodes); err != nil {
		return nil, err
	}
	if registry == "" {
		if e.Kind = kindClusterOf(nodes); e.Kind == "" {
			return nil, fmt.Errorf("rollcheck's load image: this cluster is not a kind cluster rollcheck can load into, and no registry is given: give --image-registry REGISTRY (or the check file's cluster.imageRegistry), one the cluster can pull from, or set %s to a prebuilt load image", knobs.EnvLoadImage)
		}
	}
	return e, nil
}

// LoadImage makes the load pod's image for the nodes' architecture (MakeImage) and pushes it to
// the registry, or loads it into the kind cluster's nodes; it returns the reference the pods
// run. Which way it went is logged.
func (e *ExistingImages) LoadImage(ctx context.Context, logf func(string, ...any)) (string, error) {
	return e.Image(ctx, selfimage.Load, logf)
}

// Image makes k's image (the load pod's, or the sample app's for rollcheck windows measure) as
// LoadImage makes the load pod's, and pushes it or loads it into the kind cluster's nodes.
func (e *ExistingImages) Image(ctx context.Context, k selfimage.Kind, logf func(string, ...any)) (string, error) {
	start := time.Now()
	arch := e.Arch
	if arch == "" {
		arch = runtime.GOARCH
		logf("the nodes' architecture is not known (they cannot be listed): the %s image is made for %s", k, arch)
	}
	ref, img, err := MakeImage(ctx, k, arch, logf)
	if err != nil {
		return "", err
	}
	if e.Registry != "" {
		return pushImage(ctx, e.Registry, ref, img, logf)
	}
	all, err := newKind(logf).ListNodes(e.Kind)
	if err != nil || len(all) == 0 {
		return "", fmt.Errorf("the cluster's nodes say it is kind cluster %q, but this machine's Docker has no such cluster (%v): give --image-registry REGISTRY, or set %s", e.Kind, err, knobs.EnvLoadImage)
	}
	id, err := img.ConfigName()
	if err != nil {
		return "", err
	}
	if err := loadInto(ctx, all, []string{ref}, map[string]string{ref: id.String()}, logf); err != nil {
		return "", fmt.Errorf("load %s into kind cluster %q: %w", ref, e.Kind, err)
	}
	logf("%s image %s made in process and loaded into the nodes of kind cluster %q through kind's provider (as kind load image-archive) in %s", k, ref, e.Kind, time.Since(start).Round(100*time.Millisecond))
	return ref, nil
}

// PushLoadImage makes the load pod's image for this machine's architecture and pushes it to
// registry; it returns the pushed reference (rollcheck cluster load-image --image-registry).
func PushLoadImage(ctx context.Context, registry string, logf func(string, ...any)) (string, error) {
	ref, img, err := MakeImage(ctx, selfimage.Load, runtime.GOARCH, logf)
	if err != nil {
		return "", err
	}
	return pushImage(ctx, registry, ref, img, logf)
}

func pushImage(ctx context.Context, registry, ref string, img v1.Image, logf func(string, ...any)) (string, error) {
	full, err := selfimage.Push(ctx, registry, ref, img)
	if err != nil {
		return "", err
	}
	logf("image %s made in process and pushed as %s (credentials: the Docker config's, as docker login wrote them)", ref, full)
	return full, nil
}
