package check

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/rollcheck/rollcheck/loadgen"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/klient/decoder"
)

// appImage is the image the test app's Plan loads into the cluster; the proxy sidecar's image
// is pulled.
const (
	appImage   = "rollcheck-app:t1"
	proxyImage = "envoyproxy/envoy:v1.30.1"
)

// webYAML is a user's app as engine users write it: a ConfigMap, a Deployment whose app
// container serves on 8080 next to a proxy sidecar (each with its own preStop hook) and an
// init container running the same image, and the app's own Service.
const webYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {greeting: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 20
      initContainers:
      - name: migrate
        image: rollcheck-app:t1
        args: [migrate]
      containers:
      - name: app
        image: rollcheck-app:t1
        imagePullPolicy: IfNotPresent
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        ports:
        - {name: http, containerPort: 8080}
        readinessProbe:
          httpGet: {path: /readyz, port: http}
        lifecycle:
          preStop:
            exec: {command: [sh, -c, sleep 3]}
      - name: proxy
        image: envoyproxy/envoy:v1.30.1
        imagePullPolicy: IfNotPresent
        ports:
        - {name: admin, containerPort: 9901}
        lifecycle:
          preStop:
            httpGet: {path: /drain, port: 9901}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
`

// workerYAML is a second Deployment.
const workerYAML = `
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  selector:
    matchLabels: {app: worker}
  template:
    metadata:
      labels: {app: worker}
    spec:
      containers:
      - name: worker
        image: busybox:1.36
`

// decodeAll builds objects from YAML as engine users do, with the e2e-framework decoder.
func decodeAll(t *testing.T, manifests string) []Object {
	t.Helper()
	objs, err := decoder.DecodeAll(context.Background(), strings.NewReader(manifests))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// webPlan is a valid Plan of the web app.
func webPlan(t *testing.T) Plan {
	t.Helper()
	return Plan{
		Suite:      "spec",
		App:        App{Objects: decodeAll(t, webYAML), Port: 8080, Path: "/hello", Images: []string{appImage}},
		Variant:    Variant{Name: "web-drain", Expect: Zero()},
		Disruption: Disruption{Kind: RolloutRestart},
	}
}

// deploymentOf returns the Deployment named name in objs.
func deploymentOf(t *testing.T, objs []Object, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == name {
			return d
		}
	}
	t.Fatalf("no Deployment %s in %d objects", name, len(objs))
	return nil
}

// container returns the container named name of d.
func container(t *testing.T, d *appsv1.Deployment, name string) *corev1.Container {
	t.Helper()
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container %s", d.Name, name)
	return nil
}

func TestDecodedObjectsAreTyped(t *testing.T) {
	objs := decodeAll(t, webYAML)
	if len(objs) != 3 {
		t.Fatalf("%d objects, want 3", len(objs))
	}
	if _, ok := objs[1].(*appsv1.Deployment); !ok {
		t.Fatalf("second object is a %T, want *appsv1.Deployment: the engine finds the Deployment by type", objs[1])
	}
	for i, want := range []string{"ConfigMap", "Deployment", "Service"} {
		if got := kindOf(objs[i]); got != want {
			t.Errorf("kindOf(object %d) = %q, want %q", i, got, want)
		}
	}
	// Objects built in Go have no type meta: their Go type names them.
	if got := kindOf(&corev1.Namespace{}); got != "Namespace" {
		t.Errorf("kindOf(&Namespace{}) = %q, want Namespace", got)
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(t *testing.T, p *Plan)
	}{
		{"as is", func(*testing.T, *Plan) {}},
		{"defaults", func(_ *testing.T, p *Plan) { p.App.Path, p.App.Images = "", nil }},
		{"named among several", func(t *testing.T, p *Plan) {
			p.App.Objects, p.App.Deployment = decodeAll(t, webYAML+workerYAML), "web"
		}},
		{"preStop none", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{None: true} }},
		{"preStop sleep", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second} }},
		{"preStop exec", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{Exec: []string{"/app", "sleep", "5s"}} }},
		{"preStop httpGet", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{HTTPGet: "/prestop?sleep=5s"} }},
		{"grace and replicas", func(_ *testing.T, p *Plan) {
			// No preStop: the manifest's `sh -c "sleep 3"` would outlast a grace period of 0 and warn.
			p.Variant.TerminationGracePeriodSeconds, p.Variant.Replicas = ptr.To[int64](0), ptr.To[int32](10)
			p.Variant.PreStop = &PreStop{None: true}
		}},
		{"patch", func(_ *testing.T, p *Plan) {
			p.Variant.Patch = []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","args":["--shutdown=drain"]}]}}}}`)
		}},
		{"h2c", func(_ *testing.T, p *Plan) { p.Load.Protocol = loadgen.ProtocolH2C }},
		{"grpc round robin from the cluster", func(_ *testing.T, p *Plan) {
			p.Load.Protocol, p.Load.From = loadgen.ProtocolGRPC, LoadFromCluster
			p.Load.GRPC = GRPCLoad{Method: "/pkg.Svc/Do", Message: []byte{8, 3}, Balancing: loadgen.BalancingRoundRobin, WaitForReady: true, Retry: true}
		}},
		{"scale-down with 2 replicas", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.Replicas = ScaleDown, ptr.To[int32](2)
		}},
		{"bounds per disruption", func(_ *testing.T, p *Plan) {
			p.Variant.Expect = AtMost(0.01).WithMinSuccessRatioPerDisruption(0.95).WithMaxDisruptionSeconds(2)
		}},
		{"a proxy's refresh", func(_ *testing.T, p *Plan) {
			p.Load.URL, p.Load.From, p.Load.Resolve = "http://front/", LoadFromCluster, "app-headless"
			p.Load.ResolveRefresh, p.Load.ResolveSetting = time.Second, "nginx resolver valid=1s"
		}},
		{"a proxy that resolves once", func(_ *testing.T, p *Plan) {
			p.Load.URL, p.Load.From, p.Load.Resolve, p.Load.ResolveRefresh = "http://front/", LoadFromCluster, "app-headless", ResolveOnce
		}},
		{"a name asked without a proxy (its DNS window measured only)", func(_ *testing.T, p *Plan) {
			p.Load.From, p.Load.Resolve = LoadFromCluster, "web-headless"
		}},
		{"pull policy Never on the loaded image", func(t *testing.T, p *Plan) {
			container(t, deploymentOf(t, p.App.Objects, "web"), "app").ImagePullPolicy = corev1.PullNever
		}},
		{"Always on an image that is pulled", func(t *testing.T, p *Plan) {
			container(t, deploymentOf(t, p.App.Objects, "web"), "proxy").ImagePullPolicy = corev1.PullAlways
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webPlan(t)
			tc.mod(t, &p)
			warnings, err := p.Validate()
			if err != nil {
				t.Errorf("Check: %v", err)
			}
			if len(warnings) != 0 {
				t.Errorf("Check warnings: %q, want none", warnings)
			}
		})
	}
}

func TestCheckRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(t *testing.T, p *Plan)
		want string // a part of the one-line message naming the problem
	}{
		{"no Deployment", func(t *testing.T, p *Plan) {
			p.App.Objects = decodeAll(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only}\n")
		}, "the manifests hold no Deployment (apps/v1)"},
		{"several Deployments, none named", func(t *testing.T, p *Plan) {
			p.App.Objects = decodeAll(t, webYAML+workerYAML)
		}, "the manifests hold 2 Deployments (web, worker): name the one under test (deployment:)"},
		{"Deployment names none", func(t *testing.T, p *Plan) {
			p.App.Objects, p.App.Deployment = decodeAll(t, webYAML+workerYAML), "api"
		}, `deployment "api": not in the manifests (they hold web, worker)`},
		{"port no container declares", func(_ *testing.T, p *Plan) { p.App.Port = 9090 },
			"port 9090: no container of Deployment web declares it (declared: app:8080, proxy:9901)"},
		{"port of a UDP container port", func(t *testing.T, p *Plan) {
			container(t, deploymentOf(t, p.App.Objects, "web"), "app").Ports[0].Protocol = corev1.ProtocolUDP
		}, "port 8080: no container of Deployment web declares it"},
		{"no port", func(_ *testing.T, p *Plan) { p.App.Port = 0 }, "port 0: want 1 to 65535"},
		{"load url not http", func(_ *testing.T, p *Plan) { p.Load.URL = "ftp://front/" }, `load url "ftp://front/": want an http(s) URL`},
		{"load host without url", func(_ *testing.T, p *Plan) { p.Load.Host = "shop.example" }, `load host "shop.example": a Host header needs a load url`},
		{"unknown protocol", func(_ *testing.T, p *Plan) { p.Load.Protocol = "spdy" }, `load protocol "spdy": want http1, h2c, http2 or grpc`},
		{"grpc settings over HTTP", func(_ *testing.T, p *Plan) { p.Load.GRPC.WaitForReady = true }, "load grpc settings: only for protocol grpc, not http1"},
		{"grpc method", func(_ *testing.T, p *Plan) { p.Load.Protocol, p.Load.GRPC.Method = loadgen.ProtocolGRPC, "Check" }, `load grpc method "Check": want /package.Service/Method`},
		{"grpc round robin from the host", func(_ *testing.T, p *Plan) {
			p.Load.Protocol, p.Load.GRPC.Balancing = loadgen.ProtocolGRPC, loadgen.BalancingRoundRobin
		}, "load grpc balancing round_robin: the client resolves the app's headless Service by the cluster's DNS; send the load from the cluster"},
		{"grpc balancing", func(_ *testing.T, p *Plan) { p.Load.Protocol, p.Load.GRPC.Balancing = loadgen.ProtocolGRPC, "random" }, `load grpc balancing "random": want pick_first or round_robin`},
		{"load host not a name", func(_ *testing.T, p *Plan) { p.Load.URL, p.Load.Host = "http://front/", "a b" }, `load host "a b": want a host name`},
		{"upstream header without url", func(_ *testing.T, p *Plan) { p.Load.UpstreamHeader = "X-Upstream" }, `load upstreamHeader "X-Upstream": only a proxy in front`},
		{"upstream header not a name", func(_ *testing.T, p *Plan) { p.Load.URL, p.Load.UpstreamHeader = "http://front/", "X Up" }, `load upstreamHeader "X Up": want an HTTP header name`},
		{"resolve from the host", func(_ *testing.T, p *Plan) { p.Load.URL, p.Load.Resolve = "http://front/", "app-headless" }, `load resolve "app-headless": the name is asked from a load pod`},
		{"resolve without a proxy from the host", func(_ *testing.T, p *Plan) { p.Load.Resolve = "web-headless" }, `load resolve "web-headless": the name is asked from a load pod`},
		{"resolve not a name", func(_ *testing.T, p *Plan) { p.Load.From, p.Load.Resolve = LoadFromCluster, "web headless" }, `load resolve "web headless": want a DNS name`},
		{"resolve refresh without a proxy", func(_ *testing.T, p *Plan) {
			p.Load.From, p.Load.Resolve, p.Load.ResolveRefresh = LoadFromCluster, "web-headless", time.Second
		}, `load resolveRefresh 1s (""): only a proxy in front (a load url) refreshes what it resolved; without one, load resolve is measured only`},
		{"resolve refresh without resolve", func(_ *testing.T, p *Plan) {
			p.Load.ResolveRefresh, p.Load.ResolveSetting = time.Second, "nginx resolver valid=1s"
		},
			`load resolveRefresh 1s ("nginx resolver valid=1s"): only a proxy that resolves a name (load resolve) refreshes it`},
		{"resolve refresh negative", func(_ *testing.T, p *Plan) {
			p.Load.URL, p.Load.From, p.Load.Resolve, p.Load.ResolveRefresh = "http://front/", LoadFromCluster, "app-headless", -time.Second
		}, "load resolveRefresh -1s: want a positive duration, or ResolveOnce"},
		{"resolve setting without refresh", func(_ *testing.T, p *Plan) {
			p.Load.URL, p.Load.From, p.Load.Resolve, p.Load.ResolveSetting = "http://front/", LoadFromCluster, "app-headless", "valid=1s"
		}, `load resolveSetting "valid=1s": names the setting of a resolveRefresh, which is not set`},
		{"path without /", func(_ *testing.T, p *Plan) { p.App.Path = "hello" }, `path "hello": must start with /`},
		{"negative ready delay", func(_ *testing.T, p *Plan) { p.App.ReadyDelay = -time.Second }, "readyDelay -1s: want 0 or more"},
		{"Always on a loaded image", func(t *testing.T, p *Plan) {
			container(t, deploymentOf(t, p.App.Objects, "web"), "app").ImagePullPolicy = corev1.PullAlways
		}, "container app: imagePullPolicy Always on image rollcheck-app:t1, which rollcheck loads from the local Docker engine and cannot be pulled"},
		{"loaded image no container runs", func(_ *testing.T, p *Plan) { p.App.Images = append(p.App.Images, "other:1") },
			"image other:1: no container of the manifests' Deployments runs it"},
		{"cluster-scoped object", func(t *testing.T, p *Plan) {
			p.App.Objects = decodeAll(t, webYAML+`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`)
		}, "ClusterRole reader: cluster-scoped objects are not supported"},
		{"a Namespace built in Go", func(_ *testing.T, p *Plan) {
			ns := &corev1.Namespace{}
			ns.Name = "mine"
			p.App.Objects = append(p.App.Objects, ns)
		}, "Namespace mine: cluster-scoped objects are not supported"},
		{"object twice", func(t *testing.T, p *Plan) {
			p.App.Objects = append(p.App.Objects, decodeAll(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\n")...)
		}, "ConfigMap web-config: appears twice in the manifests"},
		{"rollcheck's Service name", func(t *testing.T, p *Plan) {
			p.App.Objects = append(p.App.Objects, decodeAll(t, "apiVersion: v1\nkind: Service\nmetadata: {name: rollcheck-load}\n")...)
		}, "Service rollcheck-load: the name is rollcheck's own load Service"},
		{"no matchLabels", func(t *testing.T, p *Plan) {
			deploymentOf(t, p.App.Objects, "web").Spec.Selector.MatchLabels = nil
		}, "Deployment web: spec.selector.matchLabels is empty"},
		{"empty suite", func(_ *testing.T, p *Plan) { p.Suite = "" }, "suite: empty"},
		{"bad variant name", func(_ *testing.T, p *Plan) { p.Variant.Name = "Web_Drain" },
			`variant name "Web_Drain": want 1-40 lower-case letters, digits and dashes`},
		{"PreStop with two fields", func(_ *testing.T, p *Plan) {
			p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second, HTTPGet: "/prestop"}
		}, "preStop: set exactly one of none, sleep, exec and httpGet (2 set)"},
		{"PreStop with no field", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{} },
			"preStop: set exactly one of none, sleep, exec and httpGet (0 set)"},
		{"sleep not whole seconds", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{Sleep: 1500 * time.Millisecond} },
			"preStop sleep 1.5s: want whole seconds from 1s to 5m"},
		{"sleep too long", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{Sleep: 6 * time.Minute} },
			"preStop sleep 6m0s: want whole seconds"},
		{"exec without command", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{Exec: []string{}} },
			"preStop exec: empty command"},
		{"httpGet without /", func(_ *testing.T, p *Plan) { p.Variant.PreStop = &PreStop{HTTPGet: "prestop"} },
			`preStop httpGet "prestop": the path must start with /`},
		{"negative grace", func(_ *testing.T, p *Plan) { p.Variant.TerminationGracePeriodSeconds = ptr.To[int64](-1) },
			"terminationGracePeriodSeconds -1: want 0 to 600"},
		{"no replicas", func(_ *testing.T, p *Plan) { p.Variant.Replicas = ptr.To[int32](0) }, "replicas 0: want 1 to 10"},
		{"scale-down with 1 replica", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.Replicas = ScaleDown, ptr.To[int32](1)
		}, "scale-down needs at least 2 replicas, the Deployment has 1"},
		{"scale-down of a manifest with 1 replica", func(t *testing.T, p *Plan) {
			p.Disruption.Kind = ScaleDown
			deploymentOf(t, p.App.Objects, "web").Spec.Replicas = ptr.To[int32](1)
		}, "scale-down needs at least 2 replicas, the Deployment has 1"},
		// A Deployment that sets no replicas runs one.
		{"scale-down of a manifest without replicas", func(t *testing.T, p *Plan) {
			p.Disruption.Kind = ScaleDown
			p.App.Objects = decodeAll(t, strings.Replace(webYAML, "  replicas: 3\n", "", 1))
		}, "scale-down needs at least 2 replicas, the Deployment has 1"},
		{"patch with an unknown field", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte(`{"spec":{"replicaz":2}}`) },
			`web-drain: patch of Deployment web: unknown field "replicaz"`},
		{"patch that is a list", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte(`[{"op":"add"}]`) },
			"web-drain: patch of Deployment web: the patch must be an object"},
		{"patch that is a string", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte(`"replicas: 2"`) },
			"the patch must be an object"},
		{"patch that is not YAML", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte("spec: {replicas: [") },
			"patch of Deployment web: not JSON or YAML"},
		{"patch with a wrong type", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte(`{"spec":{"replicas":"two"}}`) },
			"patch of Deployment web: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"},
		{"patch that renames", func(_ *testing.T, p *Plan) { p.Variant.Patch = []byte(`{"metadata":{"name":"other"}}`) },
			`patch of Deployment web: the patch renames the Deployment to "other"`},
		{"invalid outcome", func(_ *testing.T, p *Plan) { p.Variant.Expect = Zero().WithMinSuccessRatioPerDisruption(1.5) },
			"expect minSuccessRatioPerDisruption 1.5: want a ratio between 0 and 1"},
		{"unknown disruption", func(_ *testing.T, p *Plan) { p.Disruption.Kind = "drain" }, `disruption "drain": want rollout-restart`},
		{"too many disruptions", func(_ *testing.T, p *Plan) { p.Disruption.Count = 21 }, "disruption count 21: want 1 to 20"},
		{"rate", func(_ *testing.T, p *Plan) { p.Load.Rate = 2001 }, "load rate 2001 req/s: want 1 to 2000"},
		{"method", func(_ *testing.T, p *Plan) { p.Load.Method = "PUT" }, `load method "PUT": want GET or POST`},
		{"timeout", func(_ *testing.T, p *Plan) { p.Load.Timeout = 3 * time.Minute }, "load timeout 3m0s: want more than 0 and at most 2m"},
		{"rate × timeout", func(_ *testing.T, p *Plan) { p.Load.Rate, p.Load.Timeout = 2000, 2*time.Minute },
			"load rate 2000 req/s with timeout 2m0s: an app that stops answering would hold 240000 requests in flight, more than the load's 20000 workers"},
		{"quiet", func(_ *testing.T, p *Plan) { p.Quiet = -time.Second }, "quiet -1s: want 0 to 5m"},
		{"drainTimeout of another disruption", func(_ *testing.T, p *Plan) { p.Disruption.DrainTimeout = time.Minute },
			"disruption drainTimeout 1m0s: only for drain-node, not rollout-restart"},
		{"drainTimeout too short", func(_ *testing.T, p *Plan) { p.Disruption.Kind, p.Disruption.DrainTimeout = DrainNode, time.Second },
			"disruption drainTimeout 1s: want 5s to 10m"},
		{"pdb with both fields", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind = DrainNode
			p.Variant.PDB = &PDB{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
		}, "pdb: set exactly one of minAvailable and maxUnavailable"},
		{"pdb with no field", func(_ *testing.T, p *Plan) { p.Disruption.Kind, p.Variant.PDB = DrainNode, &PDB{} },
			"pdb: set exactly one of minAvailable and maxUnavailable"},
		{"pdb negative", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.PDB = DrainNode, &PDB{MaxUnavailable: ptr.To(intstr.FromInt32(-1))}
		}, "pdb maxUnavailable -1: want a number of pods (0 or more) or a percentage from 0% to 100%"},
		{"pdb not a percentage", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.PDB = DrainNode, &PDB{MinAvailable: ptr.To(intstr.FromString("half"))}
		}, "pdb minAvailable half: want a number of pods"},
		{"pdb over 100%", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.PDB = DrainNode, &PDB{MinAvailable: ptr.To(intstr.FromString("101%"))}
		}, "pdb minAvailable 101%: want a number of pods"},
		{"pdb beside the manifests' own", func(t *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.PDB = DrainNode, &PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
			p.App.Objects = append(p.App.Objects, decodeAll(t, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n")...)
		}, "pdb: the manifests hold PodDisruptionBudget web already; the eviction API refuses a pod that two budgets select: keep one"},
		{"drainBlocked of another disruption", func(_ *testing.T, p *Plan) { p.Variant.Expect = Zero().WithDrainBlocked() },
			"expect drainBlocked: only a drain-node disruption can be blocked, not rollout-restart"},
		{"drainBlocked of a negative control", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Variant.Expect = DrainNode, Failures().WithDrainBlocked()
		}, "expect drainBlocked: only with zero failures (a blocked drain takes no pod away), not failures-expected"},
		{"drains longer than loadgen allows", func(_ *testing.T, p *Plan) {
			p.Disruption.Kind, p.Disruption.DrainTimeout, p.Disruption.Count = DrainNode, 10*time.Minute, 5
		}, "5 × drain-node disruptions may take up to"},
		{"load longer than loadgen allows", func(_ *testing.T, p *Plan) {
			p.Variant.TerminationGracePeriodSeconds, p.Disruption.Count = ptr.To[int64](600), 3
		}, "3 × rollout-restart disruptions may take up to 1h7m8s with a grace period of 600s, longer than the load may run (1h0m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webPlan(t)
			tc.mod(t, &p)
			_, err := p.Validate()
			if err == nil {
				t.Fatalf("Check: no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("Check: %q\nwant it to contain %q", msg, tc.want)
			}
			if !strings.HasPrefix(msg, p.Variant.Name+": ") {
				t.Errorf("Check: %q does not start by naming the variant", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("Check: %q is not one line", msg)
			}
		})
	}
}

// Check reports every problem at once, on one line, and each stays visible to errors.Is.
func TestCheckReportsEveryProblem(t *testing.T) {
	p := webPlan(t)
	p.App.Objects = decodeAll(t, webYAML+`
---
apiVersion: v1
kind: Namespace
metadata: {name: web}
`)
	container(t, deploymentOf(t, p.App.Objects, "web"), "app").ImagePullPolicy = corev1.PullAlways
	p.App.Path = "hello"
	p.Variant.Name = "Bad Name"
	p.Variant.PreStop = &PreStop{Sleep: 2500 * time.Millisecond, Exec: []string{"sleep", "2"}}
	p.Variant.Patch = []byte(`{"spec":{"replicaz":1}}`)
	p.Load.Method = "DELETE"
	_, err := p.Validate()
	if err == nil {
		t.Fatal("Check: no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("Check: %q is not one line", msg)
	}
	want := []string{
		`path "hello": must start with /`,
		"Namespace web: cluster-scoped objects are not supported",
		"container app: imagePullPolicy Always on image rollcheck-app:t1",
		`variant name "Bad Name"`,
		"preStop sleep 2.5s: want whole seconds",
		"preStop: set exactly one of none, sleep, exec and httpGet (2 set)",
		`load method "DELETE"`,
		`patch of Deployment web: unknown field "replicaz"`,
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("Check: %q\nlacks %q", msg, w)
		}
	}
	if got := strings.Count(msg, "; "); got != len(want)-1 {
		t.Errorf("Check: %d problems joined, want %d: %q", got+1, len(want), msg)
	}
	var multi interface{ Unwrap() []error }
	if !errors.As(err, &multi) || len(multi.Unwrap()) != len(want) {
		t.Errorf("Check: the error does not unwrap to the %d problems", len(want))
	}
	// A port no container declares and the problems of the Deployment it would have found.
	p = webPlan(t)
	p.App.Port, p.Variant.Name = 9090, "Bad Name"
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), "port 9090") || !strings.Contains(err.Error(), `variant name "Bad Name"`) {
		t.Errorf("Check: %v, want both the port and the name", err)
	}
}

func TestCheckWarnsWithoutReadinessProbe(t *testing.T) {
	p := webPlan(t)
	container(t, deploymentOf(t, p.App.Objects, "web"), "app").ReadinessProbe = nil
	warnings, err := p.Validate()
	if err != nil {
		t.Fatalf("Check: %v: a missing readiness probe is a warning, not an error", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Deployment web: container app has no readiness probe") {
		t.Errorf("Check warnings: %q, want one about app's readiness probe", warnings)
	}
	// The sidecar's missing probe does not matter: the load goes to the app container.
	p = webPlan(t)
	if c := container(t, deploymentOf(t, p.App.Objects, "web"), "proxy"); c.ReadinessProbe != nil {
		t.Fatal("the proxy sidecar has a readiness probe")
	}
	if warnings, err := p.Validate(); err != nil || len(warnings) != 0 {
		t.Errorf("Check = %q, %v; want no warning and no error", warnings, err)
	}
	// A patch that adds the probe removes the warning: the Deployment as applied is checked.
	p = webPlan(t)
	container(t, deploymentOf(t, p.App.Objects, "web"), "app").ReadinessProbe = nil
	p.Variant.Patch = []byte(`
spec:
  template:
    spec:
      containers:
      - name: app
        readinessProbe:
          httpGet: {path: /readyz, port: 8080}
`)
	if warnings, err := p.Validate(); err != nil || len(warnings) != 0 {
		t.Errorf("Check with a patch adding the probe = %q, %v; want no warning and no error", warnings, err)
	}
}

func TestWithDefaults(t *testing.T) {
	p := Plan{App: App{RequestDuration: 5 * time.Second}}.WithDefaults()
	if p.App.Path != DefaultPath || p.App.PodHeader == "" || p.Disruption.Count != DefaultCount ||
		p.Load.Rate != DefaultRate || p.Load.Method != "GET" || p.Quiet != DefaultQuiet {
		t.Errorf("WithDefaults = %+v", p)
	}
	if p.Load.Timeout <= 5*time.Second {
		t.Errorf("load timeout %s: want the default plus the request duration (5s)", p.Load.Timeout)
	}
	set := Plan{App: App{Path: "/x", PodHeader: "X-Who"}, Disruption: Disruption{Count: 1},
		Load: Load{Rate: 7, Method: "POST", Timeout: time.Second}, Quiet: time.Second}
	got := set.WithDefaults()
	if got.App.Path != "/x" || got.App.PodHeader != "X-Who" || got.Disruption.Count != 1 || got.Load.Rate != 7 ||
		got.Load.Method != "POST" || got.Load.Timeout != time.Second || got.Quiet != time.Second {
		t.Errorf("WithDefaults changed set fields: %+v", got)
	}
}

// applied is the web Deployment as v changes it, after checking that apply left the
// original alone.
func applied(t *testing.T, v Variant, a App) *appsv1.Deployment {
	t.Helper()
	orig := deploymentOf(t, a.Objects, "web")
	before := orig.DeepCopy()
	d, err := v.apply(orig, a, Load{})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !equality.Semantic.DeepEqual(orig, before) {
		t.Errorf("apply changed the original Deployment")
	}
	if d == orig {
		t.Errorf("apply returned the original Deployment, not a copy")
	}
	return d
}

func TestVariantApplyPreStop(t *testing.T) {
	sidecarHook := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromInt32(9901)}}
	for _, tc := range []struct {
		name string
		ps   *PreStop
		want *corev1.LifecycleHandler // the app container's preStop
	}{
		{"nil keeps the manifest's", nil, &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 3"}}}},
		{"none removes it", &PreStop{None: true}, nil},
		{"sleep", &PreStop{Sleep: 5 * time.Second}, &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
		{"exec", &PreStop{Exec: []string{"/app", "sleep", "5s"}},
			&corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/app", "sleep", "5s"}}}},
		{"httpGet on the app's port", &PreStop{HTTPGet: "/prestop?sleep=5s"},
			&corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/prestop?sleep=5s", Port: intstr.FromInt32(8080)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webPlan(t)
			d := applied(t, Variant{Name: "v", PreStop: tc.ps}, p.App)
			app := container(t, d, "app")
			var got *corev1.LifecycleHandler
			if app.Lifecycle != nil {
				got = app.Lifecycle.PreStop
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("app preStop = %+v, want %+v", got, tc.want)
			}
			// The sidecar keeps its own hook whatever the variant.
			if proxy := container(t, d, "proxy"); proxy.Lifecycle == nil || !equality.Semantic.DeepEqual(proxy.Lifecycle.PreStop, sidecarHook) {
				t.Errorf("proxy preStop = %+v, want its own %+v", proxy.Lifecycle, sidecarHook)
			}
		})
	}
}

// The hook goes to the container that declares the port, wherever it is in the list, and a
// container without a lifecycle gets one.
func TestVariantApplyPreStopToThePortsContainer(t *testing.T) {
	p := webPlan(t)
	dep := deploymentOf(t, p.App.Objects, "web")
	cs := dep.Spec.Template.Spec.Containers
	cs[0], cs[1] = cs[1], cs[0] // proxy first
	container(t, dep, "app").Lifecycle = nil
	d := applied(t, Variant{Name: "v", PreStop: &PreStop{Sleep: 7 * time.Second}}, p.App)
	app := container(t, d, "app")
	if app.Lifecycle == nil || app.Lifecycle.PreStop == nil || app.Lifecycle.PreStop.Sleep == nil ||
		app.Lifecycle.PreStop.Sleep.Seconds != 7 {
		t.Errorf("app lifecycle = %+v, want a 7 s sleep", app.Lifecycle)
	}
	if proxy := container(t, d, "proxy"); proxy.Lifecycle.PreStop.Sleep != nil || proxy.Lifecycle.PreStop.HTTPGet == nil {
		t.Errorf("the sidecar's preStop changed: %+v", proxy.Lifecycle.PreStop)
	}
	// None on a container without a lifecycle is no error and adds nothing.
	d = applied(t, Variant{Name: "v", PreStop: &PreStop{None: true}}, p.App)
	if app := container(t, d, "app"); app.Lifecycle != nil {
		t.Errorf("app lifecycle = %+v, want none", app.Lifecycle)
	}
}

func TestVariantApplyExecIsCopied(t *testing.T) {
	p := webPlan(t)
	cmd := []string{"/app", "sleep", "5s"}
	d := applied(t, Variant{Name: "v", PreStop: &PreStop{Exec: cmd}}, p.App)
	cmd[2] = "50s"
	if got := container(t, d, "app").Lifecycle.PreStop.Exec.Command; !slices.Equal(got, []string{"/app", "sleep", "5s"}) {
		t.Errorf("command %q changed with the variant's slice", got)
	}
}

func TestVariantApplyGraceReplicasAndPatch(t *testing.T) {
	p := webPlan(t)
	d := applied(t, Variant{Name: "v", TerminationGracePeriodSeconds: ptr.To[int64](45), Replicas: ptr.To[int32](5)}, p.App)
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 45 {
		t.Errorf("grace %v, want 45", g)
	}
	if r := d.Spec.Replicas; r == nil || *r != 5 {
		t.Errorf("replicas %v, want 5", r)
	}
	// Nil fields leave the manifest's.
	d = applied(t, Variant{Name: "v"}, p.App)
	if g, r := d.Spec.Template.Spec.TerminationGracePeriodSeconds, d.Spec.Replicas; *g != 20 || *r != 3 {
		t.Errorf("grace %d, replicas %d; want the manifest's 20 and 3", *g, *r)
	}

	// A patch adding an env var to the app container merges by name: the container keeps its
	// other fields and env vars, the sidecar is untouched. The patch comes after the fields.
	v := Variant{Name: "v", TerminationGracePeriodSeconds: ptr.To[int64](45), Patch: []byte(`
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 60
      containers:
      - name: app
        env:
        - {name: DRAIN_DELAY, value: 5s}
`)}
	d = applied(t, v, p.App)
	if n := len(d.Spec.Template.Spec.Containers); n != 2 {
		t.Fatalf("%d containers after the patch, want 2", n)
	}
	app := container(t, d, "app")
	var names []string
	for _, e := range app.Env {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"DRAIN_DELAY", "POD_NAME"}) {
		t.Errorf("app env %q, want DRAIN_DELAY merged into POD_NAME", names)
	}
	for _, e := range app.Env {
		if e.Name == "DRAIN_DELAY" && e.Value != "5s" {
			t.Errorf("DRAIN_DELAY = %q, want 5s", e.Value)
		}
	}
	if app.Image != appImage || len(app.Ports) != 1 || app.ReadinessProbe == nil || app.Lifecycle == nil {
		t.Errorf("the patch lost the app container's other fields: %+v", app)
	}
	orig := container(t, deploymentOf(t, p.App.Objects, "web"), "proxy")
	if proxy := container(t, d, "proxy"); !equality.Semantic.DeepEqual(proxy, orig) {
		t.Errorf("the patch changed the sidecar: %+v", proxy)
	}
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; *g != 60 {
		t.Errorf("grace %d, want the patch's 60 (the patch applies after the fields)", *g)
	}
	if d.Name != "web" || d.Spec.Selector.MatchLabels["app"] != "web" {
		t.Errorf("the patch changed the name or selector: %s %v", d.Name, d.Spec.Selector)
	}
}

func TestVariantApplyPullPolicy(t *testing.T) {
	p := webPlan(t)
	d := applied(t, Variant{Name: "v"}, p.App)
	if pp := container(t, d, "app").ImagePullPolicy; pp != corev1.PullNever {
		t.Errorf("app imagePullPolicy %q, want Never: its image is loaded", pp)
	}
	if pp := d.Spec.Template.Spec.InitContainers[0].ImagePullPolicy; pp != corev1.PullNever {
		t.Errorf("init container imagePullPolicy %q, want Never: it runs the loaded image", pp)
	}
	if pp := container(t, d, "proxy").ImagePullPolicy; pp != corev1.PullIfNotPresent {
		t.Errorf("proxy imagePullPolicy %q, want the manifest's IfNotPresent: its image is pulled", pp)
	}
	// With no image loaded, nothing changes.
	p.App.Images = nil
	d = applied(t, Variant{Name: "v"}, p.App)
	if pp := container(t, d, "app").ImagePullPolicy; pp != corev1.PullIfNotPresent {
		t.Errorf("app imagePullPolicy %q, want IfNotPresent when no image is loaded", pp)
	}
	// A patch that swaps in a loaded image gets Never too: the policy follows the patch.
	p.App.Images = []string{"rollcheck-app:t2"}
	d = applied(t, Variant{Name: "v", Patch: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"rollcheck-app:t2"}]}}}}`)}, p.App)
	if pp := container(t, d, "proxy").ImagePullPolicy; pp != corev1.PullNever {
		t.Errorf("patched proxy imagePullPolicy %q, want Never", pp)
	}
}

func TestVariantApplyNeedsThePort(t *testing.T) {
	p := webPlan(t)
	p.App.Port = 9090
	if _, err := (Variant{Name: "v"}).apply(deploymentOf(t, p.App.Objects, "web"), p.App, p.Load); err == nil ||
		!strings.Contains(err.Error(), "port 9090: no container of Deployment web declares it") {
		t.Errorf("apply: %v, want the port error", err)
	}
}

func TestApplied(t *testing.T) {
	for _, tc := range []struct {
		name string
		ps   *PreStop
		want string
	}{
		{"none", &PreStop{None: true}, "none"},
		{"sleep", &PreStop{Sleep: 5 * time.Second}, "sleep:5s"},
		{"exec", &PreStop{Exec: []string{"/app", "sleep", "5s"}}, "exec:/app sleep 5s"},
		{"httpGet", &PreStop{HTTPGet: "/path"}, "httpGet:/path"},
		{"the manifest's", nil, "exec:sh -c sleep 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webPlan(t)
			p.Variant = Variant{Name: "kept", PreStop: tc.ps, TerminationGracePeriodSeconds: ptr.To[int64](33), Replicas: ptr.To[int32](4)}
			cfg := p.Applied()
			if cfg.PreStop.String() != tc.want {
				t.Errorf("PreStop = %q, want %q", cfg.PreStop, tc.want)
			}
			if tc.ps != nil && !reflect.DeepEqual(cfg.PreStop, *tc.ps) {
				t.Errorf("PreStop = %#v, want the variant's %#v", cfg.PreStop, *tc.ps)
			}
			if cfg.App != "web" || cfg.GraceSeconds != 33 || cfg.Replicas != 4 || cfg.Name != "kept" ||
				cfg.Path != "/hello" || cfg.Rate != DefaultRate || cfg.Count != DefaultCount || cfg.Disruption != RolloutRestart {
				t.Errorf("Applied = %+v, want app web, grace 33, replicas 4, the name kept and the plan's defaults", cfg)
			}
		})
	}

	// A Deployment that sets neither grace nor replicas: the API server's defaults; a hook on
	// the sidecar only is not the app's.
	p := webPlan(t)
	d := deploymentOf(t, p.App.Objects, "web")
	d.Spec.Replicas, d.Spec.Template.Spec.TerminationGracePeriodSeconds = nil, nil
	container(t, d, "app").Lifecycle = nil
	if cfg := p.Applied(); !cfg.PreStop.None || cfg.GraceSeconds != 30 || cfg.Replicas != 1 {
		t.Errorf("Applied = %+v, want preStop none, grace 30, replicas 1", cfg)
	}
	container(t, d, "app").Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	if cfg := p.Applied(); cfg.PreStop.String() != "tcpSocket" {
		t.Errorf("PreStop = %q, want tcpSocket", cfg.PreStop)
	}
	// A plan whose Deployment cannot be built: the plan's part only.
	p.App.Port = 9090
	if cfg := p.Applied(); cfg.App != "" || cfg.Name != "web-drain" {
		t.Errorf("Applied of a plan without the port = %+v, want no Deployment part", cfg)
	}
}

func TestPreStopOutlastingGraceWarns(t *testing.T) {
	p := webPlan(t)
	p.Variant.PreStop = &PreStop{Exec: []string{"/app", "sleep", "40s"}}
	p.Variant.TerminationGracePeriodSeconds = ptr.To[int64](30)
	warnings, err := p.Validate()
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "preStop (40s) is longer than terminationGracePeriodSeconds (30s)") {
		t.Errorf("Validate = %q, %v; want one warning about the preStop outlasting the grace period", warnings, err)
	}
	// The manifest's own `sh -c "sleep 3"` is read as audit reads it: 3 s, past a grace of 2.
	p.Variant.PreStop = nil
	p.Variant.TerminationGracePeriodSeconds = ptr.To[int64](2)
	if warnings, err := p.Validate(); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "preStop (3s) is longer than terminationGracePeriodSeconds (2s)") {
		t.Errorf("Validate of the manifest's sh -c preStop = %q, %v; want one warning about it outlasting the grace period", warnings, err)
	}
	p.Variant.PreStop = &PreStop{Exec: []string{"/app", "sleep", "40s"}}
	p.Variant.TerminationGracePeriodSeconds = ptr.To[int64](40)
	if warnings, err := p.Validate(); err != nil || len(warnings) != 0 {
		t.Errorf("Validate with grace = preStop: %q, %v; want no warning", warnings, err)
	}
	// A native sleep as long as the grace period: the API server refuses it, so does Validate.
	p.Variant.PreStop = &PreStop{Sleep: 40 * time.Second}
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), "must be shorter than terminationGracePeriodSeconds (40s)") {
		t.Errorf("native sleep = grace: %v, want the API server's rule", err)
	}
	p.Variant.PreStop = &PreStop{Sleep: 39 * time.Second}
	if _, err := p.Validate(); err != nil {
		t.Errorf("native sleep 39s, grace 40s: %v", err)
	}
}

// A preStop's JSON reads back as it was (rows written before PreStop was typed: internal/oldjson).
// (Its length: TestPreStopDuration.)
func TestPreStopJSON(t *testing.T) {
	for _, ps := range []PreStop{{None: true}, {Sleep: 5 * time.Second}, {Exec: []string{"/app", "sleep", "5s"}}, {HTTPGet: "/prestop?sleep=1.5s"}, {TCPSocket: true}} {
		b, err := json.Marshal(ps)
		var back PreStop
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		if err != nil || !reflect.DeepEqual(back, ps) {
			t.Errorf("%s: JSON %s read back as %#v, %v", ps, b, back, err)
		}
	}
}

func TestPlanObjects(t *testing.T) {
	p := webPlan(t)
	p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second}
	p.Variant.Replicas = ptr.To[int32](2)
	orig := deploymentOf(t, p.App.Objects, "web").DeepCopy()
	r := mustResolve(t, p)
	objs, err := r.Objects("rc-web-drain", 30080)
	if err != nil {
		t.Fatalf("Objects: %v", err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, kindOf(o)+"/"+o.GetName())
		if o.GetNamespace() != "rc-web-drain" {
			t.Errorf("%s %s in namespace %q, want rc-web-drain", kindOf(o), o.GetName(), o.GetNamespace())
		}
	}
	if got, want := strings.Join(kinds, " "), "ConfigMap/web-config Service/web Deployment/web Service/rollcheck-load"; got != want {
		t.Fatalf("Objects = %s, want %s", got, want)
	}
	dep := objs[2].(*appsv1.Deployment)
	if r := dep.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("replicas %v, want the variant's 2", r)
	}
	if h := container(t, dep, "app").Lifecycle.PreStop; h.Sleep == nil || h.Sleep.Seconds != 5 || h.Exec != nil {
		t.Errorf("app preStop %+v, want the variant's sleep 5", h)
	}
	if pp := container(t, dep, "app").ImagePullPolicy; pp != corev1.PullNever {
		t.Errorf("app imagePullPolicy %q, want Never", pp)
	}
	// The manifests are left as they were.
	if now := deploymentOf(t, p.App.Objects, "web"); now.Namespace != "" || *now.Spec.Replicas != 3 ||
		now.Spec.Template.Spec.Containers[0].Lifecycle.PreStop.Exec == nil || orig.Name != now.Name {
		t.Errorf("Objects changed the manifests' Deployment: %+v", now)
	}
	for _, o := range p.App.Objects {
		if o.GetNamespace() != "" {
			t.Errorf("Objects set the namespace of the manifests' %s %s", kindOf(o), o.GetName())
		}
	}

	// rollcheck's own Service selects the Deployment's pods on the app's port, on the NodePort.
	svc := objs[3].(*corev1.Service)
	if svc.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("load Service type %q, want NodePort", svc.Spec.Type)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 30080 || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(8080) ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("load Service ports %+v, want nodePort 30080 to port 8080", svc.Spec.Ports)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("load Service has no selector")
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("load Service selector %s=%s does not select the pods %v", k, v, dep.Spec.Template.Labels)
		}
	}
	if svc.Labels[PartOfLabel] != PartOfValue {
		t.Errorf("load Service labels %v, want %s=%s", svc.Labels, PartOfLabel, PartOfValue)
	}

	// Without a NodePort the Service is a plain ClusterIP one.
	objs, err = r.Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	if svc := objs[len(objs)-1].(*corev1.Service); svc.Spec.Type != "" || svc.Spec.Ports[0].NodePort != 0 {
		t.Errorf("load Service without a NodePort: type %q, nodePort %d", svc.Spec.Type, svc.Spec.Ports[0].NodePort)
	}

	// A Plan that does not validate does not resolve: it has no objects.
	p.App.Port = 9090
	if r, err := p.Resolve(); err == nil || r != nil {
		t.Errorf("Resolve of a bad plan = %v, %v", r, err)
	}
	// What a Resolved returns is a copy: changing it changes nothing of the next call's.
	objs[0].SetName("changed")
	if again, _ := r.Objects("ns", 0); again[0].GetName() == "changed" {
		t.Error("Objects returned an object the Resolved keeps")
	}
}

// Where the load comes from is a dimension of the plan: host by default, cluster on request,
// nothing else; the row's configuration says it (and its name, when it is not the default).
func TestLoadFrom(t *testing.T) {
	p := webPlan(t)
	if got := p.WithDefaults().Load.From; got != LoadFromHost {
		t.Errorf("default load from %q, want host", got)
	}
	if a := p.Applied(); a.LoadFrom != LoadFromHost || strings.Contains(a.String(), "load=") {
		t.Errorf("host row: %+v named %q; want loadFrom host, unsaid in the name", a.LoadFrom, a)
	}
	p.Load.From = LoadFromCluster
	if _, err := p.Validate(); err != nil {
		t.Fatalf("Validate with load from the cluster: %v", err)
	}
	if a := p.Applied(); a.LoadFrom != LoadFromCluster || !strings.HasSuffix(a.Shape(), " load=cluster") {
		t.Errorf("cluster row: loadFrom %q, shape %q", a.LoadFrom, a.Shape())
	}
	p.Load.From = "moon"
	if _, err := p.Validate(); err == nil || !strings.Contains(err.Error(), `load from "moon": want host or cluster`) {
		t.Errorf("Validate with load from the moon: %v", err)
	}
}

// Several load pods share the rate, from the cluster only.
func TestLoadPods(t *testing.T) {
	p := webPlan(t)
	p.Load.From, p.Load.Pods = LoadFromCluster, 3
	if _, err := p.Validate(); err != nil {
		t.Fatalf("3 load pods from the cluster: %v", err)
	}
	if a := p.Applied(); a.LoadPods != 3 || !strings.HasSuffix(a.Shape(), " load=cluster×3") {
		t.Errorf("applied %d pods, shape %q", a.LoadPods, a.Shape())
	}
	for _, tc := range []struct {
		from LoadFrom
		pods int
		rate int
		want string
	}{
		{LoadFromHost, 2, 100, "several load pods need load from the cluster"},
		{LoadFromCluster, 11, 100, "load pods 11: want 1 to 10"},
		{LoadFromCluster, -1, 100, "load pods -1: want 1 to 10"},
		{LoadFromCluster, 5, 4, "each pod needs at least 1 req/s"},
	} {
		q := webPlan(t)
		q.Load.From, q.Load.Pods, q.Load.Rate = tc.from, tc.pods, tc.rate
		if _, err := q.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s ×%d at %d req/s: %v, want %q", tc.from, tc.pods, tc.rate, err, tc.want)
		}
	}
	if a := webPlan(t).Applied(); a.LoadPods != 0 {
		t.Errorf("one pod (the default) is left out of the row: %d", a.LoadPods)
	}
}

// A gRPC load that balances round robin gets a headless twin of the load Service, on the app's
// port; pick_first does not; the row's shape names the client.
func TestObjectsGRPCHeadless(t *testing.T) {
	p := webPlan(t)
	p.Load.Protocol, p.Load.From = loadgen.ProtocolGRPC, LoadFromCluster
	p.Load.GRPC.Balancing = loadgen.BalancingRoundRobin
	objs, err := mustResolve(t, p).Objects("ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	var headless *corev1.Service
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok && s.Name == LoadHeadlessServiceName {
			headless = s
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || headless.Spec.Ports[0].Port != p.App.Port || headless.Spec.Selector["app.kubernetes.io/name"] == "" && len(headless.Spec.Selector) == 0 {
		t.Fatalf("headless Service %+v", headless)
	}
	if got := p.Applied().Shape(); !strings.Contains(got, " grpc=round_robin") {
		t.Errorf("shape %q names no client", got)
	}
	p.Load.GRPC.Balancing = loadgen.BalancingPickFirst
	objs, _ = mustResolve(t, p).Objects("ns", 0)
	for _, o := range objs {
		if o.GetName() == LoadHeadlessServiceName {
			t.Error("pick_first got a headless Service")
		}
	}
}

// A check's httpGet preStop goes to the app's port in the scheme the port speaks: HTTPS when
// the load says the app serves TLS there (protocol http2), the API's default (HTTP) otherwise.
func TestVariantApplyPreStopScheme(t *testing.T) {
	a := webPlan(t).App
	v := Variant{Name: "v", PreStop: &PreStop{HTTPGet: "/drain"}}
	for _, tc := range []struct {
		load Load
		want corev1.URIScheme
	}{{Load{}, ""}, {Load{Protocol: loadgen.ProtocolH2C}, ""}, {Load{Protocol: loadgen.ProtocolHTTP2}, corev1.URISchemeHTTPS}} {
		d, err := v.apply(deploymentOf(t, a.Objects, "web"), a, tc.load)
		if err != nil {
			t.Fatal(err)
		}
		h := container(t, d, "app").Lifecycle.PreStop.HTTPGet
		if h == nil || h.Path != "/drain" || h.Port.IntValue() != int(a.Port) || h.Scheme != tc.want {
			t.Errorf("load protocol %q: preStop httpGet %+v, want /drain on %d with scheme %q", tc.load.Protocol, h, a.Port, tc.want)
		}
	}
}
