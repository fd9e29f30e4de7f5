package report

import "strings"

// A Column is one column of a report table: its header, whether it holds numbers (aligned
// right in Markdown) and what it means, in one line.
type Column struct {
	Header  string
	Numeric bool
	Meaning string
}

// A Table is one table the reports write. Every table is declared here, with what each of its
// columns means, and written through its header (markdownHeader, or Headers for the HTML
// pages): docs/fields.md lists them (go generate ./internal/refdoc), and a test finds any table
// header written another way.
type Table struct {
	// Name is the table's title in docs/fields.md; Where says where it appears.
	Name, Where string
	Columns     []Column
}

// Headers are the table's column headers, in order.
func (t *Table) Headers() []string {
	hs := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		hs[i] = c.Header
	}
	return hs
}

// markdownHeader is the table's header line and its separator line, each ending in a newline:
// numeric columns are aligned right. It is the only place a Markdown table's header is made.
func (t *Table) markdownHeader() string {
	seps := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		seps[i] = "---"
		if c.Numeric {
			seps[i] = "--:"
		}
	}
	return "| " + strings.Join(t.Headers(), " | ") + " |\n|" + strings.Join(seps, "|") + "|\n"
}

// The columns several tables share.
var (
	scenarioColumn   = Column{Header: "scenario", Meaning: "the variant's name and the configuration it ran with: preStop, what the app does on SIGTERM (when known), grace period, budget, sidecars, request duration, warm-up, keep-alive and method"}
	disruptionColumn = Column{Header: "disruption", Meaning: "the disruption kind and how many times it was done (rollout-restart×3)"}
)

// The tables of the reports, in the order docs/fields.md lists them.
var (
	conformanceTable = Table{Name: "The conformance table",
		Where: "conformance.md (first table), rollcheck check's and rollcheck report's output, timeline.html, docs/matrix.md",
		Columns: []Column{
			{Header: "scenario", Meaning: scenarioColumn.Meaning + "; † marks a keep-alive row whose cut requests Go's client silently sent again (hidden failures), ‡ a row whose app named no pod in its answers (conformance.md)"},
			disruptionColumn,
			{Header: "requests", Numeric: true, Meaning: "requests (RPCs) sent at a constant rate from before the first disruption until after the last one settled"},
			{Header: "failures by class", Meaning: "the failed requests by how they failed: refused, reset, eof (connection closed under the request), timeout, http_5NN, http_4xx, goaway, rst_stream, grpc_ and the status code (grpc_unavailable), other; through a proxy, proxy_5NN for the proxy's own answers; — for none"},
			{Header: "failures by phase", Meaning: "the failed requests by the phase of a pod's termination (or start) each is attributed to (propagation, in-flight-cut, sigkill, …; docs/reference.md, \"Why a request failed\"); n/a when the row has no attribution"},
			{Header: "failure %", Numeric: true, Meaning: "failed requests as a share of all requests sent"},
			{Header: "termination (deletion → exit)", Meaning: "p50 and max over the deleted pods of deletion → the app container's exit, and how many of them were SIGKILLed"},
			{Header: "disruption time", Meaning: "p50 and max over the disruptions of a disruption's start → the Deployment settled (rollout complete, no pod left terminating)"},
			{Header: "worst disruption", Numeric: true, Meaning: "the success ratio of the requests of the disruption that lost the most, and its number (#2); 100% (all N) when none lost any"},
			{Header: "disruption s", Numeric: true, Meaning: "one-second windows of the load, counted from its start, that held at least one failed request"},
			{Header: "bursts", Numeric: true, Meaning: "runs of failures in which no two consecutive failures are more than 1 s apart (successes between them do not split a run)"},
			{Header: "expected", Meaning: "the outcome the variant expects (0 failures, at most a share, failures by a phase for a negative control, per-disruption bounds)"},
			{Header: "verdict", Meaning: "✅ pass, ❌ fail, ⚠️ harness-fault (the run itself went wrong and the app failed no request outside the load's stalls) or 💥 error (the row could not run to the end); \"(retried: reason)\" when the row's first attempt was a harness fault and it ran once more (the first attempt kept as rows/ROW.attempt1.json)"},
		}}
	repeatsTable = Table{Name: "Repeats",
		Where: "conformance.md, \"Repeats\" (rows run more than once: repeat, ROLLCHECK_REPEAT)",
		Columns: []Column{
			scenarioColumn,
			disruptionColumn,
			{Header: "runs", Numeric: true, Meaning: "how many times the row ran"},
			{Header: "failures per run", Numeric: true, Meaning: "the failed requests of each run, in the order they ran"},
			{Header: "pooled failure % [95% interval] of requests", Numeric: true, Meaning: "failed requests over all runs as a share of all their requests, with its 95 % interval (Wilson; for no failure the exact one-sided bound), and the requests pooled"},
			{Header: "worst disruption", Numeric: true, Meaning: "the lowest success ratio of one disruption over all runs, with its run and number; 100% when none lost any"},
			{Header: "passed", Numeric: true, Meaning: "runs that passed, of all runs"},
			{Header: "status", Meaning: "the runs' verdicts combined: error or harness-fault if any run was one, pass if every run passed, fail if every run failed, flaky otherwise"},
		}}
	propagationTable = Table{Name: "Propagation and what to set",
		Where: "conformance.md, \"Propagation and what to set\" (docs/reference.md, \"What to set\")",
		Columns: []Column{
			scenarioColumn,
			disruptionColumn,
			{Header: "control plane", Meaning: "p50, p99 and max over the deleted pods of deletion → its endpoint not ready or removed in the EndpointSlices, and how many pods (n)"},
			{Header: "data plane", Meaning: "p50, p99 and max of deletion → the last request the pod answered, over the pods that kept serving after their deletion (needs the app's pod header and keep-alive off)"},
			{Header: "kube-proxy", Meaning: "kube-proxy's own programming latency during the row (kubeproxy_network_programming_duration_seconds, summed over the nodes); n/a when it could not be read (said under the table)"},
			{Header: "recommended preStop · grace", Meaning: "the smallest preStop sleep and terminationGracePeriodSeconds the row's measures call for, with the routed time they cover and where it came from, and the requests' p99"},
			{Header: "fit", Meaning: "the row's own settings against the recommendation: headroom (both at or above it), short (one below it), — when its preStop is not a sleep of known length"},
			{Header: "advice", Meaning: "the same in a sentence: the headroom of a passing row, or the smallest change the dominant phase of a failing row calls for"},
		}}
	proxyTable = Table{Name: "Through a proxy",
		Where: "conformance.md, \"Through a proxy\" (rows with load.url)",
		Columns: []Column{
			scenarioColumn,
			{Header: "via", Meaning: "the address the load went to (load.url), its Host header, and the header in which the proxy named the upstream it chose"},
			{Header: "proxy's own", Meaning: "failures the proxy answered itself (a 5xx without the app's pod header) by class; not told when the app names no pod"},
			{Header: "app's and transport", Meaning: "the other failures by class: the app's own answers and connection errors"},
			{Header: "phases", Meaning: "the row's failures by phase"},
			{Header: "proxy's window", Meaning: "p50, p99 and max over the deleted pods of deletion → the last request the proxy sent to the pod"},
			{Header: "stale pods", Meaning: "deleted pods the proxy still sent to after they were gone (a name resolved once, an answer kept): no preStop covers those"},
			{Header: "DNS window · TTL", Meaning: "with load.resolve: deletion → the first answer of the cluster's DNS without the pod's address, and the largest TTL the answers gave"},
			{Header: "status", Meaning: "the row's verdict status"},
		}}
	drainTable = Table{Name: "Node drains",
		Where: "conformance.md, \"Node drains\" (rows with a drain-node disruption), one line per drain",
		Columns: []Column{
			scenarioColumn,
			{Header: "drain", Numeric: true, Meaning: "the drain's number of the row's drains (3/3), with the run of a repeated row"},
			{Header: "node", Meaning: "the node drained"},
			{Header: "budget", Meaning: "the PodDisruptionBudget that selected the app's pods: the variant's pdb, or the manifests' own, marked (manifests); none without one"},
			{Header: "evictions", Numeric: true, Meaning: "evictions the API server accepted, of the app's pods on the node"},
			{Header: "429s", Numeric: true, Meaning: "evictions refused with 429 Too Many Requests (the budget allowed no disruption then), each asked again 5 s later"},
			{Header: "drain time", Numeric: true, Meaning: "the drain's start → the last evicted pod gone"},
			{Header: "replacements ready after", Numeric: true, Meaning: "the drain's start → the Deployment had all its replicas ready again"},
			{Header: "blocked", Meaning: "no, or why the drain was blocked: not finished within drainTimeout (the node was uncordoned and the row went on)"},
		}}
	claimsTable = Table{Name: "The termination lifecycle, measured",
		Where: "conformance.md, \"The termination lifecycle, measured\" (and docs/matrix.md), one line per claim a row measured",
		Columns: []Column{
			{Header: "claim", Meaning: "a claim of Kubernetes' documentation about pod termination, with its source and the sentence quoted"},
			{Header: "held", Meaning: "✅ held, ❗ did not hold (a finding, not a failing test), or — when the rows could not judge it"},
			{Header: "measured", Meaning: "what the run's rows measured of it"},
			{Header: "n", Numeric: true, Meaning: "how many terminations (or rows) the measure counts"},
			{Header: "tolerance", Meaning: "how far a measure may be from the claim and still hold it (a status's one-second resolution, a log line's delay)"},
			{Header: "rows", Meaning: "the rows that measured it"},
		}}
	comparePropagationTable = Table{Name: "rollcheck compare: endpoint propagation",
		Where: "rollcheck compare's output, when either run measured kube-proxy",
		Columns: []Column{
			{Header: "endpoint propagation, pooled", Meaning: "the measure, pooled over every row of the run: control plane, data plane, kube-proxy programming (as in \"Propagation and what to set\")"},
			{Header: "base", Meaning: "its p50, p99 and max in the base run"},
			{Header: "new", Meaning: "the same in the new run"},
		}}
	compareTable = Table{Name: "rollcheck compare",
		Where: "rollcheck compare's output, one line per row in both runs (matched by suite, variant and disruption)",
		Columns: []Column{
			{Header: "scenario", Meaning: "the variant's name and its configuration in the new run, with [suite]"},
			disruptionColumn,
			{Header: "app change", Meaning: "what the app's configuration changed from base to new (preStop, grace period, replicas, stop signal, sidecars, a patch); — for none"},
			{Header: "base failures", Numeric: true, Meaning: "failed of all requests in the base run, pooled over its runs, as a percentage with its 95 % interval"},
			{Header: "new failures", Numeric: true, Meaning: "the same in the new run"},
			{Header: "Δ", Numeric: true, Meaning: "the new pooled failure ratio minus the base's, in percentage points"},
			{Header: "p", Numeric: true, Meaning: "Fisher's exact test, two-sided, on the pooled failures and requests of the two runs"},
			{Header: "termination p50", Meaning: "p50 of deletion → the container's exit, base → new (the change)"},
			{Header: "disruption time p50", Meaning: "p50 of a disruption's start → the Deployment settled, base → new (the change)"},
			{Header: "verdict", Meaning: "the row's status, base → new when it changed"},
			{Header: "change", Meaning: "significant regression or improvement (p below --alpha), or no significant change"},
		}}
	tuneTable = Table{Name: "rollcheck tune: probes",
		Where: "tune.md and tune.html (rollcheck tune), one line per probe: the search's, then the confirmation's",
		Columns: []Column{
			{Header: "#", Numeric: true, Meaning: "the probe's number, in the order the probes ran; (retry) for a probe run again after a harness fault"},
			{Header: "preStop s", Numeric: true, Meaning: "the native preStop sleep the probe ran with, in seconds"},
			{Header: "requests", Numeric: true, Meaning: "requests sent"},
			{Header: "failed", Numeric: true, Meaning: "requests that failed"},
			{Header: "failure %", Numeric: true, Meaning: "failed requests as a share of all requests sent"},
			{Header: "worst disruption %", Numeric: true, Meaning: "the success ratio of the requests of the disruption that lost the most"},
			{Header: "termination p50", Numeric: true, Meaning: "p50 of deletion → the container's exit"},
			{Header: "disruption time p50", Numeric: true, Meaning: "p50 of a disruption's start → the Deployment settled"},
			{Header: "deletions failed", Numeric: true, Meaning: "pod deletions whose disruption failed the threshold, of all the probe's; alone: no probe ran beside it, so it counts toward the bound"},
			{Header: "verdict", Meaning: "the probe's verdict against the threshold"},
		}}
	endpointTable = Table{Name: "timeline.html: endpoint propagation per pod",
		Where: "timeline.html, under each row's chart: one line per deleted pod",
		Columns: []Column{
			{Header: "pod", Meaning: "the deleted pod"},
			{Header: "deleting at", Numeric: true, Meaning: "when its deletion was seen, in seconds since the row started"},
			{Header: "deleting → endpoint unready", Numeric: true, Meaning: "deletion → its endpoint not ready in the EndpointSlices"},
			{Header: "deleting → endpoint removed", Numeric: true, Meaning: "deletion → its endpoint removed from the EndpointSlices"},
		}}
)

// Tables are every table the reports write, in the order docs/fields.md lists them.
var Tables = []*Table{&conformanceTable, &repeatsTable, &propagationTable, &proxyTable, &drainTable,
	&claimsTable, &comparePropagationTable, &compareTable, &tuneTable, &endpointTable}
