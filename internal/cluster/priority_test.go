package cluster

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kube-proxy's container gets the CPU request once: a second call changes nothing, and other
// containers are left as they are.
func TestSetCPURequest(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "other"}, {Name: "kube-proxy"}}}
	if !setCPURequest(&spec, "kube-proxy", kubeProxyCPU) {
		t.Fatal("first call changed nothing")
	}
	if got := spec.Containers[1].Resources.Requests.Cpu(); got.Cmp(kubeProxyCPU) != 0 {
		t.Errorf("kube-proxy requests %s, want %s", got, kubeProxyCPU.String())
	}
	if len(spec.Containers[0].Resources.Requests) != 0 {
		t.Errorf("other container changed: %v", spec.Containers[0].Resources.Requests)
	}
	if setCPURequest(&spec, "kube-proxy", resource.MustParse("0.1")) {
		t.Error("second call with the same quantity changed it again")
	}
	if setCPURequest(&spec, "absent", kubeProxyCPU) {
		t.Error("a container that is not there was changed")
	}
}

func TestDaemonSetRolledOut(t *testing.T) {
	ds := func(gen, observed int64, desired, updated, available int32) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{}
		d.Generation = gen
		d.Status = appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired, UpdatedNumberScheduled: updated, NumberAvailable: available}
		return d
	}
	for _, c := range []struct {
		ds   *appsv1.DaemonSet
		want bool
	}{
		{ds(2, 2, 3, 3, 3), true},
		{ds(2, 1, 3, 3, 3), false}, // the controller has not seen the change
		{ds(2, 2, 3, 2, 3), false}, // one node still runs the old template
		{ds(2, 2, 3, 3, 2), false}, // one new pod not yet available
		{ds(2, 2, 0, 0, 0), false}, // nothing scheduled yet
	} {
		if got := daemonSetRolledOut(c.ds); got != c.want {
			t.Errorf("%+v: got %v, want %v", c.ds.Status, got, c.want)
		}
	}
}
