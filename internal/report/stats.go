package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/stats"
)

// Flaky is the combined status of a repeated row whose runs disagree: some passed, some
// failed. It never counts as passing.
const Flaky check.Status = "flaky"

// RowKey identifies a row across its repeated runs, and across the runs that compare sets
// side by side.
type RowKey struct {
	Suite      string               `json:"suite"`
	Name       string               `json:"name"`
	Disruption check.DisruptionKind `json:"disruption"`
	// Load is check.LoadFromCluster for a row whose load came from inside the cluster, empty
	// for the host (the matrix runs some rows both ways: they are two rows, not two runs).
	Load check.LoadFrom `json:"load,omitempty"`
}

// KeyOf returns the key of a row: its suite, variant name, disruption kind and, for load from
// the cluster, where the load came from.
func KeyOf(r Row) RowKey {
	k := RowKey{Suite: r.Suite, Name: r.Config.Name, Disruption: r.Config.Disruption}
	if r.Config.LoadFrom == check.LoadFromCluster {
		k.Load = check.LoadFromCluster
	}
	return k
}

// String is "name (disruption, suite S)", with ", load from the cluster" when it was.
func (k RowKey) String() string {
	if k.Load == check.LoadFromCluster {
		return fmt.Sprintf("%s (%s, suite %s, load from the cluster)", k.Name, k.Disruption, k.Suite)
	}
	return fmt.Sprintf("%s (%s, suite %s)", k.Name, k.Disruption, k.Suite)
}

// RowStats are the statistics of one row over its repeated runs (Row.Repeat); a row run once
// has Runs 1. Failures and requests are pooled over every run, whatever its verdict.
type RowStats struct {
	Key RowKey `json:"key"`
	// Config is the first run's configuration.
	Config check.Applied `json:"config"`
	Runs   int           `json:"runs"`
	// Repeats, FailuresPerRun, RequestsPerRun and Statuses have one entry per run, in the order
	// the runs were given: its Row.Repeat, failed requests, requests and verdict status.
	Repeats        []int          `json:"repeats"`
	FailuresPerRun []int          `json:"failuresPerRun"`
	RequestsPerRun []int          `json:"requestsPerRun"`
	Statuses       []check.Status `json:"statuses"`
	// Failures and Requests are pooled over the runs; FailureRatio is their ratio (0 without
	// requests) and Interval its 95 % interval (stats.Wilson).
	Failures     int            `json:"failures"`
	Requests     int            `json:"requests"`
	FailureRatio float64        `json:"failureRatio"`
	Interval     stats.Interval `json:"interval"`
	// Worst is the disruption with the lowest success ratio over all runs, and WorstRun the
	// 1-based index, among Runs, of the run it happened in; nil when no disruption was recorded.
	Worst    *check.DisruptionResult `json:"worst,omitempty"`
	WorstRun int                     `json:"worstRun,omitempty"`
	// Exit (deletion → exit of each deleted pod) and Disruption (each disruption's start →
	// settled) are pooled over the runs' check.Times: what the configuration costs in time.
	Exit       check.Durations `json:"exit"`
	Disruption check.Durations `json:"disruption"`
	// Passed is how many runs passed: the verdict is stable when Passed is 0 or Runs.
	Passed int `json:"passed"`
	// Status combines the runs' verdicts: Error or HarnessFault if any run was one (in that
	// order), Pass if every run passed, Fail if every run failed, Flaky otherwise.
	Status check.Status `json:"status"`
}

// Repeated reports whether any row is one of several runs of the same row (Row.Repeat > 0).
func Repeated(rows []Row) bool {
	for _, r := range rows {
		if r.Repeat > 0 {
			return true
		}
	}
	return false
}

// Group gathers the runs of each row (same Suite, Config.Name and Config.Disruption) into one
// RowStats per row, in the order each row is first seen.
func Group(rows []Row) []RowStats {
	var out []RowStats
	index := map[RowKey]int{}
	exits, disruptions := map[int][]time.Duration{}, map[int][]time.Duration{}
	for _, r := range rows {
		k := KeyOf(r)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, RowStats{Key: k, Config: r.Config})
		}
		s := &out[i]
		s.Runs++
		s.Repeats = append(s.Repeats, r.Repeat)
		s.FailuresPerRun = append(s.FailuresPerRun, r.Summary.Failed)
		s.RequestsPerRun = append(s.RequestsPerRun, r.Summary.Requests)
		st := status(r)
		s.Statuses = append(s.Statuses, st)
		if st == check.Pass {
			s.Passed++
		}
		s.Failures += r.Summary.Failed
		s.Requests += r.Summary.Requests
		if t := r.Times; t != nil {
			exits[i] = append(exits[i], t.Exit.Samples...)
			disruptions[i] = append(disruptions[i], t.Disruption.Samples...)
		}
		if len(r.Disruptions) > 0 {
			w := check.WorstDisruption(r.Disruptions)
			if s.Worst == nil || w.SuccessRatio < s.Worst.SuccessRatio {
				s.Worst, s.WorstRun = &w, s.Runs
			}
		}
	}
	for i := range out {
		s := &out[i]
		if s.Requests > 0 {
			s.FailureRatio = float64(s.Failures) / float64(s.Requests)
		}
		s.Interval = stats.Wilson(s.Failures, s.Requests)
		s.Status = combine(s.Statuses)
		s.Exit, s.Disruption = check.Summarize(exits[i]), check.Summarize(disruptions[i])
	}
	return out
}

// combine is the status of a row from the statuses of its runs (see RowStats.Status).
func combine(ss []check.Status) check.Status {
	var pass, fail, fault, errs int
	for _, s := range ss {
		switch s {
		case check.Pass:
			pass++
		case check.Fail:
			fail++
		case check.Error:
			errs++
		default:
			fault++
		}
	}
	switch {
	case errs > 0:
		return check.Error
	case fault > 0:
		return check.HarnessFault
	case fail == 0 && pass > 0:
		return check.Pass
	case pass == 0 && fail > 0:
		return check.Fail
	case pass == 0 && fail == 0:
		return check.HarnessFault // no run at all: nothing was judged
	}
	return Flaky
}

// statsLabel is verdictLabel, knowing Flaky.
func statsLabel(s check.Status) string {
	if s == Flaky {
		return "〰️ flaky"
	}
	return verdictLabel(s)
}

// joinInts is "0, 0, 3".
func joinInts(xs []int) string {
	ss := make([]string, len(xs))
	for i, x := range xs {
		ss[i] = fmt.Sprint(x)
	}
	return strings.Join(ss, ", ")
}

// statsCells are the cells of one line of the Repeats table, not yet escaped: row, runs,
// failures per run, pooled failure % with its interval, worst disruption, stability, status.
func statsCells(s RowStats) []string {
	pooled := "—"
	if s.Requests > 0 {
		pooled = fmt.Sprintf("%s [%s, %s] of %d", pct(s.FailureRatio), pct(s.Interval.Lo), pct(s.Interval.Hi), s.Requests)
	}
	worst := "—"
	if w := s.Worst; w != nil {
		switch {
		case w.Requests == 0:
			worst = fmt.Sprintf("no requests (run %d, #%d)", s.WorstRun, w.N)
		case w.Failed == 0:
			worst = "100%"
		default:
			worst = fmt.Sprintf("%.2f%% (run %d, #%d)", 100*w.SuccessRatio, s.WorstRun, w.N)
		}
	}
	return []string{
		s.Key.Name + ": " + s.Config.Shape(),
		s.Config.DisruptionString(),
		fmt.Sprint(s.Runs),
		joinInts(s.FailuresPerRun),
		pooled,
		worst,
		fmt.Sprintf("%d/%d", s.Passed, s.Runs),
		statsLabel(s.Status),
	}
}

// writeRepeats writes the Repeats section: one table line per row over its runs.
func writeRepeats(p func(string, ...any), rs []RowStats) {
	p("\n## Repeats\n\n")
	p("Failures pooled over each row's runs; the interval is 95 %% (Wilson; for no failure the exact one-sided bound). " +
		"A row passes only if every run passed; runs that disagree make it flaky.\n\n")
	p("%s", repeatsTable.markdownHeader())
	for _, s := range rs {
		cols := statsCells(s)
		for i := range cols {
			cols[i] = mdEscape(cols[i])
		}
		p("| %s |\n", strings.Join(cols, " | "))
	}
}
