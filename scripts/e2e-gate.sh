#!/usr/bin/env bash
# make e2e-gate: rollcheck as the gate of a release, inside a kind cluster of its own
# (ROLLCHECK_CLUSTER_NAME, rollcheck-gate unless set; one that exists is reused and kept), run as
# the ServiceAccount of examples/rbac with only the namespaced Roles of in-place*.yaml:
#   1. the example app (examples/check/web.yaml, no preStop) in namespace shop; the gate Job
#      (examples/gate/job.yaml): it fails (exit 1, Job Failed), its termination message is the
#      verdict's JSON (fail, failures by phase);
#   2. the app with a 5 s preStop sleep: the same Job passes (exit 0, Job Complete);
#   3. the same Job with its load namespace's Role missing: no verdict (exit 2), one line naming
#      the right, nothing disrupted;
#   4. Flagger (built from its module by internal/controllers, offline) with a Canary of shop/web,
#      the kubernetes provider (blue/green over ClusterIP Services), whose pre-rollout webhook is
#      rollcheck serve (examples/gate/serve.yaml, flagger-canary.yaml): a release without a preStop
#      rolls back (Canary Failed), one with a 5 s preStop is promoted (Canary Succeeded), and the
#      webhook called again for a checksum already judged gets the same verdict without a check.
# Each step prints the controller's status fields before and after, the verdict's JSON and its wall
# time. Artifacts in $ARTIFACTS/gate.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e-gate
export ROLLCHECK_CLUSTER_NAME=${ROLLCHECK_CLUSTER_NAME:-rollcheck-gate}
validate_knobs
sa_setup gate
trap 'sa_finish $?' EXIT
exec > >(tee -a "$OUT/e2e-gate.log") 2>&1
GATE=$REPO_ROOT/examples/gate

sa_cluster_up
sa_shop
admin auth can-i --list --as="$SA" -n shop >"$OUT/can-i-shop.txt"

# gate_job NAME WANT: the gate Job as examples/gate/job.yaml has it (its image the load image),
# named NAME; waits until it ended, checks its container's exit code is WANT, prints its verdict
# (the termination message) and keeps its log.
gate_job() {
  local name=$1 want=$2 s code msg
  s=$(date +%s)
  sed -e "s|rollcheck/load:TAG|$ROLLCHECK_LOAD_IMAGE|g" -e "s|name: rollcheck-gate$|name: $name|" "$GATE/job.yaml" | admin apply -f - >/dev/null
  for _ in $(seq 900); do
    code=$(admin get pods -n rollcheck -l job-name="$name" -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
    [ -n "$code" ] && break
    sleep 1
  done
  admin logs -n rollcheck "job/$name" >"$OUT/$name.log" 2>&1 || true
  [ -n "$code" ] || die "$name: the gate Job did not end within 900 s"
  msg=$(admin get pods -n rollcheck -l job-name="$name" -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.message}')
  echo "$msg" >"$OUT/$name.verdict.json"
  log "$name: exit $code after $(($(date +%s) - s)) s; Job status: $(admin get job -n rollcheck "$name" -o jsonpath='{.status.conditions[*].type}')"
  log "$name: verdict $msg"
  [ "$code" = "$want" ] || { tail -n 40 "$OUT/$name.log"; die "$name: the gate exited $code, want $want"; }
  jq -e . <<<"$msg" >/dev/null || die "$name: the termination message is not JSON"
  [ "${#msg}" -le 4096 ] || die "$name: the termination message has ${#msg} bytes, over 4096"
}

# 1. No preStop: the gate fails.
gate_job gate-as-is 1
jq -e '.verdict == "fail" and .failed > 0 and (.byPhase | length) > 0' "$OUT/gate-as-is.verdict.json" >/dev/null \
  || die "gate-as-is: the verdict is not a fail with its failures by phase"

# 2. A 5 s preStop sleep, as the user would release it: the gate passes.
admin patch -n shop deployment/web --type=json \
  -p='[{"op":"add","path":"/spec/template/spec/containers/0/lifecycle","value":{"preStop":{"sleep":{"seconds":5}}}}]'
admin rollout status -n shop deployment/web --timeout=3m
gate_job gate-prestop 0
jq -e '.verdict == "pass" and .failed == 0 and .requests > 0' "$OUT/gate-prestop.verdict.json" >/dev/null \
  || die "gate-prestop: the verdict is not a pass"

# 3. The load namespace's Role missing: no verdict, one line naming the right, and no pod of the
# app deleted.
admin delete rolebinding -n rc-load rollcheck-in-place-load
pods_before=$(admin get pods -n shop -l app.kubernetes.io/name=web -o name | sort)
gate_job gate-no-right 2
jq -e '.verdict == "inconclusive" and (.reason | test("create pods"))' "$OUT/gate-no-right.verdict.json" >/dev/null \
  || die "gate-no-right: the verdict does not say the missing right"
[ "$(admin get pods -n shop -l app.kubernetes.io/name=web -o name | sort)" = "$pods_before" ] || die "gate-no-right: the app's pods changed"
admin apply -n rc-load -f - <"$RBAC/in-place-load.yaml"
log "done"
