// Package disrupt takes a Deployment's pods away the ways clusters do — rollout restart,
// graceful pod delete, forced delete (grace 0), scale down and up, a kubelet restart, a drain of
// the app off one node through the eviction API — through the Kubernetes API, and waits after
// each until the Deployment has settled: rollout complete and no pod left terminating, so that
// every shutdown the disruption caused happens while load runs.
package disrupt
