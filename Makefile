# rollcheck: every target calls a script in scripts/ (set -euo pipefail); `make help` lists them.
# The e2e targets' label filters, suites and clusters are one Go table (internal/knobs.Targets):
# `bash scripts/e2e.sh TARGET` exports what the target sets (`rollcheck knobs target TARGET`).
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

.PHONY: help test bench e2e e2e-families e2e-families-multinode e2e-slow e2e-proxy e2e-multinode e2e-grpc e2e-nftables e2e-stopsignal smoke faults check tune example-image proxy-images cluster down logs docker node-image node-image-containerd2 tools rbac docs e2e-rbac e2e-namespaced e2e-gate e2e-all release

help: ## list the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z0-9-]+:.*## /{printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

test: ## everything that needs no cluster: gofmt, vet (with and without the e2e tag, and for darwin), go test ./..., script tests
	@bash scripts/test.sh

rbac: ## regenerate examples/rbac (the ServiceAccount's ClusterRoles, Role and bindings) from internal/access.Rights
	@go generate ./internal/access

docs: ## regenerate docs/check-file.md (every check file field and report column) and the JSON Schemas docs/conformance.schema.json, docs/audit.schema.json, docs/windows.schema.json from the code
	@go generate ./internal/refdoc

bench: ## loadgen/attack benchmarks: an attack vs bare vegeta CPU/allocs per request, achieved-rate error at 1,000 req/s; HTTP/1.1, h2c and gRPC at the same rates
	@bash scripts/bench.sh

e2e: ## the conformance suites on kind (creates the cluster and, if needed, the Docker engine and node image)
	@bash scripts/e2e.sh e2e

e2e-families: ## what CI runs beside make e2e: one passing row and one negative control of each family make e2e leaves out that runs on one node (labels family, not multinode or terminating-endpoints: a proxy in front, h2c, HTTP/2 over TLS, gRPC pick_first and round_robin; artifacts in _artifacts/families)
	@bash scripts/e2e.sh e2e-families

e2e-families-multinode: ## the same for the families that need worker nodes, on a cluster of its own with 2 workers (labels family, multinode, terminating-endpoints: a drain with a PodDisruptionBudget, externalTrafficPolicy Local, one replica's endpoints all terminating; artifacts in _artifacts/families-multinode)
	@bash scripts/e2e.sh e2e-families-multinode

e2e-slow: ## the slow rows, not in make e2e: a kubelet restart during termination (label slow)
	@bash scripts/e2e.sh e2e-slow

e2e-proxy: ## the rows through a real proxy (internal/proxies' table, built offline), not in make e2e (label proxy)
	@bash scripts/e2e.sh e2e-proxy

e2e-multinode: ## cluster shapes on a cluster of its own with 2 workers: drains, load across nodes, one replica's endpoints all terminating, a drain of the node the load enters (externalTrafficPolicy Local and Cluster) (labels multinode, terminating-endpoints, smoke)
	@bash scripts/e2e.sh e2e-multinode

e2e-grpc: ## HTTP/2 (over cleartext and TLS) and gRPC rows (labels http2, grpc): GOAWAY, pinned connections, a client that balances itself (artifacts in _artifacts/grpc)
	@bash scripts/e2e.sh e2e-grpc

e2e-nftables: ## make e2e's rows with kube-proxy in nftables mode, on a cluster of its own (artifacts in _artifacts/nftables)
	@bash scripts/e2e.sh e2e-nftables

e2e-stopsignal: ## the row whose pod spec sets lifecycle.stopSignal (label stop-signal-field), on a cluster of its own whose node image has containerd 2.3+ (offline-containerd2: built from the Go module proxy over the offline image, cached; artifacts in _artifacts/stopsignal)
	@bash scripts/e2e.sh e2e-stopsignal

e2e-rbac: ## the example check on kind as a ServiceAccount with only examples/rbac's rights: its verdict, a refusal without one right, every other disruption run (all but force-delete passing), restricted Pod Security, no token in anything written (cluster of its own, two workers)
	@bash scripts/e2e-rbac.sh

e2e-namespaced: ## the example check on kind as a ServiceAccount holding only examples/rbac/namespaced.yaml's Role in two namespaces a user made (rollcheck check --row-namespace): a namespace without it refused in one line, the rows in the two, nothing of them left there, no namespace created, the user's ConfigMap untouched (cluster of its own)
	@bash scripts/e2e-namespaced.sh

e2e-gate: ## rollcheck as a release's gate, in a kind cluster of its own, as the ServiceAccount of examples/rbac/in-place*.yaml: the gate Job (examples/gate/job.yaml) failing a Deployment without a preStop and passing it with one, its verdict the termination message; a missing right (exit 2); Argo Rollouts built offline from its module: the Job provider's AnalysisRuns made from a Kargo Stage (examples/gate/kargo-stage.yaml) as Kargo's controller makes them (Kargo itself not run), the Web provider's, a blue-green Rollout whose prePromotionAnalysis is the gate on the preview's pods (aborted without a preStop, retried with one check, promoted with one), a canary Rollout whose step analysis is the gate on the canary's pods (aborted without a preStop, promoted with one), and the blue-green Rollout checked in place (rollcheck check --rollout: a variant without a preStop failing by propagation and in-flight-cut, one with a preStop passing, the Rollout as it was after); Flagger built the same way, whose pre-rollout webhook is rollcheck serve: a bad release rolled back, a good one promoted (artifacts in _artifacts/gate)
	@bash scripts/e2e-gate.sh

smoke: ## only the smoke suite on kind
	@bash scripts/e2e.sh smoke

e2e-all: ## every e2e target one after another, each on the cluster it needs (e2e, e2e-slow, e2e-proxy, e2e-grpc, e2e-multinode, e2e-nftables, e2e-stopsignal, e2e-rbac, e2e-namespaced, e2e-gate; artifacts in _artifacts/TARGET), going on after a failure; then a table (exit, time, rows passed/failed, Ginkgo specs failed); fails if any target failed
	@MAKE="$(MAKE)" bash scripts/e2e-all.sh

faults: ## inject faults into real checks (Ctrl-C in deploy, load, teardown and on an existing cluster; a frozen load; a killed or drained-away load pod; an API server restart; a stopped node or worker): exit codes, reports, a harness fault retried once and marked, nothing left; FAULTS="freeze-load ..." runs only those named
	@FAULTS="$(FAULTS)" bash scripts/faults.sh

check: ## check your own app: make check SPEC=path/to/check.yaml (see README, "Your first check")
	@SPEC="$(SPEC)" bash scripts/check.sh

tune: ## find the smallest preStop that meets the threshold: make tune ARGS="--sample exit" (see README, "Tune the preStop")
	@ARGS="$(ARGS)" bash scripts/tune.sh

example-image: ## build the example app's image (examples/hello) and the nginx in front of it (examples/proxy) into the local Docker engine
	@bash scripts/example-image.sh

proxy-images: ## build the proxy fixture images of internal/proxies' table offline (cached), load them into the kind cluster if it exists, print their refs
	@bash scripts/proxy-images.sh

cluster: ## create or reuse the kind cluster and keep it (warm runs start in seconds)
	@bash scripts/cluster.sh up

down: ## delete the kind cluster and stop the dockerd rollcheck started
	@bash scripts/cluster.sh down

logs: ## export the cluster's logs into $$ARTIFACTS/cluster-logs
	@bash scripts/cluster.sh logs

docker: ## make sure a Docker engine answers (installs and starts Debian's docker.io as root if none does)
	@bash scripts/docker-engine.sh up

node-image: ## build the offline kind node image (cached: seconds when nothing changed)
	@bash scripts/node-image.sh

node-image-containerd2: ## build the offline node image's variant with containerd 2.3+ (CONTAINERD_VERSION, over Debian's 1.6; make e2e-stopsignal's), no cluster (cached)
	@bash scripts/node-image-containerd.sh

release: ## static rollcheck binaries for linux and darwin (amd64, arm64) + SHA256SUMS in $$ARTIFACTS/release: make release [VERSION=v1.2.3] (default: git describe)
	@VERSION="$(VERSION)" bash scripts/release.sh

tools: ## build ginkgo and the rollcheck CLI (pinned in go.mod; kind runs inside rollcheck) into the cache
	@bash scripts/tools.sh
