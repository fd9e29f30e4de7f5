package selfimage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// WriteTarball writes the images, by reference (repo:tag), into one docker-compatible archive
// at path (what docker save writes, and kind load image-archive and ctr images import read);
// a layer they share is written once.
func WriteTarball(path string, images map[string]v1.Image) error {
	refs := map[name.Reference]v1.Image{}
	for ref, img := range images {
		t, err := name.NewTag(ref)
		if err != nil {
			return fmt.Errorf("image %s: %w", ref, err)
		}
		refs[t] = img
	}
	if err := tarball.MultiRefWriteToFile(path, refs); err != nil {
		return fmt.Errorf("write the image archive %s: %w", path, err)
	}
	return nil
}

// ValidRegistry checks a registry as --image-registry takes it: a host with an optional port,
// then optionally a path ("registry.example:5000", "ghcr.io/me", "localhost:5000"), with no
// scheme, no tag and no digest.
func ValidRegistry(registry string) error {
	switch {
	case registry == "":
		return errors.New("empty")
	case strings.Contains(registry, "://"):
		return errors.New("want a host[:port][/path] without a scheme: plain HTTP is used for localhost and 127.0.0.1 only, HTTPS elsewhere")
	case strings.HasSuffix(registry, "/"), strings.ContainsAny(registry, "@ \t"):
		return errors.New("want a host[:port][/path], no trailing slash, no digest")
	}
	if _, err := name.NewRepository(registry+"/"+LoadRepo, name.StrictValidation); err != nil {
		return fmt.Errorf("want a host[:port][/path]: %w", err)
	}
	return nil
}

// RegistryRef is the reference of ref (repo:tag, as Ref gives it) in registry.
func RegistryRef(registry, ref string) string { return registry + "/" + ref }

// loopbackRegistry says whether registry's host is localhost or a loopback address, the only
// hosts Push speaks plain HTTP to.
func loopbackRegistry(registry string) bool {
	host := strings.SplitN(registry, "/", 2)[0]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pushTimeout bounds one push: the executable's layer is some tens of MB.
const pushTimeout = 5 * time.Minute

// Push writes img to registry as ref (repo:tag) with remote.Write, with the credentials the
// user's Docker config gives for the registry (authn.DefaultKeychain, as crane does; none:
// anonymous), over HTTPS, or plain HTTP for a registry on localhost or a loopback address,
// within pushTimeout. It returns the pushed reference, registry/repo:tag.
func Push(ctx context.Context, registry, ref string, img v1.Image) (string, error) {
	if err := ValidRegistry(registry); err != nil {
		return "", fmt.Errorf("image registry %q: %w", registry, err)
	}
	full := RegistryRef(registry, ref)
	var opts []name.Option
	if loopbackRegistry(registry) {
		opts = append(opts, name.Insecure)
	}
	t, err := name.NewTag(full, opts...)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", full, err)
	}
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	if err := remote.Write(t, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", full, err)
	}
	return full, nil
}
