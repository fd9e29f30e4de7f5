package common

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/observe"
	"github.com/rollcheck/rollcheck/internal/report"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
)

// maxLoad bounds every load run; the runner stops it when the disruptions have settled.
const maxLoad = 15 * time.Minute

var (
	versionsOnce sync.Once
	versions     report.Versions
)

// RowName names a table row: the Scenario's own String.
func RowName(s scenario.Scenario) string { return s.WithDefaults().String() }

// RowLabels are the Ginkgo labels of a row: its disruption and its expectation.
func RowLabels(s scenario.Scenario) Labels {
	s = s.WithDefaults()
	l := Labels{string(s.Disruption), string(s.Expect.Kind)}
	if s.Expect.Kind == scenario.ExpectFailures {
		l = append(l, "negative-control")
	}
	return l
}

// RowTimeout is a generous SpecTimeout for a row: every disruption may take its grace period
// twice over, plus deploy, settle and cleanup time.
func RowTimeout(s scenario.Scenario) time.Duration {
	s = s.WithDefaults()
	perDisruption := time.Duration(2*s.GraceSeconds+int64(s.Replicas*20+s.PreStopSeconds)) * time.Second
	return 3*time.Minute + 2*s.Settle + time.Duration(s.Count)*perDisruption
}

// RunScenario is one conformance spec: deploy the Scenario in a fresh namespace, start
// constant load on 127.0.0.1 and the lifecycle observer, disrupt Count times (each settling),
// stop the load after the settle time, write the row and raw results, and judge the outcome.
// An invalid load run fails the spec as a harness fault, never as a pass or as the app's fault.
func (e *Env) RunScenario(ctx SpecContext, suite string, s scenario.Scenario) {
	s = s.WithDefaults()
	Expect(s.Validate()).To(Succeed())
	e.FlushConntrack(ctx)
	ns := e.Namespace(ctx, "rc-"+s.Name)
	e.Deploy(ctx, s, ns)

	cs, err := kubernetes.NewForConfig(e.Cluster.Client.RESTConfig())
	Expect(err).NotTo(HaveOccurred())
	obs, err := observe.Start(ctx, cs, ns, "app="+scenario.AppName, scenario.AppName, Logf)
	Expect(err).NotTo(HaveOccurred(), "start the lifecycle observer")
	DeferCleanup(func() { obs.Stop() })

	url := e.Cluster.AppURL("/")
	timeout := loadgen.DefaultTimeout + s.RequestDuration
	WaitServing(ctx, url, s.Replicas, timeout)

	cfg := loadgen.Config{
		Target: url, Method: s.Method, Rate: s.Rate, Duration: maxLoad,
		Timeout: timeout, KeepAlive: s.KeepAlive,
	}
	atk, err := loadgen.Start(ctx, cfg)
	Expect(err).NotTo(HaveOccurred(), "start the load")
	DeferCleanup(atk.Stop)
	stopMonitor := monitor(atk, s.Rate)
	defer stopMonitor()

	// Let every replica reach a steady state under load, slow requests included.
	sleep(ctx, s.Settle+s.RequestDuration)
	t := disrupt.Target{Client: e.Cluster.Client, Namespace: ns, Deployment: scenario.AppName,
		Selector: "app=" + scenario.AppName, Timeout: time.Duration(2*s.GraceSeconds)*time.Second + 2*time.Minute, Logf: Logf}
	recs, derr := disrupt.Repeat(ctx, t, s.Disruption, s.Count,
		func(r disrupt.Record) { obs.Mark(observe.Disruption, fmt.Sprintf("%s %d/%d", r.Kind, r.N, s.Count)) },
		func(r disrupt.Record) {
			obs.Mark(observe.DisruptionDone, fmt.Sprintf("%s %d/%d %s", r.Kind, r.N, s.Count, r.Pod))
			Logf("%s %d/%d settled after %s: %+v", r.Kind, r.N, s.Count, r.Settled.Sub(r.Started).Round(100*time.Millisecond), atk.Progress())
		})
	if derr == nil {
		sleep(ctx, s.Settle)
	}
	// Stopping the load leaves the requests in flight to finish (up to the timeout) with
	// nothing new sent: the stall monitor must not read that as a stalled generator.
	stopMonitor()
	atk.Stop()
	res, err := atk.Wait()
	Expect(err).NotTo(HaveOccurred(), "load result")
	tl := obs.Stop()
	Expect(derr).NotTo(HaveOccurred(), "disruption")

	sum := res.Summary()
	verdict := s.Expect.Judge(sum)
	row := report.Row{
		Suite: suite, Scenario: s, Started: res.Started, Duration: res.Ended.Sub(res.Started),
		Summary: sum, Verdict: verdict, LoadStarted: res.Started, Buckets: res.Buckets, Timeline: &tl,
		Artifacts: e.writeRaw(suite, s, res), Versions: e.versions(ctx, res),
	}
	path, err := report.WriteRow(e.Artifacts, row)
	Expect(err).NotTo(HaveOccurred(), "write the report row")
	AddReportEntry("load", sum.String())
	AddReportEntry("verdict", fmt.Sprintf("%s: %s (expected %s)", verdict.Status, verdict.Reason, s.Expect))
	AddReportEntry("disruptions", recs)
	AddReportEntry("endpoint propagation", tl.Propagation)
	AddReportEntry("row", path)
	Logf("%s — %s", sum, verdict.Reason)

	if verdict.Status == scenario.HarnessFault {
		Fail("harness fault, not a verdict on the app: " + verdict.Reason)
	}
	Expect(verdict.Status).To(Equal(scenario.Pass), "%s: %s (expected %s)", s.Name, verdict.Reason, s.Expect)
}

// WaitServing waits until the Service answers through the mapped port from every replica,
// with no failure over a second, so that load starts on a settled path: a new Service's
// NodePort answers only once kube-proxy has programmed it, a little after the pods are ready.
// timeout is the per-request timeout (requests of slow scenarios take longer).
func WaitServing(ctx context.Context, url string, replicas int, timeout time.Duration) {
	GinkgoHelper()
	deadline := time.Now().Add(time.Minute)
	for {
		a, err := loadgen.Start(ctx, loadgen.Config{Target: url, Rate: 20, Duration: time.Second, Timeout: timeout})
		Expect(err).NotTo(HaveOccurred())
		res, err := a.Wait()
		Expect(err).NotTo(HaveOccurred())
		pods := map[string]bool{}
		for _, r := range res.Requests {
			pods[r.Pod] = true
		}
		if res.Totals.Failed == 0 && res.Totals.Requests >= 20 && len(pods) == replicas {
			return
		}
		if time.Now().After(deadline) {
			Fail(fmt.Sprintf("the app did not answer from all %d replicas on %s within a minute: %s", replicas, url, res))
		}
		sleep(ctx, time.Second)
	}
}

// monitor watches the load while disruptions run: it logs progress every 5 s and fails the
// spec as a harness fault when the generator stalls (no request sent for 3 s).
func monitor(atk *loadgen.Attack, rate int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer GinkgoRecover()
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastSent int64
		lastChange, lastLog := time.Now(), time.Now()
		for {
			select {
			case <-done:
				return
			case <-atk.Done():
				return
			case now := <-tick.C:
				p := atk.Progress()
				if p.Sent != lastSent {
					lastSent, lastChange = p.Sent, now
				} else if now.Sub(lastChange) > 3*time.Second {
					Fail(fmt.Sprintf("harness fault: the load generator sent nothing for %s (asked %d req/s): %+v", now.Sub(lastChange).Round(time.Second), rate, p))
				}
				if now.Sub(lastLog) >= 5*time.Second {
					Logf("load: %+v", p)
					lastLog = now
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// writeRaw keeps every request: vegeta's own encoding (for vegeta report / plot) and the JSON ledger.
func (e *Env) writeRaw(suite string, s scenario.Scenario, res *loadgen.Result) map[string]string {
	GinkgoHelper()
	dir := filepath.Join(e.Artifacts, "raw")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	base := fmt.Sprintf("%s--%s--%s", suite, s.Name, s.Disruption)
	out := map[string]string{}
	for kind, write := range map[string]func(*os.File) error{
		"vegeta": func(f *os.File) error { return res.WriteVegeta(f) },
		"ledger": func(f *os.File) error { return res.WriteJSON(f) },
	} {
		name := base + map[string]string{"vegeta": ".vegeta.bin", "ledger": ".ledger.json"}[kind]
		f, err := os.Create(filepath.Join(dir, name))
		Expect(err).NotTo(HaveOccurred())
		Expect(write(f)).To(Succeed(), "write %s", name)
		Expect(f.Close()).To(Succeed())
		out[kind] = filepath.Join("raw", name)
	}
	return out
}

func (e *Env) versions(ctx context.Context, res *loadgen.Result) report.Versions {
	versionsOnce.Do(func() {
		v, err := e.Cluster.Versions(ctx)
		if err != nil {
			Logf("versions: %v", err)
		}
		versions = report.Versions{
			Rollcheck: envOr("ROLLCHECK_VERSION", "dev"), Go: runtime.Version(), Vegeta: res.VegetaVersion,
			Kubernetes: v.Kubernetes, Kind: v.Kind, NodeImage: v.NodeImage, ImageSource: v.ImageSource,
		}
	})
	return versions
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
