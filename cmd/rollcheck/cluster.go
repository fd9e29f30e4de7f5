package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/proxies"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// clusterCommands are rollcheck cluster's subcommands. Each one's failure is one line and exit 1.
var clusterCommands = []command{
	{name: "up", summary: "create or reuse the cluster (kept) and wait until it is ready; print \"created\" or \"reused\"",
		setup: withFlags(newNoFlags, clusterOp(func(ctx context.Context, opts cluster.Options, stdout io.Writer) error {
			// make cluster: the cluster stays; only a set-up that fails releases it by the policy.
			r := &cluster.Run{Options: opts, LogsDir: filepath.Join(artifactsDir(), "cluster-logs")}
			if err := r.Setup(ctx, cluster.DefaultSetup...); err != nil {
				if terr := r.Teardown(ctx, cluster.DefaultTeardown...); terr != nil {
					opts.Logf("cleanup: %v", terr)
				}
				return err
			}
			fmt.Fprintln(stdout, map[bool]string{true: "created", false: "reused"}[r.Cluster.Created])
			return cluster.ReleaseRun(ctx, r) // the run ends here: the cluster stays, its Lease goes
		}))},
	{name: "down", summary: "delete the cluster",
		setup: withFlags(newNoFlags, clusterOp(func(ctx context.Context, opts cluster.Options, _ io.Writer) error {
			return cluster.Down(ctx, opts)
		}))},
	{name: "logs", args: "DIR", summary: "export the cluster's logs into DIR",
		setup: withFlags(newNoFlags, runClusterLogs)},
	{name: "versions", summary: "print the existing cluster's Kubernetes, kind and node image versions as JSON (creates nothing)",
		setup: withFlags(newNoFlags, clusterOp(func(ctx context.Context, opts cluster.Options, stdout io.Writer) error {
			c, err := cluster.Existing(ctx, opts)
			if err != nil {
				return err
			}
			v, err := c.Versions(ctx)
			if err != nil {
				return err
			}
			return json.NewEncoder(stdout).Encode(v)
		}))},
	{name: "default-image", summary: "print kind's default (upstream) node image",
		setup: withFlags(newNoFlags, func(_ context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 {
				return badArgs(stderr, "cluster default-image", args)
			}
			fmt.Fprintln(stdout, kinddefaults.Image)
			return exitPass
		})},
	{name: "node-image", summary: "choose the node image by ROLLCHECK_NODE_IMAGE (pulling kind's upstream one if needed) and print it, or \"offline\" or \"offline-containerd2\" when rollcheck's offline image is chosen, which a checkout of rollcheck builds (docs/maintainers.md)",
		setup: withFlags(newNoFlags, func(ctx context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 {
				return badArgs(stderr, "cluster node-image", args)
			}
			ref, err := cluster.ChooseNodeImage(ctx, os.Getenv, cluster.Docker, logLine(stderr, "node-image"))
			if err != nil {
				fmt.Fprintln(stderr, "rollcheck cluster:", err)
				return exitFail
			}
			fmt.Fprintln(stdout, ref)
			return exitPass
		})},
	{name: "load-image", summary: "make the load pod's image of this executable, load it into rollcheck's kind cluster if there is one (or push it); print its reference",
		about: loadImageAbout, setup: withFlags(newLoadImageFlags, runLoadImage)},
	{name: "proxy-images", args: "[" + proxyNames("|") + " ...]",
		summary: "build the proxy fixture images (" + proxyNames(", ") + "; offline, cached), load them into rollcheck's kind cluster if there is one; print their references",
		about:   proxyImagesAbout(), setup: withFlags(newProxyImagesFlags, runProxyImages)},
}

// clusterOp is the run function of a cluster subcommand that takes no operands: op on the
// cluster's options from the knobs; an error is one line and exit 1.
func clusterOp(op func(ctx context.Context, opts cluster.Options, stdout io.Writer) error) func(context.Context, *noFlags, []string, io.Writer, io.Writer) int {
	return func(ctx context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 {
			return badArgs(stderr, "cluster", args)
		}
		return clusterRun(ctx, stdout, stderr, func(opts cluster.Options) error { return op(ctx, opts, stdout) })
	}
}

// clusterRun runs op on the cluster's options from the knobs; an error is one line and exit 1.
func clusterRun(ctx context.Context, stdout, stderr io.Writer, op func(cluster.Options) error) int {
	opts, err := cluster.FromEnv()
	if err == nil {
		opts.Logf = logLine(stderr, "cluster")
		err = op(opts)
	}
	if err != nil {
		fmt.Fprintln(stderr, "rollcheck cluster:", err)
		return exitFail
	}
	return exitPass
}

func runClusterLogs(ctx context.Context, _ *noFlags, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "rollcheck cluster logs: want one directory, got %d arguments (rollcheck help cluster logs)\n", len(args))
		return exitBadInput
	}
	return clusterRun(ctx, stdout, stderr, func(opts cluster.Options) error { return cluster.ExportLogs(ctx, opts, args[0]) })
}

const loadImageAbout = `Makes the load pod's image (rollcheck/load:<tag>, /rollcheck agent load) of this executable, in process:
no Docker build, no Go toolchain, no checkout (a build of rollcheck stands in where this executable
cannot: see docs/reference.md, "rollcheck's own images"). The tag is derived from the image's digest:
the same executable gives the same tag. With ROLLCHECK_LOAD_IMAGE set, that image is taken instead
and nothing is made.

When rollcheck's own kind cluster (ROLLCHECK_CLUSTER_NAME) exists, the image is loaded into its
nodes, unless --no-load. With --image-registry REGISTRY it is pushed to REGISTRY/rollcheck/load:<tag>
(credentials from your Docker config, as docker login wrote them; plain HTTP to localhost and
127.0.0.1 only), and that reference is printed. With neither, it is put into the local Docker engine
(docker load), to push yourself. With --archive FILE it is written to FILE instead, an image archive
(docker save's format: docker load, kind load image-archive, ctr images import and crane push read
it), of the executable for --arch's architecture (a Linux build of this one: the running one when it
is, else ROLLCHECK_LINUX_EXECUTABLE's); nothing is loaded or pushed. The image is rollcheck's
whole binary: rollcheck gate and serve run from it (docs/gate.md). Exit 0 done, 1 failed, 2 bad input.`

// proxyNames are the names of the proxies of internal/proxies' table, joined by sep.
func proxyNames(sep string) string {
	var names []string
	for _, p := range proxies.All {
		names = append(names, string(p))
	}
	return strings.Join(names, sep)
}

// proxyImagesAbout is rollcheck cluster proxy-images' help, its list of images from
// internal/proxies' table.
func proxyImagesAbout() string {
	return `Builds the images of the proxies rollcheck puts in front of an app (internal/proxies), or of those
named, in the local Docker engine and prints their references, one a line, each tagged by a hash of
its inputs (never :latest):

  ` + strings.Join(proxies.Sources(), "\n  ") + `

Nothing is pulled: each image is FROM scratch, with the binary, its shared libraries and a small
entrypoint; a Debian package needs a Debian 12 (bookworm) host with apt-get and dpkg-deb, checked
before any work. A Go module is built at its pinned version (Traefik's cold build takes the
longest, over ten minutes on two cores). An image whose inputs did not change is reused
(seconds); downloads and binaries are cached in ROLLCHECK_CACHE/proxy-images. Run it in a
checkout (or a module that requires rollcheck): the entrypoint is built from it.

When rollcheck's own kind cluster (ROLLCHECK_CLUSTER_NAME) exists, the images are then loaded into its
nodes, unless --no-load. Exit 0 done, 1 failed, 2 bad input.`
}

// loadImageFlags are rollcheck cluster load-image's flags (and proxy-images', without the
// registry).
type loadImageFlags struct {
	NoLoad   bool
	Registry string
	// load-image's only: write the image to an archive, for an architecture.
	Archive, Arch string
}

func newLoadImageFlags(fs *flag.FlagSet) *loadImageFlags {
	f := &loadImageFlags{}
	fs.BoolVar(&f.NoLoad, "no-load", false, "make the image only: load it into no cluster, even when rollcheck's kind cluster exists")
	fs.StringVar(&f.Registry, "image-registry", "", "push the image to `REGISTRY` (host[:port][/path]) and print REGISTRY/rollcheck/load:<tag>")
	fs.StringVar(&f.Archive, "archive", "", "write the image to the archive `FILE` (docker save's format) instead; load and push nothing")
	fs.StringVar(&f.Arch, "arch", runtime.GOARCH, "with --archive: the image's `ARCH` (amd64 or arm64)")
	return f
}

// runLoadImage builds the load pod's image, or takes ROLLCHECK_LOAD_IMAGE's, loads it into
// rollcheck's kind cluster when there is one and --no-load is not given, and prints its
// reference.
func runLoadImage(ctx context.Context, f *loadImageFlags, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return badArgs(stderr, "cluster load-image", args)
	}
	if f.Registry != "" {
		if err := selfimage.ValidRegistry(f.Registry); err != nil {
			fmt.Fprintf(stderr, "rollcheck cluster load-image: --image-registry %q: %v\n", f.Registry, err)
			return exitBadInput
		}
	}
	switch {
	case f.Archive == "" && f.Arch != runtime.GOARCH:
		fmt.Fprintf(stderr, "rollcheck cluster load-image: --arch %s: only with --archive (a cluster's image has its nodes' architecture)\n", f.Arch)
		return exitBadInput
	case f.Archive != "" && (f.Registry != "" || f.NoLoad):
		fmt.Fprintln(stderr, "rollcheck cluster load-image: --archive writes the image only: not with --image-registry or --no-load")
		return exitBadInput
	case f.Archive != "" && f.Arch != "amd64" && f.Arch != "arm64":
		fmt.Fprintf(stderr, "rollcheck cluster load-image: --arch %q: want amd64 or arm64\n", f.Arch)
		return exitBadInput
	}
	to := cluster.LoadImageTo{NoLoad: f.NoLoad, Registry: f.Registry, Archive: f.Archive, Arch: f.Arch}
	return clusterRun(ctx, stdout, stderr, func(opts cluster.Options) error {
		ref, err := cluster.ProvideLoadImage(ctx, opts, to)
		if err == nil {
			fmt.Fprintln(stdout, ref)
		}
		return err
	})
}

func newProxyImagesFlags(fs *flag.FlagSet) *loadImageFlags {
	f := &loadImageFlags{}
	fs.BoolVar(&f.NoLoad, "no-load", false, "build (or reuse) the images only: load them into no cluster, even when rollcheck's kind cluster exists")
	return f
}

// runProxyImages builds (or finds) the proxy images args name (all when none), loads them into
// rollcheck's kind cluster when there is one and --no-load is not given, and prints their
// references.
func runProxyImages(ctx context.Context, f *loadImageFlags, args []string, stdout, stderr io.Writer) int {
	names := proxies.All
	if len(args) > 0 {
		names = nil
		for _, a := range args {
			p, err := proxies.ParseProxy(a)
			if err != nil {
				fmt.Fprintf(stderr, "rollcheck cluster proxy-images: %v (rollcheck cluster help proxy-images)\n", err)
				return exitBadInput
			}
			names = append(names, p)
		}
	}
	if err := proxies.CheckHost(names...); err != nil {
		fmt.Fprintf(stderr, "rollcheck cluster proxy-images: %v\n", err)
		return exitFail
	}
	return clusterRun(ctx, stdout, stderr, func(opts cluster.Options) error {
		refs, err := cluster.ProxyImages(ctx, opts, names, f.NoLoad)
		for _, ref := range refs {
			fmt.Fprintln(stdout, ref)
		}
		return err
	})
}
