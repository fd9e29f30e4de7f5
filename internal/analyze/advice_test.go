package analyze

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/attribute"
	"github.com/rollcheck/rollcheck/timeline"
)

// The note on pods killed without a word of SIGTERM names the PID 1 only when the app's own
// lines show it speaks; without them it says rollcheck cannot tell.
func TestPID1Note(t *testing.T) {
	if n := PID1Note(1, true, 10); !strings.Contains(n, "PID 1 did not pass SIGTERM on") {
		t.Errorf("with lines: %q", n)
	}
	if n := PID1Note(1, false, 10); !strings.Contains(n, "cannot tell which") || strings.Contains(n, "did not pass") {
		t.Errorf("without lines: %q", n)
	}
	if PID1Note(0, true, 10) != "" {
		t.Error("a note with no pod unheard")
	}
}

// adviceRow is a failing row's numbers: 4 s recommended (routing 2.5 s), grace 30 s needed 6 s,
// the app's 5 s native preStop, failures counted by phase, behind a proxy sidecar when front.
func adviceRow(phases map[timeline.Phase]int, front *check.Sidecar) (*check.Recommendation, *check.Explanation, check.Applied) {
	r := &check.Recommendation{PreStop: 4 * time.Second, GraceSeconds: 6, Routed: 2500 * time.Millisecond, RoutedFrom: "data plane p99 2.5s (last answer after deletion)", AppSpeaks: true}
	ex := &check.Explanation{Phases: phases, RequestP99: 20 * time.Millisecond, RequestMax: 80 * time.Millisecond}
	ex.Propagation.DataPlane = check.Durations{N: 9, P99: 2500 * time.Millisecond, Max: 5300 * time.Millisecond}
	cfg := check.Applied{PreStop: check.PreStop{Sleep: 5 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart}
	if front != nil {
		cfg.Sidecars = []check.Sidecar{*front}
	}
	return r, ex, cfg
}

// The advice never recommends what the row already has without saying why it was not enough:
// sidecar-exit names the sidecar's own preStop (or making it native), and propagation with the
// app's preStop already long enough says what the limit was.
func TestAdviseWhatTheRowHas(t *testing.T) {
	classic := &check.Sidecar{Name: "proxy", Front: true, PreStop: check.PreStop{None: true}}
	for _, c := range []struct {
		name       string
		phases     map[timeline.Phase]int
		front      *check.Sidecar
		grace      int64
		want, not  []string
		appQuiet   bool
		appPreStop time.Duration
	}{
		{name: "the reported row, attributed as it was", phases: map[timeline.Phase]int{timeline.PhasePropagation: 104, timeline.PhaseSidecarExit: 93}, front: classic,
			want: []string{"most failures (104) are propagation, but the app's preStop 5s already meets the 4s recommended: it was not the limit", "the classic sidecar proxy in front of it (preStop none) owns the port", "give it a preStop sleep ≥ 4s, or make it a native sidecar"},
			not:  []string{"set preStop sleep"}},
		{name: "sidecar-exit", phases: map[timeline.Phase]int{timeline.PhaseSidecarExit: 197}, front: classic,
			want: []string{"most failures (197) came after the classic sidecar proxy (preStop none) in front of the app stopped first", "the app's preStop does not hold it", "give it a preStop sleep ≥ 4s as the app's, or make it a native sidecar"},
			not:  []string{"set preStop sleep"}},
		{name: "sidecar-exit, its preStop long enough", phases: map[timeline.Phase]int{timeline.PhaseSidecarExit: 20}, front: &check.Sidecar{Name: "proxy", Front: true, PreStop: check.PreStop{Sleep: 5 * time.Second}},
			want: []string{"though its own preStop (sleep:5s) already meets the 4s recommended: it did not hold it", "make it a native sidecar"},
			not:  []string{"give it a preStop"}},
		{name: "sidecar-exit, native", phases: map[timeline.Phase]int{timeline.PhaseSidecarExit: 20}, front: &check.Sidecar{Name: "proxy", Native: true, Front: true, PreStop: check.PreStop{None: true}},
			want: []string{"native sidecar proxy in front of the app stopped before it: not by the kubelet's order", "no preStop changes that"},
			not:  []string{"give it a preStop", "make it a native"}},
		{name: "propagation, routing outlasted a long enough preStop", phases: map[timeline.Phase]int{timeline.PhasePropagation: 12},
			want: []string{"already meets the 4s recommended: it was not the limit; routing outlasted it in some pods (data plane max 5.3s after the deletion, against the 2.5s the recommendation counts"},
			not:  []string{"set preStop sleep"}},
		{name: "propagation, an app without lines", phases: map[timeline.Phase]int{timeline.PhasePropagation: 12}, appQuiet: true,
			want: []string{"it was not the limit; the app writes no lifecycle lines, so propagation counts from the deletion"},
			not:  []string{"set preStop sleep", "routing outlasted"}},
		{name: "propagation, a short preStop", phases: map[timeline.Phase]int{timeline.PhasePropagation: 12}, appPreStop: 2 * time.Second,
			want: []string{"most failures (12) are propagation: set preStop sleep ≥ 4s"},
			not:  []string{"not the limit"}},
		{name: "sigkill, grace long enough", phases: map[timeline.Phase]int{timeline.PhaseSIGKILL: 7},
			want: []string{"though the grace period 30s already meets the 6s recommended", "the pods did not exit within it"},
			not:  []string{"set terminationGracePeriodSeconds"}},
		{name: "sigkill, grace short", phases: map[timeline.Phase]int{timeline.PhaseSIGKILL: 7}, grace: 4,
			want: []string{"set terminationGracePeriodSeconds ≥ 6"},
			not:  []string{"already meets"}},
	} {
		r, ex, cfg := adviceRow(c.phases, c.front)
		r.AppSpeaks = !c.appQuiet
		if c.appPreStop > 0 {
			cfg.PreStop = check.PreStop{Sleep: c.appPreStop}
		}
		if c.grace > 0 {
			cfg.GraceSeconds = c.grace
		}
		_, advice := Advise(r, ex, cfg, nil)
		for _, w := range c.want {
			if !strings.Contains(advice, w) {
				t.Errorf("%s: advice lacks %q:\n%s", c.name, w, advice)
			}
		}
		for _, w := range c.not {
			if strings.Contains(advice, w) {
				t.Errorf("%s: advice says %q:\n%s", c.name, w, advice)
			}
		}
	}
}

// A preStop that did not run its length (SIGTERM came before its end, as the app's lines say)
// is named as the limit.
func TestAdvisePreStopCutShort(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhasePropagation: 5}, nil)
	times := &check.Times{SIGTERM: check.Durations{N: 3, P50: 40 * time.Millisecond}}
	if _, advice := Advise(r, ex, cfg, times); !strings.Contains(advice, "the app got SIGTERM p50 40ms after the deletion (3 pods, its lines), before its 5s preStop could end") {
		t.Errorf("advice %q", advice)
	}
}

// Through a proxy: a stale list is no preStop's to fix; a preStop that already outlasts the
// proxy's window is not recommended again; a short one is sized from the proxy's window.
func TestAdviseProxy(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseProxyPropagation: 40}, nil)
	r.RoutedFrom = "the proxy's window p99 2.5s (deletion → its last request to the pod)"
	ex.Propagation.ProxyStale = 3
	if _, a := Advise(r, ex, cfg, nil); !strings.Contains(a, "stale") || strings.Contains(a, "set preStop sleep") {
		t.Errorf("stale proxy: %q", a)
	}
	ex.Propagation.ProxyStale = 0
	if _, a := Advise(r, ex, cfg, nil); !strings.Contains(a, "already outlasts the proxy's window as counted") || strings.Contains(a, "set preStop sleep") {
		t.Errorf("a preStop that covers the window: %q", a)
	}
	cfg.PreStop = check.PreStop{None: true}
	if _, a := Advise(r, ex, cfg, nil); !strings.Contains(a, "set preStop sleep ≥ 4s") || !strings.Contains(a, "the proxy's window") {
		t.Errorf("no preStop: %q", a)
	}
}

// Through a proxy that finds the pods by DNS at an interval not known, the recommendation counts
// the TTL: a row that passed below it is told so, not that its propagation leaves no margin.
func TestAdviseTTLStoodIn(t *testing.T) {
	r, ex, cfg := adviceRow(nil, nil)
	r.PreStop, r.GraceSeconds, r.Routed, r.TTLStoodIn = 32*time.Second, 35, 30370*time.Millisecond, true
	r.RoutedFrom = "DNS window p99 370ms + DNS TTL 30s (the proxy's own re-resolve interval is not known: the TTL bounds it for a proxy that honours it)"
	fit, a := Advise(r, ex, cfg, nil)
	if fit != "short" || !strings.Contains(a, "no failure in this run: the 32s recommended counts the DNS TTL for the proxy's own re-resolve interval, which is not known") ||
		!strings.Contains(a, "this row's preStop 5s without a failure") || strings.Contains(a, "leaves no margin") {
		t.Errorf("fit %q, advice %q", fit, a)
	}
	r.TTLStoodIn = false
	if _, a := Advise(r, ex, cfg, nil); !strings.Contains(a, "leaves no margin") {
		t.Errorf("a bound that is not the TTL: %q", a)
	}
}

// A drain outage's advice names a budget and spread replicas, never a preStop: it says what the
// row's own budget (or replica count) let happen.
func TestAdviseDrainOutage(t *testing.T) {
	one := intstr.FromInt32(1)
	for _, c := range []struct {
		name     string
		replicas int
		pdb      *check.PDB
		want     string
	}{
		{"no budget", 3, nil, "add a PodDisruptionBudget of the app's pods with maxUnavailable: 1 (or minAvailable: 2)"},
		{"a budget that allowed it", 3, &check.PDB{MaxUnavailable: ptr.To(intstr.FromString("100%"))}, "the PodDisruptionBudget (maxUnavailable=100%) let the eviction API take them all at once"},
		{"one replica", 1, &check.PDB{MinAvailable: &one}, "with one replica every eviction is an outage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseNoEndpoint: 40, timeline.PhasePropagation: 2}, nil)
			cfg.Disruption, cfg.Replicas, cfg.PDB = check.DrainNode, c.replicas, c.pdb
			_, advice := Advise(r, ex, cfg, nil)
			if !strings.Contains(advice, "most failures (40) came while the drain had evicted every replica") || !strings.Contains(advice, c.want) ||
				!strings.Contains(advice, "spread the replicas over nodes") || strings.Contains(advice, "set preStop") {
				t.Errorf("advice %q, want %q", advice, c.want)
			}
		})
	}
}

// The only replica that stopped serving before its replacement was ready: the advice keeps it
// serving through a preStop (kube-proxy's fallback to a serving terminating pod) or adds one.
func TestAdviseNoEndpointSingleReplica(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseNoEndpoint: 30}, nil)
	cfg.Disruption, cfg.Replicas = check.DeletePod, 1
	_, advice := Advise(r, ex, cfg, nil)
	adviceHas(t, advice, "most failures (30) came while no pod was ready or serving (no-endpoint)", "with its readiness probe still passing", "run at least 2 replicas")
}

// adviceHas checks that advice says each of wants and names no budget.
func adviceHas(t *testing.T, advice string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(advice, want) {
			t.Errorf("advice %q lacks %q", advice, want)
		}
	}
	if strings.Contains(advice, "PodDisruptionBudget") {
		t.Errorf("advice %q names a budget", advice)
	}
}

// Scaled to zero: nothing a pod sets shortens the outage; the advice says to keep a replica or
// hold requests in front, and names neither a budget nor a replica count to spread.
func TestAdviseNoEndpointScaleToZero(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseNoEndpoint: 50}, nil)
	cfg.Disruption = check.ScaleToZero
	_, advice := Advise(r, ex, cfg, nil)
	for _, want := range []string{"most failures (50) came after the app was scaled to zero", "Keep at least one replica"} {
		if !strings.Contains(advice, want) {
			t.Errorf("advice %q lacks %q", advice, want)
		}
	}
	if strings.Contains(advice, "PodDisruptionBudget") || strings.Contains(advice, "set preStop") {
		t.Errorf("advice %q gives a pod setting for a scale to zero", advice)
	}
}

// The node the traffic entered had no local endpoint (externalTrafficPolicy Local): the advice is
// the load balancer's health check of healthCheckNodePort, or Cluster; never a budget or a
// preStop alone.
func TestAdviseNoLocalEndpoint(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseNoLocalEndpoint: 300, timeline.PhasePropagation: 1}, nil)
	cfg.Disruption, cfg.Replicas, cfg.ExternalTrafficPolicy = check.DrainNode, 4, "Local"
	_, advice := Advise(r, ex, cfg, nil)
	adviceHas(t, advice, "most failures (300) came while the node the traffic entered had no local endpoint (no-local-endpoint)", "healthCheckNodePort", "externalTrafficPolicy Cluster")
}

// Failures the server's own connection age cut name its grace, the longest request, and say no
// pod setting helps.
func TestAdviseConnectionAge(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhaseConnectionAge: 232, timeline.PhaseInFlightCut: 3}, nil)
	_, advice := Advise(r, ex, cfg, nil)
	for _, w := range []string{"most failures (232) were cut when the server closed a connection for its age", "set MaxConnectionAgeGrace above the longest RPC (the longest here took 80ms)", "no pod setting changes it"} {
		if !strings.Contains(advice, w) {
			t.Errorf("advice lacks %q:\n%s", w, advice)
		}
	}
}

// Over HTTP/2 a pinned connection's failures name GOAWAY and the h2c handler, not Connection:
// close, which HTTP/2 has not.
func TestAdvisePinnedHTTP2(t *testing.T) {
	r, ex, cfg := adviceRow(map[timeline.Phase]int{timeline.PhasePinnedConnection: 299}, nil)
	_, h1 := Advise(r, ex, cfg, nil)
	cfg.Protocol = "h2c"
	_, h2 := Advise(r, ex, cfg, nil)
	if !strings.Contains(h1, "Connection: close") || strings.Contains(h1, "GOAWAY") {
		t.Errorf("HTTP/1.1 advice: %s", h1)
	}
	if !strings.Contains(h2, "without a GOAWAY") || !strings.Contains(h2, "http.Server.Protocols") || strings.Contains(h2, "Connection: close") {
		t.Errorf("HTTP/2 advice: %s", h2)
	}
}

// Every phase the rules attribute to has advice of its own: a phase added to
// internal/attribute's Rules without a case in Advise's switch fails here.
func TestAdviseCoversEveryPhase(t *testing.T) {
	const none = "match no rule (unknown)"
	for _, rule := range attribute.Rules {
		r, ex, cfg := adviceRow(map[timeline.Phase]int{rule.Phase: 7}, nil)
		_, advice := Advise(r, ex, cfg, nil)
		if !strings.Contains(advice, "most failures (7)") {
			t.Errorf("%s: no advice on the failures: %q", rule.Phase, advice)
		}
		if got := strings.Contains(advice, none); got != (rule.Phase == timeline.PhaseUnknown) {
			t.Errorf("%s: Advise's switch has no case for it: %q", rule.Phase, advice)
		}
	}
}
