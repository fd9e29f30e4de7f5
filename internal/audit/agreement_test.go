package audit

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// The audit's predictions of the built-in matrix's rows against what they measured, on three
// recorded runs (testdata, trimmed to what the comparison reads): the kind run behind
// windows-kind.json, the gRPC and HTTP/2 target's and the multinode target's, each audited
// against the windows extracted from its own rows. At least 90 % of the predicted rows agree
// over at least 20, and every disagreement is one of those known and explained (docs/matrix.md,
// docs/audit.md): the app's own SIGTERM handling, which manifests do not tell, and a client
// window pooled from a row whose preStop is as long as the window.
func TestAgreementRecordedRuns(t *testing.T) {
	known := map[string]string{
		"rollout/app-delay rollout-restart×3":             "keeps serving after SIGTERM on its own",
		"stopsignal/stopsignal-missing rollout-restart×3": "cuts requests at SIGTERM",
		"grpc/grpc-rr-prestop-35s rollout-restart×3":      "over-prediction: stale-address",
	}
	var all []AgreementRow
	for _, dir := range []string{"testdata/kind-run", "testdata/grpc-run", "testdata/multinode-run"} {
		rows, f := extracted(t, dir)
		t.Run(dir, func(t *testing.T) {
			got := Agreement(rows, f)
			if len(got) != len(rows) {
				t.Fatalf("%d rows in the table, %d recorded", len(got), len(rows))
			}
			for _, r := range got {
				switch {
				case r.Predicted == NotPredicted && r.Category == "":
					t.Errorf("%s: not predicted without a reason", r.Row)
				case r.Predicted != NotPredicted && !r.Agree && (known[r.Row] == "" || !strings.Contains(r.Category, known[r.Row])):
					t.Errorf("%s: predicted %s %v (%.0f), measured %s %s (%d): %s", r.Row, r.Predicted, r.Mechanisms, r.PredictedFailures, r.Measured, r.Phase, r.Failed, r.Category)
				case strings.Contains(r.Category, "render"):
					t.Errorf("%s: %s", r.Row, r.Category)
				}
			}
			var b strings.Builder
			if err := WriteAgreementMarkdown(&b, got, f); err != nil || !strings.Contains(b.String(), "| row |") {
				t.Errorf("markdown (%v):\n%s", err, b.String())
			}
		})
		all = append(all, Agreement(rows, f)...)
	}
	s := Summary(all)
	if s.Predicted < 20 || s.Percent() < 90 {
		t.Errorf("%d of %d predicted rows agree (%.0f %%), want 90 %% of 20 or more", s.Agree, s.Predicted, s.Percent())
	}
	// Keep-alive and pick_first gRPC rows are never counted as agreeing.
	for _, r := range all {
		if strings.Contains(r.Row, "keepalive") && r.Predicted != NotPredicted {
			t.Errorf("%s: predicted", r.Row)
		}
	}
	t.Logf("%d rows: %d predicted, %d agree (%.0f %%), %d not predicted", s.Rows, s.Predicted, s.Agree, s.Percent(), s.NotPredicted)
}

// A sample app row renders to the Deployment it ran: a native proxy sidecar in front with its
// httpGet preStop; a gRPC round_robin load's headless Service and the app's gRPC port.
func TestRowObjects(t *testing.T) {
	workload := func(dir, name string) *Workload {
		t.Helper()
		rows, err := rowfile.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Config.Name != name {
				continue
			}
			objs, err := RowObjects(r.Config)
			if err != nil {
				t.Fatal(err)
			}
			inv := &Inventory{}
			for _, o := range objs {
				inv.AddObject(o)
			}
			inv.Join()
			return inv.Workloads[0]
		}
		t.Fatalf("no row %s in %s", name, dir)
		return nil
	}
	w := workload("testdata/kind-run", "sidecar-native-prestop")
	if p := w.container("proxy"); w.Front != "proxy" || p.Sidecar != "native" || p.PreStop.Kind != "httpGet-sleep" || p.PreStop.Sleep.D() != 5*time.Second || !w.Spread || w.PreStop().Kind != "httpGet-sleep" {
		t.Errorf("sidecar-native-prestop: %+v", w)
	}
	if a := w.container("app"); a.PreStop.Kind != "sleep" || a.PreStop.Sleep.D().Seconds() != 5 {
		t.Errorf("sidecar-native-prestop's app: %+v", a)
	}
	w = workload("testdata/grpc-run", "grpc-rr-prestop-5s")
	if w.Headless() == "" || !w.GRPC() {
		t.Errorf("grpc-rr-prestop-5s: %+v", w)
	}
	if _, err := RowObjects(check.Applied{Name: "x", Patched: true}); err == nil || !strings.Contains(err.Error(), "patch") {
		t.Errorf("patched: err %v", err)
	}
	// Through a proxy in front (the proxy suite): its Deployment is not in the row.
	if _, err := RowObjects(check.Applied{Name: "x", LoadURL: "http://front/"}); err == nil || !strings.Contains(err.Error(), "proxy in front") {
		t.Errorf("through a proxy: err %v", err)
	}
}

// The gRPC run's rows all load through pinned connections (keep-alive HTTP/2) or a gRPC client:
// their last answers say nothing of the Service's routing, so the file has no data-plane window
// (a round_robin client's 22-33 s stood there), and the client window is the rr rows'.
func TestExtractLeavesOutPinnedDataPlane(t *testing.T) {
	_, f := extracted(t, "testdata/grpc-run")
	if f.Windows.DataPlane != nil || f.Windows.Client == nil || f.Windows.ControlPlane == nil {
		t.Errorf("windows %+v", f.Windows)
	}
}

// extracted is the rows recorded in dir and the windows extracted from them.
func extracted(t *testing.T, dir string) ([]check.Row, *WindowsFile) {
	t.Helper()
	rows, err := rowfile.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Extract(rows, filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	return rows, f
}

// The DNS window is pooled from every row that asked a name (a proxy's, or one asked with no
// proxy in front, as rollcheck windows measure's probe does), with the largest TTL; a node's
// DNS window is validated as the cluster's.
func TestExtractDNSWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	row := func(cfg check.Applied, dns []time.Duration, ttl uint32) check.Row {
		return check.Row{Started: t0, Duration: time.Minute, Config: cfg, Explanation: &check.Explanation{Propagation: check.PropagationSummary{
			ControlPlane: check.Summarize([]time.Duration{90 * time.Millisecond}), DNS: check.Summarize(dns), DNSTTL: ttl}}}
	}
	probe := row(check.Applied{LoadFrom: check.LoadFromCluster, Resolve: "app-headless"}, []time.Duration{300 * time.Millisecond, 400 * time.Millisecond}, 30)
	proxy := row(check.Applied{LoadFrom: check.LoadFromCluster, LoadURL: "http://front/", Resolve: "app-headless"}, []time.Duration{2 * time.Second}, 5)
	plain := row(check.Applied{LoadFrom: check.LoadFromCluster}, nil, 0)
	f, err := Extract([]check.Row{probe, proxy, plain}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Windows.DNS; d == nil || d.N != 3 || d.P99.D() != 2*time.Second || d.TTLSeconds != 30 {
		t.Errorf("DNS window %+v: want 3 pods, p99 2s, TTL 30", d)
	}
	if a := f.Windows.Analyze(); a.DNS.N != 3 || a.DNSTTL != 30 {
		t.Errorf("as the formula reads it: %+v", a)
	}
	if f, err := Extract([]check.Row{plain}, "t"); err != nil || f.Windows.DNS != nil {
		t.Errorf("no name asked: %+v (%v), want no DNS window", f, err)
	}
	f.Nodes = []NodeMeasures{{Node: "kind-worker", Windows: Measures{DNS: &DNSMeasure{N: 0, P99: Duration(time.Second), TTLSeconds: 30}}}}
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "nodes[0].windows.dns.n: 0") {
		t.Errorf("a node's empty DNS window: %v", err)
	}
}
