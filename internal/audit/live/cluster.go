package live

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/internal/access"
	"github.com/rollcheck/rollcheck/internal/audit"
	"github.com/rollcheck/rollcheck/internal/kubeconfig"
)

// ReadCluster reads the workloads of the cluster ref names, read only: namespace ns (default
// when ""), or every namespace when all. It says which namespaces of which cluster through logf
// before any API call, asks the API server whether this user may list them (access.Audit's
// rights, examples/rbac/audit.yaml) and reads them (Read). It returns the inventory and what was
// read ("namespace shop of context …"), for messages.
func ReadCluster(ctx context.Context, ref kubeconfig.Ref, ns string, all bool, logf func(string, ...any)) (*audit.Inventory, string, error) {
	cfg, which, err := ref.Resolve()
	if err != nil {
		return nil, "", err
	}
	if !all && ns == "" {
		ns = metav1.NamespaceDefault
	}
	where := "namespace " + ns
	if all {
		ns, where = metav1.NamespaceAll, "every namespace"
	}
	logf("reading %s of %s", where, which)
	cfg.Timeout = 30 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	inv, err := readAllowed(ctx, cs, dyn, ns)
	return inv, where + " of " + which, err
}

// readAllowed is Read after a review of access.Audit's rights in ns: a right denied is an error
// that names it and the manifest that grants it (access.Refusal), before any list call.
func readAllowed(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string) (*audit.Inventory, error) {
	rights := access.Of(access.Audit)
	for i := range rights {
		rights[i].Namespace = ns
	}
	denied, err := access.Review(ctx, cs, rights)
	if err != nil {
		return nil, err
	}
	if len(denied) > 0 {
		return nil, errors.New(access.Refusal(denied))
	}
	return Read(ctx, cs, dyn, ns)
}
