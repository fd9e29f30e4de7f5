package disrupt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// DrainRetry is how long a drain waits before asking again for an eviction a
// PodDisruptionBudget refused (check.DrainRetry; a variable so that tests run fast).
var DrainRetry = check.DrainRetry

// CordonedBy is the annotation a drain puts on the node it cordons, naming the row's namespace:
// it uncordons only a node it cordoned itself, and a node left cordoned by a run that was killed
// mid-drain says who did it.
const CordonedBy = "rollcheck.io/cordoned-by"

// uncordonWait bounds the uncordon, which runs on every path, a cancelled context's too.
const uncordonWait = 30 * time.Second

// drain runs one drain-node disruption: it cordons the node that runs the most ready pods of
// the Deployment (ties: the first by name; t.Node, when set), evicts every pod of the Deployment on it through the
// eviction API (policy/v1), asking again DrainRetry after each 429 (a PodDisruptionBudget that
// allows no disruption now), waits until the evicted pods are gone, uncordons the node and waits
// until the Deployment settled. A drain that has not finished within t.DrainTimeout is blocked:
// the node is uncordoned and drain returns no error, so that the row goes on. The node is
// uncordoned on every path, errors and a cancelled ctx included.
//
// It is a small loop on the client the package already uses rather than kubectl's
// k8s.io/kubectl/pkg/drain: that package brings kubectl and cli-runtime into the module for
// what rollcheck does not need (every pod of a node, DaemonSet, mirror, emptyDir and unmanaged
// pod filters, deletion instead of eviction), and it drains the node, where rollcheck drains
// only the app: other pods on the node (the load pods, other rows', the system's) stay. What it
// does with the API is kubectl drain's: every pod's eviction asked for at once, a 429 asked
// again 5 s later (pkg/drain sleeps its EvictErrorRetryDelay, which kubectl drain sets to 5 s
// and no flag changes), a pod already gone (404) counted as done, an evicted pod waited for until it is
// gone or replaced by a pod of the same name and another UID, and one timeout over the
// evictions and the waits together (kubectl's --timeout). Unlike kubectl, which leaves the node
// cordoned when its drain fails, it always uncordons: the row's next disruption needs the node.
func drain(ctx context.Context, t Target, rec *Record) error {
	dr := &check.Drain{Timeout: cmp.Or(t.DrainTimeout, check.DefaultDrainTimeout)}
	rec.Drain = dr
	cr := t.Client.Resources(t.Namespace).GetControllerRuntimeClient()
	want, _, err := kube.ReadWorkload(ctx, t.Client, t.workload())
	if err != nil {
		return fmt.Errorf("drain-node: get %s: %w", t.workload(), err)
	}
	node, pods, err := pickNode(ctx, t)
	if err != nil {
		return err
	}
	dr.Node = node
	for _, p := range pods {
		dr.Pods = append(dr.Pods, p.Name)
	}
	cordoned, err := cordon(ctx, cr, node, t.owner())
	if err != nil {
		return err
	}
	if cordoned {
		t.Logf("drain-node: cordoned node %s; evicting %s", node, strings.Join(dr.Pods, ", "))
	} else {
		t.Logf("drain-node: node %s was cordoned already (not by this row: left cordoned after the drain); evicting %s", node, strings.Join(dr.Pods, ", "))
	}
	derr := evictAll(ctx, t, cr, pods, want, dr)
	var uerr error
	if cordoned {
		if uerr = Uncordon(ctx, cr, node, t.owner()); uerr == nil {
			dr.Uncordoned = time.Now()
		}
	}
	if err := errors.Join(derr, uerr); err != nil {
		return err
	}
	switch {
	case dr.Blocked:
		t.Logf("drain-node: node %s: drain blocked after %s: %d of %d evictions accepted, %d refused (429); uncordoned", node, dr.Timeout, dr.Evictions, len(pods), dr.Refused429)
	default:
		t.Logf("drain-node: node %s drained in %s: %d evictions, %d refused (429); uncordoned", node, dr.Drained.Sub(rec.Started).Round(10*time.Millisecond), dr.Evictions, dr.Refused429)
	}
	if dr.Evictions > 0 && dr.ReplacementsReady.IsZero() {
		if err := waitReplacements(ctx, t, want, dr); err != nil {
			return err
		}
	}
	return Settle(ctx, t)
}

// pickNode picks the node that runs the most ready, not terminating pods of the Deployment (ties:
// the first by name, so runs are repeatable), or t.Node when it is set (which must run one) and returns it with every not terminating pod of
// the Deployment on it, by name.
func pickNode(ctx context.Context, t Target) (string, []corev1.Pod, error) {
	var pods corev1.PodList
	if err := t.Client.Resources(t.Namespace).List(ctx, &pods, resources.WithLabelSelector(t.Selector)); err != nil {
		return "", nil, fmt.Errorf("drain-node: list pods %s in %s: %w", t.Selector, t.Namespace, err)
	}
	ready := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && podReady(p) {
			ready[p.Spec.NodeName]++
		}
	}
	node := t.Node
	for n, c := range ready {
		if t.Node == "" && (node == "" || c > ready[node] || (c == ready[node] && n < node)) {
			node = n
		}
	}
	switch {
	case node == "":
		return "", nil, fmt.Errorf("drain-node: no ready pod %s in %s on any node", t.Selector, t.Namespace)
	case ready[node] == 0:
		// Only a named node can run none: nothing to drain, and a drain that evicts nothing
		// would be a vacuous zero.
		return "", nil, fmt.Errorf("drain-node: node %s runs no ready pod %s of %s: nothing to drain there (the pods run on %s)", node, t.Selector, t.Namespace, strings.Join(slices.Sorted(maps.Keys(ready)), ", "))
	}
	var on []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
			on = append(on, p)
		}
	}
	slices.SortFunc(on, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return node, on, nil
}

// cordon marks the node unschedulable, with the CordonedBy annotation naming ns; it reports false
// (and changes nothing) when the node was unschedulable already: someone else cordoned it, and
// the drain must not uncordon it.
func cordon(ctx context.Context, cr client.Client, node, ns string) (bool, error) {
	var n corev1.Node
	if err := cr.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		return false, fmt.Errorf("drain-node: get node %s: %w", node, err)
	}
	if n.Spec.Unschedulable {
		return false, nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"unschedulable":true}}`, CordonedBy, ns)
	if err := cr.Patch(ctx, &n, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return false, fmt.Errorf("drain-node: cordon node %s: %w", node, err)
	}
	return true, nil
}

// Uncordon makes the node schedulable again and removes the CordonedBy annotation (ns is the
// namespace that annotation named), also when ctx was cancelled (within uncordonWait): a drain's
// last step, and the sweep's for a drain whose run was killed.
func Uncordon(ctx context.Context, cr client.Client, node, ns string) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uncordonWait)
	defer cancel()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}},"spec":{"unschedulable":null}}`, CordonedBy)
	if err := cr.Patch(uctx, n, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("drain-node: uncordon node %s (cordoned by %s): %w", node, ns, err)
	}
	return nil
}

// evictAll evicts pods and waits until they are gone, as drain says, filling dr; it returns nil
// when the drain finished (dr.Drained) or was blocked (dr.Blocked), an error when the API
// refused an eviction other than by 429 or ctx ended.
func evictAll(ctx context.Context, t Target, cr client.Client, pods []corev1.Pod, want int, dr *check.Drain) error {
	deadline := time.Now().Add(dr.Timeout)
	pending := slices.Clone(pods)
	evicted := map[string]types.UID{}
	var next time.Time // when to ask again for the pending evictions
	lastRefused := ""
	for {
		if len(pending) > 0 && !time.Now().Before(next) {
			var refused []string
			var still []corev1.Pod
			for i := range pending {
				p := &pending[i]
				err := cr.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
				switch {
				case err == nil:
					dr.Evictions++
					evicted[p.Name] = p.UID
					t.Logf("drain-node: evicted pod %s", p.Name)
				case apierrors.IsNotFound(err):
					// Gone already: nothing to evict or wait for (kubectl counts it done).
				case apierrors.IsTooManyRequests(err):
					dr.Refused429++
					refused = append(refused, p.Name)
					still = append(still, *p)
				case ctx.Err() != nil:
					return fmt.Errorf("drain-node: node %s: %w", dr.Node, ctx.Err())
				default:
					return fmt.Errorf("drain-node: node %s: evict pod %s/%s: %w", dr.Node, p.Namespace, p.Name, err)
				}
			}
			pending = still
			if len(refused) > 0 {
				next = time.Now().Add(DrainRetry)
				// Said once per set of refused pods, not every DrainRetry of a blocked drain.
				if r := strings.Join(refused, ", "); r != lastRefused {
					t.Logf("drain-node: eviction of %s refused (429: a PodDisruptionBudget allows no disruption now); asking again every %s", r, DrainRetry)
					lastRefused = r
				}
			}
		}
		var list corev1.PodList
		if err := t.Client.Resources(t.Namespace).List(ctx, &list, resources.WithLabelSelector(t.Selector)); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("drain-node: node %s: %w", dr.Node, ctx.Err())
			}
			return fmt.Errorf("drain-node: list pods %s in %s: %w", t.Selector, t.Namespace, err)
		}
		left := stillThere(list.Items, evicted)
		pending = present(list.Items, pending)
		now := time.Now()
		// Only once every pod of the node was evicted: with a budget that lets one go at a time,
		// the first one's replacement is ready while the others still wait (and count as ready).
		if dr.Evictions > 0 && len(pending) == 0 && dr.ReplacementsReady.IsZero() && readyReplacements(list.Items, evicted) >= want {
			dr.ReplacementsReady = now
		}
		if len(pending) == 0 && left == 0 {
			dr.Drained = now
			return nil
		}
		if !now.Before(deadline) {
			dr.Blocked = true
			return nil
		}
		pause := kube.PollInterval
		if len(pending) > 0 {
			pause = min(pause, max(next.Sub(now), 0))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain-node: node %s: %w", dr.Node, ctx.Err())
		case <-time.After(min(pause, deadline.Sub(now))):
		}
	}
}

// stillThere counts the evicted pods that still exist: a pod of the same name and another UID
// is a new pod (kubectl's test too).
func stillThere(pods []corev1.Pod, evicted map[string]types.UID) int {
	n := 0
	for _, p := range pods {
		if uid, ok := evicted[p.Name]; ok && uid == p.UID {
			n++
		}
	}
	return n
}

// present keeps the pending pods that still exist (same name and UID): one gone meanwhile needs
// no eviction.
func present(pods, pending []corev1.Pod) []corev1.Pod {
	return slices.DeleteFunc(pending, func(q corev1.Pod) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == q.Name && p.UID == q.UID })
	})
}

// readyReplacements counts the ready, not terminating pods that were not evicted.
func readyReplacements(pods []corev1.Pod, evicted map[string]types.UID) int {
	n := 0
	for i := range pods {
		p := &pods[i]
		if uid, ok := evicted[p.Name]; ok && uid == p.UID {
			continue
		}
		if p.DeletionTimestamp == nil && podReady(p) {
			n++
		}
	}
	return n
}

// waitReplacements waits until the Deployment has want ready pods, none of them evicted, and
// records when (dr.ReplacementsReady). The Deployment is read too, as Settle does: its rollout
// is what makes the replacements.
func waitReplacements(ctx context.Context, t Target, want int, dr *check.Drain) error {
	var pods corev1.PodList
	var apiErr error
	err := wait.For(kube.Tolerant(func(ctx context.Context) (bool, error) {
		if _, _, err := kube.ReadWorkload(ctx, t.Client, t.workload()); err != nil {
			return false, err
		}
		if err := t.Client.Resources(t.Namespace).List(ctx, &pods, resources.WithLabelSelector(t.Selector)); err != nil {
			return false, err
		}
		return readyReplacements(pods.Items, nil) >= want, nil
	}, &apiErr), wait.WithContext(ctx), wait.WithTimeout(t.Timeout), wait.WithInterval(kube.PollInterval))
	if err = kube.WithLastError(err, apiErr); err != nil {
		return fmt.Errorf("drain-node: wait %s for %d ready pods of %s/%s after the drain: %w", t.Timeout, want, t.Namespace, t.Deployment, err)
	}
	dr.ReplacementsReady = time.Now()
	return nil
}
