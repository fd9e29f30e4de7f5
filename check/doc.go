// Package check is what a rollcheck check is and what it found, with no cluster client.
//
// A [Plan] is one row to run: an app (its manifests, or the sample app), the shutdown
// configuration a variant applies to it (preStop hook, what the app does on SIGTERM,
// terminationGracePeriodSeconds, replicas, a PodDisruptionBudget), the load ([Load]: rate,
// protocol, from the host or from load pods, straight to the Service or through an address in
// front of it) and the disruptions ([Disruption]: rollout restart, pod deletion, forced
// deletion, scale-down, scale to zero, kubelet restart, node drain; what each kind does and asks
// is its entry of [Disruptions]), each repeated. It is
// resolved once, before any cluster work ([Plan.Resolve]: its defaults filled, validated whole,
// the Deployment under test rendered), and the [Resolved] it gives is what the engine runs; it
// says whether it may run beside other plans ([Plan.RunsAlone]).
//
// An [Outcome] is what the row is expected to produce: no failures, at most a ratio, or
// failures by a named mechanism (a phase of one pod's termination, such as propagation or
// in-flight-cut). [Outcome.Judge] and [Outcome.JudgeMechanism] turn the load's summary, the
// disruptions' results and the attributed phases into a [Verdict].
//
// What a run found is kept in the same package so that every front end reads one shape: the
// configuration as applied ([Applied]), the [Explanation] of the failed requests with its
// windows and [Recommendation], and the [Times] a configuration costs. The engine package runs
// a resolved Plan on a cluster and fills these in; the spec package decodes check files into
// resolved Plans.
package check
