// Package scaffold writes a first check file for any app (rollcheck init): it finds, in the
// app's manifests or in a Deployment that runs on a cluster, the Deployment, its app container,
// the port, the path, the protocol, the images and the current preStop and grace period, and
// writes a check file whose every choice is commented.
package scaffold

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/manifest"
)

// Found is what init found about the app: each choice with the reason it gives in the file.
type Found struct {
	Deployment string
	// Others are the manifests' other Deployments, by name.
	Others []string
	// Container is the app's container, the one that serves Port; ContainerField is set when
	// the check file must name it (Port is a native sidecar's).
	Container      string
	ContainerField bool
	Port           int32
	PortFrom       string // "the targetPort of Service web's port 80 (http)"
	// Service is the Service whose port gave Port ("" when none did).
	Service  string
	Path     string
	PathFrom string
	// GRPC: the port speaks gRPC (GRPCFrom says why); TLS: the probe of the port says HTTPS.
	GRPC     bool
	GRPCFrom string
	TLS      bool
	Images   []string
	PreStop  check.PreStop
	Grace    int64
	GraceSet bool // the manifest sets terminationGracePeriodSeconds
	Replicas int32
}

// Files are manifests read from a file or a directory: each path and the objects it holds.
type Files struct {
	Paths   []string
	Objects []check.Object
}

// ReadManifests reads the manifests at path as check and audit read them (internal/manifest: a
// file, a directory's files, or a kustomization rendered as kubectl kustomize renders it); Paths
// are where they came from. Errors name the file at fault.
func ReadManifests(path string) (Files, error) {
	docs, err := manifest.Read(path)
	if err != nil {
		return Files{}, err
	}
	objs, err := manifest.Objects(docs)
	if err != nil {
		return Files{}, err
	}
	fs := Files{Paths: manifest.Sources(docs)}
	for _, o := range objs {
		fs.Objects = append(fs.Objects, o.(check.Object))
	}
	return fs, nil
}

// Find finds the app in objs: the Deployment named deployment, or the only one.
func Find(objs []check.Object, deployment string) (Found, error) {
	var deps []*appsv1.Deployment
	var names []string
	var svcs []*corev1.Service
	for _, o := range objs {
		switch t := o.(type) {
		case *appsv1.Deployment:
			deps = append(deps, t)
			names = append(names, t.Name)
		case *corev1.Service:
			svcs = append(svcs, t)
		}
	}
	var d *appsv1.Deployment
	switch {
	case len(deps) == 0:
		return Found{}, errors.New("no Deployment (apps/v1) in the manifests: rollcheck checks a Deployment")
	case deployment != "":
		i := slices.Index(names, deployment)
		if i < 0 {
			return Found{}, fmt.Errorf("--deployment %s: not in the manifests (they hold %s)", deployment, strings.Join(names, ", "))
		}
		d = deps[i]
	case len(deps) > 1:
		return Found{}, fmt.Errorf("the manifests hold %d Deployments (%s): choose one with --deployment NAME", len(deps), strings.Join(names, ", "))
	default:
		d = deps[0]
	}
	f := Found{Deployment: d.Name, Others: slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == d.Name }), Replicas: 1}
	if r := d.Spec.Replicas; r != nil {
		f.Replicas = *r
	}
	f.Grace = corev1.DefaultTerminationGracePeriodSeconds
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		f.Grace, f.GraceSet = *g, true
	}
	running := containers(d, true)
	if err := f.findPort(d, running, selecting(svcs, d)); err != nil {
		return Found{}, err
	}
	plan := check.Plan{App: check.App{Objects: objs, Deployment: d.Name, Port: f.Port}}
	if plan.Applied().Container == "" {
		// A native sidecar serves the port (a proxy in front): the app is the first container.
		f.Container, f.ContainerField = d.Spec.Template.Spec.Containers[0].Name, true
		plan.App.Container = f.Container
	}
	f.PreStop = plan.Applied().PreStop
	f.findPath(named(running, f.Container), named(running, portOwner(running, f.Port)))
	for _, c := range containers(d, false) {
		if c.Image == "" || slices.Contains(f.Images, c.Image) {
			continue
		}
		f.Images = append(f.Images, c.Image)
	}
	return f, nil
}

// findPort sets the port: the containerPort a Service's targetPort names, else the readiness
// probe's port, else the only containerPort declared.
func (f *Found) findPort(d *appsv1.Deployment, running []*corev1.Container, svcs []*corev1.Service) error {
	undeclared := "" // a Service's numeric targetPort no container declares: what to add
	for _, s := range svcs {
		for _, sp := range s.Spec.Ports {
			if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
				continue
			}
			target := sp.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(sp.Port)
			}
			c, cp := resolve(running, nil, target)
			if c == nil {
				if target.Type == intstr.Int && undeclared == "" {
					undeclared = fmt.Sprintf("Service %s's targetPort %d is declared by no container: add ports: [{containerPort: %d}] to the app's container", s.Name, target.IntVal, target.IntVal)
				}
				continue
			}
			f.Container, f.Port, f.Service = c.Name, cp.ContainerPort, s.Name
			f.PortFrom = fmt.Sprintf("containerPort %d%s of container %s: the targetPort of Service %s's port %d", cp.ContainerPort, quotedName(cp.Name), c.Name, s.Name, sp.Port)
			f.grpcOf(cp.Name, "the port's name "+cp.Name)
			f.grpcOf(sp.Name, fmt.Sprintf("Service %s's port name %s", s.Name, sp.Name))
			if ap := sp.AppProtocol; ap != nil && strings.EqualFold(*ap, "grpc") {
				f.GRPC, f.GRPCFrom = true, fmt.Sprintf("Service %s's port says appProtocol %s", s.Name, *ap)
			}
			return nil
		}
	}
	for _, c := range running {
		p := c.ReadinessProbe
		if p == nil {
			continue
		}
		var port intstr.IntOrString
		switch {
		case p.HTTPGet != nil:
			port = p.HTTPGet.Port
		case p.TCPSocket != nil:
			port = p.TCPSocket.Port
		case p.GRPC != nil:
			port = intstr.FromInt32(p.GRPC.Port)
		default:
			continue
		}
		owner, cp := resolve(running, c, port)
		if owner == nil {
			if port.Type == intstr.String {
				continue // a name no port of the container has
			}
			return fmt.Errorf("Deployment %s: container %s's readiness probe asks port %d, which it does not declare: add ports: [{containerPort: %d}] to container %s", d.Name, c.Name, port.IntVal, port.IntVal, c.Name)
		}
		f.Container, f.Port = owner.Name, cp.ContainerPort
		f.PortFrom = fmt.Sprintf("containerPort %d%s of container %s: the port its readiness probe asks (no Service of the manifests selects the pods and names a port of theirs)", cp.ContainerPort, quotedName(cp.Name), owner.Name)
		f.grpcOf(cp.Name, "the port's name "+cp.Name)
		return nil
	}
	var declared []string
	var only *corev1.Container
	var onlyPort corev1.ContainerPort
	for _, c := range running {
		for _, p := range c.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				declared = append(declared, fmt.Sprintf("%s:%d", c.Name, p.ContainerPort))
				only, onlyPort = c, p
			}
		}
	}
	if len(declared) == 1 {
		f.Container, f.Port = only.Name, onlyPort.ContainerPort
		f.PortFrom = fmt.Sprintf("containerPort %d%s of container %s: the only port the Deployment declares (no Service selects its pods, no readiness probe names a port)", onlyPort.ContainerPort, quotedName(onlyPort.Name), only.Name)
		f.grpcOf(onlyPort.Name, "the port's name "+onlyPort.Name)
		return nil
	}
	if undeclared != "" {
		return fmt.Errorf("Deployment %s: no port found: %s", d.Name, undeclared)
	}
	what := "it declares no containerPort"
	if len(declared) > 1 {
		what = "it declares several (" + strings.Join(declared, ", ") + ")"
	}
	return fmt.Errorf("Deployment %s: no port found (%s): add a Service that selects its pods with a targetPort naming the app's containerPort, or a readinessProbe with the port, to the manifests", d.Name, what)
}

// grpcOf marks the port gRPC when name is grpc or starts grpc- (the convention Istio reads).
func (f *Found) grpcOf(name, why string) {
	if !f.GRPC && (name == "grpc" || strings.HasPrefix(name, "grpc-")) {
		f.GRPC, f.GRPCFrom = true, why
	}
}

// findPath sets the path from the readiness probe of the app's container (or of the one that
// serves the port) when it asks the same port, and reads a gRPC probe or an HTTPS one.
func (f *Found) findPath(cs ...*corev1.Container) {
	f.Path, f.PathFrom = check.DefaultPath, "no readiness probe asks an HTTP path on this port"
	for _, c := range cs {
		p := c.ReadinessProbe
		if p == nil {
			continue
		}
		switch {
		case p.GRPC != nil && p.GRPC.Port == f.Port:
			if !f.GRPC {
				f.GRPC, f.GRPCFrom = true, fmt.Sprintf("container %s's readiness probe is a gRPC health check on this port", c.Name)
			}
			return
		case p.HTTPGet != nil && p.HTTPGet.Path != "":
			if _, cp := resolve([]*corev1.Container{c}, c, p.HTTPGet.Port); cp.ContainerPort != f.Port {
				f.PathFrom = fmt.Sprintf("container %s's readiness probe asks another port", c.Name)
				continue
			}
			f.Path = p.HTTPGet.Path
			f.PathFrom = fmt.Sprintf("the path container %s's readiness probe asks", c.Name)
			f.TLS = p.HTTPGet.Scheme == corev1.URISchemeHTTPS
			return
		}
	}
}

// resolve finds the container port a port (a number or a name) means: in own when given
// (a probe's port is its container's), else in any running container.
func resolve(running []*corev1.Container, own *corev1.Container, port intstr.IntOrString) (*corev1.Container, corev1.ContainerPort) {
	cs := running
	if own != nil {
		cs = []*corev1.Container{own}
	}
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
				return c, p
			}
		}
	}
	if own != nil && port.Type == intstr.Int {
		// A probe may ask a port its container does not declare; the caller says so.
		if slices.ContainsFunc(running, func(c *corev1.Container) bool { return c == own }) {
			return nil, corev1.ContainerPort{ContainerPort: port.IntVal}
		}
	}
	return nil, corev1.ContainerPort{}
}

// selecting are the Services whose selector selects d's pods.
func selecting(svcs []*corev1.Service, d *appsv1.Deployment) []*corev1.Service {
	var out []*corev1.Service
	for _, s := range svcs {
		sel := s.Spec.Selector
		if len(sel) == 0 {
			continue
		}
		all := true
		for k, v := range sel {
			all = all && d.Spec.Template.Labels[k] == v
		}
		if all {
			out = append(out, s)
		}
	}
	return out
}

func quotedName(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

func named(cs []*corev1.Container, name string) *corev1.Container {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return cs[0]
}

func portOwner(cs []*corev1.Container, port int32) string {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.ContainerPort == port {
				return c.Name
			}
		}
	}
	return ""
}

// containers are the pod's containers: its init containers (with onlyNative, only its native
// sidecars, those with restartPolicy Always: they run while it serves), then its containers.
func containers(d *appsv1.Deployment, onlyNative bool) []*corev1.Container {
	var cs []*corev1.Container
	spec := &d.Spec.Template.Spec
	for i, c := range spec.InitContainers {
		native := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if native || !onlyNative {
			cs = append(cs, &spec.InitContainers[i])
		}
	}
	for i := range spec.Containers {
		cs = append(cs, &spec.Containers[i])
	}
	return cs
}
