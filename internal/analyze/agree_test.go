package analyze_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/analyze"
	"github.com/rollcheck/rollcheck/internal/audit"
)

// A row's recommendation and rollcheck audit's, from a windows file made of the same row's
// explanation (encoded and decoded strictly), agree: the windows and paths of the explain tests
// (TestExplainRecommendation, TestRecommendationByPath), every path with every set of windows.
func TestAuditAgreesWithTheRowsRecommendation(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	d := func(p99 time.Duration) check.Durations {
		return check.Durations{N: 3, P50: p99 / 2, P99: p99, Max: p99}
	}
	kp := &check.Durations{N: 40, P99: ms(5550)}
	windows := map[string]check.PropagationSummary{
		"control plane + kube-proxy":     {ControlPlane: d(ms(80)), KubeProxy: kp},
		"control plane, kube-proxy none": {ControlPlane: d(ms(300))},
		"data plane":                     {ControlPlane: d(ms(300)), DataPlane: d(ms(1200)), KubeProxy: &check.Durations{N: 12, P99: ms(900)}},
		"proxy 1.9s":                     {ControlPlane: d(ms(80)), KubeProxy: kp, Proxy: d(ms(1900))},
		"proxy 600ms + DNS":              {ControlPlane: d(ms(80)), KubeProxy: kp, Proxy: d(ms(600)), DNS: d(ms(370)), DNSTTL: 30},
		"proxy 4.2s + DNS":               {ControlPlane: d(ms(80)), KubeProxy: kp, Proxy: d(ms(4200)), DNS: d(ms(370)), DNSTTL: 30},
		"DNS":                            {ControlPlane: d(ms(80)), KubeProxy: kp, DNS: d(ms(370)), DNSTTL: 30},
		"client":                         {ControlPlane: d(ms(80)), Client: d(ms(2500)), ClientNoAddress: 2},
	}
	direct := check.Applied{PreStop: check.PreStop{Sleep: 5 * time.Second}, GraceSeconds: 30, Disruption: check.RolloutRestart}
	through := direct
	through.LoadURL = "http://front/"
	named := through
	named.UpstreamHeader = "X-Upstream"
	byDNS := func(c check.Applied, every time.Duration, words string) check.Applied {
		c.Resolve, c.ResolveRefresh, c.ResolveSetting = "web-headless", every, words
		return c
	}
	paths := map[string]check.Applied{
		"direct": direct, "through": through, "named": named,
		"DNS refresh 1s": byDNS(through, time.Second, "nginx resolver valid=1s"), "DNS named": byDNS(named, time.Second, "HAProxy timeout resolve 1s"),
		"DNS refresh 2s": byDNS(through, 2*time.Second, ""), "DNS refresh unknown": byDNS(through, 0, ""),
		"DNS once": byDNS(through, check.ResolveOnce, "nginx's static upstream"),
	}
	for wn, p := range windows {
		for pn, cfg := range paths {
			t.Run(fmt.Sprintf("%s/%s", wn, pn), func(t *testing.T) {
				ex := &check.Explanation{Propagation: p, RequestP99: ms(50)}
				row := analyze.Recommend(ex, cfg, check.Durations{}, nil, true)
				f := audit.WindowsFile{SchemaVersion: audit.WindowsSchemaVersion, Measured: audit.Provenance{Source: "a test"}, Windows: audit.MeasuresOf(ex)}
				b, err := f.Encode()
				if err != nil {
					t.Fatal(err)
				}
				back, err := audit.DecodeWindows(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%v\n%s", err, b)
				}
				rt := analyze.Route(back.Windows.Analyze(), analyze.PathOf(cfg))
				pre, grace := analyze.Settings(rt.Window, back.Windows.Request.P99.D())
				if row.Routed != rt.Window || row.RoutedFrom != rt.From || row.TTLStoodIn != rt.TTLStoodIn || row.PreStop != pre || row.GraceSeconds != grace {
					t.Errorf("row: %s (%s) %s/%ds\nfile: %s (%s) %s/%ds", row.Routed, row.RoutedFrom, row.PreStop, row.GraceSeconds, rt.Window, rt.From, pre, grace)
				}
			})
		}
	}
}
