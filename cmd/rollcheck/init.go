package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/scaffold"
	"github.com/rollcheck/rollcheck/spec"
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
	var (
		found scaffold.Found
		opts  = scaffold.Options{Command: f.command(), File: f.Out}
		err   error
	)
	if f.Out == "-" {
		opts.File = "" // the file says FILE: the user names it
	}
	if f.Namespace != "" {
		opts.Existing, found, err = f.fromCluster(ctx)
	} else {
		found, opts.Manifests, err = f.fromManifests()
	}
	if err != nil {
		return fail(err)
	}
	out := scaffold.Render(found, opts)
	if opts.Existing == nil {
		// What init writes must be a file rollcheck check takes: validate it as check reads it.
		dir := "."
		if f.Out != "-" {
			dir = filepath.Dir(f.Out)
		}
		c, err := spec.Parse(out, dir)
		if err == nil {
			_, _, err = c.Plans()
		}
		if err != nil {
			return fail(fmt.Errorf("the check file for Deployment %s would not run: %v", found.Deployment, err))
		}
	}
	if f.Out == "-" {
		_, _ = stdout.Write(out)
		return exitPass
	}
	if err := writeNew(f.Out, out, f.Force); err != nil {
		return fail(err)
	}
	next := "rollcheck check -f " + f.Out
	if opts.Existing != nil {
		next += " --in-place"
	}
	what := fmt.Sprintf("path %s", found.Path)
	if found.GRPC {
		what = "gRPC"
	}
	fmt.Fprintf(stderr, "rollcheck init: wrote %s: Deployment %s, port %d, %s, variants as-is and prestop-sleep (%s); next: %s\n",
		f.Out, found.Deployment, found.Port, what, scaffold.PreStop(), next)
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

// fromManifests finds the app in -f's manifests, and names them relative to the file it writes.
func (f *initFlags) fromManifests() (scaffold.Found, []string, error) {
	files, err := scaffold.ReadManifests(f.File)
	if err != nil {
		return scaffold.Found{}, nil, fmt.Errorf("-f %w", err) // the error starts with the file at fault
	}
	found, err := scaffold.Find(files.Objects, f.Deployment)
	if err != nil {
		return scaffold.Found{}, nil, fmt.Errorf("-f %s: %w", f.File, err)
	}
	outDir := "."
	if f.Out != "-" {
		outDir = filepath.Dir(f.Out)
	}
	var paths []string
	for _, p := range files.Paths {
		paths = append(paths, relTo(outDir, p))
	}
	return found, paths, nil
}

// relTo is path p as a file in dir names it: relative when it can be, else absolute.
func relTo(dir, p string) string {
	absDir, err1 := filepath.Abs(dir)
	absP, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return p
	}
	if rel, err := filepath.Rel(absDir, absP); err == nil && !strings.HasPrefix(rel, "../../") {
		return filepath.ToSlash(rel)
	}
	return absP
}

// fromCluster reads the Deployment --namespace and --deployment name, and the namespace's
// Services, from the cluster --kubeconfig and --context name (or kubectl's current context):
// get and list only.
func (f *initFlags) fromCluster(ctx context.Context) (*scaffold.Existing, scaffold.Found, error) {
	ref := clusterRef{By: "the current context"}
	if r := flagsRef(f.Kubeconfig, f.Context); r != nil {
		ref = *r
	}
	cfg, which, err := ref.Resolve()
	if err != nil {
		return nil, scaffold.Found{}, err
	}
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(ref.Rules(), &clientcmd.ConfigOverrides{CurrentContext: ref.Context}).RawConfig()
	if err != nil {
		return nil, scaffold.Found{}, fmt.Errorf("%s: %w", ref.By, err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, scaffold.Found{}, fmt.Errorf("%s: %w", ref.By, err)
	}
	objs, err := clusterObjects(ctx, cs, f.Namespace, f.Deployment)
	if err != nil {
		return nil, scaffold.Found{}, fmt.Errorf("%s: %w", which, err)
	}
	found, err := scaffold.Find(objs, f.Deployment)
	if err != nil {
		return nil, scaffold.Found{}, fmt.Errorf("%s: %w", which, err)
	}
	e := &scaffold.Existing{Namespace: f.Namespace, Context: cmp.Or(ref.Context, raw.CurrentContext)}
	if f.Kubeconfig != "" {
		e.Kubeconfig, _ = filepath.Abs(f.Kubeconfig)
	}
	return e, found, nil
}

// clusterObjects are the Deployment ns/name and the Services of ns: a get and a list.
func clusterObjects(ctx context.Context, cs kubernetes.Interface, ns, name string) ([]check.Object, error) {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("Deployment %s/%s: %w", ns, name, err)
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("Services of namespace %s: %w", ns, err)
	}
	objs := []check.Object{d}
	for i := range svcs.Items {
		objs = append(objs, &svcs.Items[i])
	}
	return objs, nil
}

// writeNew writes b to path, refusing to replace a file that exists unless force.
func writeNew(path string, b []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("-o %s: the file exists: choose another -o, or --force to overwrite it", path)
	}
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	if _, err := fh.Write(b); err != nil {
		_ = fh.Close()
		return fmt.Errorf("-o %s: %w", path, err)
	}
	return fh.Close()
}
