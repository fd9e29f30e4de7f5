package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/proxymetrics"
)

// PooledPropagation is endpoint propagation over every row of a run: the per-pod samples of
// the control and data plane pooled (the data plane's only of rows whose requests were routed
// afresh, not over a pinned connection: check.Applied's PinsConnections), and kube-proxy's
// histograms summed.
type PooledPropagation struct {
	ControlPlane check.Durations  `json:"controlPlane"`
	DataPlane    check.Durations  `json:"dataPlane"`
	KubeProxy    *check.Durations `json:"kubeProxy,omitempty"`
}

// Pool pools the propagation of rows (those without an Explanation are skipped).
func Pool(rows []Row) PooledPropagation {
	var cp, dp []time.Duration
	var kp proxymetrics.Histogram
	haveKP := false
	for _, r := range rows {
		if r.Explanation == nil {
			continue
		}
		p := r.Explanation.Propagation
		cp = append(cp, p.ControlPlane.Samples...)
		if !r.Config.PinsConnections() {
			// Over a pinned connection the pod answered until it closed the connection itself:
			// its last answer measures its shutdown (the preStop), not routing.
			dp = append(dp, p.DataPlane.Samples...)
		}
		if len(p.KubeProxyBuckets) == 0 {
			continue
		}
		h := histogram(p.KubeProxyBuckets)
		if !haveKP {
			kp, haveKP = h, true
		} else if sum, err := kp.Add(h); err == nil {
			kp = sum
		}
	}
	out := PooledPropagation{ControlPlane: withoutSamples(check.Summarize(cp)), DataPlane: withoutSamples(check.Summarize(dp))}
	if haveKP && kp.Count > 0 {
		s := kp.Summary()
		out.KubeProxy = &check.Durations{N: int(s.Count), P50: s.P50, P99: s.P99, Max: s.Max}
	}
	return out
}

func withoutSamples(d check.Durations) check.Durations {
	d.Samples = nil
	return d
}

func histogram(bs []check.HistogramBucket) proxymetrics.Histogram {
	var h proxymetrics.Histogram
	for _, b := range bs {
		le := b.UpperBound
		if b.Inf {
			le = math.Inf(1)
			h.Count = b.Count
		}
		h.Buckets = append(h.Buckets, proxymetrics.Bucket{UpperBound: le, Count: b.Count})
	}
	return h
}

// durationsCell says "p50 120ms · p99 1.1s · max 1.2s (n 9)", or "—" with no sample.
func durationsCell(d check.Durations) string {
	if d.N == 0 {
		return "—"
	}
	r := func(x time.Duration) time.Duration { return x.Round(time.Millisecond) }
	return fmt.Sprintf("p50 %s · p99 %s · max %s (n %d)", r(d.P50), r(d.P99), r(d.Max), d.N)
}

// writePropagation writes the run's pooled propagation, both measures and how far apart
// they are, and every explained row's numbers and recommendation.
func writePropagation(p func(string, ...any), rows []Row) {
	explained := false
	for _, r := range rows {
		explained = explained || r.Explanation != nil
	}
	if !explained {
		return
	}
	pool := Pool(rows)
	p("\n## Propagation and what to set\n\n")
	p("Over the whole run: control plane (deletion → endpoint not ready) %s; data plane (deletion → the pod's last answer, pods that kept serving, not over pinned connections) %s",
		durationsCell(pool.ControlPlane), durationsCell(pool.DataPlane))
	if pool.KubeProxy != nil {
		p("; kube-proxy programming (kubeproxy_network_programming_duration_seconds) %s", durationsCell(*pool.KubeProxy))
	}
	p(".")
	if pool.ControlPlane.N > 0 && pool.DataPlane.N > 0 {
		p(" The data plane's p99 is %s after the control plane's.", (pool.DataPlane.P99 - pool.ControlPlane.P99).Round(time.Millisecond))
	}
	p("\n\n%s", propagationTable.markdownHeader())
	for _, r := range rows {
		ex := r.Explanation
		if ex == nil {
			continue
		}
		c := rowCells(r)
		kp := "—"
		if ex.Propagation.KubeProxy != nil {
			kp = durationsCell(*ex.Propagation.KubeProxy)
		} else if ex.Propagation.KubeProxyError != "" {
			kp = "n/a"
		}
		rec, fit, advice := "—", "—", "—"
		if rc := ex.Recommendation; rc != nil {
			rec = fmt.Sprintf("≥ %s · ≥ %ds (routed %s: %s; requests p99 %s)", rc.PreStop, rc.GraceSeconds,
				rc.Routed.Round(time.Millisecond), rc.RoutedFrom, rc.RequestP99.Round(time.Millisecond))
			if rc.Fit != "" {
				fit = rc.Fit
			}
			if rc.Advice != "" {
				advice = rc.Advice
			}
		}
		cols := []string{c.Scenario, c.Disruption, durationsCell(ex.Propagation.ControlPlane), durationsCell(ex.Propagation.DataPlane), kp, rec, fit, advice}
		for i := range cols {
			cols[i] = mdEscape(cols[i])
		}
		p("| %s |\n", strings.Join(cols, " | "))
	}
	writeKubeProxyUnmeasured(p, rows)
	p("\nFormula (docs/reference.md, \"What to set\"): preStop ≥ routed + 1 s, routed by the path the requests took: through a proxy in front, its window p99 (deletion → its last request to the pod), or, for one that finds the pods by DNS and names no upstream, DNS window p99 + its refresh (not known: the DNS TTL); else data-plane p99 when measured and each request was routed afresh (not over a pinned connection: keep-alive, gRPC without round_robin), else control-plane p99 + kube-proxy programming p99; grace ≥ preStop + request p99 + 2 s; both rounded up to the second.\n")
}

// writeKubeProxyUnmeasured says, once per reason, why kube-proxy's programming lag is "n/a" in
// the rows that could not read it (its metrics unreachable, or the rights to read them missing,
// which the reason names with the manifest that grants them).
func writeKubeProxyUnmeasured(p func(string, ...any), rows []Row) {
	var reasons []string
	count := map[string]int{}
	for _, r := range rows {
		if ex := r.Explanation; ex != nil && ex.Propagation.KubeProxy == nil && ex.Propagation.KubeProxyError != "" {
			e := ex.Propagation.KubeProxyError
			if count[e] == 0 {
				reasons = append(reasons, e)
			}
			count[e]++
		}
	}
	for _, e := range reasons {
		p("\nkube-proxy's programming lag not measured (%d row(s)): %s\n", count[e], mdEscape(e))
	}
}
