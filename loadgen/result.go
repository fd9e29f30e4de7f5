package loadgen

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

const (
	// BucketWidth is the width of a Bucket of the timeline.
	BucketWidth = 100 * time.Millisecond
	// disruptionWindow is the width of the windows counted by
	// Result.DisruptionSeconds.
	disruptionWindow = time.Second
	// BurstGap is the longest gap between two failures of one Burst.
	BurstGap = time.Second
	// RateTolerance is the largest relative difference between the achieved
	// and the asked rate of a valid run (0.01 = 1 %).
	RateTolerance = 0.01
	// RateSlack is how many requests' worth of time a valid run may miss (or
	// exceed) whatever its length: Rate × RateSlack requests, and at least 2.
	// The pacer catches up after a hiccup in mid-run (one shorter than StallGap:
	// after a stall it drops what it missed, loadgen/attack), but the hits that
	// fall due while the process is descheduled at the very end are lost;
	// that alone must not make a short run invalid. For runs longer than
	// 10 s, RateTolerance is the larger allowance.
	RateSlack = 100 * time.Millisecond
	// StallGap is the longest time a valid run may go without sending a
	// request, on top of its pacing interval (1/Rate).
	StallGap = time.Second
)

// EndReason tells why an attack ended.
type EndReason string

// End reasons.
const (
	// EndDuration is an attack that ran until its Duration was up (or whose
	// sending ended on its own).
	EndDuration EndReason = "duration"
	// EndStopped is an attack stopped early by its caller (Stop of loadgen/attack's Attack).
	EndStopped EndReason = "stopped"
	// EndCanceled is an attack stopped early because its context ended.
	EndCanceled EndReason = "canceled"
)

// Request is one entry of the ledger: one request of the attack.
type Request struct {
	// Seq is vegeta's sequence number, from 0, in sending order.
	Seq uint64 `json:"seq"`
	// Timestamp is when the request was sent.
	Timestamp time.Time `json:"timestamp"`
	// Latency is the time until the answer was read, or the request failed.
	Latency time.Duration `json:"latency"`
	// Code is the HTTP status code, 0 when no answer arrived; 0 for an RPC (see Status).
	Code uint16 `json:"code"`
	// Class is ClassOK or the failure class.
	Class Class `json:"class"`
	// Error is vegeta's error text: the status line for a failing status,
	// the flattened transport error otherwise.
	Error string `json:"error,omitempty"`
	// Pod is the value of the Config.PodHeader response header (for an RPC, the response
	// header metadata of that name in lower case, or the trailer's).
	Pod string `json:"pod,omitempty"`
	// Upstream is the value of the Config.UpstreamHeader response header: the address the
	// proxy in front sent the request to.
	Upstream string `json:"upstream,omitempty"`
	// BytesIn is the size of the response body read.
	BytesIn uint64 `json:"bytesIn,omitempty"`
	// Status is the gRPC status code's name ("OK", "Unavailable", …) of an RPC; empty over
	// HTTP. Its class is GRPCClass of that code, and Error the status's message.
	Status string `json:"status,omitempty"`
	// Peer is the address (ip:port) a gRPC RPC was sent to, as the client's connection saw it:
	// the pod's own with round_robin over a headless Service, the Service's with pick_first
	// through a ClusterIP. Empty when no connection was chosen, and over HTTP.
	Peer string `json:"peer,omitempty"`
}

// OK reports whether the request succeeded.
func (r *Request) OK() bool { return r.Class == ClassOK }

// Totals counts the requests of a run.
type Totals struct {
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	Failed   int `json:"failed"`
	// Failures counts failed requests by class.
	Failures map[Class]int `json:"failures"`
}

// Latency holds latency statistics over all requests, failed ones included.
// Quantiles are nearest-rank. Encoded in JSON as integer nanoseconds.
type Latency struct {
	Mean time.Duration `json:"mean"`
	P50  time.Duration `json:"p50"`
	P90  time.Duration `json:"p90"`
	P95  time.Duration `json:"p95"`
	P99  time.Duration `json:"p99"`
	Max  time.Duration `json:"max"`
}

// Bucket counts the requests sent in one BucketWidth slice of the timeline.
type Bucket struct {
	// Start is the bucket's offset from Result.Started.
	Start  time.Duration `json:"start"`
	Sent   int           `json:"sent"`
	OK     int           `json:"ok"`
	Failed int           `json:"failed"`
	// Failures counts the bucket's failed requests by class.
	Failures map[Class]int `json:"failures,omitempty"`
}

// Burst is a run of failures in which no two consecutive failures are more
// than BurstGap apart. Successes in between do not split a burst.
type Burst struct {
	// First and Last are the timestamps of the first and last failed
	// requests.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Count is the number of failed requests.
	Count int `json:"count"`
	// Classes counts the burst's failures by class.
	Classes map[Class]int `json:"classes"`
}

// Span returns the time from the first to the last failure of b.
func (b Burst) Span() time.Duration { return b.Last.Sub(b.First) }

// Result is the outcome of one attack: summary figures, the timeline and the
// whole per-request ledger. It is encoded as JSON with WriteJSON.
type Result struct {
	Config  Config    `json:"config"`
	Started time.Time `json:"started"`
	// Ended is when the attack ended: sending stopped and every in-flight
	// request completed.
	Ended     time.Time `json:"ended"`
	EndReason EndReason `json:"endReason"`
	// Window is the time during which requests were to be sent: Duration,
	// or less when the attack was stopped early.
	Window time.Duration `json:"window"`

	Totals       Totals  `json:"totals"`
	SuccessRatio float64 `json:"successRatio"`
	FailureRatio float64 `json:"failureRatio"`
	Latency      Latency `json:"latency"`

	// DisruptionSeconds is the number of 1 s windows, counted from Started,
	// holding at least one failed request.
	DisruptionSeconds int     `json:"disruptionSeconds"`
	Bursts            []Burst `json:"bursts"`

	// AchievedRate is the number of requests sent divided by the time from
	// Started to the last request sent, in requests per second.
	AchievedRate float64 `json:"achievedRate"`
	// Valid is false when the run did not deliver the asked load; then
	// InvalidReason says why.
	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	// Stalls are the spans in which nothing was sent for longer than StallGap (plus the pacing
	// interval), the run's tail included, each saying whether the app caused it (Stall.Saturated).
	Stalls []Stall `json:"stalls,omitempty"`
	// StallFailed counts the failed requests that were in flight during a stall the app did not
	// cause (Stall.Saturated false): the harness's, not judged against the app. Every other
	// failure is the app's to answer for, whatever the load's validity.
	StallFailed int `json:"stallFailed,omitempty"`
	// ProxyTold is true when the load went through a proxy (Config.Proxy) and the app's answers
	// named their pod, so that the proxy's own 5xx answers (ProxyClass) could be told from the
	// app's. False through a proxy: every 5xx kept its HTTP5xxClass, whoever gave it.
	ProxyTold bool `json:"proxyTold,omitempty"`
	// DNS is what the DNS server answered for Config.Resolve while the attack ran: the first
	// answer and each change. Empty without Resolve.
	DNS []DNSAnswer `json:"dns,omitempty"`
	// TransparentRetry is true when keep-alive was on and the requests were
	// replayable (e.g. GET): Go's http.Transport then silently retried
	// requests whose reused connection the server had closed, hiding that
	// disruption. Over HTTP/2 it is always true: a stream the server refused is
	// sent again, whatever the method. See the package documentation.
	TransparentRetry bool `json:"transparentRetry"`

	GoVersion     string `json:"goVersion"`
	VegetaVersion string `json:"vegetaVersion"`
	// GRPCVersion is grpc-go's version, for a gRPC load.
	GRPCVersion string `json:"grpcVersion,omitempty"`

	// Buckets is the timeline in BucketWidth slices from Started, through
	// the sending window and the last request.
	Buckets []Bucket `json:"buckets"`
	// Requests is the ledger: every request, in sending order.
	Requests []Request `json:"requests"`
}

// Summary is a compact view of a Result without the ledger and timeline, for
// report entries.
type Summary struct {
	Target            string        `json:"target"`
	Method            string        `json:"method"`
	Protocol          Protocol      `json:"protocol,omitempty"`
	GRPCMethod        string        `json:"grpcMethod,omitempty"`
	Balancing         Balancing     `json:"balancing,omitempty"`
	KeepAlive         bool          `json:"keepAlive"`
	Rate              int           `json:"rate"`
	Duration          time.Duration `json:"duration"`
	EndReason         EndReason     `json:"endReason"`
	Requests          int           `json:"requests"`
	OK                int           `json:"ok"`
	Failed            int           `json:"failed"`
	Failures          map[Class]int `json:"failures"`
	SuccessRatio      float64       `json:"successRatio"`
	FailureRatio      float64       `json:"failureRatio"`
	DisruptionSeconds int           `json:"disruptionSeconds"`
	Bursts            []Burst       `json:"bursts"`
	AchievedRate      float64       `json:"achievedRate"`
	Valid             bool          `json:"valid"`
	InvalidReason     string        `json:"invalidReason,omitempty"`
	// StallFailed is Result.StallFailed: the failures a stall of the load, not the app, explains.
	StallFailed      int     `json:"stallFailed,omitempty"`
	TransparentRetry bool    `json:"transparentRetry"`
	Latency          Latency `json:"latency"`
	// Proxy and ProxyTold are Config.Proxy and Result.ProxyTold.
	Proxy     bool `json:"proxy,omitempty"`
	ProxyTold bool `json:"proxyTold,omitempty"`
}

// Summary returns the compact view of r.
func (r *Result) Summary() Summary {
	return Summary{
		Target:            r.Config.Target,
		Method:            r.Config.Method,
		Protocol:          r.Config.Protocol,
		GRPCMethod:        r.Config.GRPCMethod,
		Balancing:         r.Config.Balancing,
		KeepAlive:         r.Config.KeepAlive,
		Rate:              r.Config.Rate,
		Duration:          r.Config.Duration,
		EndReason:         r.EndReason,
		Requests:          r.Totals.Requests,
		OK:                r.Totals.OK,
		Failed:            r.Totals.Failed,
		Failures:          maps.Clone(r.Totals.Failures),
		SuccessRatio:      r.SuccessRatio,
		FailureRatio:      r.FailureRatio,
		DisruptionSeconds: r.DisruptionSeconds,
		Bursts:            slices.Clone(r.Bursts),
		AchievedRate:      r.AchievedRate,
		Valid:             r.Valid,
		InvalidReason:     r.InvalidReason,
		StallFailed:       r.StallFailed,
		TransparentRetry:  r.TransparentRetry,
		Latency:           r.Latency,
		Proxy:             r.Config.Proxy,
		ProxyTold:         r.ProxyTold,
	}
}

// String returns a one-line human description of r.
func (r *Result) String() string { return r.Summary().String() }

// String returns a one-line human description of s.
func (s Summary) String() string {
	var b strings.Builder
	if s.Protocol == ProtocolGRPC {
		fmt.Fprintf(&b, "gRPC %s %s", s.GRPCMethod, s.Target)
	} else {
		fmt.Fprintf(&b, "%s %s", s.Method, s.Target)
	}
	if s.Protocol != "" && s.Protocol != ProtocolHTTP1 && s.Protocol != ProtocolGRPC {
		fmt.Fprintf(&b, " (%s)", s.Protocol)
	}
	fmt.Fprintf(&b, ": %d requests, %d ok, %d failed", s.Requests, s.OK, s.Failed)
	if len(s.Failures) > 0 {
		b.WriteString(" (")
		for i, c := range slices.Sorted(maps.Keys(s.Failures)) {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s=%d", c, s.Failures[c])
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ", %.3f%% failed, %d disruption s, %d bursts, p50 %s p99 %s max %s, %.1f/%d req/s",
		100*s.FailureRatio, s.DisruptionSeconds, len(s.Bursts),
		s.Latency.P50, s.Latency.P99, s.Latency.Max, s.AchievedRate, s.Rate)
	if s.Protocol == ProtocolGRPC {
		fmt.Fprintf(&b, ", %s", s.Balancing)
	} else if s.KeepAlive {
		b.WriteString(", keep-alive")
		if s.TransparentRetry {
			b.WriteString(" (transparent retry)")
		}
	} else {
		b.WriteString(", no keep-alive")
	}
	if s.EndReason != "" && s.EndReason != EndDuration {
		fmt.Fprintf(&b, ", %s early", s.EndReason)
	}
	if s.Valid {
		b.WriteString(", valid")
	} else {
		fmt.Fprintf(&b, ", INVALID: %s", s.InvalidReason)
	}
	return b.String()
}

// WriteJSON writes r, summary and ledger, as one JSON document.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := json.NewEncoder(bw).Encode(r); err != nil {
		return fmt.Errorf("encoding load result as JSON: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing load result JSON: %w", err)
	}
	return nil
}

// ReadJSON decodes a Result written by WriteJSON (a row's raw/<row>.ledger.json).
func ReadJSON(rd io.Reader) (*Result, error) {
	var r Result
	if err := json.NewDecoder(bufio.NewReader(rd)).Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding load result JSON: %w", err)
	}
	return &r, nil
}

// Run is the course of one attack besides its ledger: when it sent and why it ended. NewResult
// judges a ledger over it.
type Run struct {
	// Started is when the attack started sending.
	Started time.Time
	// Ended is when the attack ended: sending stopped and every request in flight completed.
	Ended time.Time
	// EndReason is why the attack ended.
	EndReason EndReason
	// StopAt is when the attack was stopped early (by its caller, or the end of its context) for
	// an EndReason other than EndDuration: its sending window, Result.Window, ends there. Zero
	// when nothing stopped it.
	StopAt time.Time
}

// NewResult builds the Result of one attack from its ledger reqs: cfg is the configuration it
// ran with, defaults applied (Config.WithDefaults), and rn its course. It counts the totals,
// the latency, the timeline, the disruption seconds and the bursts, and judges the validity
// and the stalls; Result.DNS is left empty. It sorts reqs in place into sending order and keeps
// them as the Result's ledger. Every attack of package loadgen/attack builds its Result so, on
// the host or from a load pod's stream: the same ledger over the same course is the same Result.
func NewResult(cfg Config, rn Run, reqs []Request) *Result {
	return aggregate(cfg, rn, nil, reqs)
}

// aggregate builds the Result of a run from its ledger. It sorts reqs in
// place into sending order and keeps it as the Result's ledger. shares are the merged
// attacks' starts and rates (Merge); nil for one attack, which started at rn.Started with the
// whole rate.
func aggregate(cfg Config, rn Run, shares []share, reqs []Request) *Result {
	res := &Result{
		Config:           cfg,
		Started:          rn.Started,
		Ended:            rn.Ended,
		EndReason:        rn.EndReason,
		Window:           cfg.Duration,
		TransparentRetry: cfg.transparentRetry(),
		GoVersion:        runtime.Version(),
		VegetaVersion:    vegetaVersion(),
		Bursts:           []Burst{},
		Requests:         reqs,
	}
	if cfg.Protocol == ProtocolGRPC {
		res.GRPCVersion = moduleVersion(grpcModule, pinnedGRPCVersion)
	}
	if rn.EndReason != EndDuration && !rn.StopAt.IsZero() {
		res.Window = min(res.Window, max(0, rn.StopAt.Sub(rn.Started)))
	}

	// Sending order: vegeta stamps Timestamp and Seq in one critical section,
	// so both orders agree; results arrive in completion order.
	slices.SortFunc(reqs, func(a, b Request) int {
		return cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.Seq, b.Seq))
	})

	if cfg.Proxy {
		res.ProxyTold = markProxyAnswers(reqs)
	}

	tot := Totals{Requests: len(reqs), Failures: map[Class]int{}}
	lat := make([]time.Duration, len(reqs))
	var latSum float64

	nb := int(res.Window / BucketWidth)
	if res.Window%BucketWidth != 0 {
		nb++
	}
	if n := len(reqs); n > 0 {
		nb = max(nb, int(offset(rn.Started, reqs[n-1].Timestamp)/BucketWidth)+1)
	}
	res.Buckets = make([]Bucket, nb)
	for i := range res.Buckets {
		res.Buckets[i].Start = time.Duration(i) * BucketWidth
	}

	lastWindow := int64(-1)
	var burst *Burst
	for i := range reqs {
		q := &reqs[i]
		lat[i] = q.Latency
		latSum += float64(q.Latency)

		off := offset(rn.Started, q.Timestamp)
		bk := &res.Buckets[off/BucketWidth]
		bk.Sent++
		if q.Class == ClassOK || q.Class == "" {
			tot.OK++
			bk.OK++
			continue
		}
		tot.Failed++
		tot.Failures[q.Class]++
		bk.Failed++
		if bk.Failures == nil {
			bk.Failures = map[Class]int{}
		}
		bk.Failures[q.Class]++

		if w := int64(off / disruptionWindow); w != lastWindow {
			res.DisruptionSeconds++
			lastWindow = w
		}

		if burst == nil || q.Timestamp.Sub(burst.Last) > BurstGap {
			res.Bursts = append(res.Bursts, Burst{First: q.Timestamp, Classes: map[Class]int{}})
			burst = &res.Bursts[len(res.Bursts)-1]
		}
		burst.Last = q.Timestamp
		burst.Count++
		burst.Classes[q.Class]++
	}
	res.Totals = tot
	if tot.Requests > 0 {
		res.SuccessRatio = float64(tot.OK) / float64(tot.Requests)
		res.FailureRatio = float64(tot.Failed) / float64(tot.Requests)
		slices.Sort(lat)
		res.Latency = Latency{
			Mean: time.Duration(latSum / float64(len(lat))),
			P50:  quantile(lat, 0.50),
			P90:  quantile(lat, 0.90),
			P95:  quantile(lat, 0.95),
			P99:  quantile(lat, 0.99),
			Max:  lat[len(lat)-1],
		}
	}

	res.judge(shares)
	return res
}

// share is one of several attacks merged into one Result: when it started, at what rate.
type share struct {
	started time.Time
	rate    int
}

// judge computes AchievedRate and decides Valid.
//
// Vegeta's constant pacer sends hit k (from 1) at k/Rate after the start, so
// n requests over the span from Started to the last request is the achieved
// rate whether the run went its full Duration or was stopped early. The run
// is valid when its count of requests is within RateTolerance (or
// RateSlack's worth of requests) of Rate × that span. Stalls are judged separately, since a run
// that sends on time and then stops sending still has a perfect rate over
// its span.
//
// Merged attacks (shares) start one after another: each is owed its rate over its own span, from
// its start to the last request of all, and AchievedRate is Rate scaled by how much of what was
// owed was sent.
func (r *Result) judge(shares []share) {
	var reasons []string
	n := len(r.Requests)
	if n == 0 {
		r.Valid, r.InvalidReason = false, "no requests were sent"
		return
	}
	last := r.Requests[n-1].Timestamp
	span := last.Sub(r.Started).Seconds()
	expected := float64(r.Config.Rate) * span
	if len(shares) > 0 {
		expected = 0
		for _, sh := range shares {
			expected += float64(sh.rate) * max(0, last.Sub(sh.started).Seconds())
		}
	}
	if expected > 0 {
		r.AchievedRate = float64(r.Config.Rate) * float64(n) / expected
	}
	if expected > 0 {
		slack := max(RateTolerance*expected, float64(r.Config.Rate)*RateSlack.Seconds(), 2)
		if miss := math.Abs(float64(n) - expected); miss > slack {
			reasons = append(reasons, fmt.Sprintf("achieved rate %.2f/s misses the asked %d/s by %.1f%% (tolerance %.0f%%)",
				r.AchievedRate, r.Config.Rate, 100*miss/expected, 100*RateTolerance))
		}
	}

	limit := StallGap
	if r.Config.Rate > 0 {
		limit += time.Second / time.Duration(r.Config.Rate)
	}
	r.Stalls, r.StallFailed = nil, 0
	prev := r.Started
	for i := range r.Requests {
		t := r.Requests[i].Timestamp
		if gap := t.Sub(prev); gap > limit {
			st := r.stall(prev, t)
			reasons = append(reasons, fmt.Sprintf("stalled: no request sent for %s from +%s%s",
				gap.Round(time.Millisecond), offset(r.Started, prev).Round(time.Millisecond), st.note()))
		}
		prev = t
	}
	if tail := r.Window - offset(r.Started, prev); tail > limit {
		st := r.stall(prev, r.Started.Add(r.Window))
		if r.EndReason == EndDuration {
			reasons = append(reasons, fmt.Sprintf("ended early: last request at +%s of a %s run%s",
				offset(r.Started, prev).Round(time.Millisecond), r.Window, st.note()))
		} else {
			reasons = append(reasons, fmt.Sprintf("stalled: no request sent in the last %s before it was %s%s",
				tail.Round(time.Millisecond), r.EndReason, st.note()))
		}
	}
	for i := range r.Requests {
		if q := &r.Requests[i]; !q.OK() && r.inHarnessStall(q) {
			r.StallFailed++
		}
	}
	if len(reasons) > 5 {
		reasons = append(reasons[:5], fmt.Sprintf("and %d more", len(reasons)-5))
	}
	r.Valid = len(reasons) == 0
	r.InvalidReason = strings.Join(reasons, "; ")
}

// Stall is a span of a run in which no request was sent for longer than StallGap.
type Stall struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// InFlight is how many requests were in flight when the sending stopped.
	InFlight int `json:"inFlight"`
	// Saturated: InFlight reached SaturatedShare of Config.MaxWorkers, so the generator stopped
	// because the app held every worker (requests that hang), not because the generator itself
	// was stopped, frozen or starved. Such a stall is the app's: the failures in it are judged.
	Saturated bool `json:"saturated,omitempty"`
}

// SaturatedShare is the share of Config.MaxWorkers in flight at which a stall is the app's:
// every worker (but a few finishing) waits on an answer that does not come.
const SaturatedShare = 0.9

// stall records the stall from..to and returns it.
func (r *Result) stall(from, to time.Time) Stall {
	n := 0
	for i := range r.Requests {
		q := &r.Requests[i]
		if q.Timestamp.After(from) {
			break // sending order
		}
		if q.Timestamp.Add(q.Latency).After(from) {
			n++
		}
	}
	st := Stall{From: from, To: to, InFlight: n, Saturated: r.Config.MaxWorkers > 0 && float64(n) >= SaturatedShare*float64(r.Config.MaxWorkers)}
	r.Stalls = append(r.Stalls, st)
	return st
}

// note says, for a stall the app caused, why it is the app's.
func (st Stall) note() string {
	if !st.Saturated {
		return ""
	}
	return fmt.Sprintf(" (all %d workers waited on the app: its stall)", st.InFlight)
}

// inHarnessStall reports whether q was in flight during a stall the app did not cause.
func (r *Result) inHarnessStall(q *Request) bool {
	for _, st := range r.Stalls {
		if !st.Saturated && q.Timestamp.Before(st.To) && q.Timestamp.Add(q.Latency).After(st.From) {
			return true
		}
	}
	return false
}

// offset returns t - start, or 0 when t is before start.
func offset(start, t time.Time) time.Duration { return max(0, t.Sub(start)) }

// quantile returns the nearest-rank q-quantile of the sorted, non-empty xs.
func quantile(xs []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

const (
	vegetaModule = "github.com/tsenart/vegeta/v12"
	grpcModule   = "google.golang.org/grpc"
)

func vegetaVersion() string {
	return moduleVersion(vegetaModule, pinnedVegetaVersion)
}

// moduleVersion returns the version of the module path in this binary's build info, or
// pinned: test binaries carry no dependency list in their build info.
func moduleVersion(path, pinned string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return pinned
}

// pinnedGRPCVersion is the grpc-go version go.mod pins; TestPinnedVersions keeps it true.
const pinnedGRPCVersion = "v1.72.2"

// pinnedVegetaVersion is the vegeta version go.mod pins; TestPinnedVersions keeps it true.
const pinnedVegetaVersion = "v12.12.0"

// ShiftClock moves every time of r by d: its start and end, each request's Timestamp and each
// burst's first and last failure. A Result read from a load pod whose clock runs ahead of the
// reader's by o becomes one on the reader's clock with ShiftClock(-o). Offsets (buckets,
// latencies) are unchanged.
func (r *Result) ShiftClock(d time.Duration) {
	if d == 0 {
		return
	}
	r.Started, r.Ended = r.Started.Add(d), r.Ended.Add(d)
	for i := range r.Requests {
		r.Requests[i].Timestamp = r.Requests[i].Timestamp.Add(d)
	}
	for i := range r.Bursts {
		r.Bursts[i].First, r.Bursts[i].Last = r.Bursts[i].First.Add(d), r.Bursts[i].Last.Add(d)
	}
}

// markProxyAnswers gives the proxy's own 5xx answers their ProxyClass: those without a pod name
// when some answer has one (the app names its pod; an answer that does not came from the
// proxy). It reports whether it could tell.
func markProxyAnswers(reqs []Request) bool {
	told := false
	for i := range reqs {
		if reqs[i].Pod != "" {
			told = true
			break
		}
	}
	if !told {
		return false
	}
	for i := range reqs {
		q := &reqs[i]
		if q.Pod == "" && q.Code >= 500 && q.Code <= 599 {
			q.Class = ProxyClass(int(q.Code))
		}
	}
	return true
}
