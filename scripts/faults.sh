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
#                     (SIGSTOP/SIGCONT)                         -> the row is a harness fault and runs
#                                                               once more (retried, below)
#   load-pod-killed   the load pod force-deleted mid-row       -> the lost load stream is a harness
#                                                               fault (never fewer failures): retried
#   apiserver-restart the API server's container killed mid-row (the kubelet starts it again)
#                                                            -> a verdict from complete data or a
#                                                               harness fault, never a silent pass
#                                                               on a blind observer
#   ctrl-c-existing   SIGINT during a row of a check on the same cluster as an existing one
#                     (--kubeconfig)                         -> exit 130; only the run's own
#                                                               namespaces go: every other
#                                                               object of the cluster is unchanged
#   node-stopped      the kind node container stopped mid-row  -> the row is an error, exit 2
# and on a second cluster with two workers (ROLLCHECK_WORKERS=2), load from a load pod:
#   load-node-drained the load pod's node drained by kubectl mid-row -> harness fault, retried;
#                                                               the node uncordoned after
#   worker-stopped    the worker with app pods stopped mid-row -> the row is an error or fails,
#                                                               exit 1 or 2, its pods force-gone
#
# retried: the front ends' one policy for a row the harness could not judge: rollcheck check runs
# it once more. The fault hits the first attempt only, so the second passes: exit 0, the table
# marks the row "(retried: <the first attempt's reason>)" and the first attempt is kept
# (rows/ROW.attempt1.json). A harness fault that went unseen would pass without the mark.
#
# FAULTS="freeze-load load-pod-killed" (make faults FAULTS=...) runs only the faults named; the
# two-worker cluster is made only when one of its faults is named.
#
# Runs on the kind cluster of make e2e (created here if none, deleted at the end unless it was
# there before or ROLLCHECK_KEEP_CLUSTER is set). The last fault stops the node: the cluster is
# deleted after it (it cannot be restarted) unless it existed before and is kept running. The
# multi-node cluster (rollcheck-faults) is always created and deleted here.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=faults
validate_knobs
cd "$REPO_ROOT"
# The faults on the one-node cluster, then those on the two-worker one.
SINGLE=(ctrl-c-deploy ctrl-c-load ctrl-c-teardown freeze-load load-pod-killed apiserver-restart ctrl-c-existing node-stopped)
MULTI=(load-node-drained worker-stopped)
ALL_FAULTS=("${SINGLE[@]}" "${MULTI[@]}")
read -r -a SELECTED <<<"${FAULTS:-${ALL_FAULTS[*]}}"
for f in "${SELECTED[@]}"; do
  [[ " ${ALL_FAULTS[*]} " == *" $f "* ]] || die "FAULTS: no fault named '$f' (the faults: ${ALL_FAULTS[*]})"
done
[ ${#SELECTED[@]} -gt 0 ] || die "FAULTS is set but names no fault (the faults: ${ALL_FAULTS[*]})"
selected() { local f; for f in "$@"; do [[ " ${SELECTED[*]} " == *" $f "* ]] && return 0; done; return 1; }
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
if selected "${SINGLE[@]}"; then
  state=$("$RC" cluster up | tail -n 1)
  [ "$state" = created ] && created=1
fi

# Small checks: one variant, two rollouts (each row is quick, the faults land in it), with the
# load from the host or from a load pod.
cp examples/check/web.yaml "$work/"
check_file() { # check_file NAME LOAD
  cat >"$work/$1.yaml" <<EOF
apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: faults}
app: {manifests: [web.yaml], images: [rollcheck-example/hello:dev], port: 8080}
load: $2
disruptions: [{kind: rollout-restart, count: 2}]
variants:
- {name: prestop-5s, preStop: {sleep: 5s}, terminationGracePeriodSeconds: 30, expect: {failures: 0}}
EOF
}
check_file host '{from: host}'
check_file pod '{from: cluster}'

kubectl_node() { docker exec "$NODE" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
leftovers() { # what rollcheck created that is still there
  local ns procs ctrs
  ns=$(kubectl_node get ns -l app.kubernetes.io/part-of=rollcheck -o name 2>/dev/null | tr '\n' ' ')
  procs=$(pgrep -f "rollcheck check -f $work" | tr '\n' ' ')
  ctrs=$(docker ps -a --format '{{.Names}}' | grep -v -x -e "$NODE" -e "$NODE_PREFIX-worker" -e "$NODE_PREFIX-worker2" | tr '\n' ' ')
  echo "namespaces: ${ns:-none}; processes: ${procs:-none}; containers: ${ctrs:-none}"
}
# wait_for FILE PATTERN SECONDS: until the pattern shows in the file.
wait_for() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -q -- "$2" "$1" && return 0; sleep 0.1; done
  die "waited $3 s for '$2' in $1"
}
# snapshot: every object of the kinds a check touches, cluster-wide, with its generation, and
# the nodes' schedulability: what a run on an existing cluster must leave as it found it.
snapshot() {
  kubectl_node get ns,deploy,sts,ds,svc,cm,secret,sa,role,rolebinding,pdb,networkpolicy -A \
    -o 'custom-columns=K:.kind,NS:.metadata.namespace,N:.metadata.name,G:.metadata.generation' --no-headers | sort
  kubectl_node get nodes -o 'custom-columns=N:.metadata.name,U:.spec.unschedulable,T:.spec.taints[*].key' --no-headers
}

results=()
# fault NAME CHECK WHEN ACTION WANT_EXIT...: start a check of the check file CHECK (plus
# $FAULT_ARGS), wait for the pattern WHEN, do ACTION to it, wait for its end (bounded), and record
# what happened. Any of the WANT_EXIT codes is right.
fault() {
  local name=$1 file=$2 when=$3 action=$4 log=$OUT/$1.log rc=0 left verdict i
  shift 4
  local want=("$@") retried=""
  selected "$name" || return 0
  if [ "${want[*]}" = retried ]; then retried=1 want=(0); fi
  log "fault $name: $action once '$when' shows"
  # shellcheck disable=SC2086 # FAULT_ARGS is words
  "$RC" check -f "$work/$file.yaml" --artifacts "$OUT/$name" ${FAULT_ARGS:-} >"$log" 2>&1 &
  child=$!
  wait_for "$log" "$when" 240
  case $action in
    sigint) kill -INT "$child" ;;
    freeze) kill -STOP "$child"; sleep 6; kill -CONT "$child" ;;
    stop-node) docker stop -t 1 "$NODE" >/dev/null ;;
    stop-worker) # the worker that runs the most of the app's pods
      local w
      w=$(kubectl_node get pods -A -l app.kubernetes.io/name=web -o 'custom-columns=N:.spec.nodeName' --no-headers | grep worker | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
      [ -n "$w" ] || die "fault $name: no app pod on a worker"
      log "fault $name: stopping $w"
      docker stop -t 1 "$w" >/dev/null ;;
    kill-load-pod)
      kubectl_node delete pod -A -l app.kubernetes.io/component=load --grace-period=0 --force >/dev/null 2>&1 ;;
    drain-load-node)
      local n
      n=$(kubectl_node get pods -A -l app.kubernetes.io/component=load -o 'custom-columns=N:.spec.nodeName' --no-headers | head -n 1)
      [ -n "$n" ] || die "fault $name: no load pod"
      log "fault $name: kubectl drain $n"
      kubectl_node drain "$n" --ignore-daemonsets --delete-emptydir-data --force --timeout=90s >"$OUT/$name.drain.log" 2>&1 || true
      kubectl_node uncordon "$n" >/dev/null ;;
    restart-apiserver) # kill its process: the kubelet starts the static pod's container again
      docker exec "$NODE" sh -c 'for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = kube-apiserver ] && kill "${p#/proc/}"; done; true' ;;
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
  local ok="WRONG EXIT (want ${want[*]})" w
  for w in "${want[@]}"; do [ "$rc" -eq "$w" ] && ok=ok; done
  [ -f "$OUT/$name/conformance.json" ] || ok="$ok, NO REPORT"
  grep -q "namespace/" <<<"$left" && ok="$ok, NAMESPACE LEFT"
  if [ -n "$retried" ]; then
    if ! grep -q "harness fault, not a verdict on the app" "$log" || ! grep -q "(retried: " "$log"; then
      ok="$ok, NOT RETRIED"
    elif [ -z "$(find "$OUT/$name" -name '*.attempt1.json' -print -quit)" ]; then
      ok="$ok, FIRST ATTEMPT NOT KEPT"
    else
      verdict="${verdict:-}$(grep -o '(retried: [^)]*)' "$log" | head -n 1)"
    fi
  fi
  results+=("| $name | ${verdict:-—} | $rc | $left | $ok |")
  log "fault $name: exit $rc; $left; $ok"
}

NODE_PREFIX=${ROLLCHECK_CLUSTER_NAME:-rollcheck}
fault ctrl-c-deploy host "deploy rc-" sigint 130
fault ctrl-c-load host "disruption 1/2 starts" sigint 130
fault ctrl-c-teardown host "teardown of namespace" sigint 130
fault freeze-load host "disruption 1/2 starts" freeze retried
fault load-pod-killed pod "disruption 1/2 starts" kill-load-pod retried
# The API server's restart: the observer's watches and the disruptions' calls fail for a few
# seconds. A row that ends with complete data passes or fails on it (0 or 1); one that cannot
# is a harness fault (2).
fault apiserver-restart host "disruption 1/2 starts" restart-apiserver 0 1 2
if selected apiserver-restart; then
  for ((i = 0; i < 120; i++)); do kubectl_node get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
  kubectl_node get --raw /readyz >/dev/null || die "the API server is not ready 120 s after its restart"
fi

# The same cluster as an existing one (--kubeconfig): a bystander namespace with objects of its
# own, and the cluster's objects before and after a Ctrl-C compared.
if selected ctrl-c-existing; then
  port=$(docker port "$NODE" 6443/tcp | head -n 1 | sed 's/.*://')
  kubectl_node config view --raw | sed "s#server: https://.*#server: https://127.0.0.1:$port#" >"$work/kubeconfig"
  kubectl_node create namespace faults-bystander >/dev/null
  kubectl_node -n faults-bystander create configmap keep --from-literal=k=v >/dev/null
  kubectl_node -n faults-bystander create deployment keep --image=rollcheck-example/hello:dev --replicas=0 >/dev/null
  snapshot >"$OUT/existing.before"
  ROLLCHECK_LOAD_IMAGE=$("$RC" cluster load-image | tail -n 1) FAULT_ARGS="--kubeconfig $work/kubeconfig" \
    fault ctrl-c-existing pod "disruption 1/2 starts" sigint 130
  snapshot >"$OUT/existing.after"
  if ! diff -u "$OUT/existing.before" "$OUT/existing.after" >"$OUT/existing.diff"; then
    results[-1]="${results[-1]% |}, CLUSTER CHANGED (existing.diff) |"
  fi
  kubectl_node delete namespace faults-bystander --wait=false >/dev/null
fi

if selected node-stopped; then
  fault node-stopped host "disruption 1/2 starts" stop-node 2
  # The node was stopped by the last fault: a stopped kind cluster cannot be restarted.
  "$RC" cluster down >/dev/null 2>&1 || true
  created=""
  log "the cluster was deleted (its node was stopped by the last fault); make cluster creates a new one"
elif [ -n "${created:-}" ] && [ "$(knob ROLLCHECK_KEEP_CLUSTER)" != true ]; then
  "$RC" cluster down >/dev/null 2>&1 || true
  created=""
fi

# Two workers, a cluster of its own: the faults that need a second node.
if selected "${MULTI[@]}"; then
  export ROLLCHECK_CLUSTER_NAME=rollcheck-faults ROLLCHECK_WORKERS=2
  NODE=rollcheck-faults-control-plane NODE_PREFIX=rollcheck-faults
  "$RC" cluster up >/dev/null
  created=1
  fault load-node-drained pod "disruption 1/2 starts" drain-load-node retried
  fault worker-stopped host "disruption 1/2 starts" stop-worker 1 2
  "$RC" cluster down >/dev/null 2>&1 || true
  created=""
  log "the multi-node cluster was deleted"
fi

{
  echo "| fault | what the user saw | exit | left behind | check |"
  echo "|---|---|--:|---|---|"
  printf '%s\n' "${results[@]}"
} | tee "$OUT/faults.md"
! grep -q 'WRONG\|NO REPORT\|LEFT\|CHANGED\|NOT RETRIED\|NOT KEPT' "$OUT/faults.md"
