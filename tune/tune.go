package tune

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/oneline"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// Defaults and limits of the options.
const (
	DefaultMax        = 20 * time.Second
	DefaultResolution = 500 * time.Millisecond
	// Longest is the longest preStop a tune tries.
	Longest = 10 * time.Minute
	// Unit is the grid unit: the range and the resolution are multiples of it, and it is the
	// finest resolution.
	Unit = 100 * time.Millisecond
	// Confirmations is how many values that runs alone failed the confirmation steps over,
	// going up one resolution at a time from the value the search found, before it gives up
	// (Unconfirmed). Only values at or above one where a run alone was clean count: below
	// those, a failure only shows that the search's probes, beside others, were too kind.
	Confirmations = 3
	// MaxParallel is the most probes a tune runs at once (WithParallel). Each probe is a full
	// row on the cluster (the app's replicas, load pods, a rollout): more than this only queue on
	// the API server and the nodes' CPUs, as make e2e's parallel rows do (ROLLCHECK_PROCS has
	// the same bound), and 7 probes already decide three halvings of the search per round.
	MaxParallel = 8
)

// Runner runs one probe's resolved Plan (tune resolves it: check.Plan.Resolve) and returns its
// row, as engine.Run does on a Target:
//
//	run := func(ctx context.Context, p *check.Resolved) (*check.Row, error) { return engine.Run(ctx, target, p) }
//
// With WithParallel(n), n > 1, it is called from several goroutines at once, one per probe in
// flight, each with a Plan of its own: it must be safe for that. It must return soon after ctx
// ends.
type Runner func(ctx context.Context, p *check.Resolved) (*check.Row, error)

// Option configures a tune.
type Option func(*options)

type options struct {
	min, max, resolution time.Duration
	preStop              func(time.Duration) check.PreStop
	progress             func(Probe)
	parallel             int
	bound                float64
}

// WithRange bounds the preStop values tried (default 0 to DefaultMax; max at most Longest).
// Both are multiples of Unit.
func WithRange(min, max time.Duration) Option {
	return func(o *options) { o.min, o.max = min, max }
}

// WithResolution is the precision of the answer: the search stops when the smallest passing
// value and the largest failing one are this close (default DefaultResolution; a multiple of
// Unit).
func WithResolution(d time.Duration) Option { return func(o *options) { o.resolution = d } }

// WithPreStop turns a preStop length into the hook a probe's Variant gets. Without it:
// check.NativeSleep, Kubernetes' sleep action, which takes whole seconds only: the range must
// then be whole seconds, and a resolution that is not is raised to the next whole second (the
// result's Note says so).
func WithPreStop(f func(time.Duration) check.PreStop) Option {
	return func(o *options) { o.preStop = f }
}

// WithProgress calls f when a probe starts (its Status empty) and when it ends. f is called
// from Run's goroutine only, never twice at once: with parallel probes, the starts of a round
// in the order of their N, then each end as it comes.
func WithProgress(f func(Probe)) Option { return func(o *options) { o.progress = f } }

// WithParallel runs up to n probes at once (default 1: one after another; at most
// MaxParallel). The search goes in rounds: each round runs the probe the search needs next
// and, on the other n-1 slots, the probes it would need after that under the likeliest
// outcomes (each outcome of a probe weighed by how many values of the range it leaves
// possible for the threshold), then waits for all of them. Decisions stay the serial search's:
// a probe run ahead is used when the search reaches it, so a curve whose passes and failures
// do not change from run to run gives the same answer and confirmations as WithParallel(1),
// in fewer rounds, at the cost of probes the search did not need (Probe.Ahead). A
// confirmation may run ahead too, next to the search probe of its value: both are
// independent runs.
//
// Allow n > 1 only when probes share nothing: when the base Plan may run beside others
// (check.Plan.RunsAlone says why not: load from the host, a kubelet restart, a node drain, ...),
// or two probes at once would disturb each other's verdicts. tune cannot see what a Runner
// shares: the caller decides, for example with Parallelism.
func WithParallel(n int) Option { return func(o *options) { o.parallel = n } }

// WithBound is the most probability that one pod deletion fails which the answer may leave, at
// 95 % confidence (default DefaultBound, 5 %; MinBound to MaxBound): the answer's runs alone
// must count enough deletions, none failing, for the exact upper bound (UpperBound) to fall
// below it, DeletionsNeeded(p) of them (59 for 5 %). The confirmation runs the value alone until
// they do, or until a deletion fails. The number of runs follows from the deletions each run
// counts: a rollout of 3 replicas repeated 5 times deletes 15 pods, 4 runs for 5 %.
func WithBound(p float64) Option { return func(o *options) { o.bound = p } }

// Parallelism is the most probes of base that may run at once when its Runner is engine.Run:
// 1 when base must run alone (check.Plan.RunsAlone), MaxParallel otherwise.
func Parallelism(base check.Plan) int {
	if base.RunsAlone() != "" {
		return 1
	}
	return MaxParallel
}

// Status is how a tune ended.
type Status string

// Statuses of a tune.
const (
	// Found: runs alone at the value found bound the probability that a deletion fails below
	// the bound (WithBound), and a run alone one resolution below failed (or the value is the
	// range's start).
	Found Status = "found"
	// Unconfirmed: the search found a value, but runs alone failed it and the values above it
	// (Confirmations in all), or could not count the deletions to bound it.
	Unconfirmed Status = "unconfirmed"
	// NotFound: no value up to the range's end passed.
	NotFound Status = "not-found"
	// Incomplete: a probe could not be judged twice in a row, or the context ended.
	Incomplete Status = "incomplete"
)

// Probe is one run of the base Plan at one preStop value: the numbers of its curve point
// and its verdict. Row is the full row, for the caller to write (it is not in the JSON; File
// names the file rowfile.Write gives it).
type Probe struct {
	// N numbers the probes of a tune in the order they started, confirmations included
	// (1-based). Round numbers the round it ran in: the probes of one round run at once
	// (WithParallel), a round starts when the one before has ended; serial, Round is N.
	N     int `json:"n"`
	Round int `json:"round"`
	// Confirm marks a run started as a confirmation (always alone); Retry the second run at a
	// value whose first run was a harness fault or an error. Ahead marks a run started ahead of
	// the search (WithParallel) that the search did not reach: a point of the curve, not one the
	// search asked for. Alone marks a run with no other probe beside it (its round ran it only):
	// only such runs decide the answer (Evidence).
	Confirm bool          `json:"confirm,omitempty"`
	Retry   bool          `json:"retry,omitempty"`
	Ahead   bool          `json:"ahead,omitempty"`
	Alone   bool          `json:"alone,omitempty"`
	PreStop time.Duration `json:"preStop"`
	// Variant is the probe's variant name (the base's, suffixed with the value); Hook the
	// preStop as the row applied it (its String: "sleep:2s", "httpGet:/prestop?sleep=1.5s", "none").
	Variant string        `json:"variant"`
	Hook    check.PreStop `json:"hook"`
	File    string        `json:"file,omitempty"`

	Requests     int     `json:"requests"`
	Failed       int     `json:"failed"`
	FailureRatio float64 `json:"failureRatio"`
	// Disruptions is how many disruptions were recorded, and WorstSuccessRatio the success
	// ratio of the worst of them (0 when none was).
	Disruptions       int     `json:"disruptions"`
	WorstSuccessRatio float64 `json:"worstSuccessRatio"`
	// Deletions counts the pods the run deleted, FailingDeletions those whose disruption failed
	// the threshold on its own (see Deletions: a deletion of a disruption that lost a request,
	// for a zero-failure threshold).
	Deletions        int `json:"deletions"`
	FailingDeletions int `json:"failingDeletions"`
	// Exit (each deleted pod's deletion → exit) and DisruptionTime (each disruption's start →
	// the Deployment settled) are what this preStop costs in time (check.Times).
	Exit           check.Durations `json:"exit"`
	DisruptionTime check.Durations `json:"disruptionTime"`
	Status         check.Status    `json:"status"`
	Reason         string          `json:"reason"`
	// Started is when the probe started (its Runner called right after); Wall until the Runner
	// returned.
	Started time.Time     `json:"started"`
	Wall    time.Duration `json:"wall"`

	Row *check.Row `json:"-"`
}

// Judged reports whether the probe has a verdict on the app (pass or fail), so that it is a
// point of the curve; a harness fault or an error is not.
func (p Probe) Judged() bool { return p.Status == check.Pass || p.Status == check.Fail }

// Result is what Tune found, and every probe it ran to find it.
type Result struct {
	Suite string `json:"suite"`
	// Base is the base Plan's variant name, Disruption its disruption (Count is K) and Expect
	// the threshold every probe is judged against.
	Base       string           `json:"base"`
	Disruption check.Disruption `json:"disruption"`
	Expect     check.Outcome    `json:"expect"`
	// GraceSeconds is the base's terminationGracePeriodSeconds, as applied.
	GraceSeconds int64 `json:"terminationGracePeriodSeconds"`
	// Min, Max and Resolution are the search's, as used (Resolution raised for the native
	// sleep action).
	Min        time.Duration `json:"min"`
	Max        time.Duration `json:"max"`
	Resolution time.Duration `json:"resolution"`
	// Parallel is the most probes run at once (WithParallel); Rounds how many rounds ran.
	Parallel int `json:"parallel"`
	Rounds   int `json:"rounds"`
	// Bound is the most probability that one deletion fails the answer may leave, at
	// Confidence (WithBound); DeletionsNeeded how many deletions alone, none failing, show it.
	Bound           float64 `json:"bound"`
	Confidence      float64 `json:"confidence"`
	DeletionsNeeded int     `json:"deletionsNeeded"`

	Status Status `json:"status"`
	// Probes are the search's runs, those run ahead that it did not reach (Ahead) among them;
	// Confirm the confirmation runs, each alone; each in the order the probes started (N).
	Probes  []Probe `json:"probes"`
	Confirm []Probe `json:"confirm,omitempty"`
	// Found is the confirmed value (FoundOK), or the search's answer when no value was
	// confirmed (Unconfirmed); 0 otherwise.
	Found   time.Duration `json:"found"`
	FoundOK bool          `json:"foundOK"`
	// AtFound is what the runs alone at Found showed, Below what those one resolution below it
	// showed (nil when none ran there): the bound the answer has, and the one it would leave
	// a step shorter.
	AtFound *Evidence `json:"atFound,omitempty"`
	Below   *Evidence `json:"below,omitempty"`
	// Note says what the caller should know: a resolution raised, a confirmation that needed a
	// higher value, values above the grace period.
	Note    string        `json:"note,omitempty"`
	Started time.Time     `json:"started"`
	Wall    time.Duration `json:"wall"`
	// Recommendation is the last confirming row's (Explanation.Recommendation): the preStop
	// and grace period its measurements call for; nil when there is none.
	Recommendation *check.Recommendation `json:"recommendation,omitempty"`
	Versions       check.Versions        `json:"versions"`
}

// Curve returns the judged probes, search and confirmation, sorted by preStop (probes at the
// same value in the order they ran): the points of the failures-against-preStop curve.
func (r *Result) Curve() []Probe {
	var c []Probe
	for _, p := range append(slices.Clone(r.Probes), r.Confirm...) {
		if p.Judged() {
			c = append(c, p)
		}
	}
	slices.SortStableFunc(c, func(a, b Probe) int {
		return cmp.Or(cmp.Compare(a.PreStop, b.PreStop), cmp.Compare(a.N, b.N))
	})
	return c
}

// Run finds the smallest preStop that makes the base Plan meet its threshold under its
// disruption repeated Disruption.Count times. The base Plan's Variant is the configuration
// tuned; each probe is one run of it with Variant.PreStop set by WithPreStop (default
// check.NativeSleep) and the variant's name suffixed with the value ("web-prestop-1p5s"; see
// Name). Its Expect is the threshold (a zero Outcome means check.Zero()).
//
// The search probes the range's start; when that fails, start + resolution·2^k for k = 0, 1,
// 2... (capped at the range's end) until a probe passes, then bisects between the last failing
// and the first passing value down to the resolution. No passing value is NotFound, not an
// error.
//
// The answer then rests on runs alone, never beside another probe (probes in parallel slow
// each other's rollouts, and may fail less or more than a run alone): the confirmation runs
// the value found alone until its deletions bound the probability that one fails below the
// bound (WithBound, at Confidence), or until a deletion fails; then it tries the next value
// up (the Note says so; see Confirmations). Once a value is bounded, the value
// one resolution below must have failed alone (a search probe that ran alone counts): if none
// ran there, it runs there alone, and should that value be bounded too, the answer moves down
// to it. So the answer is the smallest value bounded by runs alone whose lower neighbour
// failed alone, whatever the parallelism.
//
// A probe that ends as a harness fault or an error is run again once; a second one ends the
// tune with the result so far and an error, as does the end of ctx (the error wraps
// ctx.Err(); the probes in flight get the ended ctx and are waited for). Bad options are an
// error before any run. WithParallel runs several probes at once, for the same answer.
func Run(ctx context.Context, run Runner, base check.Plan, opts ...Option) (*Result, error) {
	t, err := newTuner(base, opts)
	if err != nil {
		return nil, err
	}
	res := t.res
	res.Started = time.Now()
	err = t.search(ctx, run)
	res.Wall = time.Since(res.Started)
	t.file()
	for _, p := range append(slices.Clone(res.Probes), res.Confirm...) {
		if p.Row != nil && p.Row.Versions != (check.Versions{}) {
			res.Versions = p.Row.Versions
			break
		}
	}
	if err != nil {
		res.Status, res.FoundOK = Incomplete, false
	}
	return res, err
}

// Validate checks a tune of base with opts before any cluster work: the options, the
// threshold and the Plans of the probes at the ends of the range. Every problem is reported on
// one line.
func Validate(base check.Plan, opts ...Option) error {
	_, err := newTuner(base, opts)
	return err
}

type tuner struct {
	base    check.Plan
	o       options
	kMax    int // index of Max: value(kMax) == Max
	res     *Result
	runs    map[time.Duration]int // runs per value so far, for Plan.Repeat
	tallies map[key]*tally        // what the runs of each key gave
	alone   map[int]*Evidence     // what the judged runs alone at each index gave
	ran     []ran                 // every probe, in the order of N
}

func newTuner(base check.Plan, opts []Option) (*tuner, error) {
	o := options{parallel: 1, bound: DefaultBound}
	for _, f := range opts {
		f(&o)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	var notes []string
	if o.max == 0 {
		o.max = DefaultMax
	}
	if o.resolution == 0 {
		o.resolution = DefaultResolution
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"min", o.min}, {"max", o.max}, {"resolution", o.resolution}} {
		if f.d%Unit != 0 {
			bad("%s %s: want a multiple of %s", f.name, f.d, Unit)
		}
	}
	if o.min < 0 {
		bad("min %s: want 0 or more", o.min)
	}
	if o.max > Longest {
		bad("max %s: want at most %s", o.max, Longest)
	}
	if o.min >= o.max {
		bad("min %s is not below max %s", o.min, o.max)
	}
	if o.resolution < 0 {
		bad("resolution %s: want more than 0", o.resolution)
	}
	if !(o.bound >= MinBound && o.bound <= MaxBound) {
		bad("bound %g: want %g to %g (the most probability that one deletion fails)", o.bound, MinBound, MaxBound)
	}
	if o.parallel < 1 || o.parallel > MaxParallel {
		bad("parallel %d: want 1 to %d probes at once", o.parallel, MaxParallel)
	}
	if o.preStop == nil {
		o.preStop = check.NativeSleep
		if o.min%time.Second != 0 || o.max%time.Second != 0 {
			bad("min %s, max %s: the native sleep action takes whole seconds (or give another preStop)", o.min, o.max)
		}
		if r := o.resolution; r > 0 && r%time.Second != 0 {
			o.resolution = (r/time.Second + 1) * time.Second
			notes = append(notes, fmt.Sprintf("resolution %s raised to %s: the native sleep action takes whole seconds", r, o.resolution))
		}
	}
	if reflect.ValueOf(base.Variant.Expect).IsZero() {
		base.Variant.Expect = check.Zero()
	}
	if base.Variant.Expect.Kind == check.ExpectFailures {
		bad("expect %s: a negative control has no preStop to tune (tune looks for the smallest preStop that passes)", base.Variant.Expect)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("tune %s: %w", base.Variant.Name, oneline.Join(errs))
	}
	base = base.WithDefaults()
	t := &tuner{base: base, o: o, runs: map[time.Duration]int{}, tallies: map[key]*tally{}, alone: map[int]*Evidence{},
		kMax: int((o.max - o.min + o.resolution - 1) / o.resolution)}
	// The probes at the ends of the range (and next to them: the longest names) stand for all.
	for _, k := range slices.Compact([]int{0, 1, t.kMax - 1, t.kMax}) {
		if _, err := t.plan(t.value(k)).Validate(); err != nil {
			return nil, fmt.Errorf("tune %s: preStop %s: %w", base.Variant.Name, t.value(k), err)
		}
	}
	// The probe plans are valid, so the Deployment applies.
	grace := base.Applied().GraceSeconds
	if o.max > time.Duration(grace)*time.Second {
		notes = append(notes, fmt.Sprintf("values above the grace period (%ds) are cut short by it", grace))
	}
	t.res = &Result{Suite: base.Suite, Base: base.Variant.Name, Disruption: base.Disruption,
		Expect: base.Variant.Expect, GraceSeconds: grace, Min: o.min, Max: o.max, Resolution: o.resolution,
		Parallel: o.parallel, Bound: o.bound, Confidence: Confidence, DeletionsNeeded: DeletionsNeeded(o.bound),
		Probes: []Probe{}, Note: strings.Join(notes, "; ")}
	return t, nil
}

// value is the k-th value of the grid Min, Min+Resolution, ..., capped at Max.
func (t *tuner) value(k int) time.Duration {
	return min(t.o.min+time.Duration(k)*t.o.resolution, t.o.max)
}

// plan is the base check.Plan with the preStop d, named after it.
func (t *tuner) plan(d time.Duration) check.Plan {
	p := t.base
	ps := t.o.preStop(d)
	p.Variant.PreStop = &ps
	p.Variant.Name = Name(t.base.Variant.Name, d)
	return p
}

// Name is the variant name of a probe of base at preStop d: "web-prestop-1p5s" (a dot is
// not allowed in a name). base is shortened when the name would be longer than 40 characters.
func Name(base string, d time.Duration) string {
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

// fill sets the probe's numbers and verdict from its row, its deletions counted against
// expect; a run error makes it an Error.
func (p *Probe) fill(row *check.Row, err error, expect check.Outcome) {
	p.Row = row
	if row != nil {
		s := row.Summary
		p.Hook, p.Requests, p.Failed, p.FailureRatio = row.Config.PreStop, s.Requests, s.Failed, s.FailureRatio
		p.Disruptions = len(row.Disruptions)
		p.Deletions, p.FailingDeletions = Deletions(row, expect)
		p.WorstSuccessRatio = check.WorstDisruption(row.Disruptions).SuccessRatio
		if row.Times != nil {
			p.Exit, p.DisruptionTime = row.Times.Exit, row.Times.Disruption
		}
		p.Status, p.Reason = row.Verdict.Status, row.Verdict.Reason
		if row.Suite != "" && row.Config.Name != "" && row.Config.Disruption != "" {
			p.File = rowfile.Name(*row)
		}
	}
	switch {
	case err != nil:
		p.Status, p.Reason = check.Error, err.Error()
	case row == nil:
		p.Status, p.Reason = check.Error, "the run returned no row"
	}
}
