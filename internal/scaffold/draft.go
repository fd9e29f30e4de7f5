package scaffold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
	"github.com/rollcheck/rollcheck/spec"
)

// A Request names the app a first check file is written for, and where the file goes.
type Request struct {
	// Manifests are the app's manifests: a file, a directory of them, or a kustomization
	// directory. Without them, the app is the Deployment of Namespace on a cluster.
	Manifests string
	// Namespace, with Deployment, is a Deployment that runs on the cluster Cluster names (nil:
	// kubectl's files and their current context), read with a get and a list only.
	Namespace string
	Cluster   *kubeconfig.Ref
	// Deployment is the Deployment under test: required on a cluster; among manifests, needed
	// only when they hold several.
	Deployment string
	// File is where the check file will be written ("": stdout, and the file names itself FILE).
	// The manifests are named relative to its directory, and it is validated from there.
	File string
	// Command is how init was called, for the file's first line.
	Command string
}

// A Draft is a first check file and what it was made of.
type Draft struct {
	Found Found
	// Existing is the Deployment on a cluster the file names, to be checked in place; nil for a
	// file made from manifests.
	Existing *Existing
	File     []byte
}

// Make finds the app r names (in its manifests, or on its cluster) and renders its check file
// (Render). A file made from manifests is validated as rollcheck check reads it before it is
// returned: an error says why it would not run.
func Make(ctx context.Context, r Request) (*Draft, error) {
	d := &Draft{}
	opts := Options{Command: r.Command, File: r.File}
	var err error
	if r.Namespace != "" {
		d.Existing, d.Found, err = fromCluster(ctx, r)
		opts.Existing = d.Existing
	} else {
		d.Found, opts.Manifests, err = fromManifests(r)
	}
	if err != nil {
		return nil, err
	}
	d.File = Render(d.Found, opts)
	if d.Existing == nil {
		// What init writes must be a file rollcheck check takes: validate it as check reads it.
		c, err := spec.Parse(d.File, filepath.Dir(r.File))
		if err == nil {
			_, _, err = c.Plans()
		}
		if err != nil {
			return nil, fmt.Errorf("the check file for Deployment %s would not run: %w", d.Found.Deployment, err)
		}
	}
	return d, nil
}

// fromManifests finds the app in r's manifests, and names them relative to the file it writes.
func fromManifests(r Request) (Found, []string, error) {
	files, err := ReadManifests(r.Manifests)
	if err != nil {
		return Found{}, nil, fmt.Errorf("-f %w", err) // the error starts with the file at fault
	}
	found, err := Find(files.Objects, r.Deployment)
	if err != nil {
		return Found{}, nil, fmt.Errorf("-f %s: %w", r.Manifests, err)
	}
	var paths []string
	for _, p := range files.Paths {
		paths = append(paths, relTo(filepath.Dir(r.File), p))
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

// fromCluster reads the Deployment r names, and its namespace's Services, from r's cluster:
// get and list only.
func fromCluster(ctx context.Context, r Request) (*Existing, Found, error) {
	ref := kubeconfig.Ref{By: "the current context"}
	if r.Cluster != nil {
		ref = *r.Cluster
	}
	cfg, which, err := ref.Resolve()
	if err != nil {
		return nil, Found{}, err
	}
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(ref.Rules(), &clientcmd.ConfigOverrides{CurrentContext: ref.Context}).RawConfig()
	if err != nil {
		return nil, Found{}, fmt.Errorf("%s: %w", ref.By, err)
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, Found{}, fmt.Errorf("%s: %w", ref.By, err)
	}
	objs, err := clusterObjects(ctx, cs, r.Namespace, r.Deployment)
	if err != nil {
		return nil, Found{}, fmt.Errorf("%s: %w", which, err)
	}
	found, err := Find(objs, r.Deployment)
	if err != nil {
		return nil, Found{}, fmt.Errorf("%s: %w", which, err)
	}
	e := &Existing{Namespace: r.Namespace, Context: cmp.Or(ref.Context, raw.CurrentContext)}
	if ref.Kubeconfig != "" {
		e.Kubeconfig, _ = filepath.Abs(ref.Kubeconfig)
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

// WriteNew writes the check file b to path, refusing to replace a file that exists unless
// force; its errors name the file as init's -o does.
func WriteNew(path string, b []byte, force bool) error {
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
