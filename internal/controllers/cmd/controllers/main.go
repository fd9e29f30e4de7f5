// Command controllers builds the images of the progressive-delivery controllers rollcheck gates
// (Argo Rollouts, Flagger) from their Go modules, and installs them on a kind cluster made by
// rollcheck cluster up: internal/controllers' front end until rollcheck's own commands take it
// over.
//
//	controllers [build] [--arch ARCH] [NAME ...]
//	    build (or find built) the images and print, a line each, NAME REF SIZE
//	controllers install [--kubeconfig FILE] [--cluster NAME] [--timeout D] [NAME ...]
//	    load the images into the kind cluster, apply the install objects, and wait until each
//	    controller's Deployment is available; one line per step, with its duration
//
// NAME is argo-rollouts or flagger; none: both. Progress goes to standard error. Exit 0 done,
// 1 failed, 2 bad input.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/e2e-framework/klient"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/controllers"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: controllers [build] [--arch ARCH] [NAME ...]
       controllers install [--kubeconfig FILE] [--cluster NAME] [--timeout D] [NAME ...]
NAME: %s (none: all)
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "build"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if args[0] == "build" || args[0] == "install" {
			cmd, args = args[0], args[1:]
		} else if _, err := controllers.Lookup(args[0]); err != nil {
			fmt.Fprintf(stderr, usage, strings.Join(controllers.Names(), ", "))
			return 2
		}
	}
	fs := flag.NewFlagSet("controllers "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	arch := fs.String("arch", runtime.GOARCH, "build: the architecture of the images")
	kubeconfig := fs.String("kubeconfig", "", "install: the kubeconfig `FILE` of the cluster (default: the kind cluster's own)")
	clusterName, _ := knobs.Get(os.Getenv, knobs.EnvName)
	fs.StringVar(&clusterName, "cluster", clusterName, "install: the kind cluster `NAME` whose nodes the images are loaded into (default: "+knobs.EnvName+")")
	timeout := fs.Duration("timeout", 5*time.Minute, "install: how long each wait on the cluster may take")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cs []controllers.Controller
	for _, n := range fs.Args() {
		c, err := controllers.Lookup(n)
		if err != nil {
			fmt.Fprintf(stderr, "controllers: %v\n", err)
			return 2
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		cs = controllers.Table
	}
	logger := log.New(stderr, "", log.Ltime)
	var err error
	if cmd == "build" {
		err = build(ctx, cs, *arch, logger.Printf, stdout)
	} else {
		err = install(ctx, cs, *kubeconfig, clusterName, *timeout, logger.Printf, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "controllers %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// build builds each controller's image and prints NAME REF SIZE.
func build(ctx context.Context, cs []controllers.Controller, arch string, logf func(string, ...any), stdout io.Writer) error {
	for _, c := range cs {
		start := time.Now()
		b, err := controllers.Build(ctx, c, arch, logf)
		if err != nil {
			return err
		}
		img, err := controllers.MakeImage(b)
		if err != nil {
			return err
		}
		logf("%s: image %s (layer %.1f MB compressed) in %s", c.Name, img.Ref, float64(img.Size)/1e6, time.Since(start).Round(100*time.Millisecond))
		fmt.Fprintf(stdout, "%s %s %d\n", c.Name, img.Ref, img.Size)
	}
	return nil
}

// install installs the controllers on the cluster, printing a line per step.
func install(ctx context.Context, cs []controllers.Controller, kubeconfig, kind string, timeout time.Duration, logf func(string, ...any), stdout io.Writer) error {
	var client klient.Client
	var err error
	if kubeconfig != "" {
		client, err = klient.NewWithKubeConfigFile(kubeconfig)
	} else {
		var c *cluster.Cluster
		if c, err = cluster.Existing(ctx, cluster.Options{Name: kind, Logf: logf}); err == nil {
			client = c.Client
		}
	}
	if err != nil {
		return err
	}
	start := time.Now()
	images, err := controllers.Install(ctx, controllers.InstallOptions{
		Client: client, KindCluster: kind, Timeout: timeout, Logf: logf,
		Step: func(n controllers.Name, what string, took time.Duration) {
			fmt.Fprintf(stdout, "%-14s %-70s %8s\n", n, what, took.Round(100*time.Millisecond))
		},
	}, cs...)
	if err != nil {
		return err
	}
	for _, img := range images {
		fmt.Fprintf(stdout, "%-14s installed, image %s\n", img.Controller.Name, img.Ref)
	}
	fmt.Fprintf(stdout, "installed %d controller(s) in %s\n", len(images), time.Since(start).Round(100*time.Millisecond))
	return nil
}
