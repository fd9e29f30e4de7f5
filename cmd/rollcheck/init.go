package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rollcheck/rollcheck/internal/scaffold"
)

const initAbout = `Writes a first check file for your app: from its manifests (-f FILE or DIR), or from a Deployment
that runs on a cluster (--namespace NS --deployment NAME, with --kubeconfig/--context as rollcheck check
reads them: a read-only get of the Deployment and a list of the namespace's Services). It finds the
Deployment, its app container, the port (a Service's targetPort, else the readiness probe's), the path
(the readiness probe's), gRPC, the images, the preStop and the grace period, and writes two variants,
as-is and prestop-sleep, with a failure-ratio threshold, every choice commented. A file from manifests
is validated as rollcheck check reads it before it is written. Then: rollcheck check -f FILE (for a
Deployment on a cluster: rollcheck check -f FILE --in-place).
Exit 0 written, 2 bad input (one line: what to add or choose).`

type initFlags struct {
	File, Out, Deployment, Namespace string
	Kubeconfig, Context              string
	Force                            bool
}

func newInitFlags(fs *flag.FlagSet) *initFlags {
	f := &initFlags{}
	fs.StringVar(&f.File, "f", "", "the app's manifests: a YAML `FILE`, a DIR of them (its .yaml, .yml and .json files), or a\n"+
		"kustomization DIR (rendered as kubectl kustomize renders it)")
	fs.StringVar(&f.Out, "o", "check.yaml", "the check file to write (`FILE`; - for stdout)")
	fs.BoolVar(&f.Force, "force", false, "overwrite the file -o names if it exists")
	fs.StringVar(&f.Deployment, "deployment", "", "the Deployment under test (`NAME`): one of the manifests' when they hold several; with\n--namespace, one that runs on the cluster")
	fs.StringVar(&f.Namespace, "namespace", "", "the `NS` of a Deployment that runs on a cluster (with --deployment): the file names it\ninstead of manifests, to be checked in place")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "with --namespace: the cluster's kubeconfig `FILE`, only this file (as rollcheck check reads it)")
	fs.StringVar(&f.Context, "context", "", "with --namespace: the kubeconfig's context `NAME` (else its current context)")
	return f
}

func runInit(ctx context.Context, f *initFlags, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return badArgs(stderr, "init", args)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rollcheck init: %v\n", err)
		return exitBadInput
	}
	if err := f.check(); err != nil {
		return fail(err)
	}
	req := scaffold.Request{Manifests: f.File, Namespace: f.Namespace, Deployment: f.Deployment, File: f.Out, Command: f.command()}
	if f.Out == "-" {
		req.File = "" // the file says FILE: the user names it
	}
	if f.Namespace != "" {
		req.Cluster = flagsRef(f.Kubeconfig, f.Context) // nil: kubectl's current context
	}
	d, err := scaffold.Make(ctx, req)
	if err != nil {
		return fail(err)
	}
	if f.Out == "-" {
		_, _ = stdout.Write(d.File)
		return exitPass
	}
	if err := scaffold.WriteNew(f.Out, d.File, f.Force); err != nil {
		return fail(err)
	}
	next := "rollcheck check -f " + f.Out
	if d.Existing != nil {
		next += " --in-place"
	}
	what := fmt.Sprintf("path %s", d.Found.Path)
	if d.Found.GRPC {
		what = "gRPC"
	}
	fmt.Fprintf(stderr, "rollcheck init: wrote %s: Deployment %s, port %d, %s, variants as-is and prestop-sleep (%s); next: %s\n",
		f.Out, d.Found.Deployment, d.Found.Port, what, scaffold.PreStop(), next)
	return exitPass
}

// check refuses flags that do not name one app.
func (f *initFlags) check() error {
	switch {
	case f.File != "" && f.Namespace != "":
		return errors.New("-f and --namespace: give the manifests or a Deployment on a cluster, not both")
	case f.File == "" && f.Namespace == "":
		return errors.New("give the app's manifests (-f FILE or DIR), or a Deployment on a cluster (--namespace NS --deployment NAME)")
	case f.Namespace != "" && f.Deployment == "":
		return fmt.Errorf("--namespace %s: name the Deployment too (--deployment NAME)", f.Namespace)
	case f.File != "" && (f.Kubeconfig != "" || f.Context != ""):
		return errors.New("--kubeconfig and --context name the cluster of a Deployment (--namespace); with -f, init reads only the manifests")
	case f.Out == "":
		return errors.New("-o: empty (a file, or - for stdout)")
	}
	return nil
}

// command is how init was called, for the file's first line.
func (f *initFlags) command() string {
	parts := []string{"rollcheck init"}
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, flag+" "+v)
		}
	}
	add("-f", f.File)
	add("--namespace", f.Namespace)
	add("--deployment", f.Deployment)
	add("--context", f.Context)
	return strings.Join(parts, " ")
}
