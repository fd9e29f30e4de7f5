package disrupt

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/kube/kubefake"
)

func TestMain(m *testing.M) {
	kube.PollInterval = time.Millisecond
	ForcedStopWait = time.Millisecond
	DrainRetry = time.Millisecond
	os.Exit(m.Run())
}

var appLabels = map[string]string{"app": "web"}

// settled returns a fake cluster with Deployment ns/web of n replicas whose pods are up, and
// its Target; the simulated controller acts on the third Get that sees a change.
func settled(t *testing.T, n int32, extra ...client.Object) (*kubefake.Cluster, Target) {
	t.Helper()
	d := kubefake.Deployment("ns", "web", n, appLabels)
	c := kubefake.NewCluster(t, interceptor.Funcs{}, append(extra, d)...)
	if err := c.Reconcile(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	c.Lag = 3
	return c, Target{Client: c.Client, Namespace: "ns", Deployment: "web", Selector: "app=web", Timeout: 5 * time.Second, Logf: t.Logf}
}

func podNames(t *testing.T, c *kubefake.Cluster) []string {
	t.Helper()
	var pods corev1.PodList
	if err := c.Fake.List(context.Background(), &pods, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

func getDeployment(t *testing.T, c *kubefake.Cluster) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Fake.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestRolloutRestartReplacesEveryPod(t *testing.T) {
	c, target := settled(t, 3)
	old := podNames(t, c)
	pod, err := Once(context.Background(), target, RolloutRestart)
	if err != nil || pod != "" {
		t.Fatalf("Once = %q, %v", pod, err)
	}
	d := getDeployment(t, c)
	if _, err := time.Parse(time.RFC3339Nano, d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"]); err != nil {
		t.Errorf("template annotations %v: %v", d.Spec.Template.Annotations, err)
	}
	now := podNames(t, c)
	if len(now) != 3 || slices.ContainsFunc(now, func(n string) bool { return slices.Contains(old, n) }) {
		t.Errorf("pods %v after the restart, want 3 new ones (old: %v): it returned before the rollout", now, old)
	}
	if len(c.Deletions()) != 0 {
		t.Errorf("deleted %v: a restart deletes nothing itself", c.Deletions())
	}
}

func TestDeletePicksTheFirstReadyPodAndItsGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		kind  Kind
		grace string
	}{
		{DeletePod, "unset"}, // the pod's own grace period
		{ForceDelete, "0"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			c, target := settled(t, 2)
			first := podNames(t, c)[0]
			pod, err := Once(context.Background(), target, tc.kind)
			if err != nil || pod != first {
				t.Fatalf("Once = %q, %v, want %q", pod, err, first)
			}
			dels := c.Deletions()
			if len(dels) != 1 || dels[0].Name != first || dels[0].Namespace != "ns" {
				t.Fatalf("deletions %+v, want one of ns/%s", dels, first)
			}
			grace := "unset"
			if g := dels[0].GracePeriod; g != nil {
				grace = fmt.Sprint(*g)
			}
			if grace != tc.grace {
				t.Errorf("grace period %s, want %s", grace, tc.grace)
			}
			if now := podNames(t, c); len(now) != 2 || strings.Contains(strings.Join(now, " "), first) {
				t.Errorf("pods %v, want 2 without %s: it returned before the replacement", now, first)
			}
		})
	}
}

// The pod deleted is the one ready the longest, not a replacement that just turned ready (which
// the data plane may not route to yet), whatever the names say.
func TestPickPodPicksThePodReadyTheLongest(t *testing.T) {
	now := time.Now()
	old := kubefake.ReadyPod("ns", "web-z", appLabels)
	old.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-time.Minute)}
	fresh := kubefake.ReadyPod("ns", "web-a", appLabels)
	fresh.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-500 * time.Millisecond)}
	c := kubefake.NewCluster(t, interceptor.Funcs{}, fresh, old)
	if p, err := pickPod(context.Background(), Target{Client: c.Client, Namespace: "ns", Selector: "app=web"}); err != nil || p.Name != "web-z" {
		t.Errorf("pickPod = %v, %v, want web-z (ready a minute ago), not the replacement web-a (ready 500 ms ago)", p, err)
	}
}

func TestPickPodSkipsUnreadyAndTerminatingPods(t *testing.T) {
	unready := kubefake.ReadyPod("ns", "web-a", appLabels)
	unready.Status.Conditions[0].Status = corev1.ConditionFalse
	noCondition := kubefake.ReadyPod("ns", "web-b", appLabels)
	noCondition.Status.Conditions = nil
	terminating := kubefake.ReadyPod("ns", "web-c", appLabels)
	terminating.Finalizers = []string{"test"}
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	objs := []client.Object{kubefake.ReadyPod("ns", "web-e", appLabels), unready, noCondition, terminating,
		kubefake.ReadyPod("ns", "web-d", appLabels), kubefake.ReadyPod("ns", "db-0", map[string]string{"app": "db"})}
	c := kubefake.NewCluster(t, interceptor.Funcs{}, objs...)
	target := Target{Client: c.Client, Namespace: "ns", Selector: "app=web"}
	if p, err := pickPod(context.Background(), target); err != nil || p.Name != "web-d" {
		t.Errorf("pickPod = %v, %v, want web-d", p, err)
	}
	target.Selector = "app=none"
	if _, err := pickPod(context.Background(), target); err == nil || err.Error() != "no ready pod app=none in ns to delete" {
		t.Errorf("pickPod with no pod: %v", err)
	}
}

func TestScaleDownGoesDownThenBackUp(t *testing.T) {
	c, target := settled(t, 3)
	if _, err := Once(context.Background(), target, ScaleDown); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Patches() {
		got = append(got, fmt.Sprintf("%s with %d pods", p.Data, p.PodsBefore))
	}
	// The second patch finds 2 pods: the scale-down settled before the scale-up.
	want := `{"spec":{"replicas":2}} with 3 pods; {"spec":{"replicas":3}} with 2 pods`
	if strings.Join(got, "; ") != want {
		t.Errorf("patches %q, want %q", strings.Join(got, "; "), want)
	}
	if d := getDeployment(t, c); *d.Spec.Replicas != 3 || len(podNames(t, c)) != 3 {
		t.Errorf("%d replicas, %d pods after, want 3 and 3", *d.Spec.Replicas, len(podNames(t, c)))
	}
}

// Scale to zero waits until no pod is left before it scales back.
func TestScaleToZeroEmptiesThenScalesBack(t *testing.T) {
	c, target := settled(t, 3)
	if _, err := Once(context.Background(), target, ScaleToZero); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Patches() {
		got = append(got, fmt.Sprintf("%s with %d pods", p.Data, p.PodsBefore))
	}
	want := `{"spec":{"replicas":0}} with 3 pods; {"spec":{"replicas":3}} with 0 pods`
	if strings.Join(got, "; ") != want {
		t.Errorf("patches %q, want %q", strings.Join(got, "; "), want)
	}
	if d := getDeployment(t, c); *d.Spec.Replicas != 3 || len(podNames(t, c)) != 3 {
		t.Errorf("%d replicas, %d pods after, want 3 and 3", *d.Spec.Replicas, len(podNames(t, c)))
	}
}

func TestOnceRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int32
		kind     Kind
		target   func(*Target)
		want     string
	}{
		{"scale down one replica", 1, ScaleDown, nil, "scale down ns/web: 1 replica(s), need at least 2"},
		{"scale down a missing Deployment", 2, ScaleDown, func(t *Target) { t.Deployment = "gone" }, `scale down ns/gone: deployments.apps "gone" not found`},
		{"restart a missing Deployment", 2, RolloutRestart, func(t *Target) { t.Deployment = "gone" }, `rollout restart ns/gone: deployments.apps "gone" not found`},
		{"delete with no pod", 2, DeletePod, func(t *Target) { t.Selector = "app=none" }, "no ready pod app=none in ns to delete"},
		{"unknown kind", 2, "drain", nil, `unknown disruption "drain"`},
		{"restart a ReplicaSet checked as it runs", 2, RolloutRestart, func(t *Target) { t.Kind = kube.KindReplicaSet },
			"rollout-restart on ReplicaSet ns/web: a ReplicaSet checked as it runs is disrupted only by pod deletions"},
		{"scale a ReplicaSet checked as it runs", 2, ScaleDown, func(t *Target) { t.Kind = kube.KindReplicaSet },
			"scale-down on ReplicaSet ns/web: a ReplicaSet checked as it runs is disrupted only by pod deletions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, target := settled(t, tc.replicas)
			if tc.target != nil {
				tc.target(&target)
			}
			if _, err := Once(context.Background(), target, tc.kind); err == nil || err.Error() != tc.want {
				t.Errorf("Once = %v, want %q", err, tc.want)
			}
			if len(c.Patches())+len(c.Deletions()) != 0 {
				t.Errorf("it changed something: patches %v, deletions %v", c.Patches(), c.Deletions())
			}
		})
	}
}

func TestSettleTimesOutNamingTheTerminatingPod(t *testing.T) {
	stuck := kubefake.ReadyPod("ns", "web-old", appLabels)
	stuck.Finalizers = []string{"test"}
	stuck.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	_, target := settled(t, 1, stuck)
	target.Timeout = 30 * time.Millisecond
	err := Settle(context.Background(), target)
	if err == nil || !strings.Contains(err.Error(), "wait 30ms for ns/web to settle with no terminating pod (pods: web-") ||
		!strings.Contains(err.Error(), ", web-old (terminating)): context deadline exceeded") {
		t.Errorf("Settle = %v", err)
	}
}

func TestSettleTimesOutInTheRollout(t *testing.T) {
	c, target := settled(t, 2)
	c.Lag = 1 << 30
	target.Timeout = 30 * time.Millisecond
	_, err := Once(context.Background(), target, RolloutRestart)
	if err == nil || !strings.Contains(err.Error(), "wait 30ms for rollout of ns/web (generation 2 observed 1,") {
		t.Errorf("Once = %v", err)
	}
}

func TestRepeat(t *testing.T) {
	c, target := settled(t, 2)
	var calls []string
	note := func(when string) func(Record) {
		return func(r Record) { calls = append(calls, fmt.Sprintf("%s %s %d %q", when, r.Kind, r.N, r.Pod)) }
	}
	recs, err := Repeat(context.Background(), target, ForceDelete, 2, note("before"), note("after"))
	if err != nil || len(recs) != 2 {
		t.Fatalf("Repeat = %v, %v", recs, err)
	}
	dels := c.Deletions()
	want := fmt.Sprintf(`before force-delete 1 ""; after force-delete 1 %q; before force-delete 2 ""; after force-delete 2 %q`, dels[0].Name, dels[1].Name)
	if strings.Join(calls, "; ") != want {
		t.Errorf("calls %q, want %q", strings.Join(calls, "; "), want)
	}
	for i, r := range recs {
		if r.N != i+1 || r.Pod != dels[i].Name || r.Settled.Before(r.Started) || (i > 0 && r.Started.Before(recs[i-1].Settled)) {
			t.Errorf("record %d: %+v", i, r)
		}
	}

	target.Selector = "app=none"
	recs, err = Repeat(context.Background(), target, DeletePod, 3, nil, nil)
	if len(recs) != 0 || err == nil || err.Error() != "delete-pod 1 of 3: no ready pod app=none in ns to delete" {
		t.Errorf("Repeat with no pod = %v, %v", recs, err)
	}
}

// Every kind of check's table has its runner, and no runner is for a kind the table lacks.
func TestEveryKindHasARunner(t *testing.T) {
	for _, k := range check.DisruptionKinds {
		if runners[k] == nil {
			t.Errorf("%s: no runner: add one to runners in internal/disrupt/disrupt.go", k)
		}
	}
	for k := range runners {
		if !slices.Contains(check.DisruptionKinds, k) {
			t.Errorf("runner for %s, which check.Disruptions does not hold: add its entry there", k)
		}
	}
}
