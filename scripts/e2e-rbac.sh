#!/usr/bin/env bash
# `make e2e-rbac`: rollcheck check on a cluster it does not own, as a ServiceAccount with only the
# rights of examples/rbac (generated from internal/access), on a kind cluster of its own:
#   1. the ServiceAccount and its bindings from examples/rbac, `kubectl auth can-i --list` for it,
#      and a kubeconfig with a token of it (kubectl create token) in a private temporary directory;
#   2. the example check (examples/check) with that kubeconfig: it must pass;
#   3. one required right taken away (create pods): one refusal line, exit 2, no namespace made;
#   4. every other disruption (delete-pod, force-delete, scale-down, drain-node) as the
#      ServiceAccount with drain.yaml bound too: no call forbidden, no row an error; delete-pod,
#      scale-down and drain-node pass (the cluster has two workers: a drain's replacements start
#      on the other one); force-delete is a race whatever the preStop, and only runs;
#   5. the example check again with ROLLCHECK_POD_SECURITY=restricted: the run's namespaces
#      enforce the restricted Pod Security Standard (a pod that does not meet it is refused
#      there), and it must pass; without the optional node-info right, it must warn and go on;
#   6. the token searched for in everything the runs wrote (rows, reports, logs) and in the run's
#      cluster objects (snapshots taken while they ran): it must be found nowhere.
# The cluster (two workers unless ROLLCHECK_WORKERS says more) is deleted at the end (unless this
# script only reused it, or ROLLCHECK_KEEP_CLUSTER is set), and the temporary directory with the
# kubeconfigs always.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e-rbac
export ROLLCHECK_CLUSTER_NAME=${ROLLCHECK_CLUSTER_NAME:-rollcheck-rbac}
# Two workers: step 4 drains one of them, and the replacements of its pods start on the other, as
# on any cluster a drain is meant for. On one node they had nowhere to start until the uncordon,
# and the row failed by no-endpoint whatever the app did.
export ROLLCHECK_WORKERS=${ROLLCHECK_WORKERS:-2}
validate_knobs
[ "$ROLLCHECK_WORKERS" -ge 2 ] || die "ROLLCHECK_WORKERS=$ROLLCHECK_WORKERS: make e2e-rbac drains a node and needs two workers or more"
sa_setup rbac
CHECK_FILE=$REPO_ROOT/examples/check/check.yaml
watcher=""
cleanup() {
  local rc=$?
  if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; fi
  sa_finish "$rc"
}
trap cleanup EXIT
# Everything this script prints is kept with the runs' files, and searched for the token too.
exec > >(tee -a "$OUT/e2e-rbac.log") 2>&1

# The cluster (admin is its own kubectl, inside the node); the images: the load pod's (built and
# loaded by rollcheck), the example app's (into the node's containerd, as a user's registry would
# hold it).
sa_cluster_up

# 1. The ServiceAccount and what it may do.
log "applying examples/rbac: serviceaccount.yaml core.yaml node-info.yaml kube-proxy-metrics.yaml (not drain.yaml: the check drains no node)"
for f in serviceaccount core node-info kube-proxy-metrics; do admin apply -f - <"$RBAC/$f.yaml"; done
admin auth can-i --list --as="$SA" | tee "$OUT/can-i.txt"
admin auth can-i --list --as="$SA" -n kube-system | tee "$OUT/can-i-kube-system.txt"
admin auth can-i --list --as="$SA" -n default | tee "$OUT/can-i-default.txt"
kubeconfig=$work/rollcheck-sa.kubeconfig
sa_kubeconfig "$kubeconfig"

# run_check NAME [ENV=VALUE...]: rollcheck check of the example as the ServiceAccount; its output
# goes to $OUT/NAME.log and its artifacts to $OUT/NAME; prints its exit code.
run_check() {
  local name=$1 rc=0
  shift
  env "$@" "$RC" check -f "$CHECK_FILE" --kubeconfig "$kubeconfig" --artifacts "$OUT/$name" >"$OUT/$name.log" 2>&1 || rc=$?
  echo "$rc"
}

# 2. The example check with the ServiceAccount's rights.
log "rollcheck check -f examples/check/check.yaml --kubeconfig <the ServiceAccount's>"
rc=$(run_check check)
grep -v 'so far$' "$OUT/check.log"
[ "$rc" -eq 0 ] || die "the example check as the ServiceAccount exited $rc, want 0"

# 3. One required right taken away: create pods (the load pods).
log "taking away one required right: create pods (ClusterRole rollcheck-core)"
admin get clusterrole rollcheck-core -o json \
  | jq '(.rules[] | select(.resources == ["pods"]) | .verbs) -= ["create"]' \
  | admin replace -f -
admin auth can-i create pods --as="$SA" -n default || true
before=$(admin get ns -o name | sort)
rc=$(run_check refused)
after=$(admin get ns -o name | sort)
cat "$OUT/refused.log"
log "exit code: $rc"
admin get ns
[ "$rc" -eq 2 ] || die "without create pods the check exited $rc, want 2"
[ "$(wc -l <"$OUT/refused.log")" -eq 1 ] || die "the refusal is not one line"
grep -q 'may not create pods' "$OUT/refused.log" || die "the refusal does not name create pods"
[ "$before" = "$after" ] || die "namespaces changed although the check was refused: before: $before; after: $after"
log "no namespace was created"
admin apply -f - <"$RBAC/core.yaml"

# 4. Every other disruption, as the ServiceAccount with drain.yaml bound too: each right the
# engine uses for them is in the list (a forbidden call would make its row an error, exit 2), and
# the example's 5 s preStop passes delete-pod, scale-down and drain-node (the drain's
# replacements start on the other worker). A forced delete gives the preStop 1 s and removes the
# endpoint with the Pod at once: a race the matrix bounds rather than zeroes (the force-delete
# suite), so its verdict is not judged here, only that it ran.
log "applying examples/rbac/drain.yaml; delete-pod, force-delete, scale-down and drain-node as the ServiceAccount"
admin apply -f - <"$RBAC/drain.yaml"
rc=0
"$RC" check --manifest "$REPO_ROOT/examples/check/web.yaml" --port 8080 --path / --prestop-sleep 5s \
  --disruption delete-pod=1 --disruption force-delete=1 --disruption scale-down=1 --disruption drain-node=1 \
  --kubeconfig "$kubeconfig" --artifacts "$OUT/disruptions" >"$OUT/disruptions.log" 2>&1 || rc=$?
grep -v 'so far$' "$OUT/disruptions.log" | grep -v '^|'
log "exit code: $rc"
if grep -ril forbidden "$OUT/disruptions.log" "$OUT/disruptions"; then die "a call was forbidden"; fi
[ "$rc" -le 1 ] || die "the disruptions as the ServiceAccount exited $rc: a row could not run (a right missing?)"
for kind in delete-pod force-delete scale-down drain-node; do
  f=$(ls "$OUT"/disruptions/rows/*--"$kind"--*.json 2>/dev/null | grep -v '\.attempt' | head -n1)
  [ -n "$f" ] || die "no row file of the $kind row"
  verdict=$(jq -r '.verdict.status + ": " + (.verdict.reason // "")' "$f")
  log "$kind: $verdict"
  case "$kind:${verdict%%:*}" in
    force-delete:pass | force-delete:fail) ;;
    *:pass) ;;
    *) die "the $kind row as the ServiceAccount: $verdict" ;;
  esac
done
drained=$(jq -r '.disruptions[].drain.node // empty' "$OUT"/disruptions/rows/*--drain-node--*.json | sort -u | paste -sd, -)
log "the drain-node row drained node(s): $drained"
[[ "$drained" == *-worker* ]] || die "the drain-node row drained no worker (drained: ${drained:-none})"

# 5. The same check in namespaces that enforce the restricted Pod Security Standard; a watcher
# keeps the run's namespaces (with their enforce label) and objects while they exist.
snapshot() {
  while sleep 2; do
    for ns in $(admin get ns -l rollcheck.io/run -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
      admin get ns "$ns" --no-headers -o custom-columns='NAME:.metadata.name,ENFORCE:.metadata.labels.pod-security\.kubernetes\.io/enforce' >>"$work/namespaces.txt" 2>/dev/null || true
      # Once per namespace: a pod that does not meet restricted (no securityContext at all) is
      # refused there (a server-side dry run: nothing is created).
      if ! grep -q "^$ns " "$work/admission.txt" 2>/dev/null; then
        printf '%s %s\n' "$ns" "$(admin run psa-probe -n "$ns" --image="$ROLLCHECK_LOAD_IMAGE" --restart=Never --dry-run=server 2>&1 | head -n1)" >>"$work/admission.txt"
      fi
      admin get deployments,replicasets,pods,services,configmaps,endpointslices,events -n "$ns" -o yaml >>"$work/objects.yaml" 2>/dev/null || true
    done
  done
}
# This run also goes without an optional right: node-info's (and drain's, which grants get nodes
# too) unbound, it must go on and warn that it will not record the runtime's version.
admin delete clusterrolebinding rollcheck-node-info rollcheck-drain
snapshot &
watcher=$!
log "ROLLCHECK_POD_SECURITY=restricted rollcheck check -f examples/check/check.yaml --kubeconfig <the ServiceAccount's>"
rc=$(run_check restricted ROLLCHECK_POD_SECURITY=restricted)
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
watcher=""
grep -v 'so far$' "$OUT/restricted.log"
sort -u "$work/namespaces.txt" | tee "$OUT/restricted-namespaces.txt"
tee "$OUT/restricted-admission.txt" <"$work/admission.txt"
[ "$rc" -eq 0 ] || die "the example check in restricted namespaces exited $rc, want 0"
grep -q "warning: the container runtime's version of the app's node: not measured: this user may not get nodes" "$OUT/restricted.log" \
  || die "without node-info's right the run did not warn what it will not measure"
grep -q ' restricted$' "$OUT/restricted-namespaces.txt" || die "no namespace of the run was seen enforcing restricted"
grep -q 'violates PodSecurity "restricted' "$OUT/restricted-admission.txt" || die "a pod that does not meet restricted was not refused in the run's namespaces"
cp "$work/objects.yaml" "$OUT/restricted-objects.yaml"

# 6. The token, searched for everywhere the runs wrote and in the objects they made. The same
# search finds it in the kubeconfig: the search itself works.
grep -qF "$token" "$kubeconfig" || die "the search does not find the token where it is"
files=$(find "$OUT" -type f | wc -l)
if grep -rlF "$token" "$OUT"; then
  die "the ServiceAccount's token is in the files above"
fi
# The token's claims (its middle part) alone: a copy cut or re-encoded elsewhere.
if grep -rlF "$(printf '%s' "$token" | cut -d. -f2)" "$OUT"; then die "the token's claims are in the files above"; fi
log "token search: not found in $files files under $OUT (rows, reports, logs, $(grep -c '^kind: List' "$OUT/restricted-objects.yaml") object snapshots)"
log "done"
