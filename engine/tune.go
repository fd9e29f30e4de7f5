package engine

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/oneline"
)

// Defaults and limits of TuneOptions.
const (
	DefaultTuneMax        = 20 * time.Second
	DefaultTuneResolution = 500 * time.Millisecond
	// MaxTuneMax is the longest preStop Tune tries.
	MaxTuneMax = 10 * time.Minute
	// TuneStep is the unit of Min, Max and Resolution, and the finest Resolution.
	TuneStep = 100 * time.Millisecond
	// TuneConfirmations is how many confirmation runs Tune makes at most: the value the search
	// found, then one Resolution higher after each failed confirmation.
	TuneConfirmations = 3
)

// TuneOptions says which preStop values Tune tries and how a value becomes a hook.
type TuneOptions struct {
	// Min and Max bound the preStop values tried (defaults 0 and DefaultTuneMax; Max at most
	// MaxTuneMax). Both are multiples of TuneStep.
	Min, Max time.Duration
	// Resolution is the precision of the answer: the search stops when the smallest passing
	// value and the largest failing one are this close (default DefaultTuneResolution; a
	// multiple of TuneStep).
	Resolution time.Duration
	// PreStop turns a preStop length into the hook a probe's Variant gets. Nil: NativeSleep,
	// Kubernetes' sleep action, which takes whole seconds only: Min and Max must then be whole
	// seconds, and a Resolution that is not is raised to the next whole second (the result's
	// Note says so).
	PreStop func(time.Duration) PreStop
	// Progress, if set, is called when a probe starts (its Status empty) and when it ends.
	Progress func(TuneProbe)
}

// NativeSleep is TuneOptions' default PreStop: no hook for 0, else the native sleep action
// for d (whole seconds).
func NativeSleep(d time.Duration) PreStop {
	if d == 0 {
		return PreStop{None: true}
	}
	return PreStop{Sleep: d}
}

// TuneStatus is how a tune ended.
type TuneStatus string

// Tune statuses.
const (
	// TuneFound: a value passed in the search and an independent run confirmed it.
	TuneFound TuneStatus = "found"
	// TuneUnconfirmed: the search found a value, but no confirmation run passed.
	TuneUnconfirmed TuneStatus = "unconfirmed"
	// TuneNotFound: no value up to Max passed.
	TuneNotFound TuneStatus = "not-found"
	// TuneIncomplete: a probe could not be judged twice in a row, or the context ended.
	TuneIncomplete TuneStatus = "incomplete"
)

// TuneProbe is one run of the base Plan at one preStop value: the numbers of its curve point
// and its verdict. Row is the full row, for the caller to write (it is not in the JSON; File
// names the file WriteRow gives it).
type TuneProbe struct {
	// N numbers the probes of a tune in the order they ran, confirmations included (1-based).
	N int `json:"n"`
	// Confirm marks a confirmation run; Retry the second run at a value whose first run
	// was a harness fault or an error.
	Confirm bool          `json:"confirm,omitempty"`
	Retry   bool          `json:"retry,omitempty"`
	PreStop time.Duration `json:"preStop"`
	// Variant is the probe's variant name (the base's, suffixed with the value); Hook the
	// preStop as the row applied it ("sleep:2s", "httpGet:/prestop?sleep=1.5s", "none").
	Variant string `json:"variant"`
	Hook    string `json:"hook,omitempty"`
	File    string `json:"file,omitempty"`

	Requests     int     `json:"requests"`
	Failed       int     `json:"failed"`
	FailureRatio float64 `json:"failureRatio"`
	// Disruptions is how many disruptions were recorded, and WorstSuccessRatio the success
	// ratio of the worst of them (0 when none was).
	Disruptions       int     `json:"disruptions"`
	WorstSuccessRatio float64 `json:"worstSuccessRatio"`
	Status            Status  `json:"status"`
	Reason            string  `json:"reason"`

	Row *Row `json:"-"`
}

// Judged reports whether the probe has a verdict on the app (pass or fail), so that it is a
// point of the curve; a harness fault or an error is not.
func (p TuneProbe) Judged() bool { return p.Status == Pass || p.Status == Fail }

// TuneResult is what Tune found, and every probe it ran to find it.
type TuneResult struct {
	Suite string `json:"suite"`
	// Base is the base Plan's variant name, Disruption its disruption (Count is K) and Expect
	// the threshold every probe is judged against.
	Base       string     `json:"base"`
	Disruption Disruption `json:"disruption"`
	Expect     Outcome    `json:"expect"`
	// GraceSeconds is the base's terminationGracePeriodSeconds, as applied.
	GraceSeconds int64 `json:"terminationGracePeriodSeconds"`
	// Min, Max and Resolution are the search's, as used (Resolution raised for the native
	// sleep action).
	Min        time.Duration `json:"min"`
	Max        time.Duration `json:"max"`
	Resolution time.Duration `json:"resolution"`

	Status TuneStatus `json:"status"`
	// Probes are the search's runs, in order; Confirm the confirmation runs.
	Probes  []TuneProbe `json:"probes"`
	Confirm []TuneProbe `json:"confirm,omitempty"`
	// Found is the confirmed value (FoundOK), or the search's answer when no confirmation
	// passed (TuneUnconfirmed); 0 otherwise.
	Found   time.Duration `json:"found"`
	FoundOK bool          `json:"foundOK"`
	// Note says what the caller should know: a resolution raised, a confirmation that needed a
	// higher value, values above the grace period.
	Note    string        `json:"note,omitempty"`
	Started time.Time     `json:"started"`
	Wall    time.Duration `json:"wall"`
	// Recommendation is the confirming row's (Explanation.Recommendation): the preStop and
	// grace period its measurements call for; nil when there is none.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	Versions       Versions        `json:"versions"`
}

// Curve returns the judged probes, search and confirmation, sorted by preStop (probes at the
// same value in the order they ran): the points of the failures-against-preStop curve.
func (r *TuneResult) Curve() []TuneProbe {
	var c []TuneProbe
	for _, p := range append(slices.Clone(r.Probes), r.Confirm...) {
		if p.Judged() {
			c = append(c, p)
		}
	}
	slices.SortStableFunc(c, func(a, b TuneProbe) int {
		return cmp.Or(cmp.Compare(a.PreStop, b.PreStop), cmp.Compare(a.N, b.N))
	})
	return c
}

// Tune finds the smallest preStop that makes the base Plan meet its threshold under its
// disruption repeated Disruption.Count times. The base Plan's Variant is the configuration
// tuned; each probe is one Run of it with Variant.PreStop = o.PreStop(d) and the variant's name
// suffixed with d ("web-prestop-1p5s"). Its Expect is the threshold (a zero Outcome means
// Zero()).
//
// The search probes Min; when that fails, Min + Resolution·2^k for k = 0, 1, 2... (capped at
// Max) until a probe passes, then bisects between the last failing and the first passing value
// down to Resolution. An independent run then confirms the value found; when it fails, the next
// value (one Resolution up) is confirmed instead, TuneConfirmations runs at most, and the Note
// says so. No passing value is TuneNotFound, not an error.
//
// A probe that ends as a harness fault or an error is run again once; a second one ends the
// tune with the result so far and an error, as does the end of ctx (the error wraps
// ctx.Err()). Options are passed to every Run. Bad options are an error before any run.
func Tune(ctx context.Context, t Target, base Plan, o TuneOptions, opts ...Option) (*TuneResult, error) {
	return tune(ctx, func(ctx context.Context, p Plan) (*Row, error) { return Run(ctx, t, p, opts...) }, base, o)
}

// Check validates a tune of base with o before any cluster work: the options, the threshold
// and the Plans of the probes at the ends of the range. Every problem is reported on one line.
func (o TuneOptions) Check(base Plan) error {
	_, err := newTuner(base, o)
	return err
}

type tuner struct {
	base Plan
	o    TuneOptions
	kMax int // index of Max: value(kMax) == Max
	res  *TuneResult
	runs map[time.Duration]int // runs per value so far, for Plan.Repeat
}

func newTuner(base Plan, o TuneOptions) (*tuner, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	var notes []string
	if o.Max == 0 {
		o.Max = DefaultTuneMax
	}
	if o.Resolution == 0 {
		o.Resolution = DefaultTuneResolution
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"min", o.Min}, {"max", o.Max}, {"resolution", o.Resolution}} {
		if f.d%TuneStep != 0 {
			bad("%s %s: want a multiple of %s", f.name, f.d, TuneStep)
		}
	}
	if o.Min < 0 {
		bad("min %s: want 0 or more", o.Min)
	}
	if o.Max > MaxTuneMax {
		bad("max %s: want at most %s", o.Max, MaxTuneMax)
	}
	if o.Min >= o.Max {
		bad("min %s is not below max %s", o.Min, o.Max)
	}
	if o.Resolution < 0 {
		bad("resolution %s: want more than 0", o.Resolution)
	}
	if o.PreStop == nil {
		o.PreStop = NativeSleep
		if o.Min%time.Second != 0 || o.Max%time.Second != 0 {
			bad("min %s, max %s: the native sleep action takes whole seconds (or give another preStop)", o.Min, o.Max)
		}
		if r := o.Resolution; r > 0 && r%time.Second != 0 {
			o.Resolution = (r/time.Second + 1) * time.Second
			notes = append(notes, fmt.Sprintf("resolution %s raised to %s: the native sleep action takes whole seconds", r, o.Resolution))
		}
	}
	if reflect.ValueOf(base.Variant.Expect).IsZero() {
		base.Variant.Expect = Zero()
	}
	if base.Variant.Expect.Kind == ExpectFailures {
		bad("expect %s: a negative control has no preStop to tune (tune looks for the smallest preStop that passes)", base.Variant.Expect)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("tune %s: %w", base.Variant.Name, oneline.Join(errs))
	}
	base = base.WithDefaults()
	t := &tuner{base: base, o: o, runs: map[time.Duration]int{},
		kMax: int((o.Max - o.Min + o.Resolution - 1) / o.Resolution)}
	// The probes at the ends of the range (and next to them: the longest names) stand for all.
	for _, k := range slices.Compact([]int{0, 1, t.kMax - 1, t.kMax}) {
		if _, err := t.plan(t.value(k)).Check(); err != nil {
			return nil, fmt.Errorf("tune %s: preStop %s: %w", base.Variant.Name, t.value(k), err)
		}
	}
	// The probe plans are valid, so the Deployment applies.
	orig, _ := base.App.deployment()
	dep, _ := base.Variant.apply(orig, base.App)
	grace := grace(dep)
	if o.Max > time.Duration(grace)*time.Second {
		notes = append(notes, fmt.Sprintf("values above the grace period (%ds) are cut short by it", grace))
	}
	t.res = &TuneResult{Suite: base.Suite, Base: base.Variant.Name, Disruption: base.Disruption,
		Expect: base.Variant.Expect, GraceSeconds: grace, Min: o.Min, Max: o.Max, Resolution: o.Resolution,
		Probes: []TuneProbe{}, Note: strings.Join(notes, "; ")}
	return t, nil
}

// value is the k-th value of the grid Min, Min+Resolution, ..., capped at Max.
func (t *tuner) value(k int) time.Duration {
	return min(t.o.Min+time.Duration(k)*t.o.Resolution, t.o.Max)
}

// plan is the base Plan with the preStop d, named after it.
func (t *tuner) plan(d time.Duration) Plan {
	p := t.base
	ps := t.o.PreStop(d)
	p.Variant.PreStop = &ps
	p.Variant.Name = TuneName(t.base.Variant.Name, d)
	return p
}

// TuneName is the variant name of a probe of base at preStop d: "web-prestop-1p5s" (a dot is
// not allowed in a name). base is shortened when the name would be longer than 40 characters.
func TuneName(base string, d time.Duration) string {
	ms := d.Milliseconds()
	v := fmt.Sprintf("%ds", ms/1000)
	if f := ms % 1000; f != 0 {
		v = fmt.Sprintf("%dp%ss", ms/1000, strings.TrimRight(fmt.Sprintf("%03d", f), "0"))
	}
	suffix := "-prestop-" + v
	if n := 40 - len(suffix); len(base) > n {
		base = strings.TrimRight(base[:n], "-")
	}
	return base + suffix
}

// tune is Tune with the runner injected.
func tune(ctx context.Context, run func(context.Context, Plan) (*Row, error), base Plan, o TuneOptions) (*TuneResult, error) {
	t, err := newTuner(base, o)
	if err != nil {
		return nil, err
	}
	res := t.res
	res.Started = time.Now()
	err = t.search(ctx, run)
	res.Wall = time.Since(res.Started)
	for _, p := range append(slices.Clone(res.Probes), res.Confirm...) {
		if p.Row != nil && p.Row.Versions != (Versions{}) {
			res.Versions = p.Row.Versions
			break
		}
	}
	if err != nil {
		res.Status, res.FoundOK = TuneIncomplete, false
	}
	return res, err
}

// search runs the probes: Min, then exponentially up, then bisection, then confirmation.
func (t *tuner) search(ctx context.Context, run func(context.Context, Plan) (*Row, error)) error {
	res := t.res
	pass, err := t.probe(ctx, run, 0, false)
	if err != nil {
		return err
	}
	lo, hi := -1, 0 // lo: the largest index that failed; hi: the smallest that passed
	if !pass {
		lo = 0
		for step := 1; ; step *= 2 {
			k := min(step, t.kMax)
			if pass, err = t.probe(ctx, run, k, false); err != nil {
				return err
			}
			if pass {
				hi = k
				break
			}
			lo = k
			if k == t.kMax {
				res.Status = TuneNotFound
				return nil
			}
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if pass, err = t.probe(ctx, run, mid, false); err != nil {
				return err
			}
			if pass {
				hi = mid
			} else {
				lo = mid
			}
		}
	}

	searched := t.value(hi)
	var failed []string
	for range TuneConfirmations {
		p, err := t.probe(ctx, run, hi, true)
		if err != nil {
			return err
		}
		if p {
			c := res.Confirm[len(res.Confirm)-1]
			res.Status, res.Found, res.FoundOK = TuneFound, c.PreStop, true
			if c.Row != nil && c.Row.Explanation != nil {
				res.Recommendation = c.Row.Explanation.Recommendation
			}
			if len(failed) > 0 {
				t.note("the search found %s; its confirmation failed at %s, %s passed", searched, strings.Join(failed, ", "), c.PreStop)
			}
			return nil
		}
		failed = append(failed, t.value(hi).String())
		if hi == t.kMax {
			break
		}
		hi++
	}
	res.Status, res.Found = TuneUnconfirmed, searched
	t.note("the search found %s but no confirmation passed (failed at %s)", searched, strings.Join(failed, ", "))
	return nil
}

func (t *tuner) note(format string, a ...any) {
	if t.res.Note != "" {
		t.res.Note += "; "
	}
	t.res.Note += fmt.Sprintf(format, a...)
}

// probe runs the value of index k (again once when the run cannot be judged) and reports
// whether it passed. Its error ends the tune: a value that could not be judged twice, or ctx.
func (t *tuner) probe(ctx context.Context, run func(context.Context, Plan) (*Row, error), k int, confirm bool) (bool, error) {
	d := t.value(k)
	var last TuneProbe
	for attempt := 1; attempt <= 2; attempt++ {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("tune %s interrupted: %w", t.base.Variant.Name, err)
		}
		p := t.plan(d)
		t.runs[d]++
		p.Repeat = t.runs[d]
		pr := TuneProbe{N: len(t.res.Probes) + len(t.res.Confirm) + 1, Confirm: confirm, Retry: attempt > 1,
			PreStop: d, Variant: p.Variant.Name}
		if t.o.Progress != nil {
			t.o.Progress(pr)
		}
		row, err := run(ctx, p)
		pr.fill(row, err)
		if confirm {
			t.res.Confirm = append(t.res.Confirm, pr)
		} else {
			t.res.Probes = append(t.res.Probes, pr)
		}
		if t.o.Progress != nil {
			t.o.Progress(pr)
		}
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("tune %s interrupted at probe %d: %w", t.base.Variant.Name, pr.N, err)
		}
		if pr.Judged() {
			return pr.Status == Pass, nil
		}
		last = pr
	}
	return false, fmt.Errorf("tune %s: probe %d, preStop %s: %s twice, the last: %s", t.base.Variant.Name, last.N, d, last.Status, last.Reason)
}

// fill sets the probe's numbers and verdict from its row; a run error makes it an Error.
func (p *TuneProbe) fill(row *Row, err error) {
	p.Row = row
	if row != nil {
		s := row.Summary
		p.Hook, p.Requests, p.Failed, p.FailureRatio = row.Config.PreStop, s.Requests, s.Failed, s.FailureRatio
		p.Disruptions = len(row.Disruptions)
		p.WorstSuccessRatio = WorstDisruption(row.Disruptions).SuccessRatio
		p.Status, p.Reason = row.Verdict.Status, row.Verdict.Reason
		if row.Suite != "" && row.Config.Name != "" && row.Config.Disruption != "" {
			p.File = RowFileName(*row)
		}
	}
	switch {
	case err != nil:
		p.Status, p.Reason = Error, err.Error()
	case row == nil:
		p.Status, p.Reason = Error, "the run returned no row"
	}
}
