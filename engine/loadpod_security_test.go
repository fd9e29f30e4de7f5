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
