package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/podsecurity"
	"github.com/rollcheck/rollcheck/loadgen"
)

const image = "rollcheck-app:t123"

// good is a valid row: drain with a delay, slow-ish requests, a native sleep preStop.
func good() Scenario {
	return Scenario{
		App: Sample{OnSIGTERM: ShutdownDrain, DrainDelay: 2 * time.Second, RequestDuration: 100 * time.Millisecond},
		Variant: check.Variant{Name: "good", Why: "because", PreStop: NativeSleep(5 * time.Second),
			TerminationGracePeriodSeconds: ptr.To[int64](30), Expect: check.Zero()},
		Disruption: check.Disruption{Kind: check.RolloutRestart},
		Load:       check.Load{KeepAlive: true},
	}
}

// planned plans s, validates the Plan, and returns it with its Deployment and load Service.
func planned(t *testing.T, s Scenario) (check.Plan, *appsv1.Deployment, *corev1.Service) {
	t.Helper()
	p, err := s.Plan("rollout", image)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	// The one warning a sample-app row may get: a preStop that outlasts the grace period.
	pre, _ := s.Variant.PreStop.Duration()
	outlasts := pre > time.Duration(*s.Variant.TerminationGracePeriodSeconds)*time.Second
	warnings, err := p.Validate()
	if err != nil || len(warnings) != map[bool]int{false: 0, true: 1}[outlasts] ||
		(outlasts && !strings.Contains(warnings[0], "is longer than terminationGracePeriodSeconds")) {
		t.Fatalf("Validate = %q, %v; want no error and a warning only for a preStop longer than the grace period", warnings, err)
	}
	objs, err := checktest.Resolve(t, p)[0].Objects("rc-"+s.Variant.Name, 30080)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	if len(objs) != 2 {
		t.Fatalf("Objects: %d, want the Deployment and the load Service", len(objs))
	}
	dep, ok := objs[0].(*appsv1.Deployment)
	svc, ok2 := objs[1].(*corev1.Service)
	if !ok || !ok2 {
		t.Fatalf("objects are %T and %T, want a Deployment and a Service", objs[0], objs[1])
	}
	return p, dep, svc
}

func TestRender(t *testing.T) {
	objs, err := Render("good", good().App, image)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Render = %d objects, %v; want the Deployment only (the engine makes the Service)", len(objs), err)
	}
	dep, ok := objs[0].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("the object is a %T, want *appsv1.Deployment", objs[0])
	}
	if dep.Name != AppName || dep.Namespace != "" || dep.Labels["rollcheck.io/scenario"] != "good" {
		t.Errorf("Deployment %q/%s labels %v, want no namespace, name %s, the row's label", dep.Namespace, dep.Name, dep.Labels, AppName)
	}
	ps := dep.Spec.Template.Spec
	if *dep.Spec.Replicas != 3 || *ps.TerminationGracePeriodSeconds != 30 || len(ps.Containers) != 1 {
		t.Fatalf("replicas %d, grace %d, %d containers; want the defaults 3, 30 and one container", *dep.Spec.Replicas, *ps.TerminationGracePeriodSeconds, len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Image != image || c.ImagePullPolicy != corev1.PullNever || c.ReadinessProbe == nil || c.Lifecycle != nil {
		t.Errorf("container %+v: want the image, pull policy Never, a readiness probe and no hook (the Variant sets it)", c)
	}
	for _, arg := range []string{"--shutdown=drain", "--drain-delay=2s", "--request-duration=100ms"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q lack %s", c.Args, arg)
		}
	}
	if _, err := Render("good", good().App, ""); err == nil {
		t.Error("Render without an image: no error")
	}
}

func TestPlan(t *testing.T) {
	s := good()
	s.Disruption.Count, s.Load.Rate, s.Quiet, s.Load.Method = 2, 50, 5*time.Second, "POST"
	s.Variant.Replicas = ptr.To[int32](4)
	p, dep, svc := planned(t, s)
	if p.Suite != "rollout" || p.Variant.Name != "good" || p.Disruption != s.Disruption || !reflect.DeepEqual(p.Load, s.Load) || p.Quiet != s.Quiet ||
		p.App.Deployment != AppName || p.App.Port != SampleAppPort || !slices.Equal(p.App.Images, []string{image}) {
		t.Errorf("Plan = %+v", p)
	}
	if p.App.OnSIGTERM != "drain+2s" || p.App.RequestDuration != 100*time.Millisecond || p.App.Path != "/" {
		t.Errorf("App = sigterm %q, request duration %s, path %q", p.App.OnSIGTERM, p.App.RequestDuration, p.App.Path)
	}
	// The Variant changes the rendered Deployment.
	if h := dep.Spec.Template.Spec.Containers[0].Lifecycle; h == nil || h.PreStop == nil || h.PreStop.Sleep == nil || h.PreStop.Sleep.Seconds != 5 {
		t.Errorf("preStop %+v, want the native sleep of 5 s", h)
	}
	if *dep.Spec.Replicas != 4 || *dep.Spec.Template.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("replicas %d, grace %d; want the variant's 4 and 30", *dep.Spec.Replicas, *dep.Spec.Template.Spec.TerminationGracePeriodSeconds)
	}
	if got := p.Applied().String(); got != "good: preStop=sleep:5s sigterm=drain+2s grace=30s req=100ms keepalive=on POST rollout-restart×2" {
		t.Errorf("Applied = %q", got)
	}
	if dep.Namespace != "rc-good" || svc.Namespace != dep.Namespace || svc.Spec.Type != corev1.ServiceTypeNodePort ||
		svc.Spec.Ports[0].NodePort != 30080 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(SampleAppPort) {
		t.Errorf("load Service %+v in %s, want nodePort 30080 to port %d in rc-good", svc.Spec, svc.Namespace, SampleAppPort)
	}
}

// The app's protocol goes to its PROTOCOL variable and into what the row says it ran.
func TestPlanProtocol(t *testing.T) {
	for _, proto := range []string{"h2c", "h2c-handler", "http2"} {
		s := good()
		s.App.Protocol = proto
		if proto == "http2" {
			s.Load.Protocol = loadgen.ProtocolHTTP2 // the only load that reaches a TLS app
		}
		p, dep, _ := planned(t, s)
		var env string
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "PROTOCOL" {
				env = e.Value
			}
		}
		if env != proto || p.App.OnSIGTERM != "drain+2s["+proto+"]" {
			t.Errorf("protocol %s: PROTOCOL=%q, OnSIGTERM %q", proto, env, p.App.OnSIGTERM)
		}
	}
	_, dep, _ := planned(t, good())
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "PROTOCOL" {
			t.Errorf("HTTP/1.1 row sets PROTOCOL=%q", e.Value)
		}
	}
	bad := good()
	bad.App.Protocol = "h3"
	if _, err := bad.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), `protocol "h3": want empty (HTTP/1.1), h2c, h2c-handler, http2 or grpc`) {
		t.Errorf("Plan with protocol h3: %v", err)
	}
	bad = good()
	bad.App.GracefulTimeout, bad.App.MaxConnectionAge = 5*time.Second, -time.Second
	_, err := bad.Plan("rollout", image)
	for _, want := range []string{"gracefulTimeout 5s only applies to protocol grpc", "maxConnectionAge -1s: want 0 to 5m"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Plan with gRPC settings over HTTP: %v, want %q", err, want)
		}
	}
}

// The app's warm-up becomes its READY_DELAY variable and goes into what the row says it ran; a
// row without one sets no variable, and one outside 0 to 1m is refused.
func TestPlanReadyDelay(t *testing.T) {
	s := good()
	s.App.ReadyDelay = 2 * time.Second
	p, dep, _ := planned(t, s)
	env := map[string]string{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["READY_DELAY"] != "2s" || p.App.ReadyDelay != 2*time.Second {
		t.Errorf("READY_DELAY=%q, App.ReadyDelay %s; want 2s", env["READY_DELAY"], p.App.ReadyDelay)
	}
	if got := p.Applied().String(); got != "good: preStop=sleep:5s sigterm=drain+2s grace=30s req=100ms readyDelay=2s keepalive=on rollout-restart×3" {
		t.Errorf("Applied = %q", got)
	}
	_, dep, _ = planned(t, good())
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "READY_DELAY" {
			t.Errorf("a row without a warm-up sets READY_DELAY=%q", e.Value)
		}
	}
	bad := good()
	bad.App.ReadyDelay = 2 * time.Minute
	if _, err := bad.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), "readyDelay 2m0s: want 0 to 1m") {
		t.Errorf("Plan with a warm-up of 2m: %v", err)
	}
}

// The grpc mode: its settings become the app's variables, gRPC on the load's port, the
// readiness probe on the admin port.
func TestPlanGRPC(t *testing.T) {
	s := good()
	s.App.Protocol, s.App.GracefulTimeout, s.App.MaxConnectionAge, s.App.MaxConnectionAgeGrace = "grpc", 5*time.Second, 30*time.Second, 10*time.Second
	p, dep, svc := planned(t, s)
	c := dep.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["PROTOCOL"] != "grpc" || env["GRACEFUL_TIMEOUT"] != "5s" || env["MAX_CONNECTION_AGE"] != "30s" || env["MAX_CONNECTION_AGE_GRACE"] != "10s" {
		t.Errorf("env %v", env)
	}
	if len(c.Ports) != 2 || c.Ports[0].ContainerPort != SampleAppPort || c.Ports[0].Name != "grpc" || c.ReadinessProbe.HTTPGet.Port != intstr.FromString("admin") {
		t.Errorf("ports %+v, probe %+v: want grpc on %d, the probe on admin", c.Ports, c.ReadinessProbe.HTTPGet, SampleAppPort)
	}
	if p.App.OnSIGTERM != "drain+2s[grpc,graceful=5s,age=30s+10s]" || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(SampleAppPort) {
		t.Errorf("OnSIGTERM %q, load Service %+v", p.App.OnSIGTERM, svc.Spec.Ports)
	}
}

// The http2 mode: the app serves only TLS on the load's port, so its readiness probe says
// HTTPS, and so does an httpGet preStop (the load's protocol http2 says the port is TLS); it
// takes no proxy sidecar (which forwards cleartext), and the pod still meets the restricted
// Pod Security Standard.
func TestPlanHTTP2(t *testing.T) {
	s := good()
	s.App.Protocol, s.Load.Protocol = "http2", loadgen.ProtocolHTTP2
	p, dep, svc := planned(t, s)
	c := dep.Spec.Template.Spec.Containers[0]
	probe := c.ReadinessProbe.HTTPGet
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != SampleAppPort || c.Ports[0].Name != "https" ||
		probe.Scheme != corev1.URISchemeHTTPS || probe.Port != intstr.FromString("https") || probe.Path != "/readyz" {
		t.Errorf("ports %+v, probe %+v: want one port %d named https, probed over HTTPS", c.Ports, probe, SampleAppPort)
	}
	if p.App.OnSIGTERM != "drain+2s[http2]" || p.Load.Protocol != loadgen.ProtocolHTTP2 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(SampleAppPort) {
		t.Errorf("OnSIGTERM %q, load protocol %q, load Service %+v", p.App.OnSIGTERM, p.Load.Protocol, svc.Spec.Ports)
	}
	if why, err := podsecurity.Restricted(dep.Spec.Template.ObjectMeta, dep.Spec.Template.Spec); err != nil || len(why) > 0 {
		t.Errorf("restricted Pod Security: %v %v", why, err)
	}

	hook := good()
	hook.App.Protocol, hook.Load.Protocol, hook.Variant.PreStop = "http2", loadgen.ProtocolHTTP2, HTTPSleep(5*time.Second)
	_, dep, _ = planned(t, hook)
	if h := dep.Spec.Template.Spec.Containers[0].Lifecycle.PreStop.HTTPGet; h == nil || h.Scheme != corev1.URISchemeHTTPS || h.Path != "/prestop?sleep=5s" {
		t.Errorf("httpGet preStop %+v, want /prestop?sleep=5s over HTTPS", h)
	}

	bad := good()
	bad.App.Protocol, bad.App.Proxy = "http2", &Proxy{}
	_, err := bad.Plan("rollout", image)
	for _, want := range []string{"protocol http2: the proxy sidecar forwards cleartext",
		`protocol http2: the app serves only TLS, which only load protocol http2 sends, straight to it (load protocol "", front false)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Plan of http2 with a proxy: %v, want %q", err, want)
		}
	}
}

// A bad row reports every problem at once, the sample app's and the model's, on one line.
func TestPlanRejects(t *testing.T) {
	bad := good()
	bad.App.OnSIGTERM, bad.App.RequestDuration = ShutdownExit, 2*time.Minute // and a drain delay that only drain takes
	bad.Variant.Name, bad.Load.Rate = "Bad Name", -1
	_, err := bad.Plan("rollout", image)
	for _, want := range []string{`scenario "Bad Name"`, "drainDelay 2s only applies to onSIGTERM drain, not exit", "requestDuration 2m0s: want 0 to 1m",
		`variant name "Bad Name"`, "load rate -1 req/s"} {
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Plan of a bad row: %v; want one line with %q", err, want)
		}
	}
	bad = good()
	bad.App.OnSIGTERM = "panic"
	if _, err := bad.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), `onSIGTERM "panic": want exit, drain or ignore`) {
		t.Errorf("Plan with an unknown shutdown mode: %v", err)
	}
	if _, err := good().Plan("rollout", ""); err == nil || !strings.Contains(err.Error(), "no sample app image") {
		t.Errorf("Plan without an image: %v, want an error", err)
	}
	if _, err := good().Plan("", image); err == nil || !strings.Contains(err.Error(), "suite: empty") {
		t.Errorf("Plan without a suite: %v, want the model's check", err)
	}
	// The model bounds the whole load, which 3 rollouts with the longest grace period exceed.
	long := good()
	long.Variant.TerminationGracePeriodSeconds = ptr.To[int64](600)
	if _, err := long.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), "longer than the load may run") {
		t.Errorf("Plan of a row longer than the load may run: %v, want the model's check", err)
	}
}

// Every shape of row the matrix can build, over every dimension of a Scenario, gives a Plan
// that validates, with the preStop the row asks for on the app container.
func TestPlanEveryShape(t *testing.T) {
	preStops := map[string]*check.PreStop{"none": nil, "exec": ExecSleep(5 * time.Second),
		"sleep": NativeSleep(5 * time.Second), "http": HTTPSleep(5 * time.Second)}
	n := 0
	for _, preName := range []string{"none", "exec", "sleep", "http"} {
		for _, sig := range []Shutdown{ShutdownExit, ShutdownDrain, ShutdownIgnore} {
			for _, d := range check.DisruptionKinds {
				for _, ka := range []check.Load{{}, {KeepAlive: true}, {KeepAlive: true, Method: "POST"}} {
					for _, shape := range []struct {
						grace   int64
						req     time.Duration
						replica int32
					}{{30, 0, 3}, {3, 5 * time.Second, 2}, {0, 200 * time.Millisecond, 1}} {
						if d == check.ScaleDown && shape.replica < 2 {
							continue // the model rejects it
						}
						if d == check.KubeletRestart && shape.grace <= 5 {
							continue // the model rejects it: the restart comes 3 s into the termination
						}
						s := Scenario{App: Sample{OnSIGTERM: sig, RequestDuration: shape.req},
							Variant: check.Variant{Name: fmt.Sprintf("row-%d", n), PreStop: preStops[preName],
								TerminationGracePeriodSeconds: ptr.To(shape.grace), Replicas: ptr.To(shape.replica),
								Expect: check.Failures(loadgen.ClassReset)},
							Disruption: check.Disruption{Kind: d}, Load: ka}
						if s.Variant.PreStop == nil {
							s.Variant.PreStop = &check.PreStop{None: true}
						}
						if preName == "sleep" && time.Duration(shape.grace)*time.Second <= 5*time.Second {
							continue // the model refuses a native sleep not shorter than the grace period, as the API server does
						}
						if sig == ShutdownDrain {
							s.App.DrainDelay = time.Second
						}
						n++
						t.Run(s.Variant.Name, func(t *testing.T) {
							_, dep, _ := planned(t, s)
							var h *corev1.LifecycleHandler
							if l := dep.Spec.Template.Spec.Containers[0].Lifecycle; l != nil {
								h = l.PreStop
							}
							ok := map[string]bool{"none": h == nil,
								"exec":  h != nil && h.Exec != nil && slices.Equal(h.Exec.Command, []string{"/app", "sleep", "5s"}),
								"sleep": h != nil && h.Sleep != nil && h.Sleep.Seconds == 5,
								"http":  h != nil && h.HTTPGet != nil && h.HTTPGet.Path == "/prestop?sleep=5s" && h.HTTPGet.Port == intstr.FromInt32(SampleAppPort),
							}[preName]
							if !ok {
								t.Errorf("preStop %s: the Deployment's hook is %+v", preName, h)
							}
						})
					}
				}
			}
		}
	}
	// 4 preStops × 3 SIGTERM modes × 7 disruptions × 3 client modes × 3 shapes, less the
	// 4 × 3 × 3 scale-downs of one replica, less the 4 × 3 × 3 × 2 kubelet restarts with a grace
	// period of 3 s or 0 s, less the native sleeps of 5 s with such a grace period (3 × 7 × 3 × 2,
	// of which the 3 × 3 scale-downs and the 3 × 3 × 2 kubelet restarts are already out).
	if want := 4*3*7*3*3 - 4*3*3 - 4*3*3*2 - (3*7*3*2 - 3*3 - 3*3*2); n != want {
		t.Errorf("%d shapes, want the whole product, %d", n, want)
	}
}

// A Sample with a Proxy renders the proxy in front of the app, classic or native, and the Plan
// names the app's container: the Variant's preStop goes to the app, the proxy declares the port.
func TestPlanProxy(t *testing.T) {
	for _, native := range []bool{false, true} {
		s := good()
		s.App.Proxy = &Proxy{Native: native, PreStop: 3 * time.Second}
		p, dep, _ := planned(t, s)
		spec := dep.Spec.Template.Spec
		var proxy *corev1.Container
		if native {
			if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
				t.Fatalf("native: %d init containers, %d containers", len(spec.InitContainers), len(spec.Containers))
			}
			proxy = &spec.InitContainers[0]
			if proxy.RestartPolicy == nil || *proxy.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Errorf("native proxy restartPolicy %v", proxy.RestartPolicy)
			}
		} else {
			if len(spec.InitContainers) != 0 || len(spec.Containers) != 2 {
				t.Fatalf("classic: %d init containers, %d containers", len(spec.InitContainers), len(spec.Containers))
			}
			proxy = &spec.Containers[1]
		}
		if proxy.Name != ProxyContainer || proxy.Ports[0].ContainerPort != SampleAppPort || !slices.Contains(proxy.Args, "--proxy-to=http://127.0.0.1:8081") ||
			proxy.Lifecycle == nil || proxy.Lifecycle.PreStop.HTTPGet == nil || proxy.Lifecycle.PreStop.HTTPGet.Path != "/prestop?sleep=3s" {
			t.Errorf("proxy %+v", proxy)
		}
		app := spec.Containers[0]
		if app.Name != AppContainer || !slices.Contains(app.Args, "--listen=:8081") || app.Lifecycle == nil || app.Lifecycle.PreStop.Sleep.Seconds != 5 {
			t.Errorf("app %+v", app)
		}
		if r := checktest.Resolve(t, p)[0]; r.AppContainer() != AppContainer || r.FrontContainer() != ProxyContainer {
			t.Errorf("app %q, front %q", r.AppContainer(), r.FrontContainer())
		}
		kind := "classic"
		if native {
			kind = "native"
		}
		if got := p.Applied().Shape(); !strings.Contains(got, "preStop=sleep:5s ") || !strings.Contains(got, " sidecar=proxy("+kind+",front,preStop=httpGet:/prestop?sleep=3s)") {
			t.Errorf("shape %q", got)
		}
	}
	quiet := good()
	quiet.App.Proxy = &Proxy{Quiet: true}
	_, dep, _ := planned(t, quiet)
	for _, c := range dep.Spec.Template.Spec.Containers {
		if lines := slices.Contains(c.Args, "--lines=false"); lines != (c.Name == ProxyContainer) {
			t.Errorf("quiet proxy: container %s args %v", c.Name, c.Args)
		}
	}
	bad := good()
	bad.App.Proxy = &Proxy{PreStop: 1500 * time.Millisecond}
	if _, err := bad.Plan("rollout", image); err == nil || !strings.Contains(err.Error(), "proxy preStop 1.5s: want whole seconds") {
		t.Errorf("bad proxy preStop: %v", err)
	}
}
