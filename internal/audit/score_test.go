package audit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/timeline"
)

// kindWindows is the bundled windows file, as written: control plane p99 146.6ms, kube-proxy
// 2.9s, data plane 1.045s (so a Service's routed window is 1.045s, preStop 3s, grace 6s), request
// p99 56.8ms.
func kindWindows(t testing.TB) *WindowsFile {
	f, err := DecodeWindows(bytes.NewReader(bundledWindows))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The bundled windows file is what rollcheck windows extract makes of the row fixtures (the run
// behind docs/matrix.md, 6713fda, trimmed to what extraction reads).
func TestExtractMatchesTheBundledWindows(t *testing.T) {
	_, f := extracted(t, "testdata/kind-run")
	b, _ := f.Encode()
	if string(b) != string(bundledWindows) {
		t.Errorf("extract differs from windows-kind.json:\n%s", b)
	}
}

// Bundled says whose windows they are in every output: its Source begins with BundledSource,
// and the report's table and JSON carry it.
func TestBundledSaysWhoseTheyAre(t *testing.T) {
	w, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Measured.Source, BundledSource) || !strings.Contains(w.Measured.Source, "kind-run") {
		t.Errorf("source %q", w.Measured.Source)
	}
	inv, err := ReadManifests("testdata/manifests")
	if err != nil {
		t.Fatal(err)
	}
	rep := Audit(inv, w, Options{Rate: 100})
	var table, js bytes.Buffer
	if err := rep.Table(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.JSON(&js); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": table.String(), "json": js.String()} {
		if !strings.Contains(out, BundledSource) {
			t.Errorf("the %s does not say the windows are the bundled ones:\n%s", name, out)
		}
	}
}

func TestDecodeWindowsStrict(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"schemaVersion":2,"measured":{"source":"x"},"windows":{"controlPlane":{"n":1,"p99":"1s"}}}`, "schemaVersion 2"},
		{`{"schemaVersion":1,"measured":{"source":"x"},"windows":{"controlPlane":{"n":1,"p99":"1s"}},"extra":1}`, "unknown field"},
		{`{"schemaVersion":1,"measured":{"source":"x"},"windows":{"kubeProxy":{"n":1,"p99":"1s"}}}`, "nothing to base a routed window on"},
		{`{"schemaVersion":1,"measured":{"source":"x"},"windows":{"controlPlane":{"n":0,"p99":"1s"}}}`, "want at least 1"},
		{`{"schemaVersion":1,"measured":{"source":"x"},"windows":{"controlPlane":{"n":1,"p99":1000}}}`, "a duration is a string"},
		{`{"schemaVersion":1,"measured":{},"windows":{"controlPlane":{"n":1,"p99":"1h"}}}`, "longer than 10m0s"},
	} {
		_, err := DecodeWindows(strings.NewReader(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.doc, err, c.want)
		}
	}
}

// Each mechanism on small cases; the windows are testdata's (routed 1.045s through a Service,
// preStop 3s, grace 6s recommended; request p99 56.8ms), the rate 100 req/s per pod.
func TestScoreMechanisms(t *testing.T) {
	f := kindWindows(t)
	pods := func(n int32) string { return fmt.Sprintf("replicas: %d", n) }
	// The expected counts, over the file's measured windows (the data plane's 133 samples,
	// mean 393ms; the control plane's 240, mean 27ms, for the headless Service) rather than
	// at their p99: no preStop, 100 × 0.393 × 3 = 118; exec sleep 1, the mean of what the
	// windows exceed 1 s by (11 of 133 do); the slow requests' sigkill, 100 × (0.393 + 1) × 3.
	expected := map[string]float64{"no preStop: propagation": 118, "exec sleep 1: 45ms left": 1, "slow requests, grace 3: sigkill": 418,
		"gRPC headless: stale addresses": 8, "classic sidecar in front: sidecar-exit": 79}
	for _, c := range []struct {
		name      string
		yaml      string
		mechanism timeline.Phase
		per       string
		status    string
		predicted float64       // the upper bound, at the windows' p99, rounded
		p99       time.Duration // the workload's request p99 (0: the file's)
	}{
		// No preStop: the pod stops accepting at once while it is routed to for 1.045s:
		// 100 × 1.045 × 3 = 313.6.
		{"no preStop: propagation", deploy(pods(3), ""), timeline.PhasePropagation, PerRollout, Exposed, 314, 0},
		// A 5 s sleep outlasts 1.045s: nothing.
		{"sleep 5s: covered", deploy(pods(3), "lifecycle: {preStop: {sleep: {seconds: 5}}}"), timeline.PhasePropagation, PerRollout, Covered, 0, 0},
		// exec sleep 1 is parsed: 1.045 − 1 = 45ms exposed, 100 × 0.045 × 2 = 9.1.
		{"exec sleep 1: 45ms left", deploy(pods(2), `lifecycle: {preStop: {exec: {command: [sleep, "1"]}}}`), timeline.PhasePropagation, PerRollout, Exposed, 9, 0},
		// An exec hook of another command: its length is not known.
		{"exec script: unknown", deploy(pods(2), `lifecycle: {preStop: {exec: {command: [/drain.sh]}}}`), timeline.PhasePropagation, PerRollout, Unknown, 0, 0},
		// The app's draining is not in the manifests...
		{"no preStop: in-flight unknown", deploy(pods(3), ""), timeline.PhaseInFlightCut, PerRollout, Unknown, 0, 0},
		// ...unless the preStop outlasts the routed window by the request p99 (5 s ≥ 1.1 s).
		{"sleep 5s: in-flight covered", deploy(pods(3), "lifecycle: {preStop: {sleep: {seconds: 5}}}"), timeline.PhaseInFlightCut, PerRollout, Covered, 0, 0},
		// The matrix's slow-requests row (sleep 2s, grace 3s, requests of 5 s): SIGKILL at
		// max(3 s, 2 s + 2 s) = 4 s cuts what was accepted after −1 s, up to min(1.045s, 2 s):
		// 2.045s exposed, 100 × 2.045 × 3 = 614 (the row measured sigkill failures).
		{"slow requests, grace 3: sigkill", deploy(pods(3), "lifecycle: {preStop: {sleep: {seconds: 2}}}", "terminationGracePeriodSeconds: 3"), timeline.PhaseSIGKILL, PerRollout, Exposed, 614, 5 * time.Second},
		// grace 5 < 5 + 0.057 + 2, but SIGKILL comes at 5 + 2 s, long after the last request
		// accepted (1.045s) ended: covered (the matrix's prestop-past-grace row lost none).
		{"grace 5 with sleep 5: past routing", deploy(pods(3), "lifecycle: {preStop: {sleep: {seconds: 5}}}", "terminationGracePeriodSeconds: 5"), timeline.PhaseSIGKILL, PerRollout, Covered, 0, 0},
		{"grace 30: no sigkill", deploy(pods(3), "lifecycle: {preStop: {sleep: {seconds: 5}}}"), timeline.PhaseSIGKILL, PerRollout, Covered, 0, 0},
		// One replica: a drain leaves no endpoint until the replacement is ready, at least its
		// probe's period (1 s): 100 × 1 × 1.
		{"one replica: no endpoint on a drain", deploy(pods(1), "readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}"), timeline.PhaseNoEndpoint, PerDrain, Exposed, 100, 0},
		// One replica whose 5 s preStop outlasts its replacement's readiness (1 s): the evicted
		// pod serves, terminating, until the replacement is ready (kube-proxy sends to serving
		// terminating pods when none is ready; the multinode run's single-prestop row lost none).
		{"one replica, preStop past readiness: covered", deploy(pods(1), "lifecycle: {preStop: {sleep: {seconds: 5}}}\n        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}"),
			timeline.PhaseNoEndpoint, PerDrain, Covered, 0, 0},
		// A 3 s preStop (a multi-call binary's sleep) against a 5 s readiness: 100 × 2 × 1.
		{"one replica, preStop short of readiness", deploy(pods(1), "lifecycle: {preStop: {exec: {command: [/bin/busybox, sleep, \"3\"]}}}\n        readinessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 4, periodSeconds: 1}"),
			timeline.PhaseNoEndpoint, PerDrain, Exposed, 200, 0},
		// A budget that lets none of one pod go: the eviction API refuses, the drain blocks, no
		// request fails (the matrix's drain-single-pdb row).
		{"PDB allowing none: drain blocked", deploy(pods(1), "") + pdb("minAvailable: 1"), timeline.PhaseNoEndpoint, PerDrain, Blocked, 0, 0},
		// externalTrafficPolicy Local: a drained node drops outside traffic until the load
		// balancer's health check moves, which manifests do not tell.
		{"externalTrafficPolicy Local: unknown", deploy(pods(3), "") + "---\napiVersion: v1\nkind: Service\nmetadata: {name: a-np}\nspec:\n  type: NodePort\n  externalTrafficPolicy: Local\n  selector: {app: a}\n  ports: [{port: 80, targetPort: 8080}]\n",
			timeline.PhaseNoLocalEndpoint, PerDrain, Unknown, 0, 0},
		// Three replicas spread over nodes with a PDB: a drain leaves pods serving.
		{"spread and PDB: covered", deploy(pods(3), "", "topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a}}}]") + pdb("maxUnavailable: 1"),
			timeline.PhaseNoEndpoint, PerDrain, Covered, 0, 0},
		// A PDB that allows every pod to go is no PDB: 100 × 1 s (no probe) × 3.
		{"PDB allowing all: no endpoint", deploy(pods(3), "") + pdb("minAvailable: 0"), timeline.PhaseNoEndpoint, PerDrain, Exposed, 300, 0},
		// Recreate takes every pod before any replacement: 100 × 1 × 2 per rollout.
		{"Recreate: no endpoint on a rollout", strings.Replace(deploy(pods(2), ""), "selector:", "strategy: {type: Recreate}\n  selector:", 1), timeline.PhaseNoEndpoint, PerRollout, Exposed, 200, 0},
		// A gRPC server behind a headless Service, no preStop: its clients hold the address for
		// the control plane's 146.6ms (no DNS window in the file, TTL not known): 100 × 0.147 × 3.
		{"gRPC headless: stale addresses", deploy(pods(3), "", "", "grpc") + headless(), timeline.PhaseStaleAddress, PerRollout, Exposed, 44, 0},
		// A classic sidecar in front without a preStop, the app with a 5 s sleep: the sidecar
		// exits first while routed to for 1.045s: 100 × 1.045 × 2.
		{"classic sidecar in front: sidecar-exit", sidecar(pods(2), false), timeline.PhaseSidecarExit, PerRollout, Exposed, 209, 0},
		// The same sidecar native: it stops after the app, holding the app's 5 s.
		{"native sidecar in front: covered", sidecar(pods(2), true), timeline.PhasePropagation, PerRollout, Covered, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := &Inventory{}
			if err := inv.Add([]byte(c.yaml)); err != nil {
				t.Fatal(err)
			}
			inv.Join()
			r := ScoreOne(inv.Workloads[0], f, Options{RequestP99: c.p99})
			for _, fd := range r.Findings {
				if fd.Mechanism == c.mechanism && fd.Per == c.per {
					want, ok := expected[c.name]
					if !ok {
						want = c.predicted // a window of one length: its mean is its bound
					}
					if fd.Status != c.status || int(fd.Upper+0.5) != int(c.predicted) || int(fd.Predicted+0.5) != int(want) {
						t.Errorf("%s: %s expected %.1f, upper %.1f; want %s %.0f, %.0f (%s)", c.mechanism, fd.Status, fd.Predicted, fd.Upper, c.status, want, c.predicted, fd.Why)
					}
					return
				}
			}
			t.Errorf("no %s finding per %s: %+v", c.mechanism, c.per, r.Findings)
		})
	}
}

// deploy is a Deployment "a" with extra container lines, extra pod spec lines and a port name.
func deploy(replicas, container string, more ...string) string {
	podExtra, port := "", "http"
	if len(more) > 0 && more[0] != "" {
		podExtra = "\n      " + more[0]
	}
	if len(more) > 1 {
		port = more[1]
	}
	if container != "" {
		container = "\n        " + container
	}
	return withService(replicas, podExtra, fmt.Sprintf("      - name: a\n        image: a\n        ports: [{name: %s, containerPort: 8080}]%s\n", port, container), "8080")
}

// withService is Deployment "a" of those pod spec lines and containers, and its Service to target.
func withService(replicas, podExtra, containers, target string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec:
  %s
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:%s
      containers:
%s---
apiVersion: v1
kind: Service
metadata: {name: a}
spec:
  selector: {app: a}
  ports: [{port: 80, targetPort: %s}]
`, replicas, podExtra, containers, target)
}

func pdb(spec string) string {
	return "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec:\n  " + spec + "\n  selector: {matchLabels: {app: a}}\n"
}

func headless() string {
	return "---\napiVersion: v1\nkind: Service\nmetadata: {name: a-headless}\nspec:\n  clusterIP: None\n  selector: {app: a}\n  ports: [{port: 8080}]\n"
}

// sidecar is "a" (a 5 s sleep) with a proxy in front of it, classic or native, without a preStop.
func sidecar(replicas string, native bool) string {
	proxy := "      - name: proxy\n        image: p\n        ports: [{name: http, containerPort: 8080}]\n"
	app := "      - name: a\n        image: a\n        ports: [{name: app, containerPort: 8081}]\n        lifecycle: {preStop: {sleep: {seconds: 5}}}\n"
	if native {
		return withService(replicas, "\n      initContainers:\n"+proxy+"        restartPolicy: Always", app, "http")
	}
	return withService(replicas, "", app+proxy, "http")
}

// BenchmarkScore scores 1,000 generated Deployments against testdata's windows file.
func BenchmarkScore(b *testing.B) {
	f := kindWindows(b)
	inv := &Inventory{}
	for i := range 1000 {
		y := deploy(fmt.Sprintf("replicas: %d", 1+i%5), fmt.Sprintf("lifecycle: {preStop: {sleep: {seconds: %d}}}", 1+i%4))
		y = strings.ReplaceAll(y, "name: a}", fmt.Sprintf("name: a%d}", i))
		y = strings.ReplaceAll(y, "app: a}", fmt.Sprintf("app: a%d}", i))
		if err := inv.Add([]byte(y)); err != nil {
			b.Fatal(err)
		}
	}
	inv.Join()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := Audit(inv, f, Options{Rate: 100, RequestP99: 0}); len(r.Workloads) != 1000 {
			b.Fatal(len(r.Workloads))
		}
	}
}

// On testdata's manifests: the ranking by failures per rollout, a native sidecar in front of an
// app whose hook has no known length (unknown, the fix naming both), a StatefulSet's fix.
func TestScoreTestdata(t *testing.T) {
	inv, err := ReadManifests("testdata/manifests")
	if err != nil {
		t.Fatal(err)
	}
	rep := Audit(inv, kindWindows(t), Options{})
	var order []string
	for _, r := range rep.Workloads {
		order = append(order, r.Workload.ID())
	}
	if want := "Deployment/prod/shop StatefulSet/prod/ledger Deployment/prod/prices"; strings.Join(order, " ") != want {
		t.Errorf("ranking %q, want %q", order, want)
	}
	ledger := rep.Workloads[1]
	for _, f := range ledger.Findings {
		switch {
		case f.Mechanism == timeline.PhasePropagation && (f.Status != Unknown || !strings.Contains(f.Fix, "on ledger or proxy")):
			t.Errorf("ledger's propagation: %+v", f)
		case f.Mechanism == timeline.PhaseNoEndpoint && f.Per == PerRollout && !strings.HasPrefix(f.Fix, "replicas ≥ 2"):
			t.Errorf("ledger's rollout fix: %+v", f)
		}
	}
	var b strings.Builder
	if err := rep.Table(&b); err != nil || !strings.Contains(b.String(), "envoy: none") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}
