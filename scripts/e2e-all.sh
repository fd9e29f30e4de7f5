#!/usr/bin/env bash
# `make e2e-all`: every row of every e2e target, one target after another, each as its own make
# target on the cluster it needs (created or reused and released by the target, as when it runs
# alone): make e2e, e2e-slow, e2e-proxy, e2e-grpc, e2e-multinode, e2e-nftables, e2e-stopsignal,
# e2e-rbac, e2e-namespaced, e2e-gate.
#   - ARTIFACTS=$ARTIFACTS/TARGET for each, emptied first (a target with a subdirectory of its own
#     adds it there: _artifacts/e2e-grpc/grpc), its output kept in $ARTIFACTS/TARGET/make.log;
#   - a failing target does not stop the next one; an interrupt does (the running target cleans
#     up first);
#   - at the end a table, also in $ARTIFACTS/e2e-all.txt: each target's exit code (its recipe's,
#     as make reports it), wall time, rows passed and failed (the closing line
#     `conformance: N passed, M failed` rollcheck e2e prints with its report; e2e-rbac, e2e-namespaced and e2e-gate have none),
#     and the Ginkgo specs that failed in every suite it ran, the matrix's and the examples' (a
#     target whose rows all passed fails when an example's spec did).
# Exit 0 when every target passed, 1 when any failed, 130 (143) when interrupted by SIGINT (SIGTERM).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=e2e-all
cd "$REPO_ROOT"
validate_knobs

TARGETS=(e2e e2e-slow e2e-proxy e2e-grpc e2e-multinode e2e-nftables e2e-stopsignal e2e-rbac e2e-namespaced e2e-gate)
MAKE=${MAKE:-make}
BASE=$ARTIFACTS
mkdir -p "$BASE"

# Ctrl-C at the terminal reaches the running target too (one process group): it cleans up, then
# no other starts. A SIGTERM sent to this script alone stops it once the running target ended.
interrupted=""
trap 'interrupted=130' INT
trap 'interrupted=143' TERM

# elapsed SECONDS: 1h02m03s, 4m05s or 6s.
elapsed() {
  local s=$1
  if [ "$s" -ge 3600 ]; then printf '%dh%02dm%02ds' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
  elif [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60))
  else printf '%ds' "$s"; fi
}

results=()
failed=()
for t in "${TARGETS[@]}"; do
  [ -z "$interrupted" ] || break
  dir=$BASE/$t
  rm -rf "$dir"
  mkdir -p "$dir"
  log "make $t: start (artifacts in $dir)"
  start=$(date +%s)
  # tee ignores the signals, so that it keeps the log and the terminal going while the target
  # cleans up (a Go program writing to a closed pipe would die of SIGPIPE mid-cleanup).
  set +e
  ARTIFACTS=$dir "$MAKE" --no-print-directory -C "$REPO_ROOT" "$t" 2>&1 | (trap '' INT TERM; exec tee "$dir/make.log")
  rc=${PIPESTATUS[0]}
  set -e
  secs=$(($(date +%s) - start))
  # make exits 2 for any failed recipe and names the recipe's code: "make: *** [Makefile:N: T] Error 1".
  code=$rc
  if [ "$rc" -ne 0 ]; then
    code=$(sed -n 's/.*\*\*\* \[.*\] Error \([0-9][0-9]*\)$/\1/p' "$dir/make.log" | tail -n 1)
    code=${code:-$rc}
  fi
  rows=$(sed -n 's/^conformance: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$dir/make.log" | tail -n 1)
  rows=${rows:-- -}
  # "conformance: N rows: P pass, ..., T retried" (rollcheck's count line): the rows that needed a
  # second attempt after a harness fault, passed or not; 0 when the line has none, - without one.
  retried=$(sed -n 's/^conformance: [0-9][0-9]* rows.*: .*error\(, \([0-9][0-9]*\) retried\)\{0,1\}$/x\2/p' "$dir/make.log" | tail -n 1)
  case "$retried" in "") retried=- ;; x) retried=0 ;; *) retried=${retried#x} ;; esac
  # Every Ginkgo suite the target ran ends with "SUCCESS! ..." (under --procs without counts) or
  # "FAIL! -- N Passed | M Failed ...": the specs that failed in all of them, the matrix's and the
  # rest's (the examples' suites), so that a target that failed outside the matrix's rows says so.
  specs=$({ grep -Eo '(SUCCESS!|FAIL! -- [0-9]+ Passed \| [0-9]+ Failed)' "$dir/make.log" || true; } |
    awk '{n++} /FAIL!/ {s+=$6} END {print (n ? s + 0 : "-")}')
  results+=("$t|$code|$(elapsed "$secs")|${rows% *}|${rows#* }|$retried|$specs|$dir")
  [ "$rc" -eq 0 ] || failed+=("$t")
  log "make $t: exit $code in $(elapsed "$secs")"
done

{
  printf '%-14s %4s %9s %6s %6s %7s %12s  %s\n' target exit time passed failed retried specs-failed artifacts
  for r in "${results[@]}"; do
    IFS='|' read -r t code took passed nfailed retried specs dir <<<"$r"
    printf '%-14s %4s %9s %6s %6s %7s %12s  %s\n' "$t" "$code" "$took" "$passed" "$nfailed" "$retried" "$specs" "$dir"
  done
  for t in "${TARGETS[@]:${#results[@]}}"; do
    printf '%-14s %4s %9s %6s %6s %7s %12s  %s\n' "$t" - "not run" - - - - -
  done
  if [ -n "$interrupted" ]; then
    echo "interrupted: the targets marked not run did not run"
  elif [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}"
  else
    echo "every target passed"
  fi
} | tee "$BASE/e2e-all.txt"

[ -z "$interrupted" ] || exit "$interrupted"
[ ${#failed[@]} -eq 0 ] || exit 1
