package matrix

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/scenario"
)

// Entry is one matrix entry, a scenario of the built-in matrix as data (DESIGN.md's glossary:
// each of its runs is a row, check.Row): what runs, the labels it chooses, and what is
// asserted of it besides its Outcome. Nothing is read out of its name: the labels its typed
// fields imply and whether it runs alone are computed from those fields (AllLabels,
// SerialReason), everything else is written in the row.
type Entry struct {
	// Scenario is what runs: the sample app's settings, the Variant (name, preStop, grace
	// period, expected Outcome and why), the disruption and the load ("" load path: as the
	// run's ROLLCHECK_LOAD_FROM says, see Matrix). An at-most row's bound is its configuration's
	// on its load path, from its recorded runs (Bound), set by Matrix with the path.
	Scenario scenario.Scenario
	// Labels are the Ginkgo labels the row chooses (LabelNegativeControl, LabelSlow, ...), on
	// top of those its data implies.
	Labels []string
	// Also, when set, is asserted of the row besides its Outcome: a claim the verdict alone
	// does not show (what the advice credits, what the times say).
	Also func(*check.Row) error
	// Alone, when set, is why the suite runs the row alone although its plan may run beside
	// others (check.Plan.RunsAlone says ""): a row that does not disturb the rows beside it but
	// is disturbed by them, on the 2 cores the matrix's runs are recorded on.
	Alone string
}

// The labels a row chooses (Row.Labels). The disruption, the expectation and the load path
// are labels too, computed from the row (AllLabels).
const (
	// LabelNegativeControl: the row must show failures, in the phase its mechanism predicts,
	// or the harness has lost its ability to see them.
	LabelNegativeControl = "negative-control"
	// LabelSlow: not in the default make e2e (make e2e-slow runs it).
	LabelSlow = "slow"
	// LabelPID1: who is PID 1 in the app's container (exec form, a shell, tini).
	LabelPID1 = "pid1"
	// LabelStopSignal: the image's STOPSIGNAL and an app that stops on another signal.
	LabelStopSignal = "stop-signal"
	// LabelStopSignalField: lifecycle.stopSignal in the pod spec; not in the default run, since
	// neither node image's containerd takes the field (make e2e-stopsignal runs it on the
	// offline image's containerd 2.3 variant).
	LabelStopSignalField = "stop-signal-field"
	// LabelSidecar: a proxy sidecar in front of the app.
	LabelSidecar = "sidecar"
	// LabelFamily: one passing row and one negative control of each family that make e2e's
	// default filter leaves out (a proxy in front, h2c, HTTP/2 over TLS, gRPC pick_first, one
	// replica's endpoints all terminating, externalTrafficPolicy Local, a drain of two workers
	// with a PodDisruptionBudget; of gRPC round_robin only the passing row: its negative
	// controls show their stale addresses only while each rollout takes less than the resolver's
	// 30 s, which a loaded node does not keep): make e2e-families runs those of one node, in CI;
	// make e2e-families-multinode those that need workers, by hand (on 2 cores CI cannot also
	// hold a cluster of three nodes within its hour). Every row of those families runs in make
	// e2e-all.
	LabelFamily = "family"
)

// under is base under disruption d, expected to produce expect because of why.
func under(base scenario.Scenario, d check.DisruptionKind, expect check.Outcome, why string) scenario.Scenario {
	base.Disruption.Kind, base.Variant.Expect, base.Variant.Why = d, expect, why
	return base
}

// loadFrom is where r's load comes from; a row not yet given a path by Matrix counts as from
// the host, the default of its plan (check.Plan.WithDefaults).
func (r Entry) loadFrom() check.LoadFrom {
	if f := r.Scenario.Load.From; f != "" {
		return f
	}
	return check.LoadFromHost
}

// AllLabels are the Ginkgo labels of r: its disruption, its expectation and where its load
// comes from (load-host, load-cluster), then the labels it chooses.
func (r Entry) AllLabels() []string {
	s := r.Scenario
	return slices.Concat([]string{string(s.Disruption.Kind), string(s.Variant.Expect.Kind), "load-" + string(r.loadFrom())}, r.Labels)
}

// SerialReason is why r runs alone (a Ginkgo Serial spec), "" when it may run beside other
// rows: check.Plan.RunsAlone of the plan it runs (load from the host, a kubelet restart, a
// node drain, ...), else the row's own Alone. A row not yet given a load path counts as from
// the host, as its plan does.
func (r Entry) SerialReason() string {
	p, err := r.Scenario.Plan("matrix", "rollcheck/app:name")
	if err != nil {
		return "an invalid row: " + err.Error() // the spec fails at its Plan
	}
	if why := p.RunsAlone(); why != "" {
		return why
	}
	return r.Alone
}

// Name names r as the reports do (check.Applied's String): "naive: preStop=none sigterm=exit
// grace=30s keepalive=off rollout-restart×3".
func (r Entry) Name() string {
	p, err := r.Scenario.Plan("matrix", "rollcheck/app:name")
	if err != nil {
		return r.Scenario.Variant.Name + " (invalid)"
	}
	return p.Applied().String()
}

// Timeout is a generous SpecTimeout for r: every disruption may take its grace period twice
// over (and a drain its timeout), plus deploy, quiet time and cleanup.
func (r Entry) Timeout() time.Duration {
	p, err := r.Scenario.Plan("matrix", "rollcheck/app:name")
	if err != nil {
		return 3 * time.Minute // the spec fails at its Plan
	}
	a := p.Applied()
	pre, _ := a.PreStop.Duration()
	perDisruption := time.Duration(2*a.GraceSeconds+int64(a.Replicas*20))*time.Second + pre.Round(time.Second) + a.DrainTimeout
	return 3*time.Minute + 2*a.Quiet + time.Duration(a.Count)*perDisruption
}

// Matrix is rows with their load paths as mode asks: LoadBoth sends every row from inside the
// cluster and keeps the host twins; LoadHost and LoadCluster send every row one way and drop
// the twins of the other. Each at-most row gets the bound of its load path (Bound); one whose
// path has too few recorded runs for a bound is left out (Unbounded says which).
func Matrix(rows []Entry, mode knobs.MatrixLoad) []Entry {
	var out []Entry
	for _, r := range rows {
		if r, ok, err := onPath(r, mode); ok && err == nil {
			out = append(out, r)
		}
	}
	return out
}

// Unbounded are the at-most rows that Matrix leaves out in mode because on their load path
// they have too few recorded runs for a bound (from the host, none was ever recorded): each
// says why, so that a suite can print what it does not run.
func Unbounded(rows []Entry, mode knobs.MatrixLoad) []string {
	var out []string
	for _, r := range rows {
		if _, ok, err := onPath(r, mode); ok && err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

// onPath is r on the load path mode gives it, with the bound of that path (bounded): ok false
// when mode drops r (the twin of another path); errNoBound when the path has too few recorded
// runs for r's bound. A broken bounds table panics.
func onPath(r Entry, mode knobs.MatrixLoad) (Entry, bool, error) {
	def := check.LoadFromCluster
	if mode == knobs.LoadHost {
		def = check.LoadFromHost
	}
	switch {
	case r.Scenario.Load.From == "":
		r.Scenario.Load.From = def
	case mode != knobs.LoadBoth && r.Scenario.Load.From != def:
		return r, false, nil
	}
	var err error
	if r.Scenario, err = bounded(r.Scenario); err != nil && !errors.Is(err, errNoBound) {
		panic(err)
	}
	return r, true, err
}

// Spec is one Ginkgo spec of the matrix as the suite's table declares it, everything read from
// its Entry's fields: its name, labels, whether it runs alone, its timeout, and which run of the
// row it is (Run of Runs; Run 0 when the row runs once).
type Spec struct {
	Entry
	Name      string
	Labels    []string
	Serial    bool
	Timeout   time.Duration
	Run, Runs int
}

// Specs are the specs of rows in a run: their load paths as mode asks (Matrix), each row
// repeat times, as "name #k/N" when repeat is more than 1.
func Specs(rows []Entry, mode knobs.MatrixLoad, repeat int) []Spec {
	rows = Matrix(rows, mode)
	out := make([]Spec, 0, len(rows)*repeat)
	for _, r := range rows {
		sp := Spec{Entry: r, Name: r.Name(), Labels: r.AllLabels(), Serial: r.SerialReason() != "", Timeout: r.Timeout(), Runs: repeat}
		if repeat == 1 {
			out = append(out, sp)
			continue
		}
		name := sp.Name
		for k := 1; k <= repeat; k++ {
			sp.Run, sp.Name = k, fmt.Sprintf("%s #%d/%d", name, k, repeat)
			out = append(out, sp)
		}
	}
	return out
}

// LoadModeFromEnv reads ROLLCHECK_LOAD_FROM (both, host or cluster; default both) by its
// knob's rule: where the rows' load comes from (Matrix).
func LoadModeFromEnv() (knobs.MatrixLoad, error) { return knobs.LoadMode(os.Getenv) }

// RepeatFromEnv reads ROLLCHECK_REPEAT (1 to check.MaxRepeat, default 1) by its knob's rule.
func RepeatFromEnv() (int, error) { return knobs.Repeat(os.Getenv) }
