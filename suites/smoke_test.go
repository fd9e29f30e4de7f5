//go:build e2e

package suites_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/klient/wait"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
	"github.com/rollcheck/rollcheck/rctest"
)

// smokeApp is a well-behaved configuration: native sleep preStop, drain on SIGTERM.
var smokeApp = scenario.Scenario{
	App:        scenario.Sample{OnSIGTERM: scenario.ShutdownDrain},
	Variant:    check.Variant{Name: "smoke", PreStop: scenario.NativeSleep(2 * time.Second), Expect: check.Zero()},
	Disruption: check.Disruption{Kind: check.RolloutRestart},
}

var _ = Describe("a kind cluster with the sample app", Ordered, Serial, Label("smoke"), func() {
	var ns, url string

	BeforeAll(func(ctx SpecContext) {
		c := kc.Client()
		var err error
		ns, err = kube.CreateNamespace(ctx, c, "smoke", map[string]string{check.PartOfLabel: check.PartOfValue})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			Expect(kube.TeardownNamespace(ctx, c, ns)).To(Succeed())
			Expect(kc.Target.Cluster.(engine.Resetter).Reset(ctx)).To(Succeed())
		}, NodeTimeout(3*time.Minute))
		// The sample app as the smoke Variant changes it, with rollcheck's load Service on the
		// NodePort, applied by hand: what the engine does, step by step.
		p, err := smokeApp.Plan("smoke", apps[""])
		Expect(err).NotTo(HaveOccurred())
		r, err := p.Resolve()
		Expect(err).NotTo(HaveOccurred())
		objs, err := r.Objects(ns, kc.Target.NodePort)
		Expect(err).NotTo(HaveOccurred())
		kobjs := make([]k8s.Object, len(objs))
		for i, o := range objs {
			kobjs[i] = o
		}
		Expect(kube.Apply(ctx, c, kobjs...)).To(Succeed())
		Expect(kube.WaitRollout(ctx, c, ns, scenario.AppName, 3*time.Minute)).To(Succeed())
		url = kc.Target.LoadURL + "/"
		rctest.Logf("sample app deployed in %s", ns)
	}, NodeTimeout(5*time.Minute))

	It("runs 3 ready replicas", func(ctx SpecContext) {
		var pods corev1.PodList
		Expect(kc.Client().Resources(ns).List(ctx, &pods, resources.WithLabelSelector("app=app"))).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		for _, p := range pods.Items {
			Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
		}
	}, SpecTimeout(time.Minute))

	It("answers 200 on 127.0.0.1 through the NodePort kind maps, from every replica", func(ctx SpecContext) {
		rctest.Logf("first smoke request to %s", url)
		waitAllReplicas(ctx, url, 3)
		rctest.Logf("the NodePort answers from all 3 replicas")
		res := runLoad(ctx, loadgen.Config{Target: url, Rate: 50, Duration: 3 * time.Second, KeepAlive: false})
		Expect(res.Totals.Failed).To(BeZero(), res.String())
		Expect(res.Totals.OK).To(BeNumerically(">=", 140), res.String())
		pods := sets.New[string]()
		for _, r := range res.Requests {
			pods.Insert(r.Pod)
		}
		Expect(pods.UnsortedList()).To(HaveLen(3), "responding pods: %v", sets.List(pods))
	}, SpecTimeout(time.Minute))

	It("keeps the native sleep preStop action (GA in Kubernetes 1.34)", func(ctx SpecContext) {
		var d appsv1.Deployment
		Expect(kc.Client().Resources(ns).Get(ctx, scenario.AppName, ns, &d)).To(Succeed())
		lc := d.Spec.Template.Spec.Containers[0].Lifecycle
		Expect(lc).NotTo(BeNil(), "the API server dropped the lifecycle block")
		Expect(lc.PreStop).NotTo(BeNil())
		Expect(lc.PreStop.Sleep).NotTo(BeNil(), "the API server dropped the sleep action")
		Expect(lc.PreStop.Sleep.Seconds).To(BeEquivalentTo(2))
	}, SpecTimeout(30*time.Second))

	It("completes a rollout restart: every pod replaced, all ready", func(ctx SpecContext) {
		before := podNames(ctx, ns)
		t := disrupt.Target{Client: kc.Client(), Namespace: ns, Deployment: scenario.AppName, Selector: "app=app", Logf: rctest.Logf}
		_, err := disrupt.Once(ctx, t, disrupt.RolloutRestart)
		Expect(err).NotTo(HaveOccurred())
		after := podNames(ctx, ns)
		Expect(after).To(HaveLen(3))
		Expect(after.Intersection(before).UnsortedList()).To(BeEmpty(), "pods that survived the restart")
		res := runLoad(ctx, loadgen.Config{Target: url, Rate: 20, Duration: time.Second})
		Expect(res.Totals.Failed).To(BeZero(), res.String())
	}, SpecTimeout(3*time.Minute))

	It("never pulls an image from outside the machine (offline node image)", Label("offline"), func(ctx SpecContext) {
		if kc.Target.Versions.ImageSource != cluster.SourceOffline {
			Skip("kind's upstream node image pulls from its registries by design; this check is for the offline image")
		}
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = "nopull", ns
		pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.k8s.io/rollcheck-does-not-exist:v1"}}
		Expect(kc.Client().Resources(ns).Create(ctx, pod)).To(Succeed())
		var msg string
		err := wait.For(func(ctx context.Context) (bool, error) {
			var evs corev1.EventList
			if err := kc.Client().Resources(ns).List(ctx, &evs, resources.WithFieldSelector("involvedObject.name=nopull")); err != nil {
				return false, err
			}
			for _, e := range evs.Items {
				if e.Reason == "Failed" && strings.Contains(e.Message, "rollcheck-does-not-exist") {
					msg = e.Message
					return true, nil
				}
			}
			return false, nil
		}, wait.WithContext(ctx), wait.WithTimeout(time.Minute), wait.WithInterval(time.Second))
		Expect(err).NotTo(HaveOccurred(), "no pull failure event for the missing image")
		rctest.Logf("pull of a missing image failed with: %s", msg)
		Expect(msg).To(ContainSubstring("127.0.0.1:9"), "the pull went somewhere other than the dead loopback endpoint")
	}, SpecTimeout(90*time.Second))
})

func runLoad(ctx context.Context, cfg loadgen.Config) *loadgen.Result {
	GinkgoHelper()
	a, err := attack.Start(ctx, cfg)
	Expect(err).NotTo(HaveOccurred())
	res, err := a.Wait()
	Expect(err).NotTo(HaveOccurred())
	rctest.Logf("load: %s", res)
	return res
}

func podNames(ctx context.Context, ns string) sets.Set[string] {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(kc.Client().Resources(ns).List(ctx, &pods, resources.WithLabelSelector("app=app"))).To(Succeed())
	names := sets.New[string]()
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			names.Insert(p.Name)
		}
	}
	return names
}

// waitAllReplicas waits until the NodePort answers from every replica with no failure.
func waitAllReplicas(ctx context.Context, url string, replicas int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		res := runLoad(ctx, loadgen.Config{Target: url, Rate: 20, Duration: time.Second})
		pods := sets.New[string]()
		for _, r := range res.Requests {
			pods.Insert(r.Pod)
		}
		g.Expect(res.Totals.Failed).To(BeZero(), res.String())
		g.Expect(pods.Len()).To(Equal(replicas), "responding pods: %v", sets.List(pods))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
}
