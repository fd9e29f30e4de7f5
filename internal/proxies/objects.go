package proxies

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"text/template"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
)

// Names of the objects Objects returns.
const (
	// FrontName is the proxy's Deployment and its Service (port 80), where the load goes.
	FrontName = "front"
	// ConfigMapName holds the proxy's configuration template.
	ConfigMapName = "front-config"
	// HeadlessServiceName selects the app's ready pods without a virtual IP: one DNS A record
	// per pod (the DNS configurations).
	HeadlessServiceName = "app-headless"
	// ClusterIPServiceName is a plain ClusterIP Service of the app (NginxKeepalive, and the
	// backend of TraefikIngress's Ingress, whose EndpointSlices Traefik reads).
	ClusterIPServiceName = "app-clusterip"
	// IngressName is TraefikIngress's Ingress: every path to ClusterIPServiceName.
	IngressName = "front"
	// IngressClass is the ingress class of IngressName (its kubernetes.io/ingress.class
	// annotation), the only one TraefikIngress's Traefik takes: no other controller of a
	// cluster takes it, and Traefik takes no other Ingress.
	IngressClass = "rollcheck-traefik"
	// ServiceAccountName is the proxy's ServiceAccount when it reads the API server
	// (TraefikIngress), bound to the Role of the same name.
	ServiceAccountName = "front"
	// HealthPath is the proxy's own readiness endpoint, answered by the proxy itself, where
	// the proxy lets rollcheck choose it (the table's healthPath; HealthPathOf).
	HealthPath = "/proxy-healthz"
	// Port is the port the proxy listens on; ServicePort the front Service's.
	Port        int32 = 8080
	ServicePort int32 = 80
	// UID runs the proxy (non-root; the images' /etc/passwd names it nonroot).
	UID int64 = 65532
)

// FrontSelector selects the proxy's pods (its Deployment's and the front Service's selector);
// the pods also carry rollcheck.io/proxy-config, the Config's name.
var FrontSelector = map[string]string{"app.kubernetes.io/name": FrontName, "app.kubernetes.io/component": "proxy"}

//go:embed configs/*.tmpl
var configFS embed.FS

// configParams are what a configuration template is rendered with: the same for every proxy;
// a template tells its own Configs apart by .Config.
type configParams struct {
	Config                Config
	Version               string
	AppPort               int32
	HealthPath            string
	ConnectMS, ResponseMS int64
	IngressClass          string // the ingress class of IngressName
}

// Render returns c's configuration template for an app listening on appPort: the proxy's
// configuration file with ${POD_NAMESPACE} and ${NAMESERVER} left for the image's entrypoint
// to expand from the pod's environment.
func Render(c Config, appPort int32) (string, error) {
	e, _, ok := lookupConfig(c)
	if !ok {
		return "", fmt.Errorf("render proxy config: unknown config %q", c)
	}
	if appPort < 1 || appPort > 65535 {
		return "", fmt.Errorf("render proxy config %s: app port %d out of 1-65535", c, appPort)
	}
	t, err := template.ParseFS(configFS, "configs/"+e.configFile+".tmpl")
	if err != nil {
		return "", fmt.Errorf("render proxy config %s: %w", c, err)
	}
	params := configParams{
		Config: c, Version: e.version, AppPort: appPort, HealthPath: e.healthPath,
		ConnectMS: ConnectTimeout.Milliseconds(), ResponseMS: ResponseTimeout.Milliseconds(),
		IngressClass: IngressClass,
	}
	var b bytes.Buffer
	t.Option("missingkey=error")
	if err := t.Execute(&b, params); err != nil {
		return "", fmt.Errorf("render proxy config %s: %w", c, err)
	}
	return b.String(), nil
}

// Objects returns the Kubernetes objects of proxy configuration c in front of the app app, for
// a namespace the caller applies them into (they name none, and none is cluster-scoped): the
// ConfigMap of the proxy's configuration template, the Deployment front (one replica of the
// proxy from images), the Service front (port 80 to the proxy's 8080, where the load goes), the
// headless Service app-headless selecting the app's ready pods on its port, for the Configs
// that need it (NginxKeepalive, TraefikIngress) the ClusterIP Service app-clusterip of the app,
// for an ingress Config (TraefikIngress) the Ingress front to it, and for a proxy that reads
// the API server (Traefik) what lets it (apiObjects).
func Objects(c Config, images Images, app AppRef) ([]check.Object, error) {
	e, ce, ok := lookupConfig(c)
	if !ok {
		return nil, fmt.Errorf("proxy objects: unknown config %q (want one of %v)", c, Configs)
	}
	p := e.proxy
	image := images.For(p)
	if image == "" {
		return nil, fmt.Errorf("proxy objects %s: no %s image", c, p)
	}
	if err := validateApp(app); err != nil {
		return nil, fmt.Errorf("proxy objects %s: %w", c, err)
	}
	conf, err := Render(c, app.Port)
	if err != nil {
		return nil, err
	}
	podLabels := maps.Clone(FrontSelector)
	podLabels["rollcheck.io/proxy-config"] = string(c)
	objs := []check.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Labels: podLabels},
			Data:       map[string]string{e.configFile: conf},
		},
		deployment(e, image, podLabels, conf, awaitPods(ce, app)),
		service(FrontName, podLabels, FrontSelector, corev1.ServicePort{
			Name: "http", Port: ServicePort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP,
		}, ""),
		HeadlessService(app),
	}
	if ce.clusterIP {
		objs = append(objs, service(ClusterIPServiceName, nil, app.Selector, appPort(app), ""))
	}
	if ce.ingress {
		objs = append(objs, ingress(app))
	}
	if e.readsAPI {
		objs = append(objs, apiObjects(podLabels)...)
	}
	return objs, nil
}

// ingress is TraefikIngress's Ingress: every path (Prefix /, any host) to the app's ClusterIP
// Service on the app's port, of class IngressClass by the kubernetes.io/ingress.class
// annotation. The annotation, not spec.ingressClassName: a class name needs an IngressClass
// object, which is cluster-scoped, and Traefik runs with disableClusterScopeResources.
func ingress(app AppRef) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: IngressName,
			Annotations: map[string]string{"kubernetes.io/ingress.class": IngressClass}},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: ClusterIPServiceName, Port: networkingv1.ServiceBackendPort{Number: app.Port}},
				}}},
			}},
		}}},
	}
}

// TraefikRules are what Traefik's Kubernetes Ingress provider reads, in its namespace only
// (disableClusterScopeResources): Ingresses, Services, EndpointSlices and Secrets (an Ingress's
// TLS certificates; this one has none, but the provider watches them all the same). It writes
// nothing: with no ingressEndpoint set it never updates an Ingress's status.
var TraefikRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services", "secrets"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}},
}

// apiObjects let the proxy read the API server of its namespace: the ServiceAccount front, the
// Role front (TraefikRules) and the RoleBinding front of the one to the other. The binding's
// subject names no namespace: in a RoleBinding that is the binding's own (the row's).
func apiObjects(lbls map[string]string) []check.Object {
	meta := metav1.ObjectMeta{Name: ServiceAccountName, Labels: maps.Clone(lbls)}
	return []check.Object{
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta},
		&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: *meta.DeepCopy(),
			Rules: TraefikRules},
		&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: *meta.DeepCopy(),
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: ServiceAccountName},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName}}},
	}
}

// validateApp checks app: a non-empty valid selector that does not select the proxy's own pods,
// and a port.
func validateApp(app AppRef) error {
	if len(app.Selector) == 0 {
		return fmt.Errorf("the app's pod selector is empty")
	}
	for k, v := range app.Selector {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("app selector key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("app selector %s=%q: %v", k, v, errs)
		}
	}
	if labels.SelectorFromSet(app.Selector).Matches(labels.Set(FrontSelector)) {
		return fmt.Errorf("the app's pod selector %v selects the proxy's pods (%v)", app.Selector, FrontSelector)
	}
	if app.Port < 1 || app.Port > 65535 {
		return fmt.Errorf("app port %d out of 1-65535", app.Port)
	}
	return nil
}

// appPort is the app's port as a Service port, to the same container port.
func appPort(app AppRef) corev1.ServicePort {
	return corev1.ServicePort{Name: "http", Port: app.Port, TargetPort: intstr.FromInt32(app.Port), Protocol: corev1.ProtocolTCP}
}

// HeadlessService is HeadlessServiceName: a Service without a virtual IP selecting app's ready
// pods on its port, for which the cluster's DNS answers one A record per ready pod. The proxies
// that find the pods by DNS resolve it; rollcheck windows measure's load pods ask for it.
func HeadlessService(app AppRef) *corev1.Service {
	return service(HeadlessServiceName, nil, app.Selector, appPort(app), corev1.ClusterIPNone)
}

// service is a Service name selecting selector on port; clusterIP "None" makes it headless.
// Not-ready pods are never published: a pod leaves the Service when it stops being ready.
func service(name string, lbls, selector map[string]string, port corev1.ServicePort, clusterIP string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                clusterIP,
			Selector:                 maps.Clone(selector),
			Ports:                    []corev1.ServicePort{port},
			PublishNotReadyAddresses: false,
		},
	}
}

// deployment is proxy e's Deployment: one replica of image, its configuration template conf
// from the ConfigMap at /etc/proxy, /tmp an emptyDir (the rendered configuration, the proxy's
// temporary files), hardened: non-root, no privilege escalation, read-only root filesystem, no
// capabilities, the runtime's default seccomp profile. Only a proxy that reads the API server
// (Traefik) gets an API token (its ServiceAccount's). The pods carry the hash of conf, so that applying another configuration
// rolls them.
func deployment(e entry, image string, podLabels map[string]string, conf string, inits []corev1.Container) *appsv1.Deployment {
	sum := sha256.Sum256([]byte(conf))
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: FrontName, Labels: podLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(FrontSelector)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      maps.Clone(podLabels),
					Annotations: map[string]string{"rollcheck.io/config-sha256": hex.EncodeToString(sum[:])},
				},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(UID),
						RunAsGroup:     ptr.To(UID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            "proxy",
						Image:           image,
						ImagePullPolicy: corev1.PullNever,
						Env: []corev1.EnvVar{{
							Name:      "POD_NAMESPACE",
							ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
						}},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: e.healthPath, Port: intstr.FromString("http")}},
							PeriodSeconds:    1,
							FailureThreshold: 2,
							TimeoutSeconds:   1,
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             ptr.To(true),
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "config", MountPath: "/etc/proxy", ReadOnly: true},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName},
						}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
					},
				},
			},
		},
	}
	if e.readsAPI {
		ps := &d.Spec.Template.Spec
		ps.ServiceAccountName, ps.AutomountServiceAccountToken = ServiceAccountName, ptr.To(true)
	}
	for _, c := range inits {
		c.SecurityContext = d.Spec.Template.Spec.Containers[0].SecurityContext.DeepCopy()
		d.Spec.Template.Spec.InitContainers = append(d.Spec.Template.Spec.InitContainers, c)
	}
	return d
}

// AwaitPodsWithin bounds how long a proxy that resolves once waits for every pod of the app in
// the DNS before it starts (AppRef.Image): the app's pods are ready well before that.
const AwaitPodsWithin = 90 * time.Second

// awaitPods is the init container of a proxy that resolves HeadlessServiceName once, at its
// start, when app names its image and replicas: it waits until the DNS answers that many
// addresses (internal/sampleapp.AwaitDNS), so that the proxy starts with every pod.
func awaitPods(ce configEntry, app AppRef) []corev1.Container {
	if !ce.resolves || ce.refresh != check.ResolveOnce || app.Image == "" || app.Replicas < 1 {
		return nil
	}
	return []corev1.Container{{
		Name:            "await-pods",
		Image:           app.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/app", "await-dns", HeadlessServiceName, strconv.Itoa(int(app.Replicas)), AwaitPodsWithin.String()},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}}
}
