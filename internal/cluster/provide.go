package cluster

import (
	"context"
	"errors"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// This file provides images outside a run: the load pod's (rollcheck cluster load-image) and
// the proxies' (rollcheck cluster proxy-images), loaded into rollcheck's kind cluster when it
// exists, else pushed, put into the local Docker engine or written to an archive.

// loadTarget is rollcheck's kind cluster (o.Name), into which images are to be loaded: nil with
// noLoad (not even looked for), or when it does not exist (then o.Logf says that what, "the
// image is", is loaded into no cluster).
func loadTarget(ctx context.Context, o Options, noLoad bool, what string) (*Cluster, error) {
	if noLoad {
		return nil, nil
	}
	c, err := Existing(ctx, o)
	if errors.Is(err, ErrNoCluster) {
		o.Logf("no kind cluster %q: %s loaded into no cluster", o.Name, what)
		return nil, nil
	}
	return c, err
}

// LoadImageTo says where ProvideLoadImage puts the load pod's image.
type LoadImageTo struct {
	// NoLoad: into no cluster, even when rollcheck's kind cluster exists (it is not looked for).
	NoLoad bool
	// Registry, when not empty: the image rollcheck makes is pushed to it (PushLoadImage), and
	// the pushed reference is returned.
	Registry string
	// Archive, when not empty: the image, of an executable for nodes of architecture Arch, is
	// written to this image archive (docker save's format) only, whatever the other fields say
	// and ROLLCHECK_LOAD_IMAGE.
	Archive, Arch string
}

// ProvideLoadImage provides the load pod's image where to says and returns its reference. With
// to.Archive it is made and written there (nothing else). Else the image is o.LoadImage's
// (ROLLCHECK_LOAD_IMAGE) when set, and nothing is made, or one rollcheck makes of itself
// (MakeImage). When rollcheck's kind cluster exists and to.NoLoad is false, the image is loaded
// into its nodes (Cluster.LoadPodImage). A made image is then pushed to to.Registry when set;
// with neither a cluster nor a registry it is put into the local Docker engine
// (LocalLoadImage), to push by hand.
func ProvideLoadImage(ctx context.Context, o Options, to LoadImageTo) (string, error) {
	if to.Archive != "" {
		return writeLoadImageArchive(ctx, to.Archive, to.Arch, o.Logf)
	}
	c, err := loadTarget(ctx, o, to.NoLoad, "the image is")
	if err != nil {
		return "", err
	}
	ref := o.LoadImage
	switch {
	case c != nil:
		ref, err = c.LoadPodImage(ctx)
	case ref == "" && to.Registry == "":
		ref, err = LocalLoadImage(ctx, o.Logf)
	}
	if err == nil && o.LoadImage == "" && to.Registry != "" {
		ref, err = PushLoadImage(ctx, to.Registry, o.Logf)
	}
	if err != nil {
		return "", err
	}
	return ref, nil
}

// writeLoadImageArchive makes the load pod's image for nodes of architecture arch (MakeImage)
// and writes it to the image archive path; it returns the image's reference.
func writeLoadImageArchive(ctx context.Context, path, arch string, logf func(string, ...any)) (string, error) {
	ref, img, err := MakeImage(ctx, selfimage.Load, arch, logf)
	if err != nil {
		return "", err
	}
	if err := selfimage.WriteTarball(path, map[string]v1.Image{ref: img}); err != nil {
		return "", err
	}
	logf("load image %s (linux/%s) written to %s", ref, arch, path)
	return ref, nil
}

// ProxyImages builds (or finds) the images of the proxies names in the local Docker engine
// (proxies.EnsureImage), loads them into rollcheck's kind cluster when it exists and noLoad is
// false, and returns their references in the order of names. The cluster is looked for first:
// a failure to reach it fails before any build.
func ProxyImages(ctx context.Context, o Options, names []proxies.Proxy, noLoad bool) ([]string, error) {
	c, err := loadTarget(ctx, o, noLoad, "the images are")
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, p := range names {
		ref, err := proxies.EnsureImage(ctx, p, o.Logf)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	if c != nil {
		if err := c.LoadImages(ctx, refs); err != nil {
			return nil, err
		}
	}
	return refs, nil
}
