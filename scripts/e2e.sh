#!/usr/bin/env bash
# `make e2e`: the conformance suites on a kind cluster, from nothing.
#   Docker engine (started if none answers) -> tools -> node image choice (upstream or offline,
#   built and cached) -> cluster (created or reused) -> ginkgo suites -> conformance table.
# Every knob is checked first (a bad one stops the run in seconds, exit 2). A cluster this run
# created is deleted at the end unless ROLLCHECK_KEEP_CLUSTER is true; a cluster it reused is left
# running. On failure the cluster's logs are exported into $ARTIFACTS/cluster-logs first. Ctrl-C
# cleans up the same way.
# ROLLCHECK_LABELS selects specs by Ginkgo label (e.g. smoke, rollout-restart, negative-control);
# ROLLCHECK_SUITES the suite directories to build and run (default: suites examples/check).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$REPO_ROOT/scripts/node-image-choice.sh"
LOG_PREFIX=e2e
validate_knobs
cd "$REPO_ROOT"
export ROLLCHECK_KIND=$ROLLCHECK_CACHE/bin/kind
RC=$ROLLCHECK_CACHE/bin/rollcheck
GINKGO=$ROLLCHECK_CACHE/bin/ginkgo
mkdir -p "$ARTIFACTS"
ROLLCHECK_VERSION=$(git -C "$REPO_ROOT" describe --always --dirty 2>/dev/null || echo dev)
export ROLLCHECK_VERSION
T0=$(date +%s)
cluster_touched=""
# `rollcheck cluster up` says on stdout whether it created or reused the cluster, also when it
# fails after creating it; a file keeps the answer whatever interrupts this script.
cluster_up_out=$(mktemp)

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local cluster_state
  cluster_state=$(tail -n 1 "$cluster_up_out" 2>/dev/null) || true
  rm -f "$cluster_up_out"
  if [ -n "$cluster_touched" ]; then
    if [ "$rc" -ne 0 ]; then
      log "exporting cluster logs into $ARTIFACTS/cluster-logs"
      "$RC" cluster logs "$ARTIFACTS/cluster-logs" >/dev/null 2>&1 || log "could not export cluster logs"
    fi
    if [ "$cluster_state" != created ]; then
      log "leaving the cluster running: this run did not create it (cluster up: ${cluster_state:-no answer})"
    elif bool_knob ROLLCHECK_KEEP_CLUSTER; then
      log "keeping the cluster (ROLLCHECK_KEEP_CLUSTER); make down deletes it"
    else
      step cluster-delete "$RC" cluster down || true
    fi
  fi
  log "total $(($(date +%s) - T0))s, exit $rc; artifacts in $ARTIFACTS"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step docker bash scripts/docker-engine.sh up
step tools bash scripts/tools.sh
# Not through `step`: choose_node_image exports the choice into this shell.
choose_node_image
cluster_touched=1
step cluster-up "$RC" cluster up >"$cluster_up_out"
# The suites reuse the cluster made above and leave it to this script.
rm -rf "$ARTIFACTS/rows" "$ARTIFACTS/examples"
SUITES=${ROLLCHECK_SUITES:-suites examples/check}
# The examples suite checks a user's app: its image is built like a user's would be.
if [[ " $SUITES " == *" examples/check "* ]]; then
  step example-image bash scripts/example-image.sh
fi
suites_rc=0
color=""; [ -t 1 ] || color=--no-color
# One pass of the matrix takes about 20 minutes; 60 minutes a pass leaves room for slow machines.
suite_timeout=$((60 * ${ROLLCHECK_REPEAT:-1}))m
step suites "$GINKGO" -r --tags=e2e --keep-going $color --timeout="$suite_timeout" --poll-progress-after=120s \
  ${ROLLCHECK_LABELS:+--label-filter="$ROLLCHECK_LABELS"} \
  --output-dir="$ARTIFACTS" --junit-report=junit.xml --json-report=ginkgo-report.json \
  ${ROLLCHECK_GINKGO_FLAGS:-} $SUITES || suites_rc=$?
if [ -d "$ARTIFACTS/rows" ]; then
  step report "$RC" report "$ARTIFACTS" || suites_rc=1
fi
exit "$suites_rc"
