package inplace

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/internal/kube"
)

// Service finds the Service of an app checked in place that the load goes to, and its port that
// reaches the container port: the one named, or the one Service of the Deployment's namespace
// whose selector selects its pod template. None, several, a headless one or one without such a
// port is an error that names what is there. For an Argo Rollout (rollout), a Service's selector
// may also name RolloutHashLabel, which Argo sets on the Services it routes (active, preview,
// canary) and on the pods of each revision, never on the Rollout's own template: that key is not
// asked of the template.
func Service(ctx context.Context, cs kubernetes.Interface, d *appsv1.Deployment, name string, port int32, rollout bool) (*corev1.Service, int32, error) {
	var list []corev1.Service
	if name != "" {
		var s *corev1.Service
		err := kube.Retry(ctx, func(ctx context.Context) (err error) {
			s, err = cs.CoreV1().Services(d.Namespace).Get(ctx, name, metav1.GetOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			return nil, 0, fmt.Errorf("the app in place: Service %s/%s: not found", d.Namespace, name)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("the app in place: Service %s/%s: %w", d.Namespace, name, err)
		}
		if !selects(s, d, rollout) {
			return nil, 0, fmt.Errorf("the app in place: Service %s/%s does not select the pods of Deployment %s (its selector %v, the pods' labels %v)",
				d.Namespace, name, d.Name, s.Spec.Selector, d.Spec.Template.Labels)
		}
		list = []corev1.Service{*s}
	} else {
		var all *corev1.ServiceList
		err := kube.Retry(ctx, func(ctx context.Context) (err error) {
			all, err = cs.CoreV1().Services(d.Namespace).List(ctx, metav1.ListOptions{})
			return err
		})
		if err != nil {
			return nil, 0, fmt.Errorf("the app in place: list the Services of %s: %w", d.Namespace, err)
		}
		var names, there []string
		for _, s := range all.Items {
			there = append(there, s.Name)
			if selects(&s, d, rollout) {
				list = append(list, s)
				names = append(names, s.Name)
			}
		}
		switch {
		case len(list) == 0:
			return nil, 0, fmt.Errorf("the app in place: no Service of namespace %s selects the pods of Deployment %s (Services there: %s): name one (app.service)",
				d.Namespace, d.Name, cmp.Or(strings.Join(there, ", "), "none"))
		case len(list) > 1:
			return nil, 0, fmt.Errorf("the app in place: %d Services of namespace %s select the pods of Deployment %s (%s): name the one the load goes to (app.service)",
				len(list), d.Namespace, d.Name, strings.Join(names, ", "))
		}
	}
	s := list[0]
	if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil, 0, fmt.Errorf("the app in place: Service %s/%s is headless: the load needs a cluster address (name another with app.service)", d.Namespace, s.Name)
	}
	var ports []string
	for _, sp := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%d→%s", sp.Port, sp.TargetPort.String()))
		if reaches(sp, d, port) {
			return &s, sp.Port, nil
		}
	}
	return nil, 0, fmt.Errorf("the app in place: no port of Service %s/%s reaches container port %d (its ports: %s)", d.Namespace, s.Name, port, strings.Join(ports, ", "))
}

// RolloutHashLabel is the label Argo Rollouts puts on each revision's pods (its ReplicaSet's
// pod-template hash) and on the selectors of the Services it routes to one revision.
const RolloutHashLabel = "rollouts-pod-template-hash"

// selects says s's selector selects the pods of d's template (of a Rollout's, RolloutHashLabel
// left out: Argo adds it to the pods, per revision).
func selects(s *corev1.Service, d *appsv1.Deployment, rollout bool) bool {
	sel := maps.Clone(s.Spec.Selector)
	if rollout {
		delete(sel, RolloutHashLabel)
	}
	return len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(d.Spec.Template.Labels))
}

// reaches says the Service port sp sends to container port of d's pods: by number (a target
// port left out is the port itself) or by the name a container gives that port.
func reaches(sp corev1.ServicePort, d *appsv1.Deployment, port int32) bool {
	if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
		return false
	}
	tp := sp.TargetPort
	switch {
	case tp.IntVal == 0 && tp.StrVal == "":
		return sp.Port == port
	case tp.StrVal == "":
		return tp.IntVal == port
	}
	for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
		for _, cp := range c.Ports {
			if cp.Name == tp.StrVal && cp.ContainerPort == port {
				return true
			}
		}
	}
	return false
}
