package audit

import (
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rollcheck/rollcheck/check"
)

// DefaultGraceSeconds is the grace period of a pod that sets none.
const DefaultGraceSeconds = 30

// Workload is a Deployment or StatefulSet as the audit sees it: its shutdown settings and
// what leads to its pods.
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Replicas (default 1).
	Replicas int32 `json:"replicas"`
	// Strategy is how a rollout replaces the pods.
	Strategy Strategy `json:"strategy"`
	// GraceSeconds is terminationGracePeriodSeconds (default 30).
	GraceSeconds int64 `json:"terminationGracePeriodSeconds"`
	// Containers are the pod's containers, native sidecars (initContainers with restartPolicy
	// Always) among them; other init containers are left out.
	Containers []Container `json:"containers"`
	// App names the app's container: the one kubectl.kubernetes.io/default-container names,
	// else the first container; the pod's other containers are its classic sidecars.
	App string `json:"app"`
	// Front names the container requests arrive at: the one whose port a Service selecting the
	// pods targets, else the first with a port, else the first.
	Front string `json:"front"`
	// Spread: a topology spread constraint or a pod anti-affinity over nodes (hostname), so
	// that one node's drain does not take every pod.
	Spread bool `json:"spread"`
	// PDB is the PodDisruptionBudget selecting the pods; nil when none does.
	PDB *PDB `json:"pdb,omitempty"`
	// Services are the Services selecting the pods.
	Services []Service `json:"services,omitempty"`
	// Routes are the Ingresses, HTTPRoutes and GRPCRoutes leading to those Services
	// ("Ingress/web").
	Routes []string `json:"routes,omitempty"`

	labels map[string]string
}

// ID names the workload: "Deployment/ns/name" ("Deployment/name" without a namespace).
func (w *Workload) ID() string {
	if w.Namespace == "" {
		return w.Kind + "/" + w.Name
	}
	return w.Kind + "/" + w.Namespace + "/" + w.Name
}

// Strategy is a rollout's strategy, its bounds resolved against the replicas as the
// controller resolves them (maxSurge rounded up, maxUnavailable down).
type Strategy struct {
	// Type: RollingUpdate, Recreate (Deployment), OnDelete (StatefulSet).
	Type           string `json:"type"`
	MaxUnavailable int32  `json:"maxUnavailable"`
	MaxSurge       int32  `json:"maxSurge"`
}

// PDB is a PodDisruptionBudget as it bounds a drain.
type PDB struct {
	Name string `json:"name"`
	// Allows is how many of the workload's pods it lets go at once.
	Allows int32 `json:"allows"`
}

// Service is a Service selecting the workload's pods.
type Service struct {
	Name     string `json:"name"`
	Headless bool   `json:"headless,omitempty"`
	// LocalTraffic: a NodePort or LoadBalancer Service with externalTrafficPolicy Local, which
	// sends traffic from outside the cluster only to pods on the node it enters.
	LocalTraffic bool `json:"localTraffic,omitempty"`
	// Targets names the containers its ports lead to.
	Targets []string `json:"targets,omitempty"`
}

// Container is one container's shutdown settings.
type Container struct {
	Name string `json:"name"`
	// Sidecar: "" (the app's container), "classic" (another container of the pod) or
	// "native" (an init container with restartPolicy Always).
	Sidecar   string  `json:"sidecar,omitempty"`
	PreStop   PreStop `json:"preStop"`
	Readiness *Probe  `json:"readiness,omitempty"`
	Ports     []Port  `json:"ports,omitempty"`
}

// PreStop is a container's preStop hook.
type PreStop struct {
	// Kind: none, sleep (the native sleep action), exec-sleep (exec of `sleep N`), exec (any
	// other command), httpGet-sleep (an httpGet with a ?sleep= query), httpGet (any other path)
	// or tcpSocket.
	Kind string `json:"kind"`
	// Sleep is how long a sleep, exec-sleep or httpGet-sleep holds SIGTERM back.
	Sleep Duration `json:"sleep,omitempty"`
	// Command or Path of an exec or httpGet hook.
	Command []string `json:"command,omitempty"`
	Path    string   `json:"path,omitempty"`
}

// Known tells whether the hook's length is known: none, or a sleep.
func (p PreStop) Known() bool {
	switch p.Kind {
	case "none", "sleep", "exec-sleep", "httpGet-sleep":
		return true
	}
	return false
}

// String is the hook in a few words: "none", "sleep 5s", "exec sleep 5s", "exec /drain.sh",
// "httpGet /prestop".
func (p PreStop) String() string {
	switch p.Kind {
	case "sleep":
		return "sleep " + p.Sleep.String()
	case "exec-sleep":
		return "exec sleep " + p.Sleep.String()
	case "exec":
		return "exec " + strings.Join(p.Command, " ")
	case "httpGet", "httpGet-sleep":
		return "httpGet " + p.Path
	}
	return p.Kind
}

// Probe is a readiness probe's timing.
type Probe struct {
	InitialDelaySeconds int32 `json:"initialDelaySeconds"`
	PeriodSeconds       int32 `json:"periodSeconds"`
	FailureThreshold    int32 `json:"failureThreshold"`
	GRPC                bool  `json:"grpc,omitempty"`
}

// Port is a container port and the protocol it speaks, as far as the manifests say.
type Port struct {
	Name   string `json:"name,omitempty"`
	Number int32  `json:"number"`
	// Protocol is "grpc", "h2c", "http2", "http" or "" (not said), from the port's
	// appProtocol, a Service port's appProtocol, or its name.
	Protocol string `json:"protocol,omitempty"`
}

// GRPC tells whether a port of the front container speaks gRPC (its appProtocol, its name, or
// a gRPC readiness probe).
func (w *Workload) GRPC() bool {
	c := w.container(w.Front)
	if c == nil {
		return false
	}
	if c.Readiness != nil && c.Readiness.GRPC {
		return true
	}
	for _, p := range c.Ports {
		if p.Protocol == "grpc" {
			return true
		}
	}
	return false
}

// Headless names the first headless Service selecting the pods, "" when none does.
func (w *Workload) Headless() string {
	for _, s := range w.Services {
		if s.Headless {
			return s.Name
		}
	}
	return ""
}

func (w *Workload) container(name string) *Container {
	for i := range w.Containers {
		if w.Containers[i].Name == name {
			return &w.Containers[i]
		}
	}
	return nil
}

// podSpec reads a pod template into w.
func (w *Workload) podSpec(t corev1.PodTemplateSpec) {
	w.labels = t.Labels
	s := t.Spec
	w.GraceSeconds = DefaultGraceSeconds
	if s.TerminationGracePeriodSeconds != nil {
		w.GraceSeconds = *s.TerminationGracePeriodSeconds
	}
	for _, c := range s.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			w.Containers = append(w.Containers, containerOf(c, "native"))
		}
	}
	w.App = t.Annotations["kubectl.kubernetes.io/default-container"]
	if !slices.ContainsFunc(s.Containers, func(c corev1.Container) bool { return c.Name == w.App }) && len(s.Containers) > 0 {
		w.App = s.Containers[0].Name
	}
	for _, c := range s.Containers {
		kind := ""
		if c.Name != w.App {
			kind = "classic"
		}
		w.Containers = append(w.Containers, containerOf(c, kind))
	}
	for _, t := range s.TopologySpreadConstraints {
		if t.TopologyKey == corev1.LabelHostname {
			w.Spread = true
		}
	}
	if a := s.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			w.Spread = w.Spread || t.TopologyKey == corev1.LabelHostname
		}
		for _, t := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			w.Spread = w.Spread || t.PodAffinityTerm.TopologyKey == corev1.LabelHostname
		}
	}
}

func containerOf(c corev1.Container, sidecar string) Container {
	out := Container{Name: c.Name, Sidecar: sidecar, PreStop: preStopOf(c.Lifecycle)}
	if p := c.ReadinessProbe; p != nil {
		out.Readiness = &Probe{InitialDelaySeconds: p.InitialDelaySeconds, PeriodSeconds: orDefault(p.PeriodSeconds, 10),
			FailureThreshold: orDefault(p.FailureThreshold, 3), GRPC: p.GRPC != nil}
	}
	for _, p := range c.Ports {
		out.Ports = append(out.Ports, Port{Name: p.Name, Number: p.ContainerPort, Protocol: protocolOf(p.Name, "")})
	}
	return out
}

func orDefault(v, d int32) int32 {
	if v == 0 {
		return d
	}
	return v
}

// protocolOf is what a port's appProtocol or, without one, its name says it speaks.
func protocolOf(name string, appProtocol string) string {
	for _, s := range []string{strings.ToLower(appProtocol), strings.ToLower(name)} {
		s = strings.TrimPrefix(s, "kubernetes.io/")
		switch {
		case s == "grpc" || strings.HasPrefix(s, "grpc-"):
			return "grpc"
		case s == "h2c":
			return "h2c"
		case s == "http2" || strings.HasPrefix(s, "http2-"):
			return "http2"
		case s == "http" || strings.HasPrefix(s, "http-"):
			return "http"
		}
	}
	return ""
}

// preStopOf reads a preStop hook. Its length is check.PreStop's reading, the one check and init
// make of the same hook: an exec of a sleep (`sleep N`, `sh -c "sleep N"`, `busybox sleep N`) and
// an httpGet with a ?sleep= query hold SIGTERM back for as long as they name.
func preStopOf(l *corev1.Lifecycle) PreStop {
	if l == nil || l.PreStop == nil {
		return PreStop{Kind: "none"}
	}
	h := l.PreStop
	switch {
	case h.Sleep != nil:
		return PreStop{Kind: "sleep", Sleep: Duration(time.Duration(h.Sleep.Seconds) * time.Second)}
	case h.Exec != nil:
		if d, ok := (check.PreStop{Exec: h.Exec.Command}).Duration(); ok {
			return PreStop{Kind: "exec-sleep", Sleep: Duration(d), Command: h.Exec.Command}
		}
		return PreStop{Kind: "exec", Command: h.Exec.Command}
	case h.HTTPGet != nil:
		if d, ok := (check.PreStop{HTTPGet: h.HTTPGet.Path}).Duration(); ok {
			return PreStop{Kind: "httpGet-sleep", Sleep: Duration(d), Path: h.HTTPGet.Path}
		}
		return PreStop{Kind: "httpGet", Path: h.HTTPGet.Path}
	case h.TCPSocket != nil:
		return PreStop{Kind: "tcpSocket"}
	}
	return PreStop{Kind: "none"}
}

// deployment is a Deployment as a Workload (Services, PDBs and routes joined later).
func deployment(d *appsv1.Deployment) *Workload {
	w := &Workload{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, Replicas: replicas(d.Spec.Replicas)}
	w.podSpec(d.Spec.Template)
	st := d.Spec.Strategy
	w.Strategy.Type = string(st.Type)
	if st.Type == "" {
		w.Strategy.Type = string(appsv1.RollingUpdateDeploymentStrategyType)
	}
	if w.Strategy.Type == string(appsv1.RollingUpdateDeploymentStrategyType) {
		unavailable, surge := intstr.FromString("25%"), intstr.FromString("25%")
		if ru := st.RollingUpdate; ru != nil {
			if ru.MaxUnavailable != nil {
				unavailable = *ru.MaxUnavailable
			}
			if ru.MaxSurge != nil {
				surge = *ru.MaxSurge
			}
		}
		w.Strategy.MaxSurge = scaled(surge, w.Replicas, true)
		w.Strategy.MaxUnavailable = scaled(unavailable, w.Replicas, false)
		if w.Strategy.MaxSurge == 0 && w.Strategy.MaxUnavailable == 0 {
			w.Strategy.MaxUnavailable = 1 // as the controller does
		}
	} else {
		w.Strategy.MaxUnavailable = w.Replicas // Recreate: every pod goes before any comes
	}
	return w
}

// statefulSet is a StatefulSet as a Workload: its rolling update replaces maxUnavailable pods
// (default 1) at a time and never surges.
func statefulSet(s *appsv1.StatefulSet) *Workload {
	w := &Workload{Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name, Replicas: replicas(s.Spec.Replicas)}
	w.podSpec(s.Spec.Template)
	w.Strategy.Type = string(s.Spec.UpdateStrategy.Type)
	if w.Strategy.Type == "" {
		w.Strategy.Type = string(appsv1.RollingUpdateStatefulSetStrategyType)
	}
	w.Strategy.MaxUnavailable = 1
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		w.Strategy.MaxUnavailable = max(1, scaled(*ru.MaxUnavailable, w.Replicas, false))
	}
	return w
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// scaled resolves an int or percentage against n, rounding up or down; a bad value is 0.
func scaled(v intstr.IntOrString, n int32, up bool) int32 {
	got, err := intstr.GetScaledValueFromIntOrPercent(&v, int(n), up)
	if err != nil || got < 0 {
		return 0
	}
	return int32(got)
}

// PreStop is the front container's preStop hook.
func (w *Workload) PreStop() PreStop {
	if c := w.container(w.Front); c != nil {
		return c.PreStop
	}
	return PreStop{Kind: "none"}
}
