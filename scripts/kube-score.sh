#!/usr/bin/env bash
# kube-score beside rollcheck audit on the same manifests (docs/audit.md, "Beside static
# checkers"): the examples' manifests and the Deployments that recorded matrix rows ran (rendered
# from the rows in internal/audit/testdata by audit.RowObjects). For each manifest, kube-score's
# verdicts of its checks about availability and shutdown (it has none of preStop or grace), then
# rollcheck audit's table against the kind run's windows.
#
#   KUBE_SCORE=/path/to/kube-score scripts/kube-score.sh [MANIFEST...]
#
# kube-score v1.20.0 is what docs/audit.md quotes. Polaris and kube-linter were not available
# through the Go module proxy when this was written.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KUBE_SCORE=${KUBE_SCORE:-kube-score}
command -v "$KUBE_SCORE" >/dev/null || { echo "kube-score: not found (set KUBE_SCORE)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq: not found" >&2; exit 2; }
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

# The checks of kube-score v1.20.0 about availability and shutdown.
checks='["deployment-strategy","deployment-replicas","deployment-has-poddisruptionbudget","statefulset-has-poddisruptionbudget","poddisruptionbudget-has-policy","pod-probes","pod-probes-identical","deployment-has-host-podantiaffinity","statefulset-has-host-podantiaffinity","pod-topology-spread-constraints"]'
for m in "$@"; do
  echo "== $(basename "$m")"
  # kube-score exits 1 when it grades anything critical: its JSON is what is read.
  timeout --kill-after=10s 60 "$KUBE_SCORE" score -o json --kubernetes-version v1.34 "$m" >"$work/score.json" || true
  jq -r --argjson ids "$checks" '.[] | select(.type_meta.kind == "Deployment" or .type_meta.kind == "StatefulSet" or .type_meta.kind == "PodDisruptionBudget") |
    .object_name as $o | .checks[] | select(.check.id as $id | $ids | index($id)) |
    "kube-score \($o) \(.check.id): " + (if .skipped then "skipped" elif .grade >= 10 then "ok" elif .grade >= 5 then "WARNING" else "CRITICAL" end) +
    (if (.comments // []) | length > 0 then " (" + ([.comments[].summary] | join("; ")) + ")" else "" end)' "$work/score.json"
  timeout --kill-after=10s 60 "$work/rollcheck" audit -f "$m" --windows internal/audit/testdata/windows-kind.json | sed -n '/^WORKLOAD/,$p'
  echo
done
