#!/usr/bin/env bash
# Static checkers beside rollcheck audit on the same manifests (docs/audit.md, "Beside static
# checkers"): the examples' manifests and the Deployments that recorded matrix rows ran (rendered
# from the rows in internal/audit/testdata by audit.RowObjects). For each manifest, each checker
# given prints its verdicts of its checks about availability and shutdown (none of them has a
# check of preStop hooks or of the grace period), then rollcheck audit prints its table against
# the kind run's windows.
#
#   KUBE_SCORE=/path/to/kube-score POLARIS=/path/to/polaris KUBE_LINTER=/path/to/kube-linter \
#     scripts/static-checkers.sh [MANIFEST...]
#
# Each checker is optional; at least one is required. docs/audit.md quotes kube-score v1.20.0,
# Polaris v10.2.2-4-gc0e23a23 and kube-linter v0.8.3-86-g35de568 (both built from source; how is
# in docs/audit.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KUBE_SCORE=${KUBE_SCORE:-} POLARIS=${POLARIS:-} KUBE_LINTER=${KUBE_LINTER:-}
if [ -z "$KUBE_SCORE$POLARIS$KUBE_LINTER" ]; then
  echo "static-checkers: set at least one of KUBE_SCORE, POLARIS, KUBE_LINTER to a binary" >&2
  exit 2
fi
for v in KUBE_SCORE POLARIS KUBE_LINTER; do
  if [ -n "${!v}" ] && ! command -v "${!v}" >/dev/null; then
    echo "static-checkers: $v=${!v}: not found" >&2
    exit 2
  fi
done
command -v jq >/dev/null || { echo "static-checkers: jq: not found" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timeout --kill-after=10s 300 go build -o "$work/rollcheck" ./cmd/rollcheck
if [ $# -eq 0 ]; then
  timeout --kill-after=10s 300 go run ./internal/audit/rowmanifests "$work/rows" \
    internal/audit/testdata/kind-run internal/audit/testdata/multinode-run internal/audit/testdata/grpc-run
  set -- examples/check/web.yaml examples/grpc/app.yaml examples/proxy/nginx.yaml \
    "$work"/rows/rollout--naive--rollout-restart--cluster.yaml \
    "$work"/rows/rollout--prestop-drain--rollout-restart--cluster.yaml \
    "$work"/rows/rollout--slow-requests--rollout-restart--cluster.yaml \
    "$work"/rows/sidecar--sidecar-classic--rollout-restart--cluster.yaml \
    "$work"/rows/sidecar--sidecar-native--rollout-restart--cluster.yaml \
    "$work"/rows/grpc--grpc-rr-prestop-5s--rollout-restart--cluster.yaml \
    "$work"/rows/terminating--single-exit--delete-pod--cluster.yaml \
    "$work"/rows/terminating--single-prestop--delete-pod--cluster.yaml \
    "$work"/rows/drainnode--drain-pdb--drain-node--cluster.yaml \
    "$work"/rows/drainnode--drain-single-pdb--drain-node--cluster.yaml
fi

# Each checker's checks about availability and shutdown. kube-score v1.20.0:
score_checks='["deployment-strategy","deployment-replicas","deployment-has-poddisruptionbudget","statefulset-has-poddisruptionbudget","poddisruptionbudget-has-policy","pod-probes","pod-probes-identical","deployment-has-host-podantiaffinity","statefulset-has-host-podantiaffinity","pod-topology-spread-constraints"]'
# Polaris (all in its default configuration):
polaris_checks='["deploymentMissingReplicas","readinessProbeMissing","livenessProbeMissing","missingPodDisruptionBudget","pdbDisruptionsIsZero","topologySpreadConstraint","hpaMaxAvailability","hpaMinAvailability","pdbMinAvailableGreaterThanHPAMinReplicas"]'
# kube-linter: its defaults, plus the built-in checks about availability it leaves off by default.
linter_optin=minimum-three-replicas,no-readiness-probe,no-liveness-probe,no-rolling-update-strategy
linter_checks='["no-anti-affinity","pdb-max-unavailable","pdb-min-available","pdb-unhealthy-pod-eviction-policy","readiness-port","liveness-port","startup-port","minimum-three-replicas","no-readiness-probe","no-liveness-probe","no-rolling-update-strategy"]'

# runjson NAME CMD...: run a checker into $work/out.json. Each exits non-zero when it finds
# anything, so its JSON is what is read; without JSON (a failed run), say so, return 1, and the
# script exits 1 at the end.
failed=0
runjson() {
  local name=$1 rc=0
  shift
  timeout --kill-after=10s 60 "$@" >"$work/out.json" 2>"$work/err" || rc=$?
  [ -s "$work/out.json" ] && jq -e . "$work/out.json" >/dev/null 2>&1 && return 0
  echo "$name: no JSON for $m (exit $rc): $(head -n 1 "$work/err")" >&2
  failed=1
  return 1
}

for m in "$@"; do
  echo "== $(basename "$m")"
  if [ -n "$KUBE_SCORE" ] && runjson kube-score "$KUBE_SCORE" score -o json --kubernetes-version v1.34 "$m"; then
    jq -r --argjson ids "$score_checks" '.[] | select(.type_meta.kind == "Deployment" or .type_meta.kind == "StatefulSet" or .type_meta.kind == "PodDisruptionBudget") |
      .object_name as $o | .checks[] | select(.check.id as $id | $ids | index($id)) |
      "kube-score \($o) \(.check.id): " + (if .skipped then "skipped" elif .grade >= 10 then "ok" elif .grade >= 5 then "WARNING" else "CRITICAL" end) +
      (if (.comments // []) | length > 0 then " (" + ([.comments[].summary] | join("; ")) + ")" else "" end)' "$work/out.json"
  fi
  if [ -n "$POLARIS" ] && runjson polaris "$POLARIS" audit --audit-path "$m" --format json; then
    # A check's result sits on the controller, its pod or each container.
    jq -r --argjson ids "$polaris_checks" '.Results[] | "\(.Kind)/\(.Name)" as $o |
      ([.Results // {}] + [.PodResult.Results // {}] + [(.PodResult.ContainerResults // [])[].Results // {}]) | map(to_entries[]) | .[] |
      select(.key as $id | $ids | index($id)) |
      "polaris \($o) \(.key): " + (if .value.Success then "ok" else (.value.Severity | ascii_upcase) + " (" + .value.Message + ")" end)' "$work/out.json" | sort -u
  fi
  if [ -n "$KUBE_LINTER" ] && runjson kube-linter "$KUBE_LINTER" lint --format json --include "$linter_optin" "$m"; then
    # kube-linter reports only what fails.
    jq -r --argjson ids "$linter_checks" '(.Reports // [])[] | select(.Check as $id | $ids | index($id)) |
      "kube-linter \(.Object.K8sObject.GroupVersionKind.Kind)/\(.Object.K8sObject.Name) \(.Check): \(.Diagnostic.Message)"' "$work/out.json"
  fi
  timeout --kill-after=10s 60 "$work/rollcheck" audit -f "$m" --windows internal/audit/windows-kind.json | sed -n '/^WORKLOAD/,$p'
  echo
done
exit "$failed"
