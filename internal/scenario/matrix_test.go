package scenario_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/matrix"
	"github.com/rollcheck/rollcheck/internal/podsecurity"
)

// Every row of the built-in matrix, on each load path it runs on (with the bound of that path),
// renders and passes the engine's Check before any cluster work: a row that cannot run fails
// here, not minutes into make e2e.
func TestMatrixRowsPlan(t *testing.T) {
	rows := append(matrix.Matrix(matrix.AllEntries(), knobs.LoadBoth), matrix.Matrix(matrix.AllEntries(), knobs.LoadHost)...)
	if len(rows) == 0 {
		t.Fatal("the matrix has no rows")
	}
	nativeSleep := 0
	for _, r := range rows {
		s := r.Scenario
		t.Run(r.Name(), func(t *testing.T) {
			p, err := s.Plan(string(s.Disruption.Kind), "rollcheck-app:t123")
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			// A preStop that outlasts its grace period (prestop-past-grace, on purpose) is the one
			// warning allowed.
			wantWarnings := 0
			a := p.Applied()
			if pre, _ := a.PreStop.Duration(); pre > time.Duration(a.GraceSeconds)*time.Second {
				wantWarnings = 1
			}
			r, err := p.Resolve()
			if err != nil || len(r.Warnings()) != wantWarnings {
				t.Fatalf("Resolve: %v; want %d warning(s) and no error", err, wantWarnings)
			}
			objs, err := r.Objects("rc-"+s.Variant.Name, 30080)
			if err != nil {
				t.Fatalf("Objects: %v", err)
			}
			var dep *appsv1.Deployment
			for _, o := range objs {
				if d, ok := o.(*appsv1.Deployment); ok {
					if d.Name == p.App.Deployment || dep == nil {
						dep = d
					}
					// Every pod rollcheck adds (the sample app, the proxy in front) meets the
					// restricted Pod Security Standard, so that a run in a namespace that
					// enforces it works.
					why, err := podsecurity.Restricted(d.Spec.Template.ObjectMeta, d.Spec.Template.Spec)
					if err != nil || len(why) > 0 {
						t.Errorf("Deployment %s violates the restricted Pod Security Standard: %v %v", d.Name, why, err)
					}
				}
			}
			if dep == nil {
				t.Fatal("Objects hold no Deployment")
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("imagePullPolicy %q, want Never", c.ImagePullPolicy)
			}
			if ps := s.Variant.PreStop; ps != nil && ps.Sleep != 0 {
				nativeSleep++
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil ||
					c.Lifecycle.PreStop.Sleep.Seconds != int64(ps.Sleep/time.Second) {
					t.Errorf("native sleep row: preStop %+v, want a Sleep handler of %s", c.Lifecycle, ps.Sleep)
				}
			}
		})
	}
	if nativeSleep == 0 {
		t.Error("no native sleep row in the matrix: the Sleep handler went untested")
	}
	// The row named native-sleep-drain is the matrix's native sleep row.
	for _, r := range rows {
		if s := r.Scenario; s.Variant.Name == "native-sleep-drain" && (s.Variant.PreStop == nil || s.Variant.PreStop.Sleep == 0) {
			t.Errorf("native-sleep-drain has preStop %v", s.Variant.PreStop)
		}
	}
}
