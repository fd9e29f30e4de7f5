package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Outcomes of a row, predicted or measured.
const (
	// Fails: requests fail (predicted: at least one).
	Fails = "fails"
	// Passes: none fails.
	Passes = "passes"
	// NotPredicted: the audit does not predict the row (its reason says why).
	NotPredicted = "not predicted"
)

// AgreementRow is one recorded row of the built-in matrix beside what the audit predicts of
// the configuration it ran.
type AgreementRow struct {
	// Row names the row: its suite, configuration and disruption.
	Row        string               `json:"row"`
	Disruption check.DisruptionKind `json:"disruption"`
	// Predicted is fails, passes or not predicted; PredictedFailures the audit's expected count
	// over the row's disruptions at its rate, UpperFailures its upper bound (at the windows'
	// p99); Mechanisms the exposed mechanisms, the most failures first.
	Predicted         string           `json:"predicted"`
	PredictedFailures float64          `json:"predictedFailures"`
	UpperFailures     float64          `json:"upperFailures"`
	Mechanisms        []timeline.Phase `json:"mechanisms,omitempty"`
	// Unknown are the mechanisms the audit could not tell from the manifests.
	Unknown []timeline.Phase `json:"unknown,omitempty"`
	// Measured is fails or passes; Failed the row's failed requests, Phase the phase most of
	// them were attributed to.
	Measured string         `json:"measured"`
	Failed   int            `json:"failed"`
	Phase    timeline.Phase `json:"phase,omitempty"`
	// Agree: the outcomes are the same and, when both fail, the measured phase is one the audit
	// predicted. Category says, for a row that disagrees or is not predicted, why in a few words.
	Agree    bool   `json:"agree"`
	Category string `json:"category,omitempty"`
	// Ratio is PredictedFailures / Failed (0 when none failed); Within2x: the expected count is
	// within a factor 2 of the measured one (a row that lost none: fewer than 1 predicted).
	Ratio    float64 `json:"ratio,omitempty"`
	Within2x bool    `json:"within2x"`
	// AppDelay is how long the app kept accepting after SIGTERM on its own, as measured in the
	// windows' run (MeasuredAppDelay of its row of the same configuration), when it did.
	AppDelay *AppDelay `json:"appDelay,omitempty"`
}

// Agreement audits the configuration each row ran (check.Applied, rendered by RowObjects) with
// the windows f, at the row's rate per pod and its measured request p99 (what --rate and
// --request-p99 say), and puts the prediction beside what the row measured. A row the audit
// does not predict is kept, with its reason: pinned connections (keep-alive, a gRPC channel
// without round_robin), a disruption that is neither a graceful deletion nor a drain (a forced
// delete, a scale to zero), a patched Deployment or a proxy in front (not in the row), and a row whose
// only doubt is a mechanism the manifests cannot tell (a hook of unknown length).
//
// The windows f are of the run they were extracted from: when that is the rows' own run, the
// agreement is in sample (the windows were measured on the rows they predict). AgreementBetween
// and CrossAgreement measure it out of sample. delays are the apps' delays after SIGTERM by
// row configuration (AppDelays of the windows' rows; AgreementWith); Agreement knows none.
func Agreement(rows []check.Row, f *WindowsFile) []AgreementRow { return AgreementWith(rows, f, nil) }

// AgreementWith is Agreement with the apps' delays after SIGTERM, by row configuration name.
func AgreementWith(rows []check.Row, f *WindowsFile, delays map[string]AppDelay) []AgreementRow {
	out := make([]AgreementRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, agreementOf(r, f, delays))
	}
	slices.SortStableFunc(out, func(a, b AgreementRow) int { return cmp.Compare(a.Row, b.Row) })
	return out
}

func agreementOf(r check.Row, f *WindowsFile, delays map[string]AppDelay) AgreementRow {
	a := r.Config
	ar := AgreementRow{Row: fmt.Sprintf("%s/%s %s×%d", r.Suite, a.Name, a.Disruption, a.Count), Disruption: a.Disruption, Measured: Passes}
	if a.LoadFrom == check.LoadFromHost {
		ar.Row += " (load from the host)"
	}
	if ex := r.Explanation; ex != nil {
		most := 0
		for ph, n := range ex.Phases {
			ar.Failed += n
			if n > most || n == most && ph < ar.Phase {
				most, ar.Phase = n, ph
			}
		}
	} else {
		ar.Failed = r.Summary.Failed
	}
	if ar.Failed > 0 {
		ar.Measured = Fails
	}
	notPredicted := func(why string) AgreementRow {
		ar.Predicted, ar.Category, ar.Ratio = NotPredicted, why, 0
		return ar
	}
	switch d := a.Disruption.Info(); {
	case a.PinsConnections():
		return notPredicted("pinned connections (keep-alive, or a gRPC channel without round_robin): not predicted")
	case d.Forced:
		return notPredicted("forced delete (grace 0): skips the preStop and grace the audit reads")
	case d.Takes == check.TakesAll || d.RestartsKubelet:
		return notPredicted(string(a.Disruption) + ": neither a rollout, a graceful deletion nor a drain")
	case r.Explanation == nil:
		return notPredicted("no explanation: the row ran no load")
	}
	objs, err := RowObjects(a)
	if err != nil {
		return notPredicted(err.Error())
	}
	inv := &Inventory{}
	for _, o := range objs {
		inv.AddObject(o)
	}
	inv.Join()
	var w *Workload
	for _, x := range inv.Workloads {
		if x.Name == a.App {
			w = x
		}
	}
	if w == nil || a.Replicas == 0 {
		return notPredicted("the rendered objects hold no Deployment " + a.App)
	}
	o := Options{Rate: float64(a.Rate) / float64(a.Replicas), RequestP99: max(r.Explanation.RequestP99, time.Millisecond)}
	if d, ok := delays[a.Name]; ok {
		o.AppDelay, ar.AppDelay = map[string]AppDelay{"": d}, &d
	}
	res := ScoreOne(w, f, o)
	by, upper := predictRow(res, a)
	for ph, n := range by {
		ar.PredictedFailures += n
		if n >= 0.5 {
			ar.Mechanisms = append(ar.Mechanisms, ph)
		}
	}
	ar.UpperFailures = upper
	if ar.Failed > 0 {
		ar.Ratio = ar.PredictedFailures / float64(ar.Failed)
		ar.Within2x = ar.Ratio >= 0.5 && ar.Ratio <= 2
	} else {
		ar.Within2x = ar.PredictedFailures < 1
	}
	slices.SortFunc(ar.Mechanisms, func(x, y timeline.Phase) int { return cmp.Or(cmp.Compare(by[y], by[x]), cmp.Compare(x, y)) })
	for _, fd := range res.Findings {
		if fd.Status == Unknown && !slices.Contains(ar.Unknown, fd.Mechanism) && applies(fd, a, res.Workload) {
			ar.Unknown = append(ar.Unknown, fd.Mechanism)
		}
	}
	ar.Predicted = Passes
	if ar.PredictedFailures >= 1 {
		ar.Predicted = Fails
	}
	if ar.Predicted == Passes && slices.ContainsFunc(ar.Unknown, func(p timeline.Phase) bool { return p != timeline.PhaseInFlightCut }) {
		ar.Within2x = false
		return notPredicted(fmt.Sprintf("unknown to the manifests (%s)", joinPhases(ar.Unknown)))
	}
	ar.Agree = ar.Predicted == ar.Measured && (ar.Measured == Passes || slices.Contains(ar.Mechanisms, ar.Phase))
	if !ar.Agree {
		ar.Category = disagreement(ar, a)
	}
	return ar
}

// predictRow is the audit's expected failures over the row's disruptions, per mechanism, and
// their upper bound: a rollout's every exposed finding per rollout; a graceful deletion of one
// pod (delete-pod, scale-down) a pod's share of them, and the drain's no-endpoint when that pod
// is the only one; a drain its own findings and a share per pod it evicts.
func predictRow(res Result, a check.Applied) (map[timeline.Phase]float64, float64) {
	by, upper := map[timeline.Phase]float64{}, 0.0
	var drain *Finding
	for i, fd := range res.Findings {
		if fd.Per == PerDrain {
			drain = &res.Findings[i]
		}
	}
	for _, fd := range res.Findings {
		if fd.Status != Exposed || !applies(fd, a, res.Workload) {
			continue
		}
		share := 1.0
		switch takes := a.Disruption.Info().Takes; {
		case takes == check.TakesRollout:
		case fd.Per == PerDrain:
		case takes == check.TakesNode && drain != nil:
			share = float64(drain.Pods) / float64(fd.Pods)
		default:
			share = 1 / float64(fd.Pods)
		}
		by[fd.Mechanism] += fd.Predicted * share * float64(a.Count)
		upper += fd.Upper * share * float64(a.Count)
	}
	return by, upper
}

// applies tells whether a finding concerns the row's disruption: a rollout's findings per
// rollout, a drain's all of them, a graceful deletion's those per pod (not a rollout's
// no-endpoint) and the drain's no-endpoint when it deletes the only pod.
func applies(fd Finding, a check.Applied, w *Workload) bool {
	takes := a.Disruption.Info().Takes
	switch takes {
	case check.TakesRollout:
		return fd.Per == PerRollout
	case check.TakesNode:
		return fd.Per == PerDrain || fd.Mechanism != timeline.PhaseNoEndpoint
	}
	if fd.Per == PerDrain {
		// A deletion of the only pod (scale-down needs two; the forced and kubelet-restarting
		// kinds are not predicted).
		return takes == check.TakesOne && w.Replicas == 1
	}
	return fd.Mechanism != timeline.PhaseNoEndpoint
}

// disagreement is a reason category for a row whose prediction and measure differ. The app's
// own settings (what it does on SIGTERM, the check.Applied it ran) say what the manifests do
// not.
func disagreement(ar AgreementRow, a check.Applied) string {
	switch {
	case ar.Predicted == Passes && ar.Phase == timeline.PhaseInFlightCut:
		return "the app cuts requests at SIGTERM (" + a.OnSIGTERM + "): in-flight-cut, which manifests do not tell (the audit says unknown)"
	case ar.Predicted == Fails && ar.Measured == Passes && (strings.Contains(a.OnSIGTERM, "+") || strings.HasPrefix(a.OnSIGTERM, "ignore")):
		return "the app keeps serving after SIGTERM on its own (" + a.OnSIGTERM + "), which manifests do not tell"
	case ar.Predicted == Fails && ar.Measured == Passes:
		return "over-prediction: " + joinPhases(ar.Mechanisms) + " predicted, none measured"
	case ar.Predicted == Passes:
		return fmt.Sprintf("under-prediction: %d failed by %s, none predicted", ar.Failed, ar.Phase)
	}
	return fmt.Sprintf("mechanism: %s predicted, %s measured", joinPhases(ar.Mechanisms), ar.Phase)
}

func joinPhases(ps []timeline.Phase) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// RowObjects renders what a recorded row of the built-in matrix applied, from its configuration
// (check.Applied): the sample app's Deployment (scenario.Render: its proxy sidecar and protocol
// as the row's sidecars and load say), changed as the row's variant changed it (preStop, grace
// period, replicas), rollcheck's load Service (its headless twin for a gRPC round_robin load)
// and the row's PodDisruptionBudget, as check.Resolved.Objects makes them. The rendered Deployment
// is checked against the row: its configuration read back must be the row's.
func RowObjects(a check.Applied) ([]check.Object, error) {
	if a.Patched {
		return nil, fmt.Errorf("patched Deployment: the patch is not in the row")
	}
	if a.LoadURL != "" {
		return nil, fmt.Errorf("load through %s: the proxy in front is not in the row", a.LoadURL)
	}
	if a.PDBFromManifests {
		return nil, fmt.Errorf("a PodDisruptionBudget of the manifests: not in the row")
	}
	sample := scenario.Sample{OnSIGTERM: scenario.ShutdownDrain}
	container := ""
	for _, s := range a.Sidecars {
		if s.Name != scenario.ProxyContainer || !s.Front {
			return nil, fmt.Errorf("sidecar %s: the sample app has only its proxy in front", s.Name)
		}
		sample.Proxy, container = &scenario.Proxy{Native: s.Native}, scenario.AppContainer
		if s.PreStop.HTTPGet != "" {
			u, err := url.Parse(s.PreStop.HTTPGet)
			if err != nil {
				return nil, fmt.Errorf("proxy preStop %q: %w", s.PreStop.HTTPGet, err)
			}
			if sample.Proxy.PreStop, err = time.ParseDuration(u.Query().Get("sleep")); err != nil {
				return nil, fmt.Errorf("proxy preStop %q: %w", s.PreStop.HTTPGet, err)
			}
		}
	}
	switch a.Protocol {
	case loadgen.ProtocolGRPC, loadgen.ProtocolHTTP2, loadgen.ProtocolH2C:
		sample.Protocol = string(a.Protocol)
	}
	const image = "rollcheck/app:row"
	objs, err := scenario.Render(a.Name, sample, image)
	if err != nil {
		return nil, err
	}
	p := check.Plan{
		Suite: "audit",
		App: check.App{Objects: objs, Deployment: scenario.AppName, Port: scenario.SampleAppPort, Container: container, Path: cmp.Or(a.Path, "/"),
			Images: []string{image}},
		Variant: check.Variant{Name: a.Name, PreStop: &a.PreStop, TerminationGracePeriodSeconds: ptr.To(a.GraceSeconds), Replicas: ptr.To(int32(a.Replicas)),
			PDB: a.PDB, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicy(a.ExternalTrafficPolicy), Expect: a.Expect},
		Load:       check.Load{Rate: a.Rate, Method: a.Method, KeepAlive: a.KeepAlive, From: a.LoadFrom, Entry: a.LoadEntry, Protocol: a.Protocol},
		Disruption: check.Disruption{Kind: a.Disruption, Count: a.Count, Node: a.DrainNode, DrainTimeout: a.DrainTimeout},
		Quiet:      a.Quiet,
	}
	if a.GRPC != nil {
		p.Load.GRPC = *a.GRPC
	}
	nodePort := int32(0)
	if a.LoadFrom == check.LoadFromHost {
		nodePort = 30080
	}
	r, err := p.Resolve()
	if err != nil {
		return nil, fmt.Errorf("render row %s: %w", a.Name, err)
	}
	out, err := r.Objects("audit", nodePort)
	if err != nil {
		return nil, fmt.Errorf("render row %s: %w", a.Name, err)
	}
	got := r.Applied()
	if want := deploymentPart(a); deploymentPart(got) != want {
		return nil, fmt.Errorf("render row %s: the rendered Deployment reads back as %s, the row ran %s", a.Name, deploymentPart(got), want)
	}
	return out, nil
}

// deploymentPart is the part of a row's configuration its Deployment and budget hold.
func deploymentPart(a check.Applied) string {
	b, _ := json.Marshal(struct {
		PreStop  check.PreStop
		Sidecars []check.Sidecar
		Grace    int64
		Replicas int
		PDB      *check.PDB
	}{a.PreStop, a.Sidecars, a.GraceSeconds, a.Replicas, a.PDB})
	return string(b)
}

// AgreementSummary counts an agreement table: rows, predicted, agreeing (verdict), within 2×
// (count), and not predicted.
type AgreementSummary struct {
	Rows, Predicted, Agree, NotPredicted int
	// Within2x counts the predicted rows whose expected count is within 2× of the measured.
	Within2x int
}

// Summary counts t.
func Summary(t []AgreementRow) AgreementSummary {
	s := AgreementSummary{Rows: len(t)}
	for _, r := range t {
		if r.Predicted == NotPredicted {
			s.NotPredicted++
			continue
		}
		s.Predicted++
		if r.Agree {
			s.Agree++
		}
		if r.Within2x {
			s.Within2x++
		}
	}
	return s
}

// Percent is the share of predicted rows whose verdict agrees.
func (s AgreementSummary) Percent() float64 { return percent(s.Agree, s.Predicted) }

// Within2xPercent is the share of predicted rows whose count is within 2× of the measured.
func (s AgreementSummary) Within2xPercent() float64 { return percent(s.Within2x, s.Predicted) }

// StrictPercent and StrictWithin2xPercent are the same shares of every row: a row not
// predicted counts as a miss.
func (s AgreementSummary) StrictPercent() float64 { return percent(s.Agree, s.Rows) }

func (s AgreementSummary) StrictWithin2xPercent() float64 { return percent(s.Within2x, s.Rows) }

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// WriteAgreementMarkdown writes the table of an in-sample agreement (the windows f extracted
// from the rows themselves) for docs/matrix.md; WriteAgreementTable says how.
func WriteAgreementMarkdown(w io.Writer, t []AgreementRow, f *WindowsFile) error {
	return WriteAgreementTable(w, t, fmt.Sprintf("the windows extracted from this run itself (%s): **in sample**, the windows measured on the rows they predict", f.Measured.Source))
}

// WriteAgreementTable writes an agreement table: how the windows were taken (windows), a line
// of counts (the verdicts, the counts within 2×, and both again counting the rows not predicted
// as misses), a line per row, then every disagreement and every row not predicted with its
// reason.
func WriteAgreementTable(w io.Writer, t []AgreementRow, windows string) error {
	s := Summary(t)
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Each row's configuration, rendered as the Deployment it ran, audited against %s, at the row's own rate per pod and measured request p99 (`--rate`, `--request-p99`), beside what the row measured. ", windows)
	p("A row's verdict agrees when both fail (the measured phase among the mechanisms predicted) or both pass; its count is within 2× when the expected count is between half and twice the measured (a row that lost none: fewer than 1 expected). The prediction assumes an app that drains on SIGTERM (the audit says in-flight-cut unknown) and stops accepting then, unless the windows' run measured the app keep running after its preStop.\n\n")
	p("**Verdicts: %d of %d predicted rows agree (%.0f %%); counts: %d of %d within 2× (%.0f %%).** Counting the %d rows not predicted as misses: verdicts %d of %d (%.0f %%), counts %d of %d (%.0f %%).\n\n",
		s.Agree, s.Predicted, s.Percent(), s.Within2x, s.Predicted, s.Within2xPercent(), s.NotPredicted, s.Agree, s.Rows, s.StrictPercent(), s.Within2x, s.Rows, s.StrictWithin2xPercent())
	p("| row | predicted | expected failures (upper) | measured | measured failures | ratio | verdict | count |\n|---|---|--:|---|--:|--:|---|---|\n")
	mark := func(ok bool, r AgreementRow) string {
		switch {
		case r.Predicted == NotPredicted:
			return "—"
		case ok:
			return "✅"
		}
		return "❌"
	}
	for _, r := range t {
		pred := r.Predicted
		if r.Predicted == Fails {
			pred += " (" + joinPhases(r.Mechanisms) + ")"
		}
		if r.Predicted != NotPredicted && len(r.Unknown) > 0 {
			pred += "; unknown: " + joinPhases(r.Unknown)
		}
		if r.AppDelay != nil {
			pred += fmt.Sprintf("; app keeps serving %s after SIGTERM", r.AppDelay.Delay)
		}
		meas := r.Measured
		if r.Measured == Fails {
			meas += " (" + string(r.Phase) + ")"
		}
		predN, ratio := fmt.Sprintf("%.0f (%.0f)", r.PredictedFailures, r.UpperFailures), "—"
		if r.Predicted == NotPredicted {
			predN = "—"
		} else if r.Failed > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		p("| %s | %s | %s | %s | %d | %s | %s | %s |\n", r.Row, pred, predN, meas, r.Failed, ratio, mark(r.Agree, r), mark(r.Within2x, r))
	}
	var dis, not []string
	for _, r := range t {
		switch {
		case r.Predicted == NotPredicted:
			not = append(not, fmt.Sprintf("- %s: %s", r.Row, r.Category))
		case !r.Agree:
			dis = append(dis, fmt.Sprintf("- %s: %s", r.Row, r.Category))
		}
	}
	if len(dis) > 0 {
		p("\nDisagreements:\n\n%s\n", strings.Join(dis, "\n"))
	}
	if len(not) > 0 {
		p("\nNot predicted:\n\n%s\n", strings.Join(not, "\n"))
	}
	return nil
}
