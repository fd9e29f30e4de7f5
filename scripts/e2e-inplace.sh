#!/usr/bin/env bash
# The check of an app where it already runs (docs/in-place.md), on a kind cluster of its own
# (ROLLCHECK_CLUSTER_NAME, rollcheck-inplace unless set; one that exists is reused and kept),
# as a ServiceAccount with only the namespaced Roles of examples/rbac/in-place*.yaml:
#   1. the example app (examples/check/web.yaml) applied with kubectl into namespace shop, as a
#      user deploys it; the ServiceAccount with in-place.yaml and in-place-budget.yaml bound in
#      shop and in-place-load.yaml in rc-load (no ClusterRole: kubectl auth can-i --list shows it);
#   2. the as-is variant in place (no --in-place): it runs, and the Deployment is as it was;
#   3. a variant that changes the Deployment without --in-place: one refusal line, exit 2, the
#      Deployment untouched (its spec and metadata);
#   4. the same with --in-place: it runs, and the Deployment is as it was;
#   5. Ctrl-C (SIGINT) while the variant's change is on the Deployment: exit 130, restored;
#   6. a second run started while the first is in its variant row (the change on): refused in one
#      line (exit 2) naming the run that holds the Deployment, which it leaves untouched (the first
#      run stopped meanwhile, so that nothing else writes it); then
#      kill -9 the first: the record and its Lease stay, and a run at once is refused too; once
#      the Lease expired (15 s) a third run (as-is) restores the Deployment first, says so in one
#      line, and leaves it as it was.
# "As it was" is `kubectl get deploy -o json` with status, metadata.generation, resourceVersion,
# managedFields and the deployment.kubernetes.io/revision annotation left out (docs/in-place.md
# says why those differ). Run it by hand: bash scripts/e2e-inplace.sh (not part of make e2e-all).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e-inplace
export ROLLCHECK_CLUSTER_NAME=${ROLLCHECK_CLUSTER_NAME:-rollcheck-inplace}
validate_knobs
sa_setup inplace
pid=
cleanup() {
  local rc=$?
  # A run of this script's still going (stopped, too) ends before its cluster does.
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -CONT "$pid" 2>/dev/null || true
    kill -9 "$pid" 2>/dev/null || true
  fi
  sa_finish "$rc"
}
trap cleanup EXIT
exec > >(tee -a "$OUT/e2e-inplace.log") 2>&1

# The cluster (admin is its own kubectl, inside the node); the images: the load pod's (built and
# loaded by rollcheck), the example app's (into the node's containerd, as a user's registry would
# hold it).
sa_cluster_up

# 1. The app, as a user deploys it; the ServiceAccount with the namespaced Roles only.
sa_shop
admin apply -n shop -f - <"$RBAC/in-place-budget.yaml"
admin auth can-i --list --as="$SA" -n shop | tee "$OUT/can-i-shop.txt"
admin auth can-i --list --as="$SA" -n rc-load | tee "$OUT/can-i-rc-load.txt"
admin auth can-i --list --as="$SA" -n default | tee "$OUT/can-i-default.txt"
kubeconfig=$work/rollcheck-sa.kubeconfig
sa_kubeconfig "$kubeconfig"

# The check files (not under examples/: the workflow's pinned rollcheck must take every check
# file there, and it predates app.namespace).
cat >"$work/as-is.yaml" <<'EOF'
apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: shop}
app: {namespace: shop, deployment: web, port: 8080, path: /}
load: {rate: 100, timeout: 2s}
disruptions: [{kind: rollout-restart, count: 2}]
variants:
- name: as-is
  expect: {maxFailureRatio: 0.99}
EOF
cp "$work/as-is.yaml" "$work/prestop.yaml"
cat >>"$work/prestop.yaml" <<'EOF'
- name: prestop-5s
  preStop: {sleep: 5s}
  terminationGracePeriodSeconds: 30
  pdb: {maxUnavailable: 1}
  expect: {failures: 0}
EOF
sed -i 's/count: 2/count: 3/' "$work/prestop.yaml"
# The variant alone, for the runs that are interrupted in it (steps 5 and 6): no as-is row first.
sed '/^- name: as-is$/,/^  expect:/d' "$work/prestop.yaml" >"$work/prestop-only.yaml"
grep -q 'name: as-is' "$work/prestop-only.yaml" && die "prestop-only.yaml still has the as-is variant"

# state: the Deployment without what a rollout changes by itself.
state() {
  admin get deployment web -n shop -o json | jq -S 'del(.status, .metadata.generation, .metadata.resourceVersion, .metadata.managedFields,
    .metadata.annotations["deployment.kubernetes.io/revision"])'
}
same_as_before() { # same_as_before WHEN
  state >"$OUT/after-$1.json"
  diff -u "$OUT/before.json" "$OUT/after-$1.json" || die "$1: the Deployment is not as it was"
  admin get pdb -n shop -o name | grep -q . && die "$1: a PodDisruptionBudget is left in shop"
  log "$1: the Deployment is as it was; no budget left"
}
rc_check() { # rc_check NAME ARGS...: rollcheck check as the ServiceAccount; prints the exit code
  local name=$1 rc=0
  shift
  "$RC" check --kubeconfig "$kubeconfig" --load-namespace rc-load --artifacts "$OUT/$name" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  echo "$rc"
}
state >"$OUT/before.json"

# 2. as-is, no --in-place.
rc=$(rc_check as-is -f "$work/as-is.yaml")
grep -v 'so far$' "$OUT/as-is.log"
[ "$rc" -le 1 ] || die "as-is in place exited $rc"
same_as_before as-is

# unwritten_by WHEN: the Deployment's spec and metadata are as state-before-WHEN.json holds them.
# Not its resourceVersion: the Deployment controller's status updates change that too, while a
# rollout (the previous step's, or a live run's) is still going.
unwritten_by() {
  state >"$OUT/state-after-$1.json"
  diff -u "$OUT/state-before-$1.json" "$OUT/state-after-$1.json" || die "the refused run ($1) wrote the Deployment"
}

# 3. A variant that changes the Deployment, without --in-place.
state >"$OUT/state-before-refused.json"
rc=$(rc_check refused -f "$work/prestop.yaml")
cat "$OUT/refused.log"
[ "$rc" -eq 2 ] || die "without --in-place the check exited $rc, want 2"
grep -q 'would change Deployment shop/web where it runs: add --in-place' "$OUT/refused.log" || die "no refusal line"
unwritten_by refused

# 4. With --in-place.
rc=$(rc_check in-place -f "$work/prestop.yaml" --in-place)
grep -v 'so far$' "$OUT/in-place.log"
[ "$rc" -le 1 ] || die "--in-place exited $rc"
same_as_before in-place

# changed_on waits until the variant's change is on the Deployment (a preStop sleep and the record).
changed_on() {
  for _ in $(seq 300); do
    if admin get deployment web -n shop -o json | jq -e '(.metadata.annotations["rollcheck.io/restore"] != null) and
        (.spec.template.spec.containers[0].lifecycle.preStop.sleep.seconds == 5)' >/dev/null; then return 0; fi
    sleep 1
  done
  die "the variant's change never showed on the Deployment"
}
# start_prestop NAME: the prestop-5s variant alone, in the background; sets $pid.
start_prestop() {
  "$RC" check --kubeconfig "$kubeconfig" --load-namespace rc-load --artifacts "$OUT/$1" -f "$work/prestop-only.yaml" --in-place \
    >"$OUT/$1.log" 2>&1 &
  pid=$!
}

# 5. Ctrl-C while the change is on.
start_prestop ctrl-c
changed_on
sleep 5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
grep -v 'so far$' "$OUT/ctrl-c.log"
[ "$rc" -eq 130 ] || die "after Ctrl-C the check exited $rc, want 130"
same_as_before ctrl-c

# 6. A second run while the first is in its variant row (the change on): refused in one line
# before it changes anything, naming the run that holds the Deployment; then kill -9 the first.
start_prestop killed
changed_on
# The first run is stopped (SIGSTOP) while the second one asks, so that whatever changes the
# Deployment meanwhile is the second run's: the first one restarts it three times in its row.
# Its Lease, renewed every few seconds, stays live for the seconds a refusal takes (CI: renewed
# 4 s before, 11 s left). A second for a write of the first run's already sent to land.
kill -STOP "$pid"
sleep 1
state >"$OUT/state-before-held.json"
rc=$(rc_check held -f "$work/as-is.yaml")
unwritten_by held
kill -CONT "$pid"
cat "$OUT/held.log"
kill -0 "$pid" 2>/dev/null || die "the first run ended before the second was refused: the refusal was not shown against a live run"
[ "$rc" -eq 2 ] || die "a second run while the first is in its variant row exited $rc, want 2"
grep -q 'deployment shop/web is held by rollcheck run .* (renewed .* ago, lease expires in .*): wait for it or let its lease expire' "$OUT/held.log" \
  || die "no line naming the run that holds the Deployment"
kill -9 "$pid"
wait "$pid" || true
admin get deployment web -n shop -o jsonpath='{.metadata.annotations.rollcheck\.io/restore}' | grep -q '"run"' \
  || die "after kill -9 the record is not on the Deployment"
# The killed run's Lease is still live: a run now is refused too.
rc=$(rc_check held-killed -f "$work/as-is.yaml")
cat "$OUT/held-killed.log"
[ "$rc" -eq 2 ] || die "a run while the killed run's Lease is live exited $rc, want 2"
sleep 16 # runlease.Duration and a second: the killed run's Lease has expired
rc=$(rc_check second -f "$work/as-is.yaml")
grep -v 'so far$' "$OUT/second.log"
[ "$rc" -le 1 ] || die "the run after kill -9 exited $rc"
grep -q 'Deployment shop/web restored: run .* left it changed and did not restore it' "$OUT/second.log" \
  || die "the second run did not say it restored what the killed one left"
same_as_before second
log "done"
