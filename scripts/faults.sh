#!/usr/bin/env bash
# `make faults`: faults injected into real `rollcheck check` runs of the hello example, each
# ending with a clear verdict and nothing left behind that rollcheck created. For each fault:
# what the user saw (last lines), the exit code, and what was left (namespaces labelled
# app.kubernetes.io/part-of=rollcheck, rollcheck processes, containers other than the node).
#
#   ctrl-c-deploy     SIGINT while the app deploys             -> exit 130, reports written
#   ctrl-c-load       SIGINT while disruptions run under load  -> exit 130, reports written
#   ctrl-c-teardown   SIGINT while a row's namespace goes      -> exit 130, teardown finishes
#   freeze-load       the whole process (load generator included) stopped 6 s mid-load
#                     (SIGSTOP/SIGCONT)                         -> the row is a harness fault, exit 2
#   node-stopped      the kind node container stopped mid-row  -> the row is an error, exit 2
#
# Runs on the kind cluster of make e2e (created here if none, deleted at the end unless it was
# there before or ROLLCHECK_KEEP_CLUSTER is set). The last fault stops the node: the cluster is
# deleted after it (it cannot be restarted) unless it existed before and is kept running.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=faults
validate_knobs
cd "$REPO_ROOT"
NODE=${ROLLCHECK_CLUSTER_NAME:-rollcheck}-control-plane
OUT=$ARTIFACTS/faults
rm -rf "$OUT"; mkdir -p "$OUT"
work=$(mktemp -d)
child=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$child" ] && kill -CONT "$child" 2>/dev/null && kill -TERM "$child" 2>/dev/null
  rm -rf "$work"
  if [ -n "${created:-}" ] && [ "$(knob ROLLCHECK_KEEP_CLUSTER)" != true ]; then "$RC" cluster down >/dev/null 2>&1 || true; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step docker bash scripts/docker-engine.sh up
step tools bash scripts/tools.sh
step example-image bash scripts/example-image.sh hello
choose_node_image
state=$("$RC" cluster up | tail -n 1)
[ "$state" = created ] && created=1

# A small check: one variant, two rollouts (each row is quick, the faults land in it).
cp examples/check/web.yaml "$work/"
cat >"$work/check.yaml" <<'EOF'
apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: faults}
app: {manifests: [web.yaml], images: [rollcheck-example/hello:dev], port: 8080}
disruptions: [{kind: rollout-restart, count: 2}]
variants:
- {name: prestop-5s, preStop: {sleep: 5s}, terminationGracePeriodSeconds: 30, expect: {failures: 0}}
EOF

kubectl_node() { docker exec "$NODE" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
leftovers() { # what rollcheck created that is still there
  local ns procs ctrs
  ns=$(kubectl_node get ns -l app.kubernetes.io/part-of=rollcheck -o name 2>/dev/null | tr '\n' ' ')
  procs=$(pgrep -f "rollcheck check -f $work" | tr '\n' ' ')
  ctrs=$(docker ps -a --format '{{.Names}}' | grep -v -x "$NODE" | tr '\n' ' ')
  echo "namespaces: ${ns:-none}; processes: ${procs:-none}; containers: ${ctrs:-none}"
}
# wait_for FILE PATTERN SECONDS: until the pattern shows in the file.
wait_for() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -q -- "$2" "$1" && return 0; sleep 0.1; done
  die "waited $3 s for '$2' in $1"
}

results=()
# fault NAME WHEN ACTION WANT_EXIT: start a check, wait for the pattern WHEN, do ACTION to
# it, wait for its end (bounded), and record what happened.
fault() {
  local name=$1 when=$2 action=$3 want=$4 log=$OUT/$1.log rc=0 left verdict i
  log "fault $name: $action once '$when' shows"
  "$RC" check -f "$work/check.yaml" --artifacts "$OUT/$name" >"$log" 2>&1 &
  child=$!
  wait_for "$log" "$when" 240
  case $action in
    sigint) kill -INT "$child" ;;
    freeze) kill -STOP "$child"; sleep 6; kill -CONT "$child" ;;
    stop-node) docker stop -t 1 "$NODE" >/dev/null ;;
  esac
  for ((i = 0; i < 3000; i++)); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$child" 2>/dev/null && die "fault $name: rollcheck check did not end within 5 minutes"
  wait "$child" || rc=$?
  child=""
  if [ "$action" = stop-node ]; then
    left="namespaces: (node stopped); processes: $(pgrep -f "rollcheck check -f $work" | tr '\n' ' ' || true)"
  else
    left=$(leftovers)
  fi
  verdict=$(grep -E '^[0-9]+ rows|interrupted' "$log" | tail -n 2 | tr '\n' ' ')
  local ok=ok
  [ "$rc" -eq "$want" ] || ok="WRONG EXIT (want $want)"
  [ -f "$OUT/$name/conformance.json" ] || ok="$ok, NO REPORT"
  grep -q "namespace/" <<<"$left" && ok="$ok, NAMESPACE LEFT"
  results+=("| $name | ${verdict:-—} | $rc | $left | $ok |")
  log "fault $name: exit $rc; $left; $ok"
}

fault ctrl-c-deploy "deploy rc-" sigint 130
fault ctrl-c-load "disruption 1/2 starts" sigint 130
fault ctrl-c-teardown "teardown of namespace" sigint 130
fault freeze-load "disruption 1/2 starts" freeze 2
fault node-stopped "disruption 1/2 starts" stop-node 2

{
  echo "| fault | what the user saw | exit | left behind | check |"
  echo "|---|---|--:|---|---|"
  printf '%s\n' "${results[@]}"
} | tee "$OUT/faults.md"
# The node was stopped by the last fault: a stopped kind cluster cannot be restarted.
"$RC" cluster down >/dev/null 2>&1 || true
created=""
log "the cluster was deleted (its node was stopped by the last fault); make cluster creates a new one"
! grep -q 'WRONG\|NO REPORT\|LEFT' "$OUT/faults.md"
