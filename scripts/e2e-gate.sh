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
#   4. Argo Rollouts (built from its module by internal/controllers, offline), its controller
#      running: the Job provider's AnalysisRuns made from the Kargo Stage of
#      examples/gate/kargo-stage.yaml as Kargo's controller makes them (Kargo itself is not served
#      here; the Stage is read, not applied): Successful on shop/web with its preStop, Failed on
#      shop/api as it is (in-flight requests cut at each deletion); the Web provider's against
#      rollcheck serve (examples/gate/serve.yaml) for the sample app shop/api (flagger-app.yaml:
#      100 ms requests, exit on SIGTERM): Failed, the same hash asked again (one check, the app's
#      pods deleted once), Successful with a 5 s exec preStop; an Argo Rollout
#      (argo-rollout.yaml), blue-green, whose prePromotionAnalysis is the gate Job on the preview's
#      pods: a release as it is aborted (Degraded, the active Service on the stable revision), one
#      with a 5 s exec preStop promoted (Healthy); and a canary Rollout (argo-rollout-canary.yaml,
#      no traffic routing) whose step analysis after setWeight 50 is the gate Job on the canary's
#      pods through the canary Service: a release as it is aborted (Degraded, the canary scaled
#      down, the canary Service back on the stable pods), one with the preStop promoted (Healthy);
#      then the blue-green Rollout itself checked in place (rollcheck check --rollout) from this
#      machine as the ServiceAccount: refused in one line without in-place-rollout.yaml's Role;
#      with it, a variant without a preStop (2 s requests) failing by in-flight-cut and one with
#      a 5 s preStop passing, under Argo's restart (spec.restartAt) and pod deletions, the Rollout
#      as it was afterwards;
#   5. Flagger (built the same way) with a Canary of shop/api, the kubernetes provider (blue/green
#      over ClusterIP Services), whose pre-rollout webhook is rollcheck serve (flagger-canary.yaml):
#      a release without a preStop rolls back (Canary Failed), one with a 5 s exec preStop is
#      promoted (Canary Succeeded), and the webhook called again for a checksum already judged
#      gets the same verdict without a check.
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

with_image() { sed "s|rollcheck/load:TAG|$ROLLCHECK_LOAD_IMAGE|g" "$GATE/$1"; }
# set_prestop DEPLOYMENT HANDLER|off: the user's release of shop/DEPLOYMENT with this preStop
# handler (JSON) or none, rolled out.
set_prestop() {
  if [ "$2" = off ]; then
    admin patch -n shop "deployment/$1" --type=json -p='[{"op":"remove","path":"/spec/template/spec/containers/0/lifecycle"}]'
  else
    admin patch -n shop "deployment/$1" --type=json \
      -p="[{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/lifecycle\",\"value\":{\"preStop\":$2}}]"
  fi
  admin rollout status -n shop "deployment/$1" --timeout=3m
}
EXEC5='{"exec":{"command":["/rollcheck","agent","app","sleep","5s"]}}'

# 4. Argo Rollouts' controller, built from its module and installed offline: AnalysisRuns made
# from the AnalysisTemplates of examples/gate, as a Kargo Stage's verification or a Rollout's
# analysis makes them (Kargo itself is not served here), run by Argo's own controller.
step argo-rollouts timeout 1800 go run ./internal/controllers/cmd/controllers install --cluster "$ROLLCHECK_CLUSTER_NAME" argo-rollouts
with_image argo-job-template.yaml | admin apply -f -
admin apply -f - <"$GATE/argo-web-template.yaml"
# await_run NS RUN WANT WHAT: waits until AnalysisRun NS/RUN ended, prints its phase, message and
# wall time since $s, and checks its phase is WANT.
await_run() {
  local ns=$1 run=$2 want=$3 what=$4 phase
  for _ in $(seq 900); do
    phase=$(admin get analysisrun -n "$ns" "$run" -o jsonpath='{.status.phase}')
    case $phase in Successful | Failed | Error | Inconclusive) break ;; esac
    sleep 1
  done
  log "AnalysisRun $run ($what): $phase after $(($(date +%s) - s)) s: $(admin get analysisrun -n "$ns" "$run" -o jsonpath='{.status.metricResults[0].measurements[-1].message}{" "}{.status.message}')"
  [ "$phase" = "$want" ] || die "AnalysisRun $run: $phase, want $want"
}
# analysis_run TEMPLATE WANT NAME=VALUE...: an AnalysisRun of TEMPLATE's metrics with these
# arguments; waits until it ended, checks its phase is WANT, prints its wall time; sets $run.
analysis_run() {
  local template=$1 want=$2 args="[]" a
  shift 2
  for a in "$@"; do args=$(jq -c --arg n "${a%%=*}" --arg v "${a#*=}" '. + [{name: $n, value: $v}]' <<<"$args"); done
  s=$(date +%s)
  run=$(admin get analysistemplate -n rollcheck "$template" -o json | jq --argjson args "$args" '{apiVersion: "argoproj.io/v1alpha1",
    kind: "AnalysisRun", metadata: {generateName: (.metadata.name + "-"), namespace: "rollcheck"},
    spec: {metrics: .spec.metrics, args: ([.spec.args[] | select(.value != null)] + $args)}}' | admin create -f - -o jsonpath='{.metadata.name}')
  await_run rollcheck "$run" "$want" "$template, $*"
}
# job_verdict: the last gate Job's verdict, its container's termination message.
job_verdict() {
  admin get pods -n rollcheck -l app.kubernetes.io/name=rollcheck-gate-job --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{.items[-1:].status.containerStatuses[0].state.terminated.message}'
}
# The Job provider, as a Kargo Stage's verification makes its AnalysisRuns
# (examples/gate/kargo-stage.yaml). Kargo is not served here: it is not built, and its Stage CRD is
# not installed, so the Stage is not applied. kargo_run reads the file and makes the AnalysisRun
# as Kargo v1.11.2's controller does after a promotion (pkg/controller/stages/regular_stages.go
# calling pkg/rollouts' AnalysisRunBuilder: analysis_run_builder.go, analysis_template.go,
# options.go), then Argo's own controller runs it:
# - in the Stage's namespace (its Project's), which also holds the AnalysisTemplates it names
#   (kind AnalysisTemplate, the default; or ClusterAnalysisTemplate, cluster-wide);
# - named STAGE.ULID.FREIGHT, lower case: the Stage's name, a new ULID, the first 7 characters of
#   the Freight collection's ID;
# - labelled with verification.analysisRunMetadata's labels and kargo.akuity.io/stage: STAGE,
#   kargo.akuity.io/freight-collection: ID; annotated with analysisRunMetadata's annotations;
# - its spec the templates' metrics (a name twice is an error), dryRun and measurementRetention,
#   one after another, and their args merged by name (two different values are an error); each of
#   the Stage's args sets the value of the template's argument of its name (one the templates do
#   not have is dropped), and an argument left with neither value nor valueFrom is an error.
# Not reproduced: Kargo evaluates ${{ }} expressions in the args' values (refused here), owns the
# AnalysisRun by the Freight objects, annotates it with the last Promotion, and shortens a Stage
# name over 63 characters for its label (refused here); none of those exist here.
# ulid: a new ULID: the time in milliseconds (10 characters of Crockford's base32), then 16 random
# ones.
ulid() {
  local a=0123456789ABCDEFGHJKMNPQRSTVWXYZ t i u=""
  t=$(date +%s%3N)
  for i in {1..10}; do u=${a:t%32:1}$u; t=$((t / 32)); done
  for i in {1..16}; do u+=${a:RANDOM%32:1}; done
  echo "$u"
}
# kargo_run FREIGHT WANT < STAGE.yaml: the AnalysisRun that Kargo makes for the Stage's verification
# after a promotion of Freight FREIGHT (a stand-in name: no Freight exists here), created; waits
# until it ended and checks its phase is WANT, as await_run.
kargo_run() {
  local freight=$1 want=$2 stage ns name ref refs templates="" fc ar
  # YAML to JSON without a CRD or a server: kubectl's local patch of nothing.
  stage=$(admin patch --local -f - -p '{}' --type=merge -o json)
  [ "$(jq -r '.apiVersion + " " + .kind' <<<"$stage")" = "kargo.akuity.io/v1alpha1 Stage" ] || die "kargo_run: not a Kargo Stage"
  ns=$(jq -r '.metadata.namespace // "default"' <<<"$stage")
  name=$(jq -r .metadata.name <<<"$stage")
  [ "${#name}" -le 63 ] || die "Stage $name: a name over 63 characters (Kargo shortens its label) is not reproduced here"
  if jq -e '[.spec.verification.args[]?.value // "" | select(contains("${{") or contains("${%"))] | length > 0' <<<"$stage" >/dev/null; then
    die "Stage $ns/$name: its verification args hold Kargo expressions, which are not evaluated here"
  fi
  mapfile -t refs < <(jq -c '.spec.verification.analysisTemplates[]?' <<<"$stage")
  [ "${#refs[@]}" -gt 0 ] || die "Stage $ns/$name: no verification.analysisTemplates"
  for ref in "${refs[@]}"; do
    if [ "$(jq -r '.kind // ""' <<<"$ref")" = ClusterAnalysisTemplate ]; then
      templates+=$(admin get clusteranalysistemplate "$(jq -r .name <<<"$ref")" -o json)
    else
      templates+=$(admin get analysistemplate -n "$ns" "$(jq -r .name <<<"$ref")" -o json)
    fi
  done
  # The Freight collection's ID: the SHA-1 of its Freight's names, sorted, joined by commas.
  fc=$(printf '%s' "$freight" | sha1sum | cut -d' ' -f1)
  ar=$(jq -s --argjson stage "$stage" --arg name "$(tr '[:upper:]' '[:lower:]' <<<"$name.$(ulid).${fc:0:7}")" --arg ns "$ns" --arg fc "$fc" '
    def once(what; key): (map(key) | group_by(.) | map(select(length > 1))[0][0]) as $d
      | if $d then error("duplicate " + what + " name: " + $d) else . end;
    map(.spec) as $t | $stage.spec.verification as $v
    | ([$t[].metrics // [] | .[]] | once("metric"; .name)) as $metrics
    | ([$t[].dryRun // [] | .[]] | once("dry-run metric"; .metricName)) as $dryRun
    | ([$t[].measurementRetention // [] | .[]] | once("measurement retention metric"; .metricName)) as $retention
    | (reduce ($t[].args // [] | .[]) as $a ([]; (map(.name) | index($a.name)) as $i
        | if $i == null then . + [$a]
          elif .[$i].value != null and $a.value != null and .[$i].value != $a.value then error("conflicting values for argument " + $a.name)
          elif .[$i].value == null and $a.value != null then .[$i].value = $a.value
          else . end)) as $targs
    | (reduce ($v.args // [] | .[] | select((.value // "") != "")) as $a ($targs; (map(.name) | index($a.name)) as $i
        | if $i == null then . else .[$i].value = $a.value end)) as $args
    | ($args | map(select(.value == null and .valueFrom == null)) | .[0].name) as $unset
    | if $unset then error("unresolved argument " + $unset + ": neither value nor valueFrom") else . end
    | {apiVersion: "argoproj.io/v1alpha1", kind: "AnalysisRun",
       metadata: {name: $name, namespace: $ns,
         labels: (($v.analysisRunMetadata.labels // {}) + {"kargo.akuity.io/stage": $stage.metadata.name, "kargo.akuity.io/freight-collection": $fc}),
         annotations: ($v.analysisRunMetadata.annotations // {})},
       spec: ({metrics: $metrics, dryRun: $dryRun, measurementRetention: $retention, args: $args} | with_entries(select(.value != [])))}
    | .metadata |= with_entries(select(.value != {}))' <<<"$templates") || die "Stage $ns/$name: no AnalysisRun (as Kargo's controller would report)"
  s=$(date +%s)
  run=$(admin create -f - -o jsonpath='{.metadata.name}' <<<"$ar")
  log "Kargo Stage $ns/$name: AnalysisRun $run, labels $(jq -c .metadata.labels <<<"$ar"), args $(jq -c .spec.args <<<"$ar")"
  await_run "$ns" "$run" "$want" "Stage $ns/$name"
}
# shop/web has its preStop (step 2): Successful. shop/api, as it is (no preStop, 100 ms requests,
# an exit at SIGTERM): Failed, through the same Stage for the app api (every word web in it made
# api). api's deletions cut the requests in flight however late the kubelet sends SIGTERM; web
# without a preStop loses requests only while the endpoint outlives the pod, a race that a busy
# node's late SIGTERM (1.7 s after the deletion, once) let it win with 0 of 6,316 failed, which the
# gate rightly passed. The stand-in Freight's name is the SHA-1 of the Deployment's pod template,
# the release verified (Kargo's is a SHA-1 of the Freight's artifacts).
freight_of() { admin get deployment -n shop "$1" -o jsonpath='{.spec.template}' | sha1sum | cut -d' ' -f1; }
kargo_run "$(freight_of web)" Successful <"$GATE/kargo-stage.yaml"
job_verdict | tee "$OUT/argo-job-pass.verdict.json"
echo
with_image flagger-app.yaml | admin apply -f -
admin rollout status -n shop deployment/api --timeout=3m
kargo_run "$(freight_of api)" Failed < <(sed -E '/^ *#/!s/\bweb\b/api/g' "$GATE/kargo-stage.yaml")
job_verdict | tee "$OUT/argo-job-fail.verdict.json"
echo
jq -e '.verdict == "fail" and .byPhase["in-flight-cut"] > 0' "$OUT/argo-job-fail.verdict.json" >/dev/null || die "the failed AnalysisRun's Job did not fail the app by in-flight-cut"

# pod_hash DEPLOYMENT: the pod-template hash of shop/DEPLOYMENT's pods that are not terminating
# (its release's).
pod_hash() {
  admin get pods -n shop -l "app.kubernetes.io/name=$1" -o json \
    | jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.labels["pod-template-hash"]'
}
# The Web provider: rollcheck serve (serve.yaml, the load through the app's own Service api until
# Flagger makes api-canary) for the sample app, shop/api (flagger-app.yaml), which exits at once on
# SIGTERM with 100 ms requests in flight: without a preStop its pods' deletions cut them. Its pods'
# template hash is the key: the same hash asked again (a retried AnalysisRun) gets the same verdict,
# and the app's pods are not deleted again.
with_image serve.yaml | sed -e 's|--service, api-canary|--service, api|' | admin apply -f -
admin rollout status -n rollcheck deployment/rollcheck-gate --timeout=3m
hash=$(pod_hash api)
analysis_run rollcheck-gate-web Failed hash="$hash"
pods=$(admin get pods -n shop -l app.kubernetes.io/name=api -o name | sort)
analysis_run rollcheck-gate-web Failed hash="$hash"
[ "$(admin get pods -n shop -l app.kubernetes.io/name=api -o name | sort)" = "$pods" ] || die "the retried AnalysisRun disrupted the app again"
admin logs -n rollcheck deployment/rollcheck-gate >"$OUT/serve-argo.log" 2>&1
checks=$(grep -c "check hash:$hash of Deployment shop/api: reports in" "$OUT/serve-argo.log")
calls=$(grep -c "argo hash $hash: done" "$OUT/serve-argo.log")
log "hash $hash: $checks check(s) for $calls poll(s)"
[ "$checks" -eq 1 ] && [ "$calls" -eq 2 ] || die "hash $hash: $checks checks for $calls polls, want 1 for 2"
set_prestop api "$EXEC5"
hash=$(pod_hash api)
analysis_run rollcheck-gate-web Successful hash="$hash"
admin logs -n rollcheck deployment/rollcheck-gate >"$OUT/serve-argo.log" 2>&1
grep "check hash:$hash verdict" "$OUT/serve-argo.log" || die "hash $hash: no verdict in serve's log"
set_prestop api off

# An Argo Rollout gated by rollcheck (argo-rollout.yaml): blue-green, its prePromotionAnalysis the
# gate Job on the preview's pods (the revision's ReplicaSet, by its pod-template hash). A release
# as it is: the analysis fails, Argo aborts (Degraded, abort) and the active Service stays on the
# stable revision. A release with a 5 s exec preStop: the analysis passes, Argo promotes (Healthy).
# rollout_state NAME: Rollout shop/NAME's status fields as its controller sets them (blue-green: the
# active and preview Services' revisions; canary: the step, its analysis, the canary Service's
# revision and each ReplicaSet's replicas, wanted/available).
rollout_state() {
  local f='{.metadata.generation}/{.status.observedGeneration} {.status.phase} abort={.status.abort} stable={.status.stableRS} current={.status.currentPodHash}'
  if [ -n "$(admin get rollout -n shop "$1" -o jsonpath='{.spec.strategy.canary}')" ]; then
    admin get rollout -n shop "$1" -o jsonpath="$f step={.status.currentStepIndex} analysis={.status.canary.currentStepAnalysisRunStatus.status}"
    echo " canary-svc=$(admin get service -n shop "$1-canary" -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" \
      "users-svc=$(admin get service -n shop "$1" -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" \
      "$(admin get rs -n shop -l "app.kubernetes.io/name=$1" -o jsonpath='{range .items[*]}{.metadata.labels.rollouts-pod-template-hash}={.spec.replicas}/{.status.availableReplicas} {end}')"
  else
    admin get rollout -n shop "$1" -o jsonpath="$f active={.status.blueGreen.activeSelector} preview={.status.blueGreen.previewSelector}"
  fi
}
# rollout_until NAME WANT LIMIT: waits until Rollout shop/NAME's phase is WANT (after its controller
# saw the newest spec), printing each change of its state with the second it came.
rollout_until() {
  local name=$1 want=$2 limit=$3 s st last=""
  s=$(date +%s)
  while [ $(($(date +%s) - s)) -lt "$limit" ]; do
    st=$(rollout_state "$name")
    [ "$st" = "$last" ] || log "rollout shop/$name after $(($(date +%s) - s)) s: $st"
    last=$st
    # While a canary step's analysis runs, the users' Service (the stableService) selects the stable
    # pods only: the gate's deletions never reach the users.
    if [[ $st == *" analysis=Running "* ]]; then
      local stable_rs=${st#* stable=} users=${st#* users-svc=}
      stable_rs=${stable_rs%% *} users=${users%% *}
      [ "$users" = "$stable_rs" ] || die "rollout shop/$name: the users' Service cweb is on '$users', not the stable revision $stable_rs, while the gate runs: $st"
    fi
    read -r gen phase _ <<<"$st"
    [ "${gen%/*}" = "${gen#*/}" ] && [ "$phase" = "$want" ] && return 0
    sleep 2
  done
  die "rollout shop/$name: not $want within $limit s"
}
# release_until NAME N HANDLER|off|"" WANT: the user's release N of Rollout shop/NAME (its env
# RELEASE N) with the preStop HANDLER (JSON) added, or its lifecycle removed (off), or else as it
# is; waits until its phase is WANT (rollout_until, 900 s at most) and logs how long that took.
release_until() {
  local ops="[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/env/0/value\",\"value\":\"$2\"}" what s
  case $3 in
    "") what="as it is" ;;
    off) what="without its preStop"; ops+=',{"op":"remove","path":"/spec/template/spec/containers/0/lifecycle"}' ;;
    *) what="with the preStop $3"; ops+=",{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/lifecycle\",\"value\":{\"preStop\":$3}}" ;;
  esac
  s=$(date +%s)
  admin patch rollout -n shop "$1" --type=json -p="$ops]"
  rollout_until "$1" "$4" 900
  log "rollout shop/$1, release $2 $what: $4 after $(($(date +%s) - s)) s $(admin get rollout -n shop "$1" -o jsonpath='{.status.message}')"
}
# rollout_gate WANT_PHASE WANT_VERDICT: the last prePromotionAnalysis's AnalysisRun and its Job's
# verdict (the termination message), checked and kept.
rollout_gate() {
  local run phase msg
  run=$(admin get rollout -n shop rweb -o jsonpath='{.status.blueGreen.prePromotionAnalysisRunStatus.name}')
  phase=$(admin get analysisrun -n shop "$run" -o jsonpath='{.status.phase}')
  msg=$(admin get pods -n shop -l app.kubernetes.io/name=rollcheck-gate-rollout --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{.items[-1:].status.containerStatuses[0].state.terminated.message}')
  echo "$msg" | tee "$OUT/rollout-$2.verdict.json"
  log "prePromotionAnalysis $run: $phase; the gate's verdict: $(jq -r '.verdict + " (" + (.failed|tostring) + " of " + (.requests|tostring) + " failed)"' <<<"$msg")"
  [ "$phase" = "$1" ] || die "AnalysisRun $run: $phase, want $1"
  jq -e --arg v "$2" '.verdict == $v' <<<"$msg" >/dev/null || die "the gate's verdict is not $2"
}
with_image argo-rollout.yaml | admin apply -f -
rollout_until rweb Healthy 300
stable=$(admin get rollout -n shop rweb -o jsonpath='{.status.stableRS}')
release_until rweb 2 "" Degraded
rollout_gate Failed fail
[ "$(admin get rollout -n shop rweb -o jsonpath='{.status.abort}')" = true ] || die "the failed analysis did not abort the release"
[ "$(admin get service -n shop rweb -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$stable" ] \
  || die "the active Service left the stable revision $stable"
release_until rweb 3 "$EXEC5" Healthy
rollout_gate Successful pass
promoted=$(admin get rollout -n shop rweb -o jsonpath='{.status.stableRS}')
[ "$promoted" != "$stable" ] && [ "$(admin get service -n shop rweb -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$promoted" ] \
  || die "release 3 was not promoted (stable $promoted, was $stable)"
admin get pods -n shop -l app.kubernetes.io/name=rollcheck-gate-rollout >"$OUT/rollout-gate-pods.txt"
# The same Rollout gated through Argo's Web provider: rollcheck serve --rollout shop/rweb
# (serve.yaml with the Rollout in place of the Deployment) checks the revision each call names by
# its hash, once; the template (argo-web-template.yaml) in the Rollout's namespace. A release as it
# is: aborted; retried (status.abort false, as kubectl argo rollouts retry does): a new AnalysisRun
# of the same hash gets the same verdict without a second check (serve's log: one check for two
# calls; Argo itself scales the aborted preview down and up again), and aborts again. A release
# with the preStop: promoted.
with_image serve.yaml | sed -e 's|--deployment, shop/api|--rollout, shop/rweb|' -e 's|--service, api-canary|--service, rweb-preview|' | admin apply -f -
admin rollout status -n rollcheck deployment/rollcheck-gate --timeout=3m
sed -e 's|^  namespace: rollcheck$|  namespace: shop|' "$GATE/argo-web-template.yaml" | admin apply -f -
admin patch rollout -n shop rweb --type=json -p='[{"op":"replace","path":"/spec/strategy/blueGreen/prePromotionAnalysis","value":
  {"templates":[{"templateName":"rollcheck-gate-web"}],"args":[{"name":"hash","valueFrom":{"podTemplateHashValue":"Latest"}}]}}]'
# web_gate WANT_PHASE: the last prePromotionAnalysis's AnalysisRun, checked; sets $hash to its revision's.
web_gate() {
  local run phase
  run=$(admin get rollout -n shop rweb -o jsonpath='{.status.blueGreen.prePromotionAnalysisRunStatus.name}')
  phase=$(admin get analysisrun -n shop "$run" -o jsonpath='{.status.phase}')
  hash=$(admin get rollout -n shop rweb -o jsonpath='{.status.currentPodHash}')
  log "prePromotionAnalysis $run (Web provider, hash $hash): $phase: $(admin get analysisrun -n shop "$run" -o jsonpath='{.status.metricResults[0].measurements[-1].value}')"
  [ "$phase" = "$1" ] || die "AnalysisRun $run: $phase, want $1"
}
release_until rweb 4 off Degraded
web_gate Failed
first=$(admin get rollout -n shop rweb -o jsonpath='{.status.blueGreen.prePromotionAnalysisRunStatus.name}')
# Retried only once Argo scaled the aborted revision down (abortScaleDownDelaySeconds, 30 s): a
# retry within that window is taken by Argo v1.9.2 for a rollback to a ReplicaSet inside its
# scale-down delay, which skips the analysis and promotes the failed revision (measured here: its
# log says "Skipping analysis: … rollbackToScaleDownDelay: true", then "Rollout completed update
# to revision 4").
for _ in $(seq 120); do
  [ "$(admin get rs -n shop "rweb-$hash" -o jsonpath='{.spec.replicas}')" = 0 ] && break
  sleep 1
done
log "revision $hash scaled down by Argo; retried"
[ "$(admin get rs -n shop "rweb-$hash" -o jsonpath='{.spec.replicas}')" = 0 ] || die "Argo did not scale the aborted revision $hash down"
admin patch rollout -n shop rweb --subresource=status --type=merge -p='{"status":{"abort":false}}'
for _ in $(seq 120); do
  retried=$(admin get rollout -n shop rweb -o jsonpath='{.status.blueGreen.prePromotionAnalysisRunStatus.name}')
  [ -n "$retried" ] && [ "$retried" != "$first" ] && break
  sleep 1
done
[ -n "$retried" ] && [ "$retried" != "$first" ] || die "the retried release made no new AnalysisRun"
rollout_until rweb Degraded 300
web_gate Failed
admin logs -n rollcheck deployment/rollcheck-gate >"$OUT/serve-rollout.log" 2>&1
checks=$(grep -c "check hash:$hash of Rollout shop/rweb revision $hash (ReplicaSet rweb-$hash): reports in" "$OUT/serve-rollout.log")
calls=$(grep -c "argo hash $hash: done" "$OUT/serve-rollout.log")
grep "check hash:$hash verdict" "$OUT/serve-rollout.log" | tail -n1
log "revision $hash: $checks check(s) for $calls call(s), two AnalysisRuns ($first, $retried)"
[ "$checks" -eq 1 ] && [ "$calls" -eq 2 ] || die "revision $hash: $checks checks for $calls calls, want 1 for 2"
release_until rweb 5 "$EXEC5" Healthy
web_gate Successful
admin logs -n rollcheck deployment/rollcheck-gate >"$OUT/serve-rollout.log" 2>&1
grep "check hash:$hash verdict .*\"verdict\":\"pass\"" "$OUT/serve-rollout.log" || die "revision $hash: no pass verdict in serve's log"

# An Argo Rollout with the canary strategy, gated by rollcheck in a step (argo-rollout-canary.yaml,
# no traffic routing): setWeight 50 scales the canary to 2 of the 4 replicas, then the analysis step
# runs the gate Job (rollcheck-gate-rollout of argo-rollout.yaml) on the canary's pods: ReplicaSet
# cweb-HASH, through the canary Service cweb-canary, which Argo points at that revision; the users'
# Service cweb (the stableService) stays on the stable pods while the gate runs (rollout_until
# checks it at each state). A release as it is: the step's analysis fails, Argo aborts (Degraded,
# abort), scales the canary down and the stable revision up again, and points cweb-canary back at
# the stable pods. A release with a 5 s exec preStop: the analysis passes, Argo promotes (Healthy)
# and moves cweb to the promoted revision.
# step_gate WANT_PHASE WANT_VERDICT HASH: the canary step's AnalysisRun of revision HASH (Argo's
# labels rollout-type Step, rollouts-pod-template-hash HASH) and its Job's verdict (the termination
# message), checked and kept.
step_gate() {
  local run phase msg
  run=$(admin get analysisrun -n shop -l "rollout-type=Step,rollouts-pod-template-hash=$3" --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{.items[-1:].metadata.name}')
  phase=$(admin get analysisrun -n shop "$run" -o jsonpath='{.status.phase}')
  msg=$(admin get pods -n shop -l app.kubernetes.io/name=rollcheck-gate-rollout --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{.items[-1:].status.containerStatuses[0].state.terminated.message}')
  echo "$msg" | tee "$OUT/canary-$2.verdict.json"
  log "canary step analysis $run: $phase ($(admin get analysisrun -n shop "$run" -o jsonpath='{.status.message}')); the gate's verdict on $(jq -r '.target + ": " + .verdict + " (" + (.failed|tostring) + " of " + (.requests|tostring) + " failed)"' <<<"$msg")"
  [ "$phase" = "$1" ] || die "AnalysisRun $run: $phase, want $1"
  jq -e --arg v "$2" --arg rs "cweb-$3" '.verdict == $v and (.target | contains($rs))' <<<"$msg" >/dev/null \
    || die "the gate's verdict is not $2 on ReplicaSet cweb-$3"
}
with_image argo-rollout-canary.yaml | admin apply -f -
rollout_until cweb Healthy 300
stable=$(admin get rollout -n shop cweb -o jsonpath='{.status.stableRS}')
release_until cweb 2 "" Degraded
hash=$(admin get rollout -n shop cweb -o jsonpath='{.status.currentPodHash}')
step_gate Failed fail "$hash"
[ "$(admin get rollout -n shop cweb -o jsonpath='{.status.abort}')" = true ] || die "the failed step analysis did not abort the release"
[ "$(admin get rollout -n shop cweb -o jsonpath='{.status.stableRS}')" = "$stable" ] || die "the aborted release moved the stable revision off $stable"
# After the abort Argo scales the canary to 0 (a canary without traffic routing has no
# abortScaleDownDelaySeconds), the stable revision back to 4, and points cweb-canary at it.
for _ in $(seq 120); do
  [ "$(admin get rs -n shop "cweb-$hash" -o jsonpath='{.spec.replicas}')" = 0 ] \
    && [ "$(admin get rs -n shop "cweb-$stable" -o jsonpath='{.status.availableReplicas}')" = 4 ] \
    && [ "$(admin get service -n shop cweb-canary -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$stable" ] && break
  sleep 1
done
log "canary release 2 after the abort: $(rollout_state cweb)"
[ "$(admin get rs -n shop "cweb-$hash" -o jsonpath='{.spec.replicas}')" = 0 ] || die "Argo did not scale the aborted canary cweb-$hash down"
[ "$(admin get service -n shop cweb-canary -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$stable" ] \
  || die "cweb-canary is not back on the stable revision $stable"
[ "$(admin get service -n shop cweb -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$stable" ] \
  || die "the users' Service cweb left the stable revision $stable after the abort"
release_until cweb 3 "$EXEC5" Healthy
hash=$(admin get rollout -n shop cweb -o jsonpath='{.status.currentPodHash}')
step_gate Successful pass "$hash"
[ "$(admin get rollout -n shop cweb -o jsonpath='{.status.stableRS}')" = "$hash" ] && [ "$hash" != "$stable" ] \
  || die "canary release 3 was not promoted (stable $(admin get rollout -n shop cweb -o jsonpath='{.status.stableRS}'), was $stable)"
[ "$(admin get service -n shop cweb -o jsonpath='{.spec.selector.rollouts-pod-template-hash}')" = "$hash" ] \
  || die "the users' Service cweb is not on the promoted revision $hash"
admin get pods -n shop -l app.kubernetes.io/name=rollcheck-gate-rollout >"$OUT/canary-gate-pods.txt"

# The Rollout itself checked in place (rollcheck check --rollout, docs/in-place.md), as a user
# benchmarks a change of its configuration, from this machine as the ServiceAccount: the Roles of
# in-place.yaml and in-place-rollout.yaml in shop, in-place-load.yaml in rc-load. Its analysis is
# taken off first: each variant is a new revision to Argo, which would otherwise run the gate on it.
# Release 5 has a 5 s exec preStop. Variant no-prestop (preStop none, and its requests made 2 s
# long by a patch of the container's command) is a negative control: the app exits at SIGTERM and
# cuts the requests in flight (in-flight-cut), at each eviction of Argo's restart (spec.restartAt)
# and at each pod deletion, and refuses the new connections its endpoint still gets
# (propagation). With the release's 100 ms requests that was a race the endpoint's removal could
# win (a request sent before the removal is done unless SIGTERM comes within 100 ms); a 2 s
# request sent before the removal is still in flight at any SIGTERM within 2 s. A deletion showed
# nothing while delete-pod deleted the ready pod with the lowest name, at times the replacement
# the previous deletion had just made, before it had any traffic (0 failures at such deletions,
# 650 ms after the pod turned ready: the row failed about one run in nine); it now deletes the pod
# ready the longest. The load's timeout is 5 s, above the 2 s requests (its serving wait and
# each request would time out at the default 2 s). So in-flight-cut is named first (at least a quarter of the failures),
# propagation beside it. Variant prestop-5s (the native sleep, the release's 100 ms requests)
# passes both. After each row the Rollout is put back as it was.
admin patch rollout -n shop rweb --type=json -p='[{"op":"remove","path":"/spec/strategy/blueGreen/prePromotionAnalysis"}]'
rollout_until rweb Healthy 300
kubeconfig=$work/rollcheck-sa.kubeconfig
sa_kubeconfig "$kubeconfig"
cat >"$work/rollout.yaml" <<'EOT'
apiVersion: rollcheck.io/v1alpha1
kind: Check
metadata: {name: rollout-in-place}
app: {namespace: shop, rollout: rweb, service: rweb, port: 8080}
load: {rate: 200, timeout: 5s}
disruptions: [{kind: rollout-restart, count: 1}, {kind: delete-pod, count: 3}]
variants:
- name: no-prestop
  preStop: {none: true}
  patch: {spec: {template: {spec: {containers: [{name: rweb, command: [/rollcheck, agent, app, --shutdown, exit, --request-duration, 2s]}]}}}}
  expect: {failuresExpected: {phases: [in-flight-cut, propagation]}}
- name: prestop-5s
  preStop: {sleep: 5s}
  expect: {failures: 0}
EOT
# The Rollout as the user wrote it: its spec and annotations, but for Argo's own revision counter
# (rollout.argoproj.io/revision, the controller's, as deployment.kubernetes.io/revision is a
# Deployment controller's): each variant and each restore is a revision to Argo, so it moves
# (measured: 5 → 13 for four rows), while the spec comes back as it was.
rollout_json() { admin get rollout -n shop rweb -o json | jq -S '{spec: .spec, annotations: (.metadata.annotations | del(.["rollout.argoproj.io/revision"])), generation: .metadata.generation}'; }
# Without in-place-rollout.yaml's Role: refused in one line before any work, the Rollout untouched.
rollout_json >"$OUT/rollout-before.json"
rc=0
"$RC" check --kubeconfig "$kubeconfig" --load-namespace rc-load --artifacts "$OUT/rollout-refused" -f "$work/rollout.yaml" --in-place \
  >"$OUT/rollout-refused.log" 2>&1 || rc=$?
log "check of Rollout shop/rweb without its Role: exit $rc: $(tail -n1 "$OUT/rollout-refused.log")"
[ "$rc" -eq 2 ] && grep -q "rollouts" "$OUT/rollout-refused.log" || die "the check without in-place-rollout.yaml's Role: exit $rc, want 2 naming rollouts"
rollout_json | diff "$OUT/rollout-before.json" - || die "the refused check changed Rollout shop/rweb"
admin apply -n shop -f - <"$RBAC/in-place-rollout.yaml"
s=$(date +%s)
rc=0
"$RC" check --kubeconfig "$kubeconfig" --load-namespace rc-load --artifacts "$OUT/rollout-check" -f "$work/rollout.yaml" --in-place -o json \
  >"$OUT/rollout-check.json" 2>"$OUT/rollout-check.log" || rc=$?
log "check of Rollout shop/rweb in place: exit $rc after $(($(date +%s) - s)) s"
grep -E "restored|Rollout shop/rweb" "$OUT/rollout-check.log" | tail -n 8 || true
jq -r '.rows[] | "\(.config.name) × \(.config.disruption)×\(.config.count): \(.verdict.status): \(.verdict.reason)"' "$OUT/rollout-check.json" 2>/dev/null \
  || tail -n 30 "$OUT/rollout-check.log"
[ "$rc" -eq 0 ] || { tail -n 40 "$OUT/rollout-check.log"; die "the check of Rollout shop/rweb exited $rc, want 0 (no-prestop failing by in-flight-cut and propagation, prestop-5s passing)"; }
rollout_until rweb Healthy 300
rollout_json >"$OUT/rollout-after.json"
# The generation moved (each change and restore is a write); the spec and annotations did not.
diff <(jq 'del(.generation)' "$OUT/rollout-before.json") <(jq 'del(.generation)' "$OUT/rollout-after.json") \
  || die "Rollout shop/rweb is not as it was before the check"
log "Rollout shop/rweb after the check: spec and annotations as before (generation $(jq .generation "$OUT/rollout-before.json") → $(jq .generation "$OUT/rollout-after.json"))"
[ -z "$(admin get rs -n shop -l app.kubernetes.io/name=rweb -o json | jq -r '.items[] | select(.metadata.annotations["rollcheck.io/restore"]) | .metadata.name')" ] \
  || die "a ReplicaSet of Rollout shop/rweb kept rollcheck's record"

# 5. Flagger, built from its module and installed offline (internal/controllers), its Canary's
# pre-rollout webhook rollcheck serve.
step flagger timeout 1800 go run ./internal/controllers/cmd/controllers install --cluster "$ROLLCHECK_CLUSTER_NAME" flagger
with_image serve.yaml | admin apply -f -
admin rollout status -n rollcheck deployment/rollcheck-gate --timeout=3m
admin apply -f - <"$GATE/flagger-canary.yaml"

# canary_until WANT LIMIT [FROM]: waits until Canary shop/api's phase is WANT, once it left FROM
# (the phase it starts in), printing each change of its phase and failedChecks with the second it
# came; a release that ends in the other terminal phase fails the script.
canary_until() {
  local want=$1 limit=$2 from=${3:-} s p phase last="" left=""
  [ -n "$from" ] || left=1
  s=$(date +%s)
  while [ $(($(date +%s) - s)) -lt "$limit" ]; do
    p=$(admin get canary -n shop api -o jsonpath='{.status.phase} {.status.failedChecks}')
    phase=${p% *}
    [ "$p" = "$last" ] || log "canary shop/api after $(($(date +%s) - s)) s: phase $phase, failedChecks ${p#* }"
    last=$p
    [ "$phase" = "$from" ] || left=1
    if [ -n "$left" ]; then
      case $phase in
        "$want") return 0 ;;
        Failed | Succeeded) die "canary shop/api ended $phase, want $want" ;;
      esac
    fi
    sleep 2
  done
  die "canary shop/api: not $want within $limit s"
}
# checks_of CHECKSUM: how many checks serve ran for Flagger's checksum of a release, and how many
# webhook calls with it it answered (serve's log, kept in $OUT/serve.log).
checks_of() {
  echo "$(grep -c "check checksum:$1 of Deployment shop/api: reports in" "$OUT/serve.log") $(grep -c "checksum $1: done" "$OUT/serve.log")"
}
# last_checksum: the checksum of the last webhook call serve answered (Flagger's, of the release:
# a hash of the Canary's status, which no status field holds as such).
last_checksum() {
  admin logs -n rollcheck deployment/rollcheck-gate >"$OUT/serve.log" 2>&1
  grep -o 'flagger shop/api phase [A-Za-z]* checksum [A-Za-z0-9._-]*' "$OUT/serve.log" | awk '{print $NF}' | tail -n1
}
canary_until Initialized 300
admin get deployment -n shop api api-primary

# A release of the app as it is: the gate fails it, Flagger rolls it back.
admin set env -n shop deployment/api RELEASE=2
canary_until Failed 900 Initialized
bad=$(last_checksum)
read -r checks calls <<<"$(checks_of "$bad")"
grep "check checksum:$bad verdict" "$OUT/serve.log" | tail -n1
log "release without a preStop (checksum $bad): rolled back; $checks check(s), $calls webhook call(s) answered"
[ "$checks" -eq 1 ] && [ "$calls" -ge 2 ] || die "checksum $bad: $checks checks for $calls calls, want 1 check for 2 or more calls"
grep -q "check checksum:$bad verdict .*\"verdict\":\"fail\"" "$OUT/serve.log" || die "checksum $bad: no fail verdict"
admin get deployment -n shop api-primary -o jsonpath='{.spec.template.spec.containers[0].env}' | grep -q '"value":"1"' \
  || die "the rolled back release reached api-primary"

# The release with a 5 s exec preStop: the gate passes it, Flagger promotes it.
admin patch -n shop deployment/api --type=json -p="[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/env/0/value\",\"value\":\"3\"},
  {\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/lifecycle\",\"value\":{\"preStop\":$EXEC5}}]"
canary_until Succeeded 900 Failed
good=$(last_checksum)
[ "$good" != "$bad" ] || die "the promoted release has the rolled back one's checksum $bad"
read -r checks calls <<<"$(checks_of "$good")"
grep "check checksum:$good verdict" "$OUT/serve.log" | tail -n1
log "release with a 5 s preStop (checksum $good): promoted; $checks check(s), $calls webhook call(s) answered"
[ "$checks" -eq 1 ] || die "checksum $good: $checks checks, want 1"
admin get deployment -n shop api-primary -o jsonpath='{.spec.template.spec.containers[0].lifecycle}' | grep -q '"sleep","5s"' \
  || die "the promoted release is not on api-primary"

log "done"
