package checkinput

import (
	"fmt"
	"os"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// Run is the input rollcheck check and tune share: the check file, where the reports go, the
// cluster, a dry run, and how many rows (probes) run at once.
type Run struct {
	File        string
	Artifacts   string
	KeepCluster bool
	DryRun      bool
	// Parallel is --parallel: 0 when not given, for the default (AtOnce).
	Parallel int
	// Given reports whether the flag name was given on the command line; nil: none was.
	Given func(name string) bool
}

// given reports whether the flag name was given.
func (r Run) given(name string) bool { return r.Given != nil && r.Given(name) }

// AtOnce is how many of the plans run at once: --parallel when given (above 1 only when some
// plan may run beside others), else as many plans that may as ROLLCHECK_PROCS allows, the rule
// make e2e's Ginkgo processes follow (knobs.Procs). A plan that must run alone
// (check.Plan.RunsAlone) runs alone either way (frontend.Schedule).
func (r Run) AtOnce(plans []check.Plan) (int, error) {
	beside, refuse := 0, ""
	for _, p := range plans {
		if p.RunsAlone() == "" {
			beside++
		} else if refuse == "" {
			refuse = AloneRefusal("every row", p)
		}
	}
	if beside > 0 {
		refuse = ""
	}
	return r.ParallelOf(beside, knobs.MaxProcs, refuse)
}

// ParallelOf is the rule of --parallel, for check's rows and tune's probes: the flag when given
// (1 to most, and 1 when refuse says why no more may run at once), else up to def, as many as
// ROLLCHECK_PROCS allows.
func (r Run) ParallelOf(def, most int, refuse string) (int, error) {
	if !r.given("parallel") {
		procs, err := knobs.Procs(os.Getenv)
		return max(1, min(def, procs)), err
	}
	switch n := r.Parallel; {
	case n < 1 || n > most:
		return 0, fmt.Errorf("--parallel %d: want 1 to %d", n, most)
	case n > 1 && refuse != "":
		return 0, fmt.Errorf("--parallel %d: %s", n, refuse)
	}
	return r.Parallel, nil
}

// AloneRefusal says why --parallel above 1 is refused when what (the rows, the probes) must run
// one at a time because of p: its reason to run alone, and what to change when it is the load
// from the host; "" when p may run beside others.
func AloneRefusal(what string, p check.Plan) string {
	why := p.RunsAlone()
	switch {
	case why == "":
		return ""
	case !FromLoadPods(p):
		return fmt.Sprintf("%s must run alone (%s); set load.from: cluster", what, why)
	}
	return fmt.Sprintf("%s must run alone (%s)", what, why)
}

// FromLoadPods reports whether p's load comes from load pods inside the cluster.
func FromLoadPods(p check.Plan) bool { return p.WithDefaults().Load.From == check.LoadFromCluster }

// ResolvedFromLoadPods is FromLoadPods of a resolved plan.
func ResolvedFromLoadPods(p *check.Resolved) bool { return FromLoadPods(p.Plan()) }

// Plans is each resolved plan's Plan.
func Plans(rs []*check.Resolved) []check.Plan {
	out := make([]check.Plan, len(rs))
	for i, r := range rs {
		out[i] = r.Plan()
	}
	return out
}
