// Package kube holds what rollcheck does to any cluster through its API, whatever made the
// cluster: apply objects, restart a Deployment and wait for its rollout, create, tear down
// and sweep namespaces, and say why pods do not run. It knows nothing of kind.
package kube
