package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiwait "k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// InstallOptions say where and how Install installs the controllers.
type InstallOptions struct {
	// Client reaches the cluster's API server.
	Client klient.Client
	// KindCluster is the kind cluster (on this machine's Docker) whose nodes the images are
	// loaded into: the one Client reaches.
	KindCluster string
	// Timeout bounds each wait on the cluster: the CRDs' establishment, each Deployment's
	// availability.
	Timeout time.Duration
	// Logf gets every step's detail (what a build waits for); Step gets one line per step done,
	// with its duration. Either may be nil.
	Logf func(string, ...any)
	Step func(controller Name, what string, took time.Duration)
}

// Install builds (or finds built) each controller of cs for the nodes' architecture, makes its
// image, loads it into the kind cluster's nodes (through the local Docker engine, as the
// cluster package loads rollcheck's fixture images), applies its install objects (Objects) and
// waits until its CRDs are established and its Deployment is available. It returns the images,
// in the order of cs.
func Install(ctx context.Context, o InstallOptions, cs ...Controller) ([]Image, error) {
	logf, stepf := o.Logf, o.Step
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if stepf == nil {
		stepf = func(Name, string, time.Duration) {}
	}
	timed := func(c Controller, what string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %s: %w", c.Title, what, err)
		}
		stepf(c.Name, what, time.Since(start))
		return nil
	}
	var nodes corev1.NodeList
	if err := o.Client.Resources().List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("list the nodes: %w", err)
	}
	if err := ofKindCluster(nodes.Items, o.KindCluster); err != nil {
		return nil, err
	}
	arch, err := cluster.NodeArch(ctx, o.Client, logf)
	if err != nil {
		return nil, err
	}
	kc, err := cluster.Existing(ctx, cluster.Options{Name: o.KindCluster, Logf: logf})
	if err != nil {
		return nil, fmt.Errorf("the kind cluster to load the controllers' images into: %w", err)
	}
	var images []Image
	for _, c := range cs {
		var b Binary
		var img Image
		var objs []k8s.Object
		steps := []struct {
			what string
			f    func() error
		}{
			{"build the binary", func() (err error) { b, err = Build(ctx, c, arch, logf); return err }},
			{"make the image", func() (err error) { img, err = MakeImage(b); return err }},
			{"put the image into the local Docker engine", func() error { return ToDocker(ctx, img, logf) }},
			{"load the image into kind cluster " + o.KindCluster, func() error { return kc.LoadImages(ctx, []string{img.Ref}) }},
			{"read the install objects", func() (err error) { objs, err = Objects(ctx, c, img.Ref, logf); return err }},
			{"apply the install objects", func() error { return kube.Apply(ctx, o.Client, objs...) }},
			{"wait for the CRDs to be established", func() error { return waitEstablished(ctx, o.Client, objs, o.Timeout) }},
			{"wait for Deployment " + c.Namespace + "/" + c.Deployment + " to be available", func() error {
				return kube.WaitRollout(ctx, o.Client, c.Namespace, c.Deployment, o.Timeout)
			}},
		}
		for _, s := range steps {
			if err := timed(c, s.what, s.f); err != nil {
				if strings.HasPrefix(s.what, "wait") {
					err = fmt.Errorf("%w%s", err, kube.PodProblems(ctx, o.Client, c.Namespace, ""))
				}
				return images, err
			}
		}
		images = append(images, img)
	}
	return images, nil
}

// ofKindCluster checks that nodes are those of kind cluster name, by the provider IDs kind gives
// them (kind://docker/<cluster>/<node>): the images are loaded into that cluster's nodes, and a
// client that reaches another cluster would install Deployments whose images are not there.
func ofKindCluster(nodes []corev1.Node, name string) error {
	prefix := "kind://docker/" + name + "/"
	if len(nodes) == 0 {
		return fmt.Errorf("the cluster has no nodes")
	}
	for _, n := range nodes {
		if !strings.HasPrefix(n.Spec.ProviderID, prefix) {
			return fmt.Errorf("node %s (provider ID %q) is not a node of kind cluster %q, into which the images are loaded: give the kind cluster that the kubeconfig reaches", n.Name, n.Spec.ProviderID, name)
		}
	}
	return nil
}

// waitEstablished waits until every CustomResourceDefinition of objs is Established, or gives
// up after timeout naming those that are not.
func waitEstablished(ctx context.Context, client klient.Client, objs []k8s.Object, timeout time.Duration) error {
	var names []string
	for _, o := range objs {
		if o.GetObjectKind().GroupVersionKind().Kind == crdKind {
			names = append(names, o.GetName())
		}
	}
	var pending []string
	err := apiwait.PollUntilContextTimeout(ctx, kube.PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		pending = pending[:0]
		for _, n := range names {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apiextensions.k8s.io/v1")
			u.SetKind(crdKind)
			if err := client.Resources().Get(ctx, n, "", u); err != nil || !established(u) {
				pending = append(pending, n)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not established within %s: %v: %w", timeout, pending, err)
	}
	return nil
}

// established says whether a CustomResourceDefinition's condition Established is True.
func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
