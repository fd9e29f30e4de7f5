# shellcheck shell=bash
# Common helpers for rollcheck's scripts. Source it; it sets strict mode.
set -o errexit -o nounset -o pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export REPO_ROOT
export ARTIFACTS=${ARTIFACTS:-$REPO_ROOT/_artifacts}
# Build caches live outside the repository and are reused across runs.
export ROLLCHECK_CACHE=${ROLLCHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollcheck}

# Pinned versions of everything that goes into the offline node image.
export K8S_VERSION=${K8S_VERSION:-v1.34.3}
export ETCD_VERSION=${ETCD_VERSION:-v3.6.5}
export COREDNS_VERSION=${COREDNS_VERSION:-v1.12.1}
export PAUSE_VERSION=3.10.1
export KIND_VERSION=v0.30.0
export DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}

log() { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S)" "${LOG_PREFIX:-rollcheck}" "$*" >&2; }
die() { printf '%s [%s] ERROR: %s\n' "$(date -u +%H:%M:%S)" "${LOG_PREFIX:-rollcheck}" "$*" >&2; exit 1; }

# step NAME CMD...: run a command and print how long it took.
step() {
  local name=$1 start rc
  shift
  start=$(date +%s)
  log "step ${name}: start"
  # A subshell outside any || list keeps errexit in force inside the step.
  set +e
  (set -e; "$@")
  rc=$?
  set -e
  log "step ${name}: $([ "$rc" -eq 0 ] && echo done || echo "FAILED (exit $rc)") in $(($(date +%s) - start))s"
  return "$rc"
}

need() { # need CMD HINT
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}

# run_limited SECONDS CMD...: run the program CMD under coreutils timeout (SIGTERM after SECONDS,
# SIGKILL 10 s later, to CMD's whole process group). An INT or TERM this shell receives meanwhile
# is passed on to CMD, and then handled as it would have been (timeout puts CMD in a process
# group of its own, which Ctrl-C at the terminal does not reach).
run_limited() {
  local limit=$1 pid rc=0 sig="" saved
  shift
  saved=$(trap -p INT TERM)
  timeout --kill-after=10s "${limit}s" "$@" &
  pid=$!
  trap 'sig=INT; kill -TERM "$pid" 2>/dev/null' INT
  trap 'sig=TERM; kill -TERM "$pid" 2>/dev/null' TERM
  wait "$pid" || rc=$?
  # A trapped signal ends `wait` early: wait again for CMD itself.
  while [ -n "$sig" ] && kill -0 "$pid" 2>/dev/null; do rc=0; wait "$pid" || rc=$?; done
  trap - INT TERM
  eval "$saved"
  [ -z "$sig" ] || kill -s "$sig" "$BASHPID"
  return "$rc"
}

# retry_timeout TRIES SECONDS WHAT -- CMD...: run the program CMD (not a shell function: use
# `go -C DIR`, `env VAR=...`) with a time limit of SECONDS, up to TRIES times, logging before each
# try what it waits for and how long at most. Dies with one line when every try failed.
retry_timeout() {
  local tries=$1 limit=$2 what=$3 try rc
  shift 3
  if [ "${1:-}" = -- ]; then shift; fi
  [[ $tries =~ ^[1-9][0-9]*$ && $limit =~ ^[1-9][0-9]*$ && $# -gt 0 ]] \
    || die "retry_timeout: want TRIES SECONDS WHAT -- CMD..., got: $tries $limit $what -- $*"
  for ((try = 1; try <= tries; try++)); do
    log "waiting up to ${limit}s for: $what (try $try/$tries)"
    rc=0
    run_limited "$limit" "$@" || rc=$?
    [ "$rc" -eq 0 ] && return 0
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      log "$what: no result within ${limit}s, stopped (try $try/$tries)"
    else
      log "$what: failed, exit $rc (try $try/$tries)"
    fi
    if [ "$try" -lt "$tries" ]; then sleep $((3 * try)); fi
  done
  die "$what: gave up after $tries tries (each limited to ${limit}s)"
}

# apt_install PKG...: install Debian packages that are missing (root only).
apt_install() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
  log "installing Debian packages: ${missing[*]}"
  if [ -z "${ROLLCHECK_APT_UPDATED:-}" ]; then
    retry_timeout 3 300 "apt-get update" -- env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    export ROLLCHECK_APT_UPDATED=1
  fi
  retry_timeout 3 900 "apt-get install ${missing[*]}" -- \
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# host_lacks_cap N: true when the capability bounding set lacks capability number N.
host_lacks_cap() {
  local bnd
  bnd=$(awk '/^CapBnd:/{print $2}' /proc/self/status)
  (( (16#$bnd >> $1) & 1 )) && return 1 || return 0
}

# kind_module_dir: where the pinned kind module's source is (downloaded if needed).
kind_module_dir() {
  local dir
  dir=$(GOPROXY=off go -C "$REPO_ROOT" list -m -f '{{.Dir}}' "sigs.k8s.io/kind@$KIND_VERSION" 2>/dev/null) || dir=""
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    retry_timeout 3 300 "go mod download sigs.k8s.io/kind@$KIND_VERSION" -- \
      go -C "$REPO_ROOT" mod download "sigs.k8s.io/kind@$KIND_VERSION" >&2
    dir=$(go -C "$REPO_ROOT" list -m -f '{{.Dir}}' "sigs.k8s.io/kind@$KIND_VERSION") || return 1
  fi
  echo "$dir"
}

# bool_value VALUE: prints true or false for the values a boolean knob accepts (1/true/yes/on,
# 0/false/no/off or empty; any case); fails for anything else. internal/cluster.BoolKnob is its twin.
bool_value() {
  case "${1,,}" in
    1 | true | yes | on) echo true ;;
    "" | 0 | false | no | off) echo false ;;
    *) return 1 ;;
  esac
}

# bool_knob NAME: succeeds when the variable NAME is true, fails when it is false or unset; dies
# with one line when its value is neither.
bool_knob() {
  local v
  v=$(bool_value "${!1:-}") || die "$1=${!1}: want 1, true, yes, on or 0, false, no, off (or unset)"
  [ "$v" = true ]
}

# The rollcheck CLI the scripts run; validate_knobs builds it.
RC=$ROLLCHECK_CACHE/bin/rollcheck

# build_cli: build the rollcheck CLI into $RC under a time limit (seconds when Go's build cache is
# warm). Nothing else is built: it must answer quickly on a fresh machine too.
build_cli() {
  mkdir -p "$ROLLCHECK_CACHE/bin"
  retry_timeout 3 600 "go build the rollcheck CLI" -- go -C "$REPO_ROOT" build -o "$RC" ./cmd/rollcheck
}

# validate_knobs: check every knob before any Docker, tool or cluster work, with the rules that
# live in Go (internal/cluster.Knobs, through `rollcheck knobs`): one line per problem, all at
# once, and exit 2 if there is any.
validate_knobs() {
  build_cli
  "$RC" knobs || exit "$?"
}
