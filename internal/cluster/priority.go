package cluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"github.com/rollcheck/rollcheck/internal/kube"
)

// kubeProxyCPU is the CPU kube-proxy asks for on a cluster rollcheck creates, as managed
// clusters give it (GKE's kube-proxy requests 100m). kubeadm's kube-proxy DaemonSet, which kind
// installs, requests nothing: a BestEffort pod, whose CPU weight is the lowest there is, so
// that on a node busy with several rows at once its iptables syncs wait behind every other
// pod, and its programming latency, which is what a row measures, becomes the machine's.
var kubeProxyCPU = resource.MustParse("100m")

// requestedAnnotation marks an object of the cluster that rollcheck changed when it created the
// cluster, with what it changed.
const requestedAnnotation = "rollcheck.io/changed"

// requestKubeProxyCPU gives kube-proxy's container kubeProxyCPU as its CPU request (Burstable),
// records the change on the DaemonSet, and waits until every node's kube-proxy runs with it.
// Idempotent; only for a cluster this run created.
func (c *Cluster) requestKubeProxyCPU(ctx context.Context) error {
	r := c.Client.Resources("kube-system")
	var ds appsv1.DaemonSet
	if err := r.Get(ctx, "kube-proxy", "kube-system", &ds); err != nil {
		return fmt.Errorf("get kube-proxy's DaemonSet: %w", err)
	}
	if !setCPURequest(&ds.Spec.Template.Spec, "kube-proxy", kubeProxyCPU) {
		return nil
	}
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[requestedAnnotation] = "spec.template.spec.containers[kube-proxy].resources.requests.cpu=" + kubeProxyCPU.String() + " (was none: BestEffort)"
	if err := r.Update(ctx, &ds); err != nil {
		return fmt.Errorf("give kube-proxy a CPU request: %w", err)
	}
	var (
		last   appsv1.DaemonSet
		apiErr error
	)
	err := wait.For(kube.Tolerant(func(ctx context.Context) (bool, error) {
		if err := r.Get(ctx, "kube-proxy", "kube-system", &last); err != nil {
			return false, err
		}
		return daemonSetRolledOut(&last), nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(2*time.Minute), wait.WithInterval(time.Second))
	if err = kube.WithLastError(err, apiErr); err != nil {
		s := last.Status
		return fmt.Errorf("wait for kube-proxy with a CPU request (updated %d of %d, available %d): %w",
			s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberAvailable, err)
	}
	c.Logf("kube-proxy requests %s CPU (kind's requests none: BestEffort pods get the least CPU on a busy node)", kubeProxyCPU.String())
	return nil
}

// setCPURequest sets the CPU request of the container named name in spec to q, and reports
// whether it changed anything.
func setCPURequest(spec *corev1.PodSpec, name string, q resource.Quantity) bool {
	for i := range spec.Containers {
		ct := &spec.Containers[i]
		if ct.Name != name {
			continue
		}
		if cur, ok := ct.Resources.Requests[corev1.ResourceCPU]; ok && cur.Cmp(q) == 0 {
			return false
		}
		if ct.Resources.Requests == nil {
			ct.Resources.Requests = corev1.ResourceList{}
		}
		ct.Resources.Requests[corev1.ResourceCPU] = q
		return true
	}
	return false
}

// daemonSetRolledOut reports whether every node runs ds's current template and is available.
func daemonSetRolledOut(ds *appsv1.DaemonSet) bool {
	s := ds.Status
	return s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled
}
