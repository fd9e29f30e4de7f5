// Package controllers builds and installs the progressive-delivery controllers whose promotions
// rollcheck gates, Argo Rollouts and Flagger, on a kind cluster with no registry reachable: each
// is built from its source, fetched from the Go module proxy at a pinned version, into a static
// binary (Build); its image is made in process, FROM nothing, with that binary as its one layer
// (MakeImage); its install objects are read from the same module's own manifests in the module
// cache (Objects); and Install loads the images into the kind cluster's nodes and applies the
// objects with imagePullPolicy Never, so that nothing is ever pulled.
//
// Every download and build runs under a time limit, with retries, and logs what it waits for
// before it starts and every minute while it lasts (a download from the proxy can stall
// silently). Binaries are cached under ROLLCHECK_CACHE/controllers: a second Build takes seconds.
package controllers

import (
	"fmt"
	"strings"
	"time"
)

// Name names a controller of the Table.
type Name string

// The controllers of the Table.
const (
	ArgoRollouts Name = "argo-rollouts"
	Flagger      Name = "flagger"
)

// A Controller is how one controller is built from its Go module and installed.
type Controller struct {
	Name    Name
	Title   string // for logs and help: "Argo Rollouts"
	Module  string // its Go module
	Version string // the pinned version, as the module proxy serves it
	Main    string // its main package, relative to the module's root ("./cmd/flagger")
	// LDFlags are the -X flags of the upstream build that set the version the program reports,
	// added to -s -w.
	LDFlags []string
	// Repo is its image's repository; the tag is derived from the image's content.
	Repo string
	// Binary is the binary's path in the image, the image's entrypoint.
	Binary string
	// WorkDir is the image's working directory (made in the image); empty: /.
	WorkDir string

	// CRDs are the module's files that hold its CustomResourceDefinitions (globs, relative to
	// the module's root).
	CRDs []string
	// Manifests are the module's files or kustomization directories (relative to its root) that
	// hold the rest of its install objects: ServiceAccount, RBAC, Deployment, and whatever
	// else the upstream install has. CustomResourceDefinitions in them are left out (CRDs
	// gives them) and so is a Namespace (Namespace is made here).
	Manifests []string
	// Namespace is the one the controller runs in, given to every namespaced object.
	Namespace string
	// Deployment is the name of its Deployment and of the controller's container in it.
	Deployment string
	// Args replace the container's arguments when not nil.
	Args []string
	// HealthPort and HealthPath are the controller's health endpoint: its probes are HTTP GETs
	// of it (the upstream's wget probes need a shell image).
	HealthPort int32
	HealthPath string

	// BuildLimit bounds each try of each step of the build: the download of the module's
	// dependencies, and the compilation.
	BuildLimit time.Duration
}

// Table is the controllers rollcheck installs, at their pinned versions. The versions are those
// the machine's Go builds (GOTOOLCHAIN=local): Argo Rollouts after v1.9 needs a newer Go.
var Table = []Controller{
	{
		Name: ArgoRollouts, Title: "Argo Rollouts",
		Module: "github.com/argoproj/argo-rollouts", Version: "v1.9.2", Main: "./cmd/rollouts-controller",
		// The Makefile's: the version the controller logs at start and reports.
		LDFlags: []string{"-X github.com/argoproj/argo-rollouts/utils/version.version=1.9.2"},
		Repo:    "rollcheck/controller-argo-rollouts", Binary: "/bin/rollouts-controller", WorkDir: "/home/argo-rollouts",
		CRDs: []string{"manifests/crds/*-crd.yaml"},
		// manifests/cluster-install's parts (it renders ../crds too): the base (ServiceAccount,
		// Deployment, aggregated roles, metrics Service, notification Secret, ConfigMap), the
		// controller's ClusterRole and its binding.
		Manifests: []string{"manifests/base", "manifests/role", "manifests/cluster-install/argo-rollouts-clusterrolebinding.yaml"},
		Namespace: "argo-rollouts", Deployment: "argo-rollouts",
		HealthPort: 8080, HealthPath: "/healthz",
		BuildLimit: 25 * time.Minute,
	},
	{
		Name: Flagger, Title: "Flagger",
		Module: "github.com/fluxcd/flagger", Version: "v1.36.1", Main: "./cmd/flagger",
		LDFlags: []string{"-X github.com/fluxcd/flagger/pkg/version.REVISION=v1.36.1"},
		Repo:    "rollcheck/controller-flagger", Binary: "/bin/flagger",
		CRDs: []string{"artifacts/flagger/crd.yaml"},
		// The base of every overlay: ServiceAccount, ClusterRole and binding, Deployment.
		Manifests: []string{"kustomize/base/flagger"},
		Namespace: "flagger-system", Deployment: "flagger",
		// kustomize/kubernetes' patch, less its Prometheus: the kubernetes provider (ClusterIP
		// Services, no mesh). -metrics-server is where Flagger asks Prometheus at start whether
		// it is up (and for the metrics an analysis lists); nothing listens at this loopback
		// address, so that Flagger logs once that it is unreachable, sends nothing out of the
		// pod, and runs the analyses that list no metrics (webhooks only).
		Args: []string{"-log-level=info", "-include-label-prefix=app.kubernetes.io", "-mesh-provider=kubernetes",
			"-metrics-server=http://127.0.0.1:9090"},
		HealthPort: 8080, HealthPath: "/healthz",
		BuildLimit: 20 * time.Minute,
	},
}

// Lookup returns the controller of the Table named name.
func Lookup(name string) (Controller, error) {
	for _, c := range Table {
		if string(c.Name) == name {
			return c, nil
		}
	}
	return Controller{}, fmt.Errorf("unknown controller %q: want one of %s", name, strings.Join(Names(), ", "))
}

// Names are the names of the Table's controllers.
func Names() []string {
	var out []string
	for _, c := range Table {
		out = append(out, string(c.Name))
	}
	return out
}

// ModuleVersion is module@version, as the go command takes it.
func (c Controller) ModuleVersion() string { return c.Module + "@" + c.Version }
