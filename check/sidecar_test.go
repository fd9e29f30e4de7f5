package check

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The web Deployment's proxy is a classic sidecar; with App.Container naming the app and the
// load sent to the proxy's port, the proxy is in front of the app.
func TestSidecarsAndFront(t *testing.T) {
	p := webPlan(t)
	if f := mustResolve(t, p).FrontContainer(); f != "" {
		t.Errorf("front = %q with the load sent to the app's own port, want none", f)
	}
	a := p.Applied()
	if a.Container != "app" || len(a.Sidecars) != 1 || a.Sidecars[0].String() != "proxy(classic,preStop=httpGet:/drain)" {
		t.Errorf("applied container %q, sidecars %v", a.Container, a.Sidecars)
	}

	p.App.Port, p.App.Container = 9901, "app"
	p.Variant.PreStop = &PreStop{Sleep: 5e9}
	r := mustResolve(t, p)
	if r.AppContainer() != "app" || r.FrontContainer() != "proxy" {
		t.Errorf("app %q front %q, want app and proxy", r.AppContainer(), r.FrontContainer())
	}
	a = p.Applied()
	if a.PreStop.Sleep != 5e9 || a.Sidecars[0].String() != "proxy(classic,front,preStop=httpGet:/drain)" {
		t.Errorf("the variant's preStop went to the wrong container: app %s, sidecars %v", a.PreStop, a.Sidecars)
	}
	if sc, ok := a.FrontSidecar(); !ok || sc.Name != "proxy" {
		t.Errorf("front sidecar %v %v, want proxy", sc, ok)
	}
	if _, ok := webPlan(t).Applied().FrontSidecar(); ok {
		t.Error("a front sidecar with the load sent to the app's own port")
	}
	if !strings.Contains(a.Shape(), " sidecar=proxy(classic,front,preStop=httpGet:/drain)") {
		t.Errorf("shape %q does not say the sidecar", a.Shape())
	}

	// A native sidecar declares the port: the same, with the proxy an init container.
	d := deploymentOf(t, p.App.Objects, "web")
	spec := &d.Spec.Template.Spec
	proxy := spec.Containers[1]
	proxy.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	spec.InitContainers = append(spec.InitContainers, proxy)
	spec.Containers = spec.Containers[:1]
	r = mustResolve(t, p)
	if a := r.Applied(); r.FrontContainer() != "proxy" || len(a.Sidecars) != 1 || !a.Sidecars[0].Native || !a.Sidecars[0].Front {
		t.Errorf("native front: front %q, sidecars %v", r.FrontContainer(), a.Sidecars)
	}
	// Without a name, the port's container would be the native sidecar: refused.
	p.App.Container = ""
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), "port 9901: declared by native sidecar proxy of Deployment web: name the app's container (container)") {
		t.Errorf("native sidecar as the app: %v", err)
	}
	p.App.Container = "nope"
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), `container "nope": Deployment web has no such container (containers: app)`) {
		t.Errorf("unknown container: %v", err)
	}
}

// A Variant's stopSignal goes to the app container's lifecycle, with the pod's OS set as the API
// requires; a name that is no signal is refused before any cluster work.
func TestStopSignalVariant(t *testing.T) {
	p := webPlan(t)
	p.Variant.StopSignal = "SIGQUIT"
	d := mustResolve(t, p).Deployment()
	c := d.Spec.Template.Spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.StopSignal == nil || *c.Lifecycle.StopSignal != corev1.SIGQUIT || d.Spec.Template.Spec.OS == nil || d.Spec.Template.Spec.OS.Name != corev1.Linux {
		t.Errorf("container %s lifecycle %+v, os %+v", c.Name, c.Lifecycle, d.Spec.Template.Spec.OS)
	}
	if a := p.Applied(); a.StopSignal != "SIGQUIT" || !strings.Contains(a.Shape(), " stopSignal=SIGQUIT") {
		t.Errorf("applied %q: %s", a.StopSignal, a.Shape())
	}
	for _, bad := range []string{"QUIT", "sigquit", "SIG QUIT"} {
		p.Variant.StopSignal = bad
		if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), "stopSignal") {
			t.Errorf("stopSignal %q: %v", bad, err)
		}
	}
	p.Variant.StopSignal = "SIGRTMIN+3"
	if _, err := p.Validate(); err != nil {
		t.Errorf("SIGRTMIN+3: %v", err)
	}
}
