package scenario

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const image = "rollcheck-app:t123"

// render renders s with image and returns its Deployment, the only object.
func render(t *testing.T, s Scenario) *appsv1.Deployment {
	t.Helper()
	objs, err := Render(s, image)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if len(objs) != 1 {
		t.Fatalf("Render: %d objects, want the Deployment only (the engine makes the Service)", len(objs))
	}
	dep, ok := objs[0].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("the object is a %T, want *appsv1.Deployment", objs[0])
	}
	return dep
}

func TestRenderDeployment(t *testing.T) {
	s := good()
	s.Replicas = 4
	dep := render(t, s)

	// The engine puts it into the row's namespace.
	if dep.Name != AppName || dep.Namespace != "" {
		t.Errorf("Deployment %q/%s, want no namespace and name %s", dep.Namespace, dep.Name, AppName)
	}
	if dep.Labels["rollcheck.io/scenario"] != s.Name {
		t.Errorf("scenario label %q, want %q", dep.Labels["rollcheck.io/scenario"], s.Name)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 4 {
		t.Errorf("replicas %v, want 4", dep.Spec.Replicas)
	}
	ps := dep.Spec.Template.Spec
	if ps.TerminationGracePeriodSeconds == nil || *ps.TerminationGracePeriodSeconds != 30 {
		t.Errorf("terminationGracePeriodSeconds %v, want 30", ps.TerminationGracePeriodSeconds)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Image != image {
		t.Errorf("image %q, want %q", c.Image, image)
	}
	if c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("imagePullPolicy %q, want Never: the image is loaded into kind, not pulled", c.ImagePullPolicy)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != SampleAppPort || c.Ports[0].Name != "http" {
		t.Errorf("ports %+v, want http on %d", c.Ports, SampleAppPort)
	}
	if want := []string{"--shutdown=drain", "--drain-delay=2s", "--request-duration=100ms"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want httpGet /readyz", c.ReadinessProbe)
	}
	sel := dep.Spec.Selector.MatchLabels
	if len(sel) == 0 {
		t.Error("Deployment has no matchLabels: the engine's load Service selects the pods by them")
	}
	for k, v := range sel {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, dep.Spec.Template.Labels)
		}
	}
}

func TestRenderPreStop(t *testing.T) {
	for _, tc := range []struct {
		action PreStopAction
		check  func(t *testing.T, c corev1.Container)
	}{
		{PreStopNone, func(t *testing.T, c corev1.Container) {
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
				t.Errorf("preStop %+v, want none", c.Lifecycle.PreStop)
			}
		}},
		{PreStopExec, func(t *testing.T, c corev1.Container) {
			h := preStop(t, c)
			if h.Exec == nil || !slices.Equal(h.Exec.Command, []string{"/app", "sleep", "5s"}) {
				t.Errorf("preStop %+v, want exec [/app sleep 5s]", h)
			}
			if h.Sleep != nil || h.HTTPGet != nil {
				t.Errorf("preStop has more than one handler: %+v", h)
			}
		}},
		{PreStopSleep, func(t *testing.T, c corev1.Container) {
			h := preStop(t, c)
			if h.Sleep == nil || h.Sleep.Seconds != 5 {
				t.Errorf("preStop %+v, want sleep 5 seconds", h)
			}
			if h.Exec != nil || h.HTTPGet != nil {
				t.Errorf("preStop has more than one handler: %+v", h)
			}
		}},
		{PreStopHTTP, func(t *testing.T, c corev1.Container) {
			h := preStop(t, c)
			if h.HTTPGet == nil || h.HTTPGet.Path != "/prestop?sleep=5s" || h.HTTPGet.Port != intstr.FromString("http") {
				t.Errorf("preStop %+v, want httpGet /prestop?sleep=5s on the http port", h)
			}
			if h.Exec != nil || h.Sleep != nil {
				t.Errorf("preStop has more than one handler: %+v", h)
			}
		}},
	} {
		t.Run(string(tc.action), func(t *testing.T) {
			s := good()
			s.PreStop, s.PreStopSeconds = tc.action, 5
			if tc.action == PreStopNone {
				s.PreStopSeconds = 0
			}
			dep := render(t, s)
			tc.check(t, dep.Spec.Template.Spec.Containers[0])
		})
	}
}

func preStop(t *testing.T, c corev1.Container) *corev1.LifecycleHandler {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		t.Fatal("no preStop hook")
	}
	return c.Lifecycle.PreStop
}

func TestRenderShutdownArgs(t *testing.T) {
	s := good()
	s.OnSIGTERM, s.DrainDelay, s.RequestDuration, s.GraceSeconds = ShutdownIgnore, 0, 0, 0
	dep := render(t, s)
	c := dep.Spec.Template.Spec.Containers[0]
	if want := []string{"--shutdown=ignore", "--drain-delay=0s", "--request-duration=0s"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if g := dep.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 0 {
		t.Errorf("terminationGracePeriodSeconds %v, want 0", g)
	}
}

func TestRenderRejects(t *testing.T) {
	bad := good()
	bad.GraceSeconds = -1
	if _, err := Render(bad, image); err == nil || !strings.Contains(err.Error(), "terminationGracePeriodSeconds -1") {
		t.Errorf("Render of an invalid scenario: %v, want the validation error", err)
	}
	if _, err := Render(good(), ""); err == nil || !strings.Contains(err.Error(), "render prestop-sleep-drain: no image") {
		t.Errorf("Render without an image: %v, want an error", err)
	}
}

// Every name Validate accepts renders, also names that YAML would read as something other
// than a string ("on", "yes", "123", "1e3") if the label value were not quoted.
func TestRenderAnyValidName(t *testing.T) {
	for _, name := range []string{"a", "app-1", "1-2", "on", "yes", "no", "true", "123", "1e3", "null"} {
		t.Run(name, func(t *testing.T) {
			s := good()
			s.Name = name
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			objs, err := Render(s, image)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			dep := objs[0].(*appsv1.Deployment)
			if got := dep.Labels["rollcheck.io/scenario"]; got != name {
				t.Fatalf("label %q, want %q", got, name)
			}
		})
	}
}
