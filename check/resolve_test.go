package check

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// mustResolve is p.Resolve for a plan the test knows to be valid.
func mustResolve(t testing.TB, p Plan) *Resolved {
	t.Helper()
	r, err := p.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Resolve says what Validate says, fills the defaults, and keeps what it rendered: the Applied
// and containers a Resolved returns are Plan.Applied's, and its Deployment a copy.
func TestResolveIsValidateOnce(t *testing.T) {
	p := webPlan(t)
	p.Variant.PreStop = &PreStop{Sleep: 5 * time.Second}
	r := mustResolve(t, p)
	wantW, _ := p.Validate()
	if got := r.Warnings(); strings.Join(got, "|") != strings.Join(wantW, "|") {
		t.Errorf("warnings %q, Validate's %q", got, wantW)
	}
	if got, want := r.Applied(), p.Applied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Applied %s, Plan.Applied %s", got, want)
	}
	if r.Plan().Load.Rate != DefaultRate || r.Plan().Disruption.Count != DefaultCount {
		t.Errorf("defaults not filled: %+v %+v", r.Plan().Load, r.Plan().Disruption)
	}
	d := r.Deployment()
	if d == nil || preStopOf(appContainer(d, p.App)).Sleep != 5*time.Second {
		t.Fatalf("Deployment %v without the variant's preStop", d)
	}
	d.Name = "changed"
	if r.Deployment().Name == "changed" {
		t.Error("Deployment returned the Resolved's own object")
	}

	p.Disruption.Count = 21
	_, verr := p.Validate()
	if r, err := p.Resolve(); err == nil || r != nil || verr == nil || err.Error() != verr.Error() {
		t.Errorf("Resolve of a bad plan: %v, %v; Validate: %v", r, err, verr)
	}
}

// In place, a plan resolves before its live Deployment is read (no Deployment yet) and again by
// Live; a plan that applies its app has no live Deployment.
func TestResolveLive(t *testing.T) {
	unread := mustResolve(t, inPlacePlan(t, false))
	live := deploymentOf(t, inPlacePlan(t, true).App.Objects, "web")
	r, err := unread.Live(live)
	if err != nil {
		t.Fatal(err)
	}
	if r.Deployment() == nil || r.AppContainer() != "app" || r.Applied().App != "web" {
		t.Errorf("live: Deployment %v, container %q, applied %s", r.Deployment(), r.AppContainer(), r.Applied())
	}
	if _, err := mustResolve(t, webPlan(t)).Live(live); err == nil {
		t.Error("Live of a plan that applies its app")
	}
}
