// Package tune finds the smallest preStop with which a Deployment meets its threshold under a
// disruption repeated K times: a search over runs of a Plan (a Runner, engine.Run bound to a
// Target by the caller), each run a full row at one preStop value, then runs alone that bound
// the probability that one pod deletion fails at the value found (WithBound, UpperBound) and
// show that the value one resolution below fails.
//
// Probes may run several at once (WithParallel) when they share nothing: each row has a
// namespace of its own, but load from the host goes through the cluster's one NodePort, whose
// conntrack entries every row flushes, a kubelet restart stops every pod's termination on its
// node and a node drain cordons a node every probe schedules on. check.Plan.RunsAlone is that
// rule. What a Runner shares is the caller's to know, not tune's: Parallelism says what a Plan
// allows when its Runner is engine.Run. Even probes that share nothing load the same nodes and
// API server, and slow each other's rollouts: the answer is taken from runs alone only, so that
// it is the same at any parallelism.
package tune
