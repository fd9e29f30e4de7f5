package audit

import (
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
	"github.com/rollcheck/rollcheck/timeline"
)

// preStopModel is a row's preStop as the reader would read it from the Deployment.
func preStopModel(p check.PreStop) PreStop {
	switch {
	case p.Sleep > 0:
		return PreStop{Kind: "sleep", Sleep: Duration(p.Sleep)}
	case p.Exec != nil:
		if d, ok := p.Duration(); ok {
			return PreStop{Kind: "exec-sleep", Sleep: Duration(d)}
		}
		return PreStop{Kind: "exec", Command: p.Exec}
	case p.HTTPGet != "":
		if d, ok := p.Duration(); ok {
			return PreStop{Kind: "httpGet-sleep", Sleep: Duration(d), Path: p.HTTPGet}
		}
		return PreStop{Kind: "httpGet", Path: p.HTTPGet}
	}
	return PreStop{Kind: "none"}
}

// The predictions bound from above what the run the testdata windows come from measured: each
// rollout-restart and delete-pod row of the matrix, described as the audit sees a workload (its
// preStop, grace, replicas, sidecars) at the row's own rate per pod and request p99, predicts at
// least the failures the row measured in the phases it predicts (propagation, sidecar-exit,
// sigkill); a row with in-flight cuts has that mechanism unknown, never covered. Keep-alive rows
// are left out: a pinned connection sends to a pod whatever the routing, which the audit does not
// predict (docs/audit.md, limits). The bound is loose where the app delays its own stop (the
// app-delay row: predicted, none measured), which manifests do not say.
func TestPredictionsBoundTheMatrixRun(t *testing.T) {
	rows, err := rowfile.Read("testdata/kind-run")
	if err != nil {
		t.Fatal(err)
	}
	f := kindWindows(t)
	n := 0
	for _, r := range rows {
		c := r.Config
		if c.Disruption != check.RolloutRestart && c.Disruption != check.DeletePod || r.Explanation == nil || c.KeepAlive {
			continue
		}
		n++
		w := &Workload{Kind: "Deployment", Name: c.Name, Replicas: int32(c.Replicas), GraceSeconds: c.GraceSeconds, App: "app", Front: "app",
			Strategy: Strategy{Type: "RollingUpdate", MaxSurge: 1}}
		w.Containers = append(w.Containers, Container{Name: "app", PreStop: preStopModel(c.PreStop)})
		for _, s := range c.Sidecars {
			kind := map[bool]string{false: "classic", true: "native"}[s.Native]
			w.Containers = append(w.Containers, Container{Name: s.Name, Sidecar: kind, PreStop: preStopModel(s.PreStop)})
			if s.Front {
				w.Front = s.Name
			}
		}
		res := ScoreOne(w, f, Options{Rate: float64(c.Rate) / float64(c.Replicas), RequestP99: max(r.Explanation.RequestP99, time.Millisecond)})
		predicted, cut := 0.0, ""
		for _, fd := range res.Findings {
			if fd.Per == PerRollout {
				predicted += fd.Upper
			}
			if fd.Mechanism == timeline.PhaseInFlightCut {
				cut = fd.Status
			}
		}
		if c.Disruption == check.DeletePod { // one pod per disruption, not every replica
			predicted /= float64(c.Replicas)
		}
		predicted *= float64(c.Count)
		ph := r.Explanation.Phases
		measured := ph[timeline.PhasePropagation] + ph[timeline.PhaseSidecarExit] + ph[timeline.PhaseSIGKILL]
		if float64(measured) > predicted {
			t.Errorf("%s %s: measured %d, predicted %.0f", c.Name, c.Disruption, measured, predicted)
		}
		if ph[timeline.PhaseInFlightCut] > 0 && cut == Covered {
			t.Errorf("%s %s: %d in-flight cuts measured, predicted covered", c.Name, c.Disruption, ph[timeline.PhaseInFlightCut])
		}
	}
	if n < 20 {
		t.Errorf("%d rows compared, want the matrix's 20 or more", n)
	}
}
