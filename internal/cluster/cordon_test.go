package cluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

// TestUncordonOrphans: a node cordoned by a drain whose namespace is gone is uncordoned; one
// whose drain's namespace still exists, and one cordoned by someone else, are left as they are.
func TestUncordonOrphans(t *testing.T) {
	node := func(name, by string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: true}}
		if by != "" {
			n.Annotations = map[string]string{disrupt.CordonedBy: by}
		}
		return n
	}
	live := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rc-live"}}
	fc := kubefake.NewCluster(t, interceptor.Funcs{}, node("orphan", "rc-gone"), node("running", "rc-live"), node("admin", ""), live)
	c := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, Client: fc.Client}
	if err := c.uncordonOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, wantCordoned := range map[string]bool{"orphan": false, "running": true, "admin": true} {
		var n corev1.Node
		if err := fc.Client.Resources().Get(context.Background(), name, "", &n); err != nil {
			t.Fatal(err)
		}
		if n.Spec.Unschedulable != wantCordoned {
			t.Errorf("node %s: unschedulable %v, want %v", name, n.Spec.Unschedulable, wantCordoned)
		}
		if _, has := n.Annotations[disrupt.CordonedBy]; has != (name == "running") {
			t.Errorf("node %s: annotations %v", name, n.Annotations)
		}
	}
}
