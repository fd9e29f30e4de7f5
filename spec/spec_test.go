package spec

import (
	"bytes"
	"github.com/rollcheck/rollcheck/loadgen"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rollcheck/rollcheck/check"
)

// Each bad check file gives one error, on one line, saying what is wrong.
func TestBadChecks(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"no-deployment.yaml", "the manifests hold no Deployment"},
		{"several-unnamed.yaml", "the manifests hold 2 Deployments (web, api): name the one under test"},
		{"deployment-not-found.yaml", `deployment "nope": not in the manifests (they hold web, api)`},
		{"pull-always.yaml", "imagePullPolicy Always on image example/web:dev"},
		{"port-undeclared.yaml", "port 9999: no container of Deployment web declares it (declared: web:8080)"},
		{"path-no-slash.yaml", `path "healthz": must start with /`},
		{"bad-patch.yaml", `variant prestop-5s: patch of Deployment web: unknown field "notAField"`},
		{"patch-not-object.yaml", "variant prestop-5s: patch of Deployment web: the patch must be an object"},
		{"unknown-field.yaml", `unknown field "app.colour"`},
		{"duplicate-field.yaml", `key "kind" already set`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, err := Load("testdata/" + tc.file)
			if err == nil {
				_, _, err = plansOf(c.Plans())
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant it to contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if strings.Count(msg, tc.want) != 1 {
				t.Errorf("the problem is said %d times, want once: %q", strings.Count(msg, tc.want), msg)
			}
		})
	}
}

// Every problem of a check is reported at once.
func TestAllProblemsAtOnce(t *testing.T) {
	c, err := Parse([]byte(`
apiVersion: rollcheck.io/v1
kind: Chek
app: {manifests: [web.yaml], port: 70000, path: x}
disruptions: [{kind: explode, count: 99}]
load: {rate: -1, method: PUT}
variants:
- name: Bad_Name
  expect: {failures: 3}
- name: ok
  preStop: {sleep: 1500ms, httpGet: /x}
  expect: {maxFailureRatio: 2}
`), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = plansOf(c.Plans())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`apiVersion "rollcheck.io/v1"`, `kind "Chek"`, "expect.failures 3: only 0", "port 70000",
		`path "x"`, `disruption "explode"`, "disruption count 99", "load rate -1", `load method "PUT"`,
		"preStop: set exactly one", "preStop sleep 1.5s", "expect at-most 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
}

func TestGoodCheck(t *testing.T) {
	c, err := Load("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "good" {
		t.Errorf("name %q, want the file's name", c.Name())
	}
	plans, warnings, err := plansOf(c.Plans())
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Plans: %v, warnings %v", err, warnings)
	}
	if len(plans) != 2 {
		t.Fatalf("%d plans, want 2 (2 variants × 1 disruption)", len(plans))
	}
	asIs, fixed := plans[0], plans[1]
	if asIs.Variant.Expect.Kind != check.ExpectBounds || asIs.Variant.Expect.MinSuccessRatioPerDisruption != 0.99 {
		t.Errorf("as-is expect = %+v", asIs.Variant.Expect)
	}
	if fixed.Variant.Expect.Kind != check.ExpectZero || fixed.Variant.PreStop.Sleep.Seconds() != 5 || *fixed.Variant.TerminationGracePeriodSeconds != 30 {
		t.Errorf("prestop-5s variant = %+v", fixed.Variant)
	}
	objs, err := mustResolve(t, fixed).Objects("ns", 30080)
	if err != nil {
		t.Fatal(err)
	}
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, o := range objs {
		if o.GetNamespace() != "ns" {
			t.Errorf("%s in namespace %q", o.GetName(), o.GetNamespace())
		}
		switch o := o.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.Service:
			svc = o
		}
	}
	c0 := dep.Spec.Template.Spec.Containers[0]
	if c0.Lifecycle == nil || c0.Lifecycle.PreStop == nil || c0.Lifecycle.PreStop.Sleep == nil || c0.Lifecycle.PreStop.Sleep.Seconds != 5 {
		t.Errorf("preStop = %+v, want the native sleep action for 5 s", c0.Lifecycle)
	}
	if c0.ImagePullPolicy != corev1.PullNever {
		t.Errorf("imagePullPolicy %q for a loaded image, want Never", c0.ImagePullPolicy)
	}
	if svc == nil || svc.Name != check.LoadServiceName || svc.Spec.Ports[0].NodePort != 30080 || svc.Spec.Selector["app"] != "web" {
		t.Errorf("load Service = %+v", svc)
	}
}

func TestNoReadinessProbeWarns(t *testing.T) {
	c, err := Load("testdata/no-readiness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plans, warnings, err := plansOf(c.Plans())
	if err != nil || len(plans) != 2 {
		t.Fatalf("Plans: %d plans, %v", len(plans), err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no readiness probe") {
		t.Errorf("warnings = %q, want one about the readiness probe", warnings)
	}
}

// A negative control names its mechanism by phase; an unknown phase, or one listed twice, is an
// error.
func TestFailuresExpectedPhases(t *testing.T) {
	doc := func(phase string) []byte {
		return []byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
disruptions: [{kind: rollout-restart}]
variants:
- name: as-is
  expect: {failuresExpected: {classes: [eof, reset], phases: [` + phase + `]}}
`)
	}
	c, err := Parse(doc("propagation"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := plansOf(c.Plans())
	if err != nil {
		t.Fatal(err)
	}
	if e := plans[0].Variant.Expect; e.Kind != check.ExpectFailures || len(e.Phases) != 1 || e.Phases[0] != "propagation" {
		t.Errorf("expect %+v, want failures by propagation", e)
	}
	c, err = Parse(doc("lag"), "testdata")
	if err == nil {
		_, _, err = plansOf(c.Plans())
	}
	if err == nil || !strings.Contains(err.Error(), `expect phase "lag": want one of proxy-no-upstream|sigkill|goaway|connection-age|in-flight-cut|`) {
		t.Errorf("unknown phase: %v", err)
	}
	// Several phases keep their order: the first is the one the variant is for.
	c, err = Parse(doc("in-flight-cut, propagation"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if plans, _, err = plansOf(c.Plans()); err != nil {
		t.Fatal(err)
	}
	if e := plans[0].Variant.Expect; e.Mechanism() != "in-flight-cut" || e.String() != "failures (eof|reset) by in-flight-cut (also propagation)" {
		t.Errorf("expect %+v (%s), want failures by in-flight-cut, also propagation", e, e)
	}
	c, err = Parse(doc("propagation, propagation"), "testdata")
	if err == nil {
		_, _, err = plansOf(c.Plans())
	}
	if err == nil || !strings.Contains(err.Error(), `expect phase "propagation": listed twice`) {
		t.Errorf("a phase listed twice: %v", err)
	}
}

// load.from picks where the load is sent from; the model refuses anything but host and cluster.
func TestLoadFrom(t *testing.T) {
	for from, want := range map[string]string{"cluster": "", "host": "", "moon": `load from "moon": want host or cluster`} {
		c, err := Parse(withLoad("from: "+from), "testdata")
		if err != nil {
			t.Fatal(err)
		}
		plans, _, err := plansOf(c.Plans())
		switch {
		case want == "" && (err != nil || string(plans[0].Load.From) != from):
			t.Errorf("load.from %s: %v, plans %+v", from, err, plans)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("load.from %s: %v, want %q", from, err, want)
		}
	}
}

// quiet: is the quiet time; settle:, its former name, still gives it, with a warning; both, or
// a length not above 0, are refused.
func TestQuietAndItsFormerNameSettle(t *testing.T) {
	for _, tc := range []struct {
		top         string
		quiet       time.Duration
		warn, error string
	}{
		{"", check.DefaultQuiet, "", ""},
		{"quiet: 7s", 7 * time.Second, "", ""},
		{"settle: 6s", 6 * time.Second, "settle: deprecated, now named quiet", ""},
		{"settle: 6s\nquiet: 7s", 0, "", "settle and quiet: settle is quiet's former name; give quiet only"},
		{"quiet: 0s", 0, "", "quiet 0s: want more than 0"},
		{"settle: -1s", 0, "settle: deprecated", "settle -1s: want more than 0"},
	} {
		c, err := Parse(append(withLoad("rate: 50"), tc.top+"\n"...), "testdata")
		if err != nil {
			t.Fatalf("%q: %v", tc.top, err)
		}
		plans, warnings, err := plansOf(c.Plans())
		if w := strings.Join(warnings, "; "); (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
			t.Errorf("%q: warnings %q, want %q", tc.top, warnings, tc.warn)
		}
		switch {
		case tc.error != "":
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Errorf("%q: %v, want %q", tc.top, err, tc.error)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.top, err)
		case plans[0].WithDefaults().Quiet != tc.quiet:
			t.Errorf("%q: quiet %s, want %s", tc.top, plans[0].WithDefaults().Quiet, tc.quiet)
		}
	}
}

// The warnings of the check file itself come with those of its variants: images that an
// existing cluster does not get, beside a variant's missing readiness probe.
func TestCheckAndVariantWarningsTogether(t *testing.T) {
	c, err := Parse([]byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [noprobe.yaml], images: [example/web:dev], port: 8080}
disruptions: [{kind: rollout-restart}]
variants: [{name: as-is, expect: {failures: 0}}]
cluster: {context: staging}
`), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	_, warnings, err := plansOf(c.Plans())
	w := strings.Join(warnings, "; ")
	if err != nil || !strings.Contains(w, "not loaded into an existing cluster") || !strings.Contains(w, "no readiness probe") {
		t.Errorf("Plans: %v, warnings %q; want the images' and the readiness probe's", err, warnings)
	}
}

// withLoad is a check file of web.yaml whose load section holds load.
func withLoad(load string) []byte {
	return []byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
load: {` + load + `}
disruptions: [{kind: rollout-restart}]
variants: [{name: as-is, expect: {failures: 0}}]
`)
}

// A proxy's refresh in a check file reaches the plan, named as the check file names it; it needs
// resolve, and a length.
func TestResolveRefresh(t *testing.T) {
	for load, want := range map[string]string{
		"resolve: web-headless, resolveRefresh: 1s": "",
		"resolveRefresh: 1s":                        "only a proxy that resolves a name (load resolve) refreshes it",
		"resolve: web-headless, resolveRefresh: 0s": "load.resolveRefresh 0s: want more than 0",
	} {
		c, err := Parse(withLoad("from: cluster, url: http://front/, "+load), "testdata")
		if err != nil {
			t.Fatal(err)
		}
		plans, _, err := plansOf(c.Plans())
		switch {
		case want == "" && (err != nil || plans[0].Load.ResolveRefresh != time.Second || plans[0].Load.ResolveSetting != "the proxy's refresh 1s (load.resolveRefresh)"):
			t.Errorf("%s: %v, load %+v", load, err, plans)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", load, err, want)
		}
	}
}

// resolve without url: the name reaches the plan (its DNS window measured only) from the
// cluster; from the host, or with a refresh no proxy has, the check file is refused as the plan
// would be.
func TestResolveWithoutURL(t *testing.T) {
	for load, want := range map[string]string{
		"from: cluster, resolve: web-headless":                     "",
		"resolve: web-headless":                                    `load resolve "web-headless": the name is asked from a load pod`,
		"from: cluster, resolve: web-headless, resolveRefresh: 1s": "only a proxy in front (a load url) refreshes what it resolved",
	} {
		c, err := Parse(withLoad(load), "testdata")
		if err != nil {
			t.Fatal(err)
		}
		plans, _, err := plansOf(c.Plans())
		switch {
		case want == "" && (err != nil || plans[0].Load.Resolve != "web-headless" || plans[0].Load.Through()):
			t.Errorf("%s: %v, load %+v", load, err, plans)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", load, err, want)
		}
	}
}

// A gRPC load in a check file: the protocol, the method, a message in base64 (protobuf's wire
// format) and the client's balancing reach the plan; a misspelt key is refused.
func TestGRPCLoad(t *testing.T) {
	doc := []byte(`
apiVersion: rollcheck.io/v1alpha1
kind: Check
app: {manifests: [web.yaml], port: 8080}
load: {from: cluster, protocol: grpc, grpc: {method: /rollcheck.app.v1.App/Sleep, message: CAM=, balancing: round_robin, waitForReady: true}}
disruptions: [{kind: rollout-restart}]
variants:
- name: as-is
  expect: {failures: 0}
`)
	c, err := Parse(doc, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := plansOf(c.Plans())
	if err != nil {
		t.Fatal(err)
	}
	l := plans[0].Load
	if l.Protocol != loadgen.ProtocolGRPC || l.GRPC.Method != "/rollcheck.app.v1.App/Sleep" || !bytes.Equal(l.GRPC.Message, []byte{8, 3}) ||
		l.GRPC.Balancing != loadgen.BalancingRoundRobin || !l.GRPC.WaitForReady || l.GRPC.Retry {
		t.Errorf("load %+v", l)
	}
	if _, err := Parse(bytes.Replace(doc, []byte("waitForReady"), []byte("waitUntilReady"), 1), "testdata"); err == nil || !strings.Contains(err.Error(), "waitUntilReady") {
		t.Errorf("a misspelt key: %v", err)
	}
}

// The cluster section names an existing cluster by a kubeconfig file, a context or both: a
// context alone is looked up in kubectl's files when the check runs, not here; an empty section
// is an error; the kubeconfig is a path relative to the check file, and load comes from inside.
func TestClusterSection(t *testing.T) {
	for _, tc := range []struct{ cluster, want, path, context string }{
		{"{context: staging}", "", "", "staging"},
		{"{kubeconfig: web.yaml}", "", filepath.Join("testdata", "web.yaml"), ""},
		{"{kubeconfig: web.yaml, context: ci}", "", filepath.Join("testdata", "web.yaml"), "ci"},
		{"{}", "cluster: name the existing cluster by kubeconfig (a file), context (one of KUBECONFIG's files, else of ~/.kube/config) or both", "", ""},
		{"{kubeconfig: nope}", "cluster.kubeconfig " + filepath.Join("testdata", "nope") + ": no such file", "", ""},
		{"{contxt: staging}", `unknown field "cluster.contxt"`, "", ""},
	} {
		c, err := Parse(append(withLoad("from: cluster"), []byte("cluster: "+tc.cluster+"\n")...), "testdata")
		var plans []check.Plan
		if err == nil {
			plans, _, err = plansOf(c.Plans())
		}
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("cluster: %s: %v, want %q", tc.cluster, err, tc.want)
		case tc.want == "" && err != nil:
			t.Errorf("cluster: %s: %v", tc.cluster, err)
		case tc.want == "" && (c.KubeconfigPath() != tc.path || c.Cluster.Context != tc.context || plans[0].Load.From != check.LoadFromCluster):
			t.Errorf("cluster: %s: kubeconfig %q, context %q, load from %s; want %q, %q, cluster", tc.cluster, c.KubeconfigPath(), c.Cluster.Context, plans[0].Load.From, tc.path, tc.context)
		}
	}
	if c, err := Parse(withLoad("from: cluster"), "testdata"); err != nil || c.KubeconfigPath() != "" {
		t.Errorf("no cluster section: %v, kubeconfig %q", err, c.KubeconfigPath())
	}
}

// Keys match their field's name exactly, as in Kubernetes' own decoding, and an explicit zero is
// validated, not taken for the default. Before, encoding/json matched keepalive, RATE and Load to
// their fields in any case, and rate: 0 and count: 0 became 100 and 3 without a word.
func TestParseIsCaseSensitiveAndTakesZeros(t *testing.T) {
	good, err := os.ReadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ add, want string }{
		{"load: {keepalive: true}\n", `unknown field "load.keepalive"`},
		{"load: {RATE: 50}\n", `unknown field "load.RATE"`},
		{"Load: {rate: 50}\n", `unknown field "Load"`},
		{"load: {rate: 0}\n", "load.rate 0: want requests per second above 0"},
		{"load: {pods: 0, from: cluster}\n", "load.pods 0: want 1 to"},
		{"repeat: 0\n", "repeat 0: want 1 to"},
	} {
		c, err := Parse(append(append([]byte{}, good...), tc.add...), "testdata")
		if err == nil {
			_, _, err = plansOf(c.Plans())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.add, err, tc.want)
		}
	}
	zero := strings.Replace(string(good), "count: 3", "count: 0", 1)
	c, err := Parse([]byte(zero), "testdata")
	if err == nil {
		_, _, err = plansOf(c.Plans())
	}
	if err == nil || !strings.Contains(err.Error(), "disruptions[0].count 0: want 1 or more") {
		t.Errorf("count: 0: %v", err)
	}
	if c, err := Parse(good, "testdata"); err != nil {
		t.Error(err)
	} else if _, _, err := plansOf(c.Plans()); err != nil {
		t.Errorf("the good file: %v", err)
	}
}
