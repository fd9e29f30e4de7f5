#!/usr/bin/env bash
# `make e2e`: the conformance suites on a kind cluster, from nothing. Bash does only what must be
# bash; the cluster and its policy are Go (`rollcheck e2e`, internal/cluster):
#   rollcheck CLI built -> every knob checked (`rollcheck knobs`: a bad one stops the run in
#   seconds, exit 2) -> Docker engine (started if none answers) -> ginkgo -> node image choice
#   (`rollcheck cluster node-image`: upstream, or offline, built here and cached) -> `rollcheck e2e`: cluster created or reused, ginkgo
#   suites (SIGINT/SIGTERM passed on, a time limit), conformance table, and the release: logs
#   exported into $ARTIFACTS/cluster-logs when anything failed, the run's namespaces waited for,
#   the cluster deleted if this run created it and ROLLCHECK_KEEP_CLUSTER is not true.
# ROLLCHECK_LABELS selects specs by Ginkgo label (e.g. smoke, rollout-restart, negative-control);
# ROLLCHECK_SUITES the suite directories to build and run (`rollcheck knobs table` lists every knob).
# Usage: e2e.sh [TARGET]. TARGET is one of make's e2e targets (e2e-grpc, smoke, ...: the table
# internal/knobs.Targets): the knobs it sets are exported first, so the Makefile holds none.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e
cd "$REPO_ROOT"
[ $# -le 1 ] || die "usage: e2e.sh [TARGET]"
if [ $# -eq 1 ]; then
  ensure_cli
  use_target "$1"
fi
validate_knobs
mkdir -p "$ARTIFACTS"
ROLLCHECK_VERSION=$(git -C "$REPO_ROOT" describe --always --dirty 2>/dev/null || echo dev)
export ROLLCHECK_VERSION

step docker bash scripts/docker-engine.sh up
step tools bash scripts/tools.sh
# Not through `step`: choose_node_image exports the choice into this shell.
choose_node_image
raise_inotify_limits
# The examples suite checks a user's app: its image is built like a user's would be.
if [[ " $(knob ROLLCHECK_SUITES) " == *" examples/check "* ]]; then
  step example-image bash scripts/example-image.sh hello
fi
exec "$RC" e2e --ginkgo "$ROLLCHECK_CACHE/bin/ginkgo" --artifacts "$ARTIFACTS"
