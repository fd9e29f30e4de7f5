package engine

import (
	"testing"

	"github.com/rollcheck/rollcheck/internal/podsecurity"
)

// The load pod meets the restricted Pod Security Standard, wherever it is placed: a namespace
// that enforces it admits it.
func TestLoadPodIsRestricted(t *testing.T) {
	for name, place := range map[string]loadPlacement{
		"scheduler":     {avoid: map[string]string{"app": "web"}},
		"control plane": {node: "kind-control-plane", avoid: map[string]string{"app": "web"}},
	} {
		p := loadPod("rc-row-abc", "load-1", "rollcheck/load:0123456789ab", []string{"--rate=100"}, 12, 120, place)
		why, err := podsecurity.Restricted(p.ObjectMeta, p.Spec)
		if err != nil || len(why) > 0 {
			t.Errorf("%s: the load pod violates the restricted Pod Security Standard: %v %v", name, why, err)
		}
	}
}

// The load pod asks for CPU and sets no limit: Burstable, never BestEffort (whose CPU weight is
// the lowest, so that on a busy node its pacer waits behind every other pod) and never
// throttled by a limit.
func TestLoadPodIsBurstable(t *testing.T) {
	p := loadPod("rc-row-abc", "load-1", "rollcheck/load:0123456789ab", []string{"--rate=100"}, 12, 120, loadPlacement{})
	for _, c := range p.Spec.Containers {
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("container %s requests %v: want CPU and memory", c.Name, c.Resources.Requests)
		}
		if len(c.Resources.Limits) > 0 {
			t.Errorf("container %s has limits %v: want none", c.Name, c.Resources.Limits)
		}
	}
}
