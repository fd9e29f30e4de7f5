#!/usr/bin/env bash
# `make e2e-namespaced`: rollcheck check of an app it applies, on a cluster it does not own, as a
# ServiceAccount holding only the Role of examples/rbac/namespaced.yaml in two namespaces a user
# created (rollcheck check --row-namespace), on a kind cluster of its own (ROLLCHECK_CLUSTER_NAME,
# rollcheck-ns unless set; one that exists is reused and kept):
#   1. namespaces team-a and team-b, made by the admin, with a ConfigMap of the user's in team-a;
#      the ServiceAccount with namespaced.yaml bound in each, and nothing cluster-wide (kubectl
#      auth can-i --list shows it: no namespaces, no pods in default);
#   2. a namespace with no Role (team-c): one refusal line naming the right and namespaced.yaml,
#      exit 2, nothing written there;
#   3. the example check (examples/check) in team-a and team-b, two rows at once: it must pass;
#      no namespace was created; what the rows applied and started, and their Leases, are gone
#      from both; the user's ConfigMap is as it was.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e-namespaced
export ROLLCHECK_CLUSTER_NAME=${ROLLCHECK_CLUSTER_NAME:-rollcheck-ns}
validate_knobs
sa_setup namespaced
cleanup() { sa_finish "$?"; }
trap cleanup EXIT
exec > >(tee -a "$OUT/e2e-namespaced.log") 2>&1

sa_cluster_up

# 1. The user's namespaces and the ServiceAccount's Roles in them; nothing cluster-wide.
for ns in team-a team-b team-c; do admin create namespace "$ns"; done
admin create configmap -n team-a settings --from-literal=owner=team-a
admin get configmap -n team-a settings -o jsonpath='{.metadata.uid} {.data}' >"$work/settings.before"
admin apply -f - <"$RBAC/serviceaccount.yaml"
for ns in team-a team-b; do admin apply -n "$ns" -f - <"$RBAC/namespaced.yaml"; done
admin auth can-i --list --as="$SA" -n team-a | tee "$OUT/can-i-team-a.txt"
admin auth can-i --list --as="$SA" -n default | tee "$OUT/can-i-default.txt"
for q in "create namespaces" "delete pods -n default" "list namespaces" "create deployments -n team-c"; do
  # shellcheck disable=SC2086 # the words of q are kubectl's arguments
  if admin auth can-i $q --as="$SA" >/dev/null 2>&1; then die "the ServiceAccount may $q: it should hold only namespaced Roles in team-a and team-b"; fi
  log "the ServiceAccount may not $q"
done
kubeconfig=$work/rollcheck-sa.kubeconfig
sa_kubeconfig "$kubeconfig"
namespaces() { admin get ns -o name | sort; }
before=$(namespaces)

# 2. A namespace without the Role: refused in one line, nothing written.
rc=0
"$RC" check -f "$REPO_ROOT/examples/check/check.yaml" --kubeconfig "$kubeconfig" --row-namespace team-c --artifacts "$OUT/refused" >"$OUT/refused.log" 2>&1 || rc=$?
cat "$OUT/refused.log"
[ "$rc" -eq 2 ] || die "--row-namespace team-c without its Role exited $rc, want 2"
grep -v '^rollcheck check: warning: ' "$OUT/refused.log" >"$work/refusal"
[ "$(wc -l <"$work/refusal")" -eq 1 ] || die "the refusal is not one line"
grep -q 'may not create deployments.apps in namespace team-c' "$work/refusal" || die "the refusal does not name create deployments in team-c"
grep -q 'examples/rbac/namespaced.yaml' "$work/refusal" || die "the refusal does not name namespaced.yaml"
[ -z "$(admin get all,leases -n team-c -o name 2>/dev/null)" ] || die "the refused run left objects in team-c"
log "refused in one line; nothing in team-c"

# 3. The example check, its rows in team-a and team-b (two at once).
log "rollcheck check -f examples/check/check.yaml --kubeconfig <the ServiceAccount's> --row-namespace team-a,team-b"
rc=0
"$RC" check -f "$REPO_ROOT/examples/check/check.yaml" --kubeconfig "$kubeconfig" --row-namespace team-a,team-b \
  --artifacts "$OUT/check" >"$OUT/check.log" 2>&1 || rc=$?
grep -v 'so far$' "$OUT/check.log"
[ "$rc" -eq 0 ] || die "the example check in team-a and team-b exited $rc, want 0"
for ns in team-a team-b; do
  grep -q "in $ns\$" "$OUT/check.log" || die "no row ran in $ns"
done
after=$(namespaces)
[ "$before" = "$after" ] || die "namespaces changed: before: $before; after: $after"
log "no namespace was created"
for ns in team-a team-b; do
  left=$(admin get deployments,replicasets,pods,services,poddisruptionbudgets,leases -n "$ns" -o name 2>/dev/null)
  [ -z "$left" ] || die "left in $ns: $left"
  log "$ns: nothing of the run is left (deployments, replicasets, pods, services, budgets, leases)"
done
admin get configmap -n team-a settings -o jsonpath='{.metadata.uid} {.data}' >"$work/settings.after"
cmp -s "$work/settings.before" "$work/settings.after" || die "the user's ConfigMap team-a/settings changed: $(cat "$work/settings.before") → $(cat "$work/settings.after")"
log "the user's ConfigMap team-a/settings is as it was"
log "done"
