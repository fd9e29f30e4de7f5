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

# apt_install PKG...: install Debian packages that are missing (root only).
apt_install() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
  log "installing Debian packages: ${missing[*]}"
  if [ -z "${ROLLCHECK_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || die "apt-get update failed"
    export ROLLCHECK_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# host_lacks_cap N: true when the capability bounding set lacks capability number N.
host_lacks_cap() {
  local bnd
  bnd=$(awk '/^CapBnd:/{print $2}' /proc/self/status)
  (( (16#$bnd >> $1) & 1 )) && return 1 || return 0
}

# kind_module_dir: where the pinned kind module's source is (downloaded if needed).
kind_module_dir() {
  (cd "$REPO_ROOT" && go mod download "sigs.k8s.io/kind@$KIND_VERSION" && go list -m -f '{{.Dir}}' sigs.k8s.io/kind) 2>/dev/null | tail -1
}
