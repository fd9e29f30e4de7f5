// Package proxymetrics reads kube-proxy's own measure of endpoint propagation, the histogram
// kubeproxy_network_programming_duration_seconds (an endpoint change → kube-proxy has
// programmed it into the node's rules), summed over every kube-proxy of a cluster.
//
// Scrape reads it through the API server's pod proxy, so it needs no route from the test
// process to the nodes; Sub of two readings, one taken before a row and one after, gives that
// row's programming durations, and Summary or Quantile make them fit for a report.
//
// kube-proxy serves its metrics on 127.0.0.1:10249 by default, which the pod proxy cannot
// reach (it dials the node's IP): the cluster must set metricsBindAddress: 0.0.0.0:10249 in
// its KubeProxyConfiguration, as rollcheck's kind-config.yaml does.
package proxymetrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Where Scrape finds kube-proxy and what it reads.
const (
	Namespace   = "kube-system"
	Selector    = "k8s-app=kube-proxy" // the label of kubeadm's kube-proxy DaemonSet pods
	MetricsPort = "10249"
	Metric      = "kubeproxy_network_programming_duration_seconds"
	// CallTimeout bounds each API call of Scrape: the pod list and every pod's metrics.
	CallTimeout = 10 * time.Second
)

// ErrNoKubeProxy is returned by Scrape when the cluster has no kube-proxy pod: it runs without
// kube-proxy (a replacement such as Cilium's programs the Services), so there is nothing to read.
var ErrNoKubeProxy = errors.New("no kube-proxy pod (" + Selector + " in " + Namespace + "): the cluster runs none, or a replacement that does not expose " + Metric)

// Bucket is one bucket of a cumulative histogram: Count observations were at most UpperBound
// seconds.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Histogram is a cumulative Prometheus histogram of durations in seconds: Buckets sorted by
// UpperBound, the last one +Inf. The zero Histogram holds no observation.
type Histogram struct {
	Buckets []Bucket
	Count   uint64
	Sum     float64
	// Sources are the kube-proxy pods a Scrape read, sorted by name. Sub refuses two readings
	// whose Sources differ: a kube-proxy that restarted or moved counts from zero again.
	Sources []Source
}

// Source is one kube-proxy a Histogram was read from.
type Source struct {
	Pod      string
	Restarts int32 // restarts of the pod's containers when it was read
}

func (s Source) String() string { return fmt.Sprintf("%s (%d restarts)", s.Pod, s.Restarts) }

// Parse reads Metric from kube-proxy's metrics in the Prometheus text format, summed over its
// series (one per IP family). kube-proxy exposes the histogram only once it has programmed a
// change: when it is absent but other kubeproxy_ metrics are there, Parse returns the zero
// Histogram. When no kubeproxy_ metric is there at all, what was read is not kube-proxy's
// metrics, and Parse returns an error.
func Parse(r io.Reader) (Histogram, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Histogram{}, fmt.Errorf("parse metrics: %w", err)
	}
	mf, ok := families[Metric]
	if !ok {
		for name := range families {
			if strings.HasPrefix(name, "kubeproxy_") {
				return Histogram{}, nil
			}
		}
		return Histogram{}, fmt.Errorf("metrics hold neither %s nor any other kubeproxy_ metric: not kube-proxy's", Metric)
	}
	if mf.GetType() != dto.MetricType_HISTOGRAM {
		return Histogram{}, fmt.Errorf("metric %s is a %s, want a histogram", Metric, mf.GetType())
	}
	var total Histogram
	for _, m := range mf.GetMetric() {
		ph := m.GetHistogram()
		h := Histogram{Count: ph.GetSampleCount(), Sum: ph.GetSampleSum()}
		for _, b := range ph.GetBucket() {
			h.Buckets = append(h.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: b.GetCumulativeCount()})
		}
		sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
		if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
			return Histogram{}, fmt.Errorf("metric %s%s: no +Inf bucket", Metric, labels(m))
		}
		if total, err = total.Add(h); err != nil {
			return Histogram{}, fmt.Errorf("metric %s%s: %w", Metric, labels(m), err)
		}
	}
	return total, nil
}

func labels(m *dto.Metric) string {
	var l []string
	for _, p := range m.GetLabel() {
		l = append(l, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
	}
	return "{" + strings.Join(l, ",") + "}"
}

// Add returns h + o (two nodes' readings, or two rows' changes); both must have the same
// buckets unless one has none.
func (h Histogram) Add(o Histogram) (Histogram, error) { return h.combine(o, false) }

// combine returns h + o, or h − o when sub is set (an error when a count of o is larger). A
// Histogram with no buckets and no count is zero, whatever the other's buckets. Sources are h's.
func (h Histogram) combine(o Histogram, sub bool) (Histogram, error) {
	if len(o.Buckets) == 0 && o.Count == 0 {
		return h.copy(), nil
	}
	if len(h.Buckets) == 0 && h.Count == 0 {
		h.Buckets = make([]Bucket, len(o.Buckets))
		for i, b := range o.Buckets {
			h.Buckets[i] = Bucket{UpperBound: b.UpperBound}
		}
	}
	if !sameBounds(h.Buckets, o.Buckets) {
		return Histogram{}, fmt.Errorf("the buckets differ (%s and %s)", bounds(h.Buckets), bounds(o.Buckets))
	}
	op := func(what string, a, b uint64) (uint64, error) {
		if !sub {
			return a + b, nil
		}
		if a < b {
			return 0, fmt.Errorf("%s went down, from %d to %d", what, b, a)
		}
		return a - b, nil
	}
	r := Histogram{Buckets: make([]Bucket, len(h.Buckets)), Sum: h.Sum + o.Sum, Sources: slices.Clone(h.Sources)}
	var err error
	for i, b := range h.Buckets {
		r.Buckets[i].UpperBound = b.UpperBound
		if r.Buckets[i].Count, err = op(fmt.Sprintf("the bucket le=%g", b.UpperBound), b.Count, o.Buckets[i].Count); err != nil {
			return Histogram{}, err
		}
	}
	if r.Count, err = op("the count", h.Count, o.Count); err != nil {
		return Histogram{}, err
	}
	if sub {
		r.Sum = h.Sum - o.Sum
	}
	if r.Count == 0 {
		r.Sum = 0
	}
	return r, nil
}

func (h Histogram) copy() Histogram {
	h.Buckets = slices.Clone(h.Buckets)
	h.Sources = slices.Clone(h.Sources)
	return h
}

func sameBounds(a, b []Bucket) bool {
	return slices.EqualFunc(a, b, func(x, y Bucket) bool { return x.UpperBound == y.UpperBound })
}

// bounds names a bucket layout briefly: how many buckets, the first and last finite bound.
func bounds(bs []Bucket) string {
	var finite []float64
	for _, b := range bs {
		if !math.IsInf(b.UpperBound, 1) {
			finite = append(finite, b.UpperBound)
		}
	}
	if len(finite) == 0 {
		return fmt.Sprintf("%d buckets", len(bs))
	}
	return fmt.Sprintf("%d buckets, %g to %g", len(bs), finite[0], finite[len(finite)-1])
}

// Sub returns the observations made between earlier and h: h minus earlier, bucket by bucket.
// It is an error when the two were read from different kube-proxy pods or restart counts, when
// their buckets differ, or when a count went down: a kube-proxy restarted and counts from zero
// again. An earlier reading with no observations (the zero Histogram) subtracts nothing.
func (h Histogram) Sub(earlier Histogram) (Histogram, error) {
	if !slices.Equal(h.Sources, earlier.Sources) {
		return Histogram{}, fmt.Errorf("subtract kube-proxy histograms: read from %v, then from %v: a kube-proxy restarted or moved, its counts started again", earlier.Sources, h.Sources)
	}
	d, err := h.combine(earlier, true)
	if err != nil {
		return Histogram{}, fmt.Errorf("subtract kube-proxy histograms: %w (a kube-proxy restarted?)", err)
	}
	return d, nil
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of the observations as PromQL's
// histogram_quantile does: it finds the bucket that holds the rank q·Count and interpolates
// linearly inside it (the first bucket starts at 0). A rank in the +Inf bucket gives the
// highest finite bound. Unlike PromQL, q = 0 gives the lower bound of the first non-empty
// bucket rather than NaN when the first bucket is empty. It returns false when there is no
// observation or q is outside [0, 1].
func (h Histogram) Quantile(q float64) (float64, bool) {
	if h.Count == 0 || !(q >= 0 && q <= 1) || len(h.Buckets) == 0 {
		return 0, false
	}
	rank := q * float64(h.Count)
	var lower float64
	var below uint64
	for _, b := range h.Buckets {
		if math.IsInf(b.UpperBound, 1) {
			break
		}
		if b.Count > 0 && float64(b.Count) >= rank {
			in := float64(b.Count - below)
			return lower + (b.UpperBound-lower)*(rank-float64(below))/in, true
		}
		lower, below = b.UpperBound, b.Count
	}
	return lower, true
}

// Summary is a Histogram in the few numbers a report shows.
type Summary struct {
	Count uint64        `json:"count"`
	P50   time.Duration `json:"p50"`
	P99   time.Duration `json:"p99"`
	// Max is the upper bound of the highest non-empty bucket: no observation was longer. When
	// that bucket is +Inf, Max is the highest finite bound and Overflow counts the observations
	// above it.
	Max      time.Duration `json:"max"`
	Overflow uint64        `json:"overflow,omitempty"`
	Mean     time.Duration `json:"mean"`
}

// Summary returns the count, p50, p99, maximum and mean of h; all zero when h holds no
// observation.
func (h Histogram) Summary() Summary {
	s := Summary{Count: h.Count}
	if h.Count == 0 {
		return s
	}
	p50, _ := h.Quantile(0.5)
	p99, _ := h.Quantile(0.99)
	s.P50, s.P99, s.Mean = seconds(p50), seconds(p99), seconds(h.Sum/float64(h.Count))
	var below uint64
	for _, b := range h.Buckets {
		if math.IsInf(b.UpperBound, 1) {
			s.Overflow = b.Count - below
			break
		}
		if b.Count > below {
			s.Max = seconds(b.UpperBound)
		}
		below = b.Count
	}
	if s.Overflow > 0 {
		s.Max = seconds(highestFinite(h.Buckets))
	}
	return s
}

func highestFinite(bs []Bucket) float64 {
	for i := len(bs) - 1; i >= 0; i-- {
		if !math.IsInf(bs[i].UpperBound, 1) {
			return bs[i].UpperBound
		}
	}
	return 0
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
