package tune

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// call is one call of a standIn: which probe (variant and repeat), when it ran by the runner's
// own clock.
type call struct {
	probe      string // variant/repeat
	start, end time.Time
}

// standIn is a Runner safe for concurrent calls: each call sleeps for sleep (or until ctx ends)
// and passes when pass(preStop, alone) says so. It records every call and the most calls in
// flight at once. Its progress option tells it which calls are confirmations and which run
// alone: the progress callback sees a probe start before the Runner is called for it.
type standIn struct {
	t     testing.TB
	sleep time.Duration
	pass  func(d time.Duration, alone bool) bool
	// fault, if set, makes a call a harness fault (or an error when it returns an error).
	fault func(d time.Duration, confirm bool, n int) (check.Status, error)

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	calls       []call
	started     map[string]int  // probe starts per variant, as the progress callback saw them
	confirms    map[string]bool // by variant/repeat
	alones      map[string]bool // by variant/repeat
	runsAt      map[string]int  // calls per preStop and kind (search or confirmation)
}

func newStandIn(t testing.TB, sleep time.Duration, pass func(time.Duration, bool) bool) *standIn {
	return &standIn{t: t, sleep: sleep, pass: pass, started: map[string]int{}, confirms: map[string]bool{}, alones: map[string]bool{}, runsAt: map[string]int{}}
}

// progress is the option that tells the stand-in which probes are confirmations.
func (s *standIn) progress(then func(Probe)) Option {
	return WithProgress(func(p Probe) {
		if p.Status == "" {
			s.mu.Lock()
			s.started[p.Variant]++
			s.confirms[fmt.Sprintf("%s/%d", p.Variant, s.started[p.Variant])] = p.Confirm
			s.alones[fmt.Sprintf("%s/%d", p.Variant, s.started[p.Variant])] = p.Alone
			s.mu.Unlock()
		}
		if then != nil {
			then(p)
		}
	})
}

func (s *standIn) run(ctx context.Context, pr *check.Resolved) (*check.Row, error) {
	p := pr.Plan()
	d := preStopOf(s.t, p)
	s.mu.Lock()
	confirm := s.confirms[fmt.Sprintf("%s/%d", p.Variant.Name, p.Repeat)]
	alone := s.alones[fmt.Sprintf("%s/%d", p.Variant.Name, p.Repeat)]
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	c := call{probe: fmt.Sprintf("%s/%d", p.Variant.Name, p.Repeat), start: time.Now()}
	k := fmt.Sprintf("%s/%v", d, confirm)
	s.runsAt[k]++
	n := s.runsAt[k]
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		c.end = time.Now()
		s.calls = append(s.calls, c)
		s.mu.Unlock()
	}()
	if s.sleep > 0 {
		select {
		case <-time.After(s.sleep):
		case <-ctx.Done():
			row := fakeRow(p, 0)
			row.Verdict = check.Verdict{Status: check.Error, Reason: "interrupted"}
			return row, fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	if s.fault != nil {
		if status, err := s.fault(d, confirm, n); status != "" {
			row := fakeRow(p, 0)
			row.Verdict = check.Verdict{Status: status, Reason: "stand-in " + string(status)}
			return row, err
		}
	}
	failed := 0
	if !s.pass(d, alone) {
		failed = 1 + int(d/time.Second)
	}
	return fakeRow(p, failed), nil
}

// checkRounds checks, by the runner's own clock, that a round started only once every probe of
// the round before had returned, and that no more than n calls were in flight.
func (s *standIn) checkRounds(t *testing.T, res *Result, n int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxInFlight > n {
		t.Errorf("%d calls in flight at once, want at most %d", s.maxInFlight, n)
	}
	calls := map[string]call{}
	for _, c := range s.calls {
		calls[c.probe] = c
	}
	first, last := map[int]time.Time{}, map[int]time.Time{}
	all := append(slices.Clone(res.Probes), res.Confirm...)
	for _, p := range all {
		c, ok := calls[fmt.Sprintf("%s/%d", p.Variant, p.Row.Repeat)]
		if !ok {
			t.Errorf("probe %d (%s) was not a call of the runner", p.N, p.Variant)
			continue
		}
		if r := p.Round; first[r].IsZero() || c.start.Before(first[r]) {
			first[r] = c.start
		}
		if r := p.Round; c.end.After(last[r]) {
			last[r] = c.end
		}
	}
	for r := 2; r <= res.Rounds; r++ {
		if first[r].Before(last[r-1]) {
			t.Errorf("round %d started before round %d ended", r, r-1)
		}
	}
	if got := len(s.calls); got != len(all) {
		t.Errorf("%d calls, %d probes recorded", got, len(all))
	}
}

// gridCase is a range, a resolution and the threshold at one value of its grid (or none).
type gridCase struct {
	min, max, res time.Duration
	on            time.Duration // pass from here; -1: never
}

func (g gridCase) String() string {
	return fmt.Sprintf("%s..%s/%s pass from %s", g.min, g.max, g.res, g.on)
}

// gridCases are every threshold on the grid of a few ranges, and none.
func gridCases() []gridCase {
	var out []gridCase
	for _, r := range []struct{ min, max, res time.Duration }{
		{0, 20 * sec, 500 * time.Millisecond}, // the defaults
		{0, 10 * sec, sec},                    // the native sleep's whole seconds
		{2 * sec, 7 * sec, 500 * time.Millisecond},
		{0, 3 * sec, 700 * time.Millisecond}, // the last interval is cut by the range's end
		{0, sec, 500 * time.Millisecond},
	} {
		for d := r.min; ; d = min(d+r.res, r.max) {
			out = append(out, gridCase{r.min, r.max, r.res, d})
			if d == r.max {
				break
			}
		}
		out = append(out, gridCase{r.min, r.max, r.res, -1})
	}
	return out
}

func (g gridCase) opts(extra ...Option) []Option {
	return append([]Option{WithRange(g.min, g.max), WithResolution(g.res), WithPreStop(execSleep)}, extra...)
}

func (g gridCase) passes(d time.Duration, _ bool) bool { return g.on >= 0 && d >= g.on }

// tuneGrid runs the tune of g with n probes at once and checks its rounds.
func tuneGrid(t *testing.T, g gridCase, n int) *Result {
	t.Helper()
	s := newStandIn(t, 0, g.passes)
	res, err := Run(context.Background(), s.run, tunePlan(t), g.opts(WithParallel(n), s.progress(nil))...)
	if err != nil {
		t.Fatalf("%s, parallel %d: %v", g, n, err)
	}
	s.checkRounds(t, res, n)
	return res
}

// Every threshold of every grid: the parallel tune finds what the serial one finds, with the
// same note, having run every value the serial search ran. Its confirmations run alone, at the
// answer or one resolution below it: one run more at the answer (the serial search's probe
// there ran alone and counts, the parallel one's may not) and one below when the search's
// probe there ran beside others, so at most two rounds more than the serial tune.
func TestParallelFindsTheSerialAnswer(t *testing.T) {
	for _, g := range gridCases() {
		serial := tuneGrid(t, g, 1)
		if slices.ContainsFunc(serial.Probes, func(p Probe) bool { return p.Ahead }) {
			t.Errorf("%s serial: a probe ran ahead", g)
		}
		if serial.Rounds != len(serial.Probes)+len(serial.Confirm) {
			t.Errorf("%s serial: %d rounds for %d probes", g, serial.Rounds, len(serial.Probes)+len(serial.Confirm))
		}
		for n := 2; n <= MaxParallel; n++ {
			res := tuneGrid(t, g, n)
			if res.Status != serial.Status || res.Found != serial.Found || res.FoundOK != serial.FoundOK || res.Note != serial.Note {
				t.Errorf("%s, parallel %d: %s %s (ok %v, note %q); serial: %s %s (ok %v, note %q)", g, n,
					res.Status, res.Found, res.FoundOK, res.Note, serial.Status, serial.Found, serial.FoundOK, serial.Note)
			}
			for _, c := range res.Confirm {
				if !c.Alone || c.PreStop > res.Found || c.PreStop < res.Found-g.res {
					t.Errorf("%s, parallel %d: confirmation %d at %s (alone %v), found %s", g, n, c.N, c.PreStop, c.Alone, res.Found)
				}
			}
			// The probes the search read are the serial search's, in its order; the others ran ahead.
			read := slices.DeleteFunc(slices.Clone(res.Probes), func(p Probe) bool { return p.Ahead })
			if got, want := secsOf(read), secsOf(serial.Probes); !slices.Equal(got, want) {
				t.Errorf("%s, parallel %d: probes read %v, want %v", g, n, got, want)
			}
			if res.Rounds > serial.Rounds+2 || res.Parallel != n {
				t.Errorf("%s, parallel %d: %d rounds, serial %d", g, n, res.Rounds, serial.Rounds)
			}
			checkOrder(t, res)
		}
	}
}

// checkOrder checks that the probes are numbered in order, rounds never go back, and the curve
// is sorted by preStop.
func checkOrder(t *testing.T, res *Result) {
	t.Helper()
	all := append(slices.Clone(res.Probes), res.Confirm...)
	slices.SortFunc(all, func(a, b Probe) int { return a.N - b.N })
	for i, p := range all {
		if p.N != i+1 || (i > 0 && p.Round < all[i-1].Round) || p.Started.IsZero() || p.Wall < 0 {
			t.Errorf("probe %d: n %d, round %d, started %v, wall %s", i+1, p.N, p.Round, p.Started, p.Wall)
		}
	}
	for _, ps := range [][]Probe{res.Probes, res.Confirm} {
		if !slices.IsSortedFunc(ps, func(a, b Probe) int { return a.N - b.N }) {
			t.Errorf("probes out of order: %v", ps)
		}
	}
	if c := res.Curve(); !slices.IsSortedFunc(c, func(a, b Probe) int { return int(a.PreStop - b.PreStop) }) {
		t.Errorf("curve %v not sorted by preStop", secsOf(c))
	}
}

// The search's decisions are the serial search's even when the verdicts are not monotone: a
// curve whose verdict at each value does not change from run to run (alone or beside others)
// gives the same answer, whichever probes ran ahead.
func TestParallelSameDecisionsOnAnyFixedCurve(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		curve := map[time.Duration]bool{}
		for d := time.Duration(0); d <= 10*sec; d += 500 * time.Millisecond {
			curve[d] = r.IntN(3) > 0
		}
		pass := func(d time.Duration, _ bool) bool { return curve[d] }
		var results []*Result
		for _, n := range []int{1, 2, 3, 5, 8} {
			s := newStandIn(t, 0, pass)
			res, err := Run(context.Background(), s.run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(n), s.progress(nil))
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res)
		}
		serial := results[0]
		for _, res := range results[1:] {
			read := slices.DeleteFunc(slices.Clone(res.Probes), func(p Probe) bool { return p.Ahead })
			if res.Status != serial.Status || res.Found != serial.Found || res.Note != serial.Note ||
				!slices.Equal(secsOf(read), secsOf(serial.Probes)) {
				t.Errorf("seed %d, parallel %d: %s %s %v %q; serial %s %s %v %q", seed, res.Parallel, res.Status, res.Found,
					secsOf(read), res.Note, serial.Status, serial.Found, secsOf(serial.Probes), serial.Note)
			}
		}
	}
}

// The answer is the runs alone's, whatever the probes beside others say: on a threshold alone
// (or none) and any verdicts beside others, fixed from run to run, every parallelism finds the
// threshold alone, or nothing when there is none.
func TestParallelAnswerIsTheRunsAlones(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		on := time.Duration(r.IntN(22)) * 500 * time.Millisecond // 10.5 s: never
		beside := map[time.Duration]bool{}
		for d := time.Duration(0); d <= 10*sec; d += 500 * time.Millisecond {
			beside[d] = r.IntN(3) > 0
		}
		pass := func(d time.Duration, alone bool) bool {
			if alone {
				return d >= on
			}
			return beside[d]
		}
		for _, n := range []int{1, 2, 3, 5, 8} {
			s := newStandIn(t, 0, pass)
			res, err := Run(context.Background(), s.run, tunePlan(t), WithRange(0, 10*sec), WithPreStop(execSleep), WithParallel(n), s.progress(nil))
			if err != nil {
				t.Fatal(err)
			}
			if on <= 10*sec && (res.Status != Found || res.Found != on) || on > 10*sec && res.FoundOK {
				t.Errorf("seed %d, parallel %d: %s %s (note %q); alone the app passes from %s", seed, n, res.Status, res.Found, res.Note, on)
			}
		}
	}
}

// rounds is the rounds of every tune of the grid, summed: all of them, and the search's (up to
// its last probe's round; the confirmation's rounds follow, one run alone each).
func rounds(t testing.TB, n int) (all, search int) {
	for _, g := range gridCases() {
		s := newStandIn(t, 0, g.passes)
		res, err := Run(context.Background(), s.run, tunePlan(t), g.opts(WithParallel(n), s.progress(nil))...)
		if err != nil {
			t.Fatal(err)
		}
		all += res.Rounds
		last := 0
		for _, p := range res.Probes {
			last = max(last, p.Round)
		}
		search += last
	}
	return all, search
}

// With 2 to 4 probes at once, the grid's searches take far fewer rounds, so far less wall time
// when each probe takes about as long: under two thirds with 2 (two search probes give one of
// three outcomes, where two serial rounds give one of four), half or less from 3 on. The
// confirmation that follows runs alone, about as many rounds at any parallelism (a run or two
// more than serially: see TestParallelFindsTheSerialAnswer), so the whole tune gains less.
func TestParallelRounds(t *testing.T) {
	serialAll, serial := rounds(t, 1)
	for n, most := range map[int]float64{2: 0.65, 3: 0.50, 4: 0.45} {
		all, got := rounds(t, n)
		t.Logf("parallel %d: %d search rounds, serial %d (%.2f); %d rounds in all, serial %d (%.2f)", n, got, serial,
			float64(got)/float64(serial), all, serialAll, float64(all)/float64(serialAll))
		if ratio := float64(got) / float64(serial); ratio > most {
			t.Errorf("parallel %d: %d search rounds, serial %d: %.2f of them, want at most %.2f", n, got, serial, ratio, most)
		}
		if all >= serialAll {
			t.Errorf("parallel %d: %d rounds in all, serial %d", n, all, serialAll)
		}
	}
}

// The first round of three runs three probes at once: the runner holds each call until all
// three are in flight (a serial tune would never get there).
func TestParallelRunsAtOnce(t *testing.T) {
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	run := func(ctx context.Context, pr *check.Resolved) (*check.Row, error) {
		p := pr.Plan()
		mu.Lock()
		if arrived++; arrived == 3 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return nil, errors.New("the other probes of the round never came")
		}
		return fakeRow(p, 0), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var starts []float64
	progress := WithProgress(func(p Probe) {
		if p.Status == "" && p.Round == 1 {
			starts = append(starts, p.PreStop.Seconds())
		}
		if p.Status != "" {
			cancel() // one round is enough
		}
	})
	res, _ := Run(ctx, run, tunePlan(t), WithPreStop(execSleep), WithParallel(3), progress)
	if !slices.Equal(starts, []float64{0, 0.5, 1}) || len(res.Probes) != 3 || res.Probes[0].Status != check.Pass {
		t.Fatalf("first round %v, probes %+v", starts, res.Probes)
	}
}

// A harness fault is run again (in the next round) and the tune finds what it finds serially;
// a confirmation that fails still steps one resolution up.
func TestParallelRetryAndConfirmation(t *testing.T) {
	for n := 1; n <= 4; n++ {
		g := gridCase{0, 20 * sec, 500 * time.Millisecond, 3500 * time.Millisecond}
		// The first run at 2 s is a harness fault; the first confirmation at 3.5 s fails.
		s := newStandIn(t, time.Millisecond, func(d time.Duration, _ bool) bool { return d >= 3500*time.Millisecond })
		s.fault = func(d time.Duration, c bool, i int) (check.Status, error) {
			if d == 2*sec && !c && i == 1 {
				return check.HarnessFault, nil
			}
			if d == 3500*time.Millisecond && c && i == 1 {
				return check.Fail, nil
			}
			return "", nil
		}
		var mu sync.Mutex
		var seen []Probe
		res, err := Run(context.Background(), s.run, tunePlan(t), g.opts(WithParallel(n), s.progress(func(p Probe) {
			if !mu.TryLock() {
				t.Error("progress called while another call runs")
				return
			}
			defer mu.Unlock()
			seen = append(seen, p)
		}))...)
		if err != nil {
			t.Fatal(err)
		}
		s.checkRounds(t, res, n)
		checkOrder(t, res)
		if res.Status != Found || res.Found != 4*sec || !strings.Contains(res.Note, "runs alone failed at 3.5s; 4s met the bound") {
			t.Errorf("parallel %d: %s %s, note %q", n, res.Status, res.Found, res.Note)
		}
		var retried bool
		for i, p := range res.Probes {
			if p.PreStop == 2*sec && p.Status == check.HarnessFault {
				r := slices.IndexFunc(res.Probes, func(q Probe) bool { return q.PreStop == 2*sec && q.Retry })
				retried = r > i && res.Probes[r].Status == check.Fail && res.Probes[r].Round > p.Round
				// The retry's row records it, by the front ends' one policy (internal/attempt).
				if row := res.Probes[r].Row; retried && (row == nil || row.Attempts != 2 || row.Retried != p.Reason || p.Reason == "") {
					t.Errorf("parallel %d: the retry's row does not record the first attempt's fault %q: %+v", n, p.Reason, row)
				}
			}
		}
		if !retried {
			t.Errorf("parallel %d: the harness fault at 2s was not retried: %+v", n, secsOf(res.Probes))
		}
		// Every probe started once and ended once, each round's starts before its ends.
		for _, p := range append(slices.Clone(res.Probes), res.Confirm...) {
			i := slices.IndexFunc(seen, func(q Probe) bool { return q.N == p.N && q.Status == "" })
			j := slices.IndexFunc(seen, func(q Probe) bool { return q.N == p.N && q.Status != "" })
			if i < 0 || j < i || seen[j].Status != p.Status {
				t.Errorf("parallel %d: probe %d: start at %d, end at %d", n, p.N, i, j)
			}
			for _, q := range seen[i+1:] {
				if q.Status == "" && q.Round != p.Round {
					break
				}
				if q.Status == "" && q.N < p.N {
					t.Errorf("parallel %d: probe %d started after %d", n, q.N, p.N)
				}
			}
		}
		if len(seen) != 2*(len(res.Probes)+len(res.Confirm)) {
			t.Errorf("parallel %d: %d progress calls for %d probes", n, len(seen), len(res.Probes)+len(res.Confirm))
		}
	}
}

// A value that cannot be judged twice still ends the tune, in parallel too.
func TestParallelFaultTwiceIsAnError(t *testing.T) {
	s := newStandIn(t, 0, func(d time.Duration, _ bool) bool { return d >= 2*sec })
	s.fault = func(d time.Duration, c bool, i int) (check.Status, error) {
		if d == sec {
			return check.Error, errors.New("deploy: timed out")
		}
		return "", nil
	}
	res, err := Run(context.Background(), s.run, tunePlan(t), WithPreStop(execSleep), WithParallel(3), s.progress(nil))
	if err == nil || !strings.Contains(err.Error(), "preStop 1s: error twice, the last: deploy: timed out") || res.Status != Incomplete || res.FoundOK {
		t.Fatalf("error %v, result %+v", err, res)
	}
}

// Cancelling the context ends every probe in flight (their Runner gets the ended context) and
// the tune is Incomplete, with every probe it started.
func TestParallelCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStandIn(t, time.Minute, func(time.Duration, bool) bool { return true })
	var starts int
	res, err := Run(ctx, s.run, tunePlan(t), WithPreStop(execSleep), WithParallel(4), s.progress(func(p Probe) {
		if p.Status == "" {
			if starts++; starts == 4 {
				go cancel()
			}
		}
	}))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted at probes 1 to 4") {
		t.Fatalf("error %v", err)
	}
	if res.Status != Incomplete || len(res.Probes) != 4 || res.Probes[3].Status != check.Error || s.inFlight != 0 || len(s.calls) != 4 {
		t.Fatalf("result %+v; %d in flight, %d calls", res, s.inFlight, len(s.calls))
	}
	for _, c := range s.calls {
		if c.end.Sub(c.start) > 30*time.Second {
			t.Errorf("a probe ran its full minute: %s", c.end.Sub(c.start))
		}
	}
}

func TestParallelOptions(t *testing.T) {
	for _, n := range []int{0, -1, MaxParallel + 1} {
		err := Validate(tunePlan(t), WithPreStop(execSleep), WithParallel(n))
		if want := fmt.Sprintf("parallel %d: want 1 to %d probes at once", n, MaxParallel); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parallel %d: %v, want one line with %q", n, err, want)
		}
	}
	if err := Validate(tunePlan(t), WithPreStop(execSleep), WithParallel(MaxParallel)); err != nil {
		t.Error(err)
	}
	// Parallelism follows check.Plan.RunsAlone: one probe at a time from the host, and under a
	// kubelet restart or a node drain from the cluster too.
	for _, from := range []check.LoadFrom{check.LoadFromHost, check.LoadFromCluster} {
		for _, kind := range check.DisruptionKinds {
			p := tunePlan(t)
			p.Load.From, p.Disruption.Kind = from, kind
			want := MaxParallel
			if from == check.LoadFromHost || kind == check.KubeletRestart || kind == check.DrainNode {
				want = 1
			}
			if got := Parallelism(p); got != want {
				t.Errorf("Parallelism of load from %q under %s: %d, want %d", from, kind, got, want)
			}
		}
	}
}

// BenchmarkRounds compares serial and parallel tunes by their rounds (the wall time when each
// probe takes about as long), over every threshold of the test grid.
func BenchmarkRounds(b *testing.B) {
	for _, n := range []int{1, 2, 3, 4, 8} {
		b.Run(fmt.Sprintf("parallel-%d", n), func(b *testing.B) {
			var r int
			for b.Loop() {
				r, _ = rounds(b, n)
			}
			b.ReportMetric(float64(r)/float64(len(gridCases())), "rounds/tune")
		})
	}
}
