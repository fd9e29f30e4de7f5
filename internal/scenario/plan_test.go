package scenario

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
)

// planned returns the Plan of s and the Deployment and load Service the engine would apply
// for it, after checking what every Plan of the sample app must hold.
func planned(t *testing.T, s Scenario) (check.Plan, *appsv1.Deployment, *corev1.Service) {
	t.Helper()
	p, err := s.Plan("rollout", image)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	// The one warning a sample-app row may get: a preStop that outlasts the grace period.
	outlasts := s.PreStop != PreStopNone && s.PreStop != "" && int64(s.PreStopSeconds) > s.GraceSeconds
	warnings, err := p.Validate()
	if err != nil || len(warnings) != map[bool]int{false: 0, true: 1}[outlasts] ||
		(outlasts && !strings.Contains(warnings[0], "is longer than terminationGracePeriodSeconds")) {
		t.Fatalf("Validate = %q, %v; want no error and a warning only for a preStop longer than the grace period", warnings, err)
	}
	if p.Suite != "rollout" || p.Variant.Name != s.Name || p.App.Deployment != AppName || p.App.Port != SampleAppPort ||
		len(p.App.Images) != 1 || p.App.Images[0] != image || len(p.App.Objects) != 1 {
		t.Errorf("Plan = suite %q, variant %q, app %+v", p.Suite, p.Variant.Name, p.App)
	}
	objs, err := p.Objects("rc-"+s.Name, 30080)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	if len(objs) != 2 {
		t.Fatalf("Objects: %d, want the Deployment and the load Service", len(objs))
	}
	dep, ok := objs[0].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("first object is a %T, want *appsv1.Deployment", objs[0])
	}
	svc, ok := objs[1].(*corev1.Service)
	if !ok {
		t.Fatalf("second object is a %T, want *corev1.Service", objs[1])
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.ImagePullPolicy != corev1.PullNever {
			t.Errorf("container %s: imagePullPolicy %q, want Never: the image is loaded into kind, not pulled", c.Name, c.ImagePullPolicy)
		}
	}
	return p, dep, svc
}

func TestPlan(t *testing.T) {
	s := good()
	s.Count, s.Rate, s.Settle, s.Method = 2, 50, 5*time.Second, "POST"
	s.Expect = AtMost(0.01).WithMinSuccessRatioPerDisruption(0.95)
	p, dep, svc := planned(t, s)
	want := check.Plan{Suite: "rollout", Variant: check.Variant{Name: s.Name, Why: s.Why, Expect: s.Expect},
		Disruption: check.Disruption{Kind: RolloutRestart, Count: 2},
		Load:       check.Load{Rate: 50, Method: "POST", KeepAlive: true}, Settle: 5 * time.Second}
	if p.Variant.Name != want.Variant.Name || p.Variant.Why != want.Variant.Why || p.Variant.Expect.String() != want.Variant.Expect.String() ||
		p.Disruption != want.Disruption || p.Load != want.Load || p.Settle != want.Settle {
		t.Errorf("Plan = %+v\n want %+v", p, want)
	}
	// The Scenario is its own variant: the manifest already holds the shutdown configuration.
	if v := p.Variant; v.PreStop != nil || v.TerminationGracePeriodSeconds != nil || v.Replicas != nil || v.Patch != nil {
		t.Errorf("Variant changes the rendered Deployment: %+v", v)
	}
	if p.App.OnSIGTERM != "drain+2s" || p.App.RequestDuration != 100*time.Millisecond || p.App.Path != "/" {
		t.Errorf("App = sigterm %q, request duration %s, path %q", p.App.OnSIGTERM, p.App.RequestDuration, p.App.Path)
	}
	if h := dep.Spec.Template.Spec.Containers[0].Lifecycle; h == nil || h.PreStop == nil || h.PreStop.Sleep == nil || h.PreStop.Sleep.Seconds != 5 {
		t.Errorf("preStop %+v, want the native sleep of 5 s", h)
	}
	if dep.Namespace != "rc-"+s.Name || svc.Namespace != dep.Namespace {
		t.Errorf("namespaces %q and %q, want rc-%s", dep.Namespace, svc.Namespace, s.Name)
	}
	// The load Service (the engine's now) selects the pods on the app's port, on the NodePort.
	if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 30080 ||
		svc.Spec.Ports[0].TargetPort != intstr.FromInt32(SampleAppPort) {
		t.Errorf("load Service %+v, want nodePort 30080 to port %d", svc.Spec, SampleAppPort)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("load Service has no selector")
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("load Service selector %s=%s does not select the pods %v", k, v, dep.Spec.Template.Labels)
		}
	}
}

func TestPlanRejects(t *testing.T) {
	bad := good()
	bad.Rate = -1
	if _, err := bad.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), "rate -1 req/s") {
		t.Errorf("Plan of an invalid scenario: %v, want the validation error", err)
	}
	if _, err := good().Plan("rollout", ""); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Errorf("Plan without an image: %v, want an error", err)
	}
	if _, err := good().Plan("", image); err == nil || !strings.Contains(err.Error(), "suite: empty") {
		t.Errorf("Plan without a suite: %v, want the engine's check", err)
	}
	// Validate bounds each field; the engine also bounds the whole load, which 3 rollouts with
	// the longest grace period exceed.
	long := good()
	long.GraceSeconds = 600
	if _, err := long.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), "longer than the load may run") {
		t.Errorf("Plan of a row longer than the load may run: %v, want the engine's check", err)
	}
}

// Every shape of row the matrix can build, over every dimension of a Scenario, gives a Plan
// that checks, whose Deployment pulls nothing and carries the preStop asked for.
func TestPlanEveryShape(t *testing.T) {
	n := 0
	for _, pre := range []PreStopAction{PreStopNone, PreStopExec, PreStopSleep, PreStopHTTP} {
		for _, sig := range []Shutdown{ShutdownExit, ShutdownDrain, ShutdownIgnore} {
			for _, d := range check.DisruptionKinds {
				for _, ka := range []struct {
					on     bool
					method string
				}{{false, "GET"}, {true, "GET"}, {true, "POST"}} {
					for _, shape := range []struct {
						grace   int64
						req     time.Duration
						replica int
					}{{30, 0, 3}, {3, 5 * time.Second, 2}, {0, 200 * time.Millisecond, 1}} {
						if d == ScaleDown && shape.replica < 2 {
							continue // Validate rejects it
						}
						s := Scenario{Name: fmt.Sprintf("row-%d", n), PreStop: pre, OnSIGTERM: sig, GraceSeconds: shape.grace,
							RequestDuration: shape.req, KeepAlive: ka.on, Method: ka.method, Disruption: d, Replicas: shape.replica,
							Expect: Failures(loadgen.ClassReset)}
						if pre != PreStopNone {
							s.PreStopSeconds = 5
						}
						if sig == ShutdownDrain {
							s.DrainDelay = time.Second
						}
						n++
						t.Run(s.WithDefaults().String(), func(t *testing.T) {
							_, dep, _ := planned(t, s)
							checkPreStop(t, pre, dep)
						})
					}
				}
			}
		}
	}
	// 4 preStops × 3 SIGTERM modes × 4 disruptions × 3 client modes × 3 shapes, less the
	// 4 × 3 × 3 scale-downs of one replica.
	if want := 4*3*4*3*3 - 4*3*3; n != want {
		t.Errorf("%d shapes, want the whole product, %d", n, want)
	}
}

// checkPreStop checks that the app container's preStop is the one pre asks for.
func checkPreStop(t *testing.T, pre PreStopAction, dep *appsv1.Deployment) {
	t.Helper()
	c := dep.Spec.Template.Spec.Containers[0]
	var h *corev1.LifecycleHandler
	if c.Lifecycle != nil {
		h = c.Lifecycle.PreStop
	}
	ok := false
	switch pre {
	case PreStopNone:
		ok = h == nil
	case PreStopExec:
		ok = h != nil && h.Exec != nil && h.Sleep == nil && h.HTTPGet == nil
	case PreStopSleep:
		ok = h != nil && h.Sleep != nil && h.Sleep.Seconds == 5 && h.Exec == nil && h.HTTPGet == nil
	case PreStopHTTP:
		ok = h != nil && h.HTTPGet != nil && h.Exec == nil && h.Sleep == nil
	}
	if !ok {
		t.Errorf("preStop %s: the Deployment's hook is %+v", pre, h)
	}
}
