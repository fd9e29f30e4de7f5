#!/usr/bin/env bash
# Tests of the shell entry points that need neither Docker nor a cluster: what bash does with
# Go's node image choice, the capability probe, knobs read through the CLI, time limits and retries,
# and e2e.sh's knob check before any work (with fake docker, go and tools; the knobs' rules are
# the real CLI's). Who deletes the cluster is internal/cluster's TestTeardownPolicy. Part of
# `make test`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=test-scripts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- choose_node_image: Go decides (internal/cluster's TestChooseNodeImage has every case); bash
# builds the offline image only when Go says offline, and stops when Go refuses ------------------
printf '#!/usr/bin/env bash\necho built >>"%s"; echo rollcheck/kind-node:v0-test\n' "$tmp/built" >"$tmp/offline-builder"
printf '#!/usr/bin/env bash\necho built-c2 >>"%s"; echo rollcheck/kind-node-containerd2:v0-test\n' "$tmp/built" >"$tmp/containerd2-builder"
# A fake rollcheck CLI: `cluster node-image` answers FAKE_CHOICE, or fails with one line.
cat >"$tmp/rollcheck" <<'EOT'
#!/usr/bin/env bash
[ "$*" = "cluster node-image" ] || exit 99
[ -n "${FAKE_CHOICE:-}" ] || { echo "rollcheck: ROLLCHECK_NODE_IMAGE=upstream but kindest/node:v1 cannot be pulled: no such host" >&2; exit 1; }
echo "$FAKE_CHOICE"
EOT
chmod +x "$tmp/offline-builder" "$tmp/containerd2-builder" "$tmp/rollcheck"

failures=0
# expect NAME WANT_RC WANT_REF WANT_BUILT WANT_OUTPUT_SUBSTRING ENV... (WANT_BUILT: no, or what the fake
# builder that ran wrote: built, built-c2)
expect() {
  local name=$1 want_rc=$2 want_ref=$3 want_built=$4 want_out=$5 out rc=0 built
  shift 5
  rm -f "$tmp/built"
  out=$(env FAKE_RC="$tmp/rollcheck" BUILDER="$tmp/offline-builder" C2_BUILDER="$tmp/containerd2-builder" "$@" bash -c '
    source "$REPO_ROOT/scripts/lib.sh"; RC=$FAKE_RC; NODE_IMAGE_BUILDER=$BUILDER; NODE_IMAGE_CONTAINERD_BUILDER=$C2_BUILDER
    choose_node_image; echo "REF=$ROLLCHECK_NODE_IMAGE_REF"' 2>&1) || rc=$?
  built=$(cat "$tmp/built" 2>/dev/null || echo no)
  if [ "$rc" -ne "$want_rc" ] || [ "$built" != "$want_built" ] || ! grep -q -- "$want_out" <<<"$out" \
    || { [ -n "$want_ref" ] && ! grep -qx "REF=$want_ref" <<<"$out"; }; then
    echo "FAIL $name: rc=$rc (want $want_rc), built $built (want $want_built), want ref '$want_ref' and output containing '$want_out'; got:"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
expect "Go chose a reference: exported, nothing built" 0 kindest/node:v1 no "REF=" FAKE_CHOICE=kindest/node:v1
expect "Go chose offline: built (cached) and exported" 0 rollcheck/kind-node:v0-test built "node image: rollcheck/kind-node:v0-test (offline)" FAKE_CHOICE=offline
expect "Go chose offline-containerd2: its variant built (cached) and exported, not the default" 0 rollcheck/kind-node-containerd2:v0-test built-c2 \
  "node image: rollcheck/kind-node-containerd2:v0-test (offline, containerd 2)" FAKE_CHOICE=offline-containerd2
expect "Go refused: its exit code and one line, nothing built" 1 "" no "^rollcheck: ROLLCHECK_NODE_IMAGE=upstream but" FAKE_CHOICE=

# The capability probe reads the bounding set: every capability a full set has is present.
cap_out=$(bash -c 'source "$REPO_ROOT/scripts/lib.sh"; host_lacks_cap 0 && echo lacks || echo has')
[ "$cap_out" = has ] && echo "ok   CAP_CHOWN (0) is in the bounding set" || { echo "FAIL capability probe: $cap_out"; failures=$((failures + 1)); }

# The runtime wrapper strips the named capabilities and keeps the rest.
if command -v jq >/dev/null; then
  sed -e 's|@DROP_CAPS@|CAP_SYS_RESOURCE|' -e "s|@REAL_RUNC@|$tmp/realrunc|" "$REPO_ROOT/scripts/runtime/runc-nosysres" >"$tmp/wrapper"
  printf '#!/bin/sh\necho real "$@"\n' >"$tmp/realrunc"; chmod +x "$tmp/wrapper" "$tmp/realrunc"
  mkdir -p "$tmp/bundle"
  echo '{"process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"]}}}' >"$tmp/bundle/config.json"
  out=$("$tmp/wrapper" create --bundle "$tmp/bundle" id1)
  caps=$(jq -c .process.capabilities "$tmp/bundle/config.json")
  if [ "$out" = "real create --bundle $tmp/bundle id1" ] && [ "$caps" = '{"bounding":["CAP_CHOWN"],"effective":[]}' ]; then
    echo "ok   runtime wrapper strips CAP_SYS_RESOURCE and calls the real runc"
  else
    echo "FAIL runtime wrapper: out=$out caps=$caps"; failures=$((failures + 1))
  fi
fi

# ok_if NAME CONDITION-STATUS DETAIL: count one check.
ok_if() {
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}

# The containerd 2.3 node image's wrapper: `config dump` says version 3 (kind v0.30.0 parses 2 and
# 3 only) and keeps the rest; anything else reaches the real containerd unchanged, exit code too.
printf '#!/bin/sh\ncase "$*" in *"config dump"*) printf "version = 4\\nroot = %%s\\nversion = 4\\n" "$2" ;; *) echo "real $*"; exit 3 ;; esac\n' >"$tmp/realcontainerd"
sed "s|@REAL_CONTAINERD@|$tmp/realcontainerd|" "$REPO_ROOT/scripts/runtime/containerd-dump-v3" >"$tmp/cwrapper"
chmod +x "$tmp/realcontainerd" "$tmp/cwrapper"
dump=$("$tmp/cwrapper" --config /c.toml config dump); rc=0; other=$("$tmp/cwrapper" --version) || rc=$?
r=0; { [ "$dump" = $'version = 3\nroot = /c.toml\nversion = 4' ] && [ "$other" = "real --version" ] && [ "$rc" -eq 3 ]; } || r=1
ok_if "containerd wrapper: config dump says version 3, the rest unchanged; other commands pass through" "$r" "dump: $dump; other: $other (exit $rc)"

# --- retry_timeout: a time limit per try, a bounded number of tries, says what it waits for ------
start=$(date +%s); rc=0
out=$(bash -c 'source "$REPO_ROOT/scripts/lib.sh"; retry_timeout 2 1 "a stalled download" -- sleep infinity; echo AFTER' 2>&1) || rc=$?
took=$(($(date +%s) - start))
r=0; { [ "$rc" -ne 0 ] && [ "$took" -lt 15 ] && ! grep -q AFTER <<<"$out" \
  && grep -q "waiting up to 1s for: a stalled download (try 1/2)" <<<"$out" \
  && grep -q "waiting up to 1s for: a stalled download (try 2/2)" <<<"$out" \
  && grep -q "no result within 1s" <<<"$out" \
  && [ "$(grep -c ERROR <<<"$out")" -eq 1 ] && grep -q "ERROR: a stalled download: gave up after 2 tries" <<<"$out"; } || r=1
ok_if "retry_timeout stops a command that hangs, tries again, then dies in one line (${took}s)" "$r" "exit $rc after ${took}s: $out"

printf '#!/usr/bin/env bash\nn=$(cat "%s" 2>/dev/null || echo 0); echo $((n + 1)) >"%s"; [ "$n" -ge 1 ]\n' "$tmp/flaky.n" "$tmp/flaky.n" >"$tmp/flaky"
chmod +x "$tmp/flaky"; rc=0
out=$(bash -c 'source "$REPO_ROOT/scripts/lib.sh"; retry_timeout 3 5 "a flaky build" -- "$1"; echo AFTER' _ "$tmp/flaky" 2>&1) || rc=$?
r=0; { [ "$rc" -eq 0 ] && grep -q AFTER <<<"$out" && grep -q "a flaky build: failed, exit 1 (try 1/3)" <<<"$out" \
  && grep -q "waiting up to 5s for: a flaky build (try 2/3)" <<<"$out" && ! grep -q "try 3/3" <<<"$out" \
  && [ "$(cat "$tmp/flaky.n")" -eq 2 ]; } || r=1
ok_if "retry_timeout retries a failed command and goes on when it succeeds" "$r" "exit $rc: $out"

# A TERM for the script reaches the command, which timeout runs in a process group of its own.
bash -c 'source "$REPO_ROOT/scripts/lib.sh"; trap "exit 143" TERM
  retry_timeout 1 60 "a long build" -- bash -c "echo \$\$ >\"$1\"; exec sleep 60"' _ "$tmp/child.pid" 2>/dev/null &
script_pid=$!
for _ in $(seq 1 50); do [ -s "$tmp/child.pid" ] && break; sleep 0.1; done
kill -TERM "$script_pid" 2>/dev/null || true; rc=0; wait "$script_pid" || rc=$?
sleep 0.2; child_alive=0; kill -0 "$(cat "$tmp/child.pid")" 2>/dev/null && child_alive=1
r=0; { [ "$rc" -eq 143 ] && [ "$child_alive" -eq 0 ]; } || r=1
ok_if "retry_timeout passes a TERM on to the command" "$r" "script exit $rc, command alive: $child_alive"
if [ "$child_alive" -eq 1 ]; then kill "$(cat "$tmp/child.pid")"; fi

# --- e2e.sh with fakes on PATH: docker, go (builds a rollcheck whose `knobs` and `cluster` are the
# real CLI's and whose `e2e` only records; fake ginkgo) ---------------------------------------
F=$tmp/e2e; mkdir -p "$F/bin" "$F/tools"
go -C "$REPO_ROOT" build -o "$F/tools/rollcheck-real" ./cmd/rollcheck
cat >"$F/bin/docker" <<'EOT'
#!/usr/bin/env bash
echo "docker $*" >>"$FAKE_CALLS"
case "$1 $2" in
  "info "* | "image inspect") exit 0 ;;
  *) exit 1 ;;
esac
EOT
cat >"$F/bin/go" <<'EOT'
#!/usr/bin/env bash
echo "go $*" >>"$FAKE_CALLS"
[ "$1" = -C ] && shift 2
if [ "$1" = build ]; then # go build -o OUT PKG: install the fake tool named after PKG
  out=$3 pkg=$4
  case "$pkg" in
    */ginkgo) cp "$FAKE_TOOLS/ginkgo" "$out" ;;
    */rollcheck) cp "$FAKE_TOOLS/rollcheck" "$out" ;;
    *) exit 1 ;;
  esac
fi
EOT
printf '#!/bin/sh\necho "ginkgo $*" >>"$FAKE_CALLS"\n[ "$1" = version ] && echo "Ginkgo Version 2.27.2"\nexit 0\n' >"$F/tools/ginkgo"
cat >"$F/tools/rollcheck" <<EOT
#!/bin/sh
echo "rollcheck \$*" >>"\$FAKE_CALLS"
case "\$1" in knobs | cluster) exec "$F/tools/rollcheck-real" "\$@" ;; esac
# e2e: what it would run with (the knobs a make target sets).
[ "\$1" = e2e ] && echo "e2e with ROLLCHECK_LABELS=\${ROLLCHECK_LABELS:-} ROLLCHECK_SUITES=\${ROLLCHECK_SUITES:-} ROLLCHECK_CLUSTER_NAME=\${ROLLCHECK_CLUSTER_NAME:-}" >>"\$FAKE_CALLS"
# check: --dry-run passes; the run itself exits with FAKE_CHECK_RC (default 0).
case "\$1 \$*" in "check "*--dry-run*) exit 0 ;; "check "*) exit "\${FAKE_CHECK_RC:-0}" ;; esac
EOT
chmod +x "$F"/bin/* "$F"/tools/*

# run_e2e ENV...: scripts/e2e.sh with the fakes (and the make target E2E_TARGET, when set); sets
# rc, out (its output) and calls (what it ran).
run_e2e() {
  rm -rf "$F/cache" "$F/artifacts" "$F/calls"; rc=0
  out=$(env -u ROLLCHECK_NODE_IMAGE -u ROLLCHECK_KEEP_CLUSTER -u ROLLCHECK_WORKERS -u ROLLCHECK_LABELS \
    -u ROLLCHECK_SUITES -u ROLLCHECK_GINKGO_FLAGS -u ROLLCHECK_REPEAT -u ROLLCHECK_PROCS -u ROLLCHECK_LOAD_FROM -u ROLLCHECK_CLUSTER_NAME -u ROLLCHECK_KIND_CONFIG -u ROLLCHECK_KUBE_PROXY_MODE \
    -u ROLLCHECK_NODE_IMAGE_REF PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" FAKE_TOOLS="$F/tools" ROLLCHECK_CACHE="$F/cache" \
    ARTIFACTS="$F/artifacts" ROLLCHECK_NODE_IMAGE=example/node:v1 ROLLCHECK_SUITES=suites "$@" timeout 60 bash "$REPO_ROOT/scripts/e2e.sh" ${E2E_TARGET:+"$E2E_TARGET"} 2>&1) || rc=$?
  calls=$(cat "$F/calls" 2>/dev/null || true)
}
# only_knob_work: the calls hold the CLI's build and its knob check, nothing else.
only_knob_work() {
  [ "$(grep -v -e '^go -C .* build -o .*/rollcheck \./cmd/rollcheck$' -e '^rollcheck knobs$' <<<"$calls")" = "" ]
}

# --- knob NAME: the value by Go's rule (internal/knobs), through the real CLI ---------------------
# knob_out ENV...: sets rc and out of `knob` run with the environment ENV.
knob_out() {
  rc=0; out=$(env -u ROLLCHECK_KEEP_CLUSTER -u K8S_VERSION RC_REAL="$F/tools/rollcheck-real" "$@" bash -c \
    'source "$REPO_ROOT/scripts/lib.sh"; RC=$RC_REAL; knob "$KNOB"; echo AFTER' 2>&1) || rc=$?
}
for v in 1 TRUE On yes; do
  knob_out KNOB=ROLLCHECK_KEEP_CLUSTER ROLLCHECK_KEEP_CLUSTER=$v
  r=0; [ "$rc" -eq 0 ] && [ "$out" = $'true\nAFTER' ] || r=1; ok_if "knob ROLLCHECK_KEEP_CLUSTER=$v is true" "$r" "exit $rc: $out"
done
for v in "" 0 off No; do
  knob_out KNOB=ROLLCHECK_KEEP_CLUSTER ROLLCHECK_KEEP_CLUSTER=$v
  r=0; [ "$rc" -eq 0 ] && [ "$out" = $'false\nAFTER' ] || r=1; ok_if "knob ROLLCHECK_KEEP_CLUSTER='$v' is false" "$r" "exit $rc: $out"
done
for v in maybe " 1" enabled; do
  knob_out KNOB=ROLLCHECK_KEEP_CLUSTER "ROLLCHECK_KEEP_CLUSTER=$v"
  r=0; { [ "$rc" -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "ROLLCHECK_KEEP_CLUSTER=\"$v\": want 1, true" <<<"$out"; } || r=1
  ok_if "knob ROLLCHECK_KEEP_CLUSTER='$v' stops the script in one line (exit 2)" "$r" "exit $rc: $out"
done
default_k8s=$("$F/tools/rollcheck-real" knobs table | awk -F'|' '$2 ~ /`K8S_VERSION`/ {gsub(/[ `]/, "", $3); print $3}')
knob_out KNOB=K8S_VERSION
r=0; { [ "$rc" -eq 0 ] && [[ $default_k8s == v1.* ]] && [ "$out" = "$default_k8s"$'\nAFTER' ]; } || r=1
ok_if "knob K8S_VERSION unset is the table's default ($default_k8s)" "$r" "exit $rc: $out"
knob_out KNOB=ROLLCHECK_NO_SUCH
r=0; { [ "$rc" -eq 2 ] && grep -q "ROLLCHECK_NO_SUCH: no such knob" <<<"$out"; } || r=1
ok_if "knob of an unknown name stops the script (exit 2)" "$r" "exit $rc: $out"

# A bad knob stops make e2e at once: exit 2, one line naming it, no docker, no ginkgo, no cluster.
while IFS='|' read -r knob value; do
  start=$(date +%s)
  run_e2e "$knob=$value"
  took=$(($(date +%s) - start))
  r=0; { [ "$rc" -eq 2 ] && only_knob_work && [ "$took" -lt 10 ] && [ "$(grep -c ERROR <<<"$out")" -eq 1 ] && grep -q "ERROR: $knob" <<<"$out"; } || r=1
  ok_if "e2e.sh refuses $knob='$value' before any work (exit 2, ${took}s)" "$r" "exit $rc after ${took}s; calls: ${calls:-none}; output: $out"
done <<'EOT'
ROLLCHECK_WORKERS|abc
ROLLCHECK_KEEP_CLUSTER|maybe
ROLLCHECK_NODE_IMAGE|bad value
ROLLCHECK_CLUSTER_NAME|Rollcheck
ROLLCHECK_SUITES|suites/no-such-suite
ROLLCHECK_LABELS|(smoke && negative-control
ROLLCHECK_LABELS|smoke; rm -rf /
ROLLCHECK_REPEAT|0
ROLLCHECK_REPEAT|21
ROLLCHECK_REPEAT|two
ROLLCHECK_PROCS|0
ROLLCHECK_PROCS|9
ROLLCHECK_LOAD_FROM|pod
ROLLCHECK_GINKGO_FLAGS|--procs=2 suites/smoke
ROLLCHECK_GINKGO_FLAGS|-v
EOT
run_e2e ROLLCHECK_WORKERS=abc ROLLCHECK_KEEP_CLUSTER=maybe ROLLCHECK_SUITES=nope ROLLCHECK_LABELS='(x' ROLLCHECK_REPEAT=0 ROLLCHECK_GINKGO_FLAGS=x
r=0; { [ "$rc" -eq 2 ] && only_knob_work && [ "$(grep -c ERROR <<<"$out")" -eq 6 ]; } || r=1
ok_if "e2e.sh reports every bad knob at once, one line each" "$r" "exit $rc; calls: ${calls:-none}; output: $out"
run_e2e ROLLCHECK_LABELS='smoke && !negative-control' ROLLCHECK_SUITES="suites $REPO_ROOT/suites" ROLLCHECK_REPEAT=20 \
  ROLLCHECK_GINKGO_FLAGS='--v --flake-attempts=2' ROLLCHECK_WORKERS=2 ROLLCHECK_KEEP_CLUSTER=no
r=0; { [ "$rc" -eq 0 ] && grep -q "^rollcheck e2e --ginkgo $F/cache/bin/ginkgo --artifacts $F/artifacts$" <<<"$calls"; } || r=1
ok_if "e2e.sh accepts good knobs and hands over to rollcheck e2e" "$r" "exit $rc; calls: $calls; output: $out"
# tools.sh downloads every module under a time limit first, then builds offline; no kind binary.
first=$(grep -n -e '^go mod download' -e '^go build' <<<"$calls" | head -1)
r=0; { [[ $first == *"go mod download"* ]] && grep -q "waiting up to 300s for: go mod download" <<<"$out" \
  && grep -q "waiting up to 600s for: go build ginkgo (try 1/3)" <<<"$out" && ! grep -qi "build kind" <<<"$out"; } || r=1
ok_if "tools.sh: go mod download first, builds under time limits, no kind binary" "$r" "calls: $calls; output: $out"
# A make target's knobs come from Go's table (internal/knobs.Targets): its own label filter and
# suites whatever the environment says, its artifacts subdirectory; an unknown target stops at once.
E2E_TARGET=e2e-grpc run_e2e ROLLCHECK_LABELS=smoke
r=0; { [ "$rc" -eq 0 ] && grep -q "^rollcheck e2e --ginkgo $F/cache/bin/ginkgo --artifacts $F/artifacts/grpc$" <<<"$calls" \
  && grep -qx "e2e with ROLLCHECK_LABELS=http2 || grpc ROLLCHECK_SUITES=suites ROLLCHECK_CLUSTER_NAME=" <<<"$calls"; } || r=1
ok_if "e2e.sh e2e-grpc runs with the target's knobs from Go's table" "$r" "exit $rc; calls: $calls; output: $out"
E2E_TARGET=e2e-nope run_e2e
r=0; { [ "$rc" -eq 2 ] && grep -q "e2e-nope: no such target" <<<"$out" && ! grep -q -e '^docker' -e '^rollcheck e2e' <<<"$calls"; } || r=1
ok_if "e2e.sh with an unknown target stops before any work (exit 2)" "$r" "exit $rc; calls: $calls; output: $out"

# --- e2e-all.sh with a fake make: every target in turn, each with its own ARTIFACTS, on after a
# failure, a table of exit codes (the recipe's), times, rows and rows retried; exit 1 when one failed -----------
cat >"$F/make" <<'EOT'
#!/usr/bin/env bash
t=${*: -1}
echo "make $t ARTIFACTS=$ARTIFACTS" >>"$FAKE_CALLS"
case "$t" in
  e2e-proxy) echo "conformance: 13 rows: 11 pass, 1 fail, 1 harness-fault, 0 error, 2 retried"; echo "conformance: 11 passed, 2 failed"; echo "make: *** [Makefile:28: e2e-proxy] Error 1" >&2; exit 2 ;;
  e2e-nftables) echo "••• FAIL! -- 33 Passed | 2 Failed | 0 Pending | 0 Skipped"; echo "FAIL! -- 1 Passed | 1 Failed | 0 Pending | 0 Skipped"
    echo "conformance: 35 passed, 0 failed"; echo "make: *** [Makefile:40: e2e-nftables] Error 1" >&2; exit 2 ;;
  e2e-rbac) echo "rbac: ok" ;;
  e2e-namespaced) echo "namespaced: ok" ;;
  e2e-gate) echo "gate: ok" ;;
  *) echo "conformance: 3 rows: 3 pass, 0 fail, 0 harness-fault, 0 error"; echo "conformance: 3 passed, 0 failed" ;;
esac
EOT
chmod +x "$F/make"
rm -rf "$F/cache" "$F/calls" "$F/all"; rc=0
out=$(env -u ROLLCHECK_KEEP_CLUSTER PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" FAKE_TOOLS="$F/tools" ROLLCHECK_CACHE="$F/cache" \
  ARTIFACTS="$F/all" MAKE="$F/make" timeout 60 bash "$REPO_ROOT/scripts/e2e-all.sh" 2>&1) || rc=$?
made=$(grep '^make ' "$F/calls" 2>/dev/null || true)
want_made=""
for t in e2e e2e-slow e2e-proxy e2e-grpc e2e-multinode e2e-nftables e2e-stopsignal e2e-rbac e2e-namespaced e2e-gate; do want_made+="make $t ARTIFACTS=$F/all/$t"$'\n'; done
r=0; { [ "$rc" -eq 1 ] && [ "$made" = "${want_made%$'\n'}" ] \
  && grep -Eq "^e2e-proxy +1 +[0-9]+s +11 +2 +2 +-  $F/all/e2e-proxy$" <<<"$out" \
  && grep -Eq "^e2e-nftables +1 +[0-9]+s +35 +0 +- +3  $F/all/e2e-nftables$" <<<"$out" \
  && grep -Eq "^e2e-rbac +0 +[0-9]+s +- +- +- +-  $F/all/e2e-rbac$" <<<"$out" \
  && [ "$(grep -Ec '^e2e[a-z-]* +0 +[0-9]+s +3 +0 +0 ' <<<"$out")" -eq 5 ] && grep -q "^failed: e2e-proxy e2e-nftables$" <<<"$out" \
  && [ "$(tail -n 12 <<<"$out")" = "$(cat "$F/all/e2e-all.txt")" ] && grep -q "Error 1" "$F/all/e2e-proxy/make.log"; } || r=1
ok_if "e2e-all.sh runs every target in turn, goes on after a failure, prints the table, exits 1" "$r" "exit $rc; calls: $made; output: $out"

# scripts/check.sh (what CI calls: make turns every failure into its own exit 2) passes rollcheck
# check's exit code through: 0 every row passed, 1 a threshold broken, 2 bad input or no verdict.
for want in 0 1 2; do
  rm -rf "$F/cache" "$F/calls"; rc=0
  out=$(env -u ROLLCHECK_KEEP_CLUSTER PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" FAKE_TOOLS="$F/tools" ROLLCHECK_CACHE="$F/cache" \
    ARTIFACTS="$F/artifacts" ROLLCHECK_NODE_IMAGE=example/node:v1 SPEC="$REPO_ROOT/examples/check/check.yaml" FAKE_CHECK_RC=$want \
    timeout 60 bash "$REPO_ROOT/scripts/check.sh" 2>&1) || rc=$?
  r=0; { [ "$rc" -eq "$want" ] && grep -q "^rollcheck check -f .*check.yaml --artifacts" "$F/calls"; } || r=1
  ok_if "check.sh exits with rollcheck check's code $want" "$r" "exit $rc; calls: $(cat "$F/calls" 2>/dev/null); output: $out"
done

# cluster.sh checks the knobs first too.
rc=0; out=$(env PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" FAKE_TOOLS="$F/tools" ROLLCHECK_CACHE="$F/cache" ROLLCHECK_WORKERS=abc \
  bash "$REPO_ROOT/scripts/cluster.sh" up 2>&1) || rc=$?
rm -f "$F/calls"
r=0; { [ "$rc" -eq 2 ] && grep -q "ERROR: ROLLCHECK_WORKERS=\"abc\"" <<<"$out"; } || r=1
ok_if "cluster.sh refuses a bad knob (exit 2)" "$r" "exit $rc: $out"

# faults.sh: a fault name FAULTS does not know stops it before any work.
rc=0; out=$(env PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" FAKE_TOOLS="$F/tools" ROLLCHECK_CACHE="$F/cache" ARTIFACTS="$F/artifacts" \
  FAULTS="freeze-load freez-load" timeout 60 bash "$REPO_ROOT/scripts/faults.sh" 2>&1) || rc=$?
calls=$(cat "$F/calls" 2>/dev/null || true); rm -f "$F/calls"
r=0; { [ "$rc" -ne 0 ] && grep -q "FAULTS: no fault named 'freez-load'" <<<"$out" && ! grep -q '^docker' <<<"$calls"; } || r=1
ok_if "faults.sh refuses a fault it does not know before any work" "$r" "exit $rc; calls: ${calls:-none}; output: $out"

# go test's default 10-minute timeout would panic in the middle of the matrix and skip its
# cleanups (leaking the cluster): the suite refuses a short -timeout before any cluster work.
real_go=$(command -v go)
rc=0; out=$(cd "$REPO_ROOT" && env PATH="$F/bin:$PATH" FAKE_CALLS="$F/calls" "$real_go" test -tags e2e -count=1 -timeout 2m ./suites/ 2>&1) || rc=$?
calls=$(cat "$F/calls" 2>/dev/null || true); rm -f "$F/calls"
r=0; { [ "$rc" -ne 0 ] && grep -q "shorter than the matrix needs" <<<"$out" && [ -z "$calls" ]; } || r=1
ok_if "go test -tags e2e ./suites with a short -timeout fails at once, before docker or kind" "$r" "exit $rc; calls: ${calls:-none}; output: $out"

# --- release.sh with a fake go: every platform built static, stamped and checksummed -------------
R=$tmp/release; mkdir -p "$R/bin"
cat >"$R/bin/go" <<'EOT'
#!/usr/bin/env bash
echo "go $* | GOOS=${GOOS:-} GOARCH=${GOARCH:-} CGO_ENABLED=${CGO_ENABLED:-} GOPROXY=${GOPROXY:-}" >>"$FAKE_CALLS"
case "$1" in
  mod) exit 0 ;;
  env) for v in "${@:2}"; do case "$v" in GOHOSTOS) echo linux ;; GOHOSTARCH) echo amd64 ;; esac; done ;;
  build) # a "binary" that says the version its -ldflags stamp (FAKE_SAYS: another)
    out="" ver="" prev=""
    for a in "$@"; do [ "$prev" = -o ] && out=$a; [[ $a == *engine.version=* ]] && ver=${a##*engine.version=}; prev=$a; done
    printf '#!/bin/sh\n# %s/%s\n[ "$1" = --version ] && echo "rollcheck %s" && exit 0\n[ "$1 $2 $3" = "cluster load-image --archive" ] && echo "image of $ROLLCHECK_LINUX_EXECUTABLE $6" >"$4" && echo rollcheck/load:0123456789ab && exit 0\nexit 1\n' \
      "$GOOS" "$GOARCH" "${FAKE_SAYS:-$ver}" >"$out"
    chmod +x "$out" ;;
  *) exit 1 ;;
esac
EOT
chmod +x "$R/bin/go"
# run_release ENV...: scripts/release.sh with the fake go; sets rc, out and calls.
run_release() {
  rm -f "$R/calls"; rc=0
  out=$(env -u VERSION -u ROLLCHECK_VERSION PATH="$R/bin:$PATH" FAKE_CALLS="$R/calls" ARTIFACTS="$R/artifacts" "$@" \
    timeout 60 bash "$REPO_ROOT/scripts/release.sh" 2>&1) || rc=$?
  calls=$(cat "$R/calls" 2>/dev/null || true)
}
mkdir -p "$R/artifacts/release" && touch "$R/artifacts/release/rollcheck-v0.0.1-linux-amd64"
run_release VERSION=v9.9.9-rc.1
r=0
{ [ "$rc" -eq 0 ] && [ "$(cd "$R/artifacts/release" && ls | tr '\n' ' ')" = "SHA256SUMS rollcheck-image-v9.9.9-rc.1-linux-amd64.tar rollcheck-image-v9.9.9-rc.1-linux-arm64.tar rollcheck-v9.9.9-rc.1-darwin-amd64 rollcheck-v9.9.9-rc.1-darwin-arm64 rollcheck-v9.9.9-rc.1-linux-amd64 rollcheck-v9.9.9-rc.1-linux-arm64 " ] \
  && grep -qx "image of $R/artifacts/release/rollcheck-v9.9.9-rc.1-linux-arm64 arm64" "$R/artifacts/release/rollcheck-image-v9.9.9-rc.1-linux-arm64.tar" \
  && (cd "$R/artifacts/release" && sha256sum --quiet -c SHA256SUMS) && [ "$(grep -c ' bytes  sha256 [0-9a-f]\{64\}  rollcheck-v9.9.9-rc.1-[a-z]*-[a-z0-9]*$' <<<"$out")" -eq 4 ] \
  && [ "$(head -n 1 <<<"$calls" | cut -d' ' -f1-3)" = "go mod download" ] \
  && grep -q "rollcheck-v9.9.9-rc.1-linux-amd64 --version: rollcheck v9.9.9-rc.1" <<<"$out" \
  && grep -q "waiting up to 1200s for: go build rollcheck-v9.9.9-rc.1-darwin-arm64 (try 1/2)" <<<"$out"; } || r=1
for p in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  grep -qxF "go build -trimpath -buildvcs=true -ldflags -s -w -X github.com/rollcheck/rollcheck/engine.version=v9.9.9-rc.1 -o $R/artifacts/release/rollcheck-v9.9.9-rc.1-${p/\//-} ./cmd/rollcheck | GOOS=${p%/*} GOARCH=${p#*/} CGO_ENABLED=0 GOPROXY=off" <<<"$calls" || r=1
done
ok_if "release.sh builds 4 static stamped binaries offline, each under a time limit, and the 2 Linux images, with SHA256SUMS, no stale file" "$r" "exit $rc; calls: $calls; output: $out"
run_release
r=0; v=$(git -C "$REPO_ROOT" describe --tags --always --dirty)
{ [ "$rc" -eq 0 ] && [ -x "$R/artifacts/release/rollcheck-$v-darwin-arm64" ] && grep -q "^go install: " <<<"$out"; } || r=1
ok_if "release.sh names the version git describe says ($v) when VERSION is unset" "$r" "exit $rc; output: $out"
run_release "VERSION=1.0 beta"
r=0; { [ "$rc" -eq 2 ] && grep -q 'ERROR: VERSION="1.0 beta"' <<<"$out" && [ -z "$calls" ]; } || r=1
ok_if "release.sh refuses a VERSION that is no single word before any build (exit 2)" "$r" "exit $rc; calls: ${calls:-none}; output: $out"
run_release VERSION=v1.0.0 FAKE_SAYS=dev
r=0; { [ "$rc" -eq 1 ] && grep -q 'says "rollcheck dev", want "rollcheck v1.0.0"' <<<"$out" && [ ! -e "$R/artifacts/release/SHA256SUMS" ]; } || r=1
ok_if "release.sh fails when the binary does not say the version it was stamped with" "$r" "exit $rc; output: $out"

# --- junit-digest.sh: the failed specs of every Ginkgo report under a folder, decoded; nothing when
# none failed ---------------------------------------------------------------------------------
J=$tmp/junit && mkdir -p "$J/families"
cat >"$J/families/junit.xml" <<'EOT'
<testsuites><testsuite name="rollcheck conformance">
  <testcase name="[It] ok-row [conformance]" classname="rollcheck conformance" status="passed" time="1"></testcase>
  <testcase name="[It] past-grace: grace=4s [delete-pod]" classname="rollcheck conformance" status="failed" time="2">
      <failure message="pod a: killed, SIGTERM 4.8s&#xA;want SIGKILL at the grace period&#39;s end &lt;6s&gt;" type="failed">[FAILED] ...</failure>
  </testcase>
</testsuite></testsuites>
EOT
out=$(bash "$REPO_ROOT/scripts/junit-digest.sh" "$J")
r=0; { [ "$(wc -l <<<"$out")" -eq 2 ] && grep -qxF "FAILED (families/junit.xml) [It] past-grace: grace=4s [delete-pod]" <<<"$out" \
  && grep -qxF "    pod a: killed, SIGTERM 4.8s | want SIGKILL at the grace period's end <6s>" <<<"$out"; } || r=1
ok_if "junit-digest.sh prints each failed spec and its decoded message, and no passed one" "$r" "output: $out"
sed -i 's/status="failed"/status="passed"/; /<failure/d' "$J/families/junit.xml"
out=$(bash "$REPO_ROOT/scripts/junit-digest.sh" "$J")
ok_if "junit-digest.sh prints nothing when no spec failed" "$([ -z "$out" ] && echo 0 || echo 1)" "output: $out"
mkdir -p "$J/ci-logs" && printf 'ok  pkg\n--- FAIL: TestRollout (1.20s)\n    rollout_test.go:52: missing go.sum entry\nFAIL\n' >"$J/ci-logs/make-e2e.log"
out=$(bash "$REPO_ROOT/scripts/junit-digest.sh" "$J")
r=0; { grep -qxF "FAILED (ci-logs/make-e2e.log) 2:--- FAIL: TestRollout (1.20s)" <<<"$out" \
  && grep -qxF "FAILED (ci-logs/make-e2e.log) 3-    rollout_test.go:52: missing go.sum entry" <<<"$out"; } || r=1
ok_if "junit-digest.sh prints a failed go test from the step logs, which no JUnit report holds" "$r" "output: $out"

[ "$failures" -eq 0 ] || die "$failures script test(s) failed"
