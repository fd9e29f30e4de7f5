// Package live reads a cluster's workloads for rollcheck audit through the API server, read
// only (list calls, the rights of examples/rbac/audit.yaml), into the same model as manifests.
package live

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/internal/audit"
)

// Routes are the Gateway API routes read (as unstructured); a cluster that does not serve the
// API has none.
var Routes = []schema.GroupVersionResource{
	{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"},
}

// Read lists the workloads of namespace ns ("" every namespace) and what leads to them, and
// joins them.
func Read(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string) (*audit.Inventory, error) {
	inv := &audit.Inventory{}
	opts := metav1.ListOptions{}
	lists := []struct {
		what string
		list func() (runtime.Object, error)
	}{
		{"deployments", func() (runtime.Object, error) { return cs.AppsV1().Deployments(ns).List(ctx, opts) }},
		{"statefulsets", func() (runtime.Object, error) { return cs.AppsV1().StatefulSets(ns).List(ctx, opts) }},
		{"services", func() (runtime.Object, error) { return cs.CoreV1().Services(ns).List(ctx, opts) }},
		{"poddisruptionbudgets", func() (runtime.Object, error) { return cs.PolicyV1().PodDisruptionBudgets(ns).List(ctx, opts) }},
		{"ingresses", func() (runtime.Object, error) { return cs.NetworkingV1().Ingresses(ns).List(ctx, opts) }},
	}
	for _, gvr := range Routes {
		lists = append(lists, struct {
			what string
			list func() (runtime.Object, error)
		}{gvr.Resource, func() (runtime.Object, error) { return dyn.Resource(gvr).Namespace(ns).List(ctx, opts) }})
	}
	for _, l := range lists {
		got, err := l.list()
		switch {
		case apierrors.IsNotFound(err):
			continue // the cluster does not serve the Gateway API
		case err != nil:
			return nil, fmt.Errorf("list %s%s: %w", l.what, where(ns), err)
		}
		items, err := meta.ExtractList(got)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", l.what, err)
		}
		for _, o := range items {
			inv.AddObject(o)
		}
	}
	inv.Join()
	return inv, nil
}

func where(ns string) string {
	if ns == "" {
		return " in every namespace"
	}
	return " in namespace " + ns
}
