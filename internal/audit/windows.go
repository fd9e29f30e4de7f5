package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/report"
)

// WindowsSchemaVersion is the schemaVersion of the windows files this package writes and reads.
const WindowsSchemaVersion = 1

// MaxWindow is the longest window a windows file may hold: a longer one is a mistake (a
// duration in the wrong unit), not a cluster.
const MaxWindow = 10 * time.Minute

// WindowsFile is a cluster's measured windows: how long a deleted pod's address is still routed
// to, by each path, and how long the requests took, where and when they were measured.
type WindowsFile struct {
	// SchemaVersion is the format's version (WindowsSchemaVersion).
	SchemaVersion int `json:"schemaVersion"`
	// Measured says where and when the windows were measured, and how.
	Measured Provenance `json:"measured"`
	// Windows are the cluster's windows, pooled over its nodes.
	Windows Measures `json:"windows"`
	// Nodes are windows measured per node, where a probe measured them so; rollcheck audit
	// scores with the cluster's (Windows) and lists these.
	Nodes []NodeMeasures `json:"nodes,omitempty"`
}

// Provenance says where, when and how windows were measured.
type Provenance struct {
	// Cluster names the cluster (a kind cluster's name, a kubeconfig context).
	Cluster string `json:"cluster,omitempty"`
	// Kubernetes, Runtime, NodeImage and KubeProxyMode are what the cluster ran.
	Kubernetes    string `json:"kubernetes,omitempty"`
	Runtime       string `json:"runtime,omitempty"`
	NodeImage     string `json:"nodeImage,omitempty"`
	KubeProxyMode string `json:"kubeProxyMode,omitempty"`
	// Host is the machine a kind cluster ran on.
	Host string `json:"host,omitempty"`
	// Rollcheck is the version of rollcheck that measured them.
	Rollcheck string `json:"rollcheck,omitempty"`
	// From and To bound when they were measured.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Source says how the windows were measured ("rollcheck windows extract of 35 rows …").
	Source string `json:"source"`
}

// Measures are the measured windows of a cluster or a node; every one is optional, but a file
// needs at least one of controlPlane, dataPlane, proxy, client and dns.
type Measures struct {
	// ControlPlane: per deleted pod, deletion → its endpoint not ready in the EndpointSlices.
	ControlPlane *Measure `json:"controlPlane,omitempty"`
	// KubeProxy: kube-proxy's network programming (endpoint change → rules programmed); n is
	// the histogram's observations.
	KubeProxy *Measure `json:"kubeProxy,omitempty"`
	// DataPlane: per deleted pod that kept serving, deletion → the last request it answered
	// through the Service.
	DataPlane *Measure `json:"dataPlane,omitempty"`
	// DNS: per deleted pod, deletion → the first answer of the cluster's DNS for a headless
	// Service without its address, and the largest TTL those answers gave.
	DNS *DNSMeasure `json:"dns,omitempty"`
	// Proxy: a proxy in front's window, deletion → its last request to the pod (an ingress
	// controller, a reverse proxy).
	Proxy *Measure `json:"proxy,omitempty"`
	// Client: a client that balances over the pods' addresses itself (gRPC round_robin over a
	// headless Service), deletion → its last RPC to the pod's address; ClientNoAddress counts the
	// pods whose window ran on to the client's last RPC that found no live address.
	Client          *Measure `json:"client,omitempty"`
	ClientNoAddress int      `json:"clientNoAddress,omitempty"`
	// Request is the requests' latency at the probe (n: requests, or rows when pooled from
	// rows' p99s): the drain time the grace period leaves when the workload's own is not known.
	Request *Measure `json:"request,omitempty"`
}

// Measure is one window: how many measures and their 99th percentile, and, where they were
// kept, the measures themselves (samples, to the millisecond) or a histogram's buckets: the
// audit's expected count reads them (a file with p99s alone gives the upper bound only).
type Measure struct {
	N   int      `json:"n"`
	P99 Duration `json:"p99"`
	// Samples are the n measures (one per deleted pod), to the millisecond.
	Samples []Duration `json:"samples,omitempty"`
	// Buckets are a histogram's (kube-proxy's programming): cumulative counts of the n
	// observations at most le, up to the first bucket that holds them all; the rest lie above
	// the last bound.
	Buckets []Bucket `json:"buckets,omitempty"`
}

// Bucket is one cumulative bucket of a histogram: Count observations were at most LE.
type Bucket struct {
	LE    Duration `json:"le"`
	Count int      `json:"count"`
}

// dist is the window's distribution: its samples, else its histogram; none (only the p99)
// when the file kept neither.
func (m *Measure) dist() dist {
	switch {
	case m == nil:
		return dist{}
	case len(m.Samples) > 0:
		return samplesDist(m.Samples)
	case len(m.Buckets) > 0:
		return bucketsDist(m.Buckets, m.N)
	}
	return dist{}
}

// DNSMeasure is the DNS window and the TTL of the answers.
type DNSMeasure struct {
	N          int      `json:"n"`
	P99        Duration `json:"p99"`
	TTLSeconds uint32   `json:"ttlSeconds"`
	// Samples are the n measures, to the millisecond, as a Measure's.
	Samples []Duration `json:"samples,omitempty"`
}

// NodeMeasures are one node's windows.
type NodeMeasures struct {
	Node    string   `json:"node"`
	Windows Measures `json:"windows"`
}

// DecodeWindows reads a windows file strictly (an unknown field, a second document or a wrong
// type is an error) and validates it.
func DecodeWindows(r io.Reader) (*WindowsFile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f WindowsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("windows file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("windows file: more than one JSON value")
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Validate says every problem of f at once.
func (f *WindowsFile) Validate() error {
	var errs []error
	if f.SchemaVersion != WindowsSchemaVersion {
		errs = append(errs, fmt.Errorf("schemaVersion %d: this rollcheck reads %d", f.SchemaVersion, WindowsSchemaVersion))
	}
	if f.Measured.Source == "" {
		errs = append(errs, errors.New("measured.source: say how the windows were measured"))
	}
	if !f.Measured.To.IsZero() && f.Measured.To.Before(f.Measured.From) {
		errs = append(errs, errors.New("measured: to is before from"))
	}
	errs = append(errs, f.Windows.check("windows")...)
	seen := map[string]bool{}
	for i, n := range f.Nodes {
		where := fmt.Sprintf("nodes[%d]", i)
		if n.Node == "" {
			errs = append(errs, fmt.Errorf("%s.node: empty", where))
		} else if seen[n.Node] {
			errs = append(errs, fmt.Errorf("%s.node: %q twice", where, n.Node))
		}
		seen[n.Node] = true
		errs = append(errs, n.Windows.check(where+".windows")...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("windows file: %w", errors.Join(errs...))
	}
	return nil
}

func (m Measures) check(where string) []error {
	var errs []error
	one := func(name string, n int, p99 Duration, samples []Duration, buckets []Bucket) {
		switch {
		case n < 1:
			errs = append(errs, fmt.Errorf("%s.%s.n: %d, want at least 1 (leave the window out when it was not measured)", where, name, n))
		case p99.D() > MaxWindow:
			errs = append(errs, fmt.Errorf("%s.%s.p99: %s, longer than %s", where, name, p99, MaxWindow))
		case len(samples) > 0 && len(samples) != n:
			errs = append(errs, fmt.Errorf("%s.%s.samples: %d, want n (%d) or none", where, name, len(samples), n))
		case len(samples) > 0 && len(buckets) > 0:
			errs = append(errs, fmt.Errorf("%s.%s: samples or buckets, not both", where, name))
		}
		for i, b := range buckets {
			if b.Count > n || i > 0 && (b.Count < buckets[i-1].Count || b.LE <= buckets[i-1].LE) {
				errs = append(errs, fmt.Errorf("%s.%s.buckets[%d]: le %s count %d: want le and count growing, count at most n (%d)", where, name, i, b.LE, b.Count, n))
				break
			}
		}
		if slices.ContainsFunc(samples, func(d Duration) bool { return d.D() > MaxWindow }) {
			errs = append(errs, fmt.Errorf("%s.%s.samples: one longer than %s", where, name, MaxWindow))
		}
	}
	for _, w := range []struct {
		name string
		m    *Measure
	}{{"controlPlane", m.ControlPlane}, {"kubeProxy", m.KubeProxy}, {"dataPlane", m.DataPlane}, {"proxy", m.Proxy}, {"client", m.Client}, {"request", m.Request}} {
		if w.m != nil {
			one(w.name, w.m.N, w.m.P99, w.m.Samples, w.m.Buckets)
		}
	}
	if m.DNS != nil {
		one("dns", m.DNS.N, m.DNS.P99, m.DNS.Samples, nil)
	}
	if !m.Analyze().Measured() {
		errs = append(errs, fmt.Errorf("%s: none of controlPlane, dataPlane, proxy, client and dns: nothing to base a routed window on", where))
	}
	return errs
}

// Analyze is m as the formula reads it.
func (m Measures) Analyze() analyze.Windows {
	w := analyze.Windows{ControlPlane: m.ControlPlane.window(), KubeProxy: m.KubeProxy.window(), DataPlane: m.DataPlane.window(), Proxy: m.Proxy.window(), Client: m.Client.window(), ClientNoAddress: m.ClientNoAddress}
	if m.DNS != nil {
		w.DNS, w.DNSTTL = analyze.Window{N: m.DNS.N, P99: m.DNS.P99.D()}, m.DNS.TTLSeconds
	}
	return w
}

func (m *Measure) window() analyze.Window {
	if m == nil {
		return analyze.Window{}
	}
	return analyze.Window{N: m.N, P99: m.P99.D()}
}

// MeasuresOf is the windows a row's explanation carries (a windows file made from one row).
func MeasuresOf(ex *check.Explanation) Measures {
	p := ex.Propagation
	m := Measures{
		ControlPlane: measure(p.ControlPlane), DataPlane: measure(p.DataPlane),
		Proxy: measure(p.Proxy), Client: measure(p.Client), ClientNoAddress: p.ClientNoAddress,
	}
	if p.KubeProxy != nil {
		m.KubeProxy = measure(*p.KubeProxy)
	}
	if p.DNS.N > 0 {
		m.DNS = &DNSMeasure{N: p.DNS.N, P99: Duration(p.DNS.P99), TTLSeconds: p.DNSTTL, Samples: samplesOf(p.DNS)}
	}
	if m.KubeProxy != nil {
		m.KubeProxy.Buckets = buckets(p.KubeProxyBuckets, m.KubeProxy.N)
	}
	if ex.RequestP99 > 0 {
		m.Request = &Measure{N: 1, P99: Duration(ex.RequestP99)}
	}
	return m
}

// measure is d as a window, with its samples when it holds them all.
func measure(d check.Durations) *Measure {
	if d.N == 0 {
		return nil
	}
	return &Measure{N: d.N, P99: Duration(d.P99), Samples: samplesOf(d)}
}

// samplesOf is d's samples to the millisecond, when it holds them all (none for a histogram's
// numbers).
func samplesOf(d check.Durations) []Duration {
	if len(d.Samples) != d.N {
		return nil
	}
	out := make([]Duration, len(d.Samples))
	for i, x := range d.Samples {
		out[i] = Duration(x.Round(time.Millisecond))
	}
	slices.Sort(out)
	return out
}

// buckets is a row's (or pooled) kube-proxy histogram as a window's buckets: the finite ones
// up to the first that holds all n observations, without the empty ones below the first
// observation but the last of them.
func buckets(bs []check.HistogramBucket, n int) []Bucket {
	var out []Bucket
	for _, b := range bs {
		if b.Inf {
			break
		}
		le := Duration(time.Duration(math.Round(b.UpperBound * float64(time.Second))))
		if len(out) > 0 && out[len(out)-1].Count == 0 {
			out = out[:len(out)-1]
		}
		if len(out) > 0 && le <= out[len(out)-1].LE {
			return nil // not sorted: not a histogram to read
		}
		out = append(out, Bucket{LE: le, Count: int(b.Count)})
		if int(b.Count) >= n {
			break
		}
	}
	return out
}

// poolBuckets sums rows' kube-proxy histograms with the same bounds (as report.Pool sums them);
// nil when two differ.
func poolBuckets(rows []check.Row) []check.HistogramBucket {
	var sum []check.HistogramBucket
	for _, r := range rows {
		bs := r.Explanation.Propagation.KubeProxyBuckets
		switch {
		case len(bs) == 0:
			continue
		case sum == nil:
			sum = slices.Clone(bs)
			continue
		case len(bs) != len(sum):
			return nil
		}
		for i, b := range bs {
			if b.UpperBound != sum[i].UpperBound || b.Inf != sum[i].Inf {
				return nil
			}
			sum[i].Count += b.Count
		}
	}
	return sum
}

// Extract is the windows file of recorded rows (rowfile.Read): the windows of every row
// with an explanation pooled (their samples, and kube-proxy's histograms, as the report pools
// them; the data plane only of rows whose requests the Service routed afresh: report.Pool
// leaves out the rows on pinned connections, check.Applied's PinsConnections, and Extract the
// gRPC clients that balance themselves, whose last answers came through their own addresses
// and whose window is the client's), DNS's TTL the largest, and the request p99 the p99 of the rows' own p99s among those
// whose app answered at once (no request duration set: the probe's requests, not a slow row's).
// Per-node windows are not in rows: the file has none.
func Extract(rows []check.Row, source string) (*WindowsFile, error) {
	f := &WindowsFile{SchemaVersion: WindowsSchemaVersion}
	var used, viaService []check.Row
	var dns, proxy, client, req, reqAll, cp, dp []time.Duration
	var ttl uint32
	noAddress := 0
	for _, r := range rows {
		if r.Explanation == nil {
			continue
		}
		used = append(used, r)
		if !r.Config.Balanced() {
			// A client that balances itself sent to the pod's own address: its data-plane samples
			// are not the Service's routing (its window is the client's). report.Pool leaves out
			// those of pinned connections.
			viaService = append(viaService, r)
		}
		p := r.Explanation.Propagation
		dns = append(dns, p.DNS.Samples...)
		proxy = append(proxy, p.Proxy.Samples...)
		client = append(client, p.Client.Samples...)
		noAddress += p.ClientNoAddress
		ttl = max(ttl, p.DNSTTL)
		cp = append(cp, p.ControlPlane.Samples...)
		if !r.Config.Balanced() && !r.Config.PinsConnections() {
			dp = append(dp, p.DataPlane.Samples...)
		}
		if rp := r.Explanation.RequestP99; rp > 0 {
			reqAll = append(reqAll, rp)
			if r.Config.RequestDuration == 0 {
				req = append(req, rp)
			}
		}
		pr := &f.Measured
		if pr.From.IsZero() || r.Started.Before(pr.From) {
			pr.From = r.Started
		}
		if end := r.Started.Add(r.Duration); end.After(pr.To) {
			pr.To = end
		}
	}
	if len(used) == 0 {
		return nil, errors.New("extract windows: no row has an explanation (no pod was deleted, or the rows were written without one)")
	}
	pool := report.Pool(used)
	f.Windows = Measures{ControlPlane: pooled(pool.ControlPlane, cp), DataPlane: pooled(report.Pool(viaService).DataPlane, dp),
		Proxy: measure(check.Summarize(proxy)), Client: measure(check.Summarize(client)), ClientNoAddress: noAddress}
	if pool.KubeProxy != nil {
		f.Windows.KubeProxy = measure(*pool.KubeProxy)
		if pb := poolBuckets(used); pb != nil {
			f.Windows.KubeProxy.Buckets = buckets(pb, f.Windows.KubeProxy.N)
		}
	}
	if d := check.Summarize(dns); d.N > 0 {
		f.Windows.DNS = &DNSMeasure{N: d.N, P99: Duration(d.P99), TTLSeconds: ttl, Samples: samplesOf(d)}
	}
	if len(req) == 0 {
		req = reqAll
	}
	f.Windows.Request = measure(check.Summarize(req))
	if f.Windows.Request != nil {
		f.Windows.Request.Samples = nil // the rows' p99s, not requests: no distribution of them
	}
	v := used[0].Versions
	f.Measured.Kubernetes, f.Measured.Runtime, f.Measured.NodeImage = v.Kubernetes, v.Runtime, v.NodeImage
	f.Measured.KubeProxyMode, f.Measured.Host, f.Measured.Rollcheck = v.KubeProxyMode, v.Host, v.Rollcheck
	f.Measured.Source = fmt.Sprintf("rollcheck windows extract of %d rows with an explanation (%s)", len(used), source)
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("extract windows: %w", err)
	}
	return f, nil
}

// pooled is report.Pool's summary d with the samples it pooled (s), when they are all of them.
func pooled(d check.Durations, s []time.Duration) *Measure {
	m := measure(d)
	if m != nil && len(s) == d.N {
		m.Samples = samplesOf(check.Durations{N: len(s), Samples: s})
	}
	return m
}

// Encode writes f as indented JSON.
func (f *WindowsFile) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
