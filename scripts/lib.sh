# shellcheck shell=bash
# Common helpers for rollcheck's scripts. Source it; it sets strict mode.
set -o errexit -o nounset -o pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export REPO_ROOT
export ARTIFACTS=${ARTIFACTS:-$REPO_ROOT/_artifacts}
# Build caches live outside the repository and are reused across runs. The CLI is built into
# it, so bash sets its default (Go's os.UserCacheDir has the same rule) before any Go runs.
export ROLLCHECK_CACHE=${ROLLCHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rollcheck}
# Every other knob's default and rule is Go's (internal/knobs): `knob NAME` asks the CLI.

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
  if [ -z "${APT_UPDATED:-}" ]; then
    retry_timeout 3 300 "apt-get update" -- env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    APT_UPDATED=1
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

# kind_module: the version and source directory of the kind module go.mod pins (the one rollcheck
# runs in-process), downloaded if needed: "VERSION DIR".
kind_module() {
  local mod
  mod=$(GOPROXY=off go -C "$REPO_ROOT" list -m -f '{{.Version}} {{.Dir}}' sigs.k8s.io/kind 2>/dev/null) || mod=""
  if [ -z "${mod#* }" ] || [ ! -d "${mod#* }" ]; then
    retry_timeout 3 300 "go mod download sigs.k8s.io/kind (the version in go.mod)" -- \
      go -C "$REPO_ROOT" mod download sigs.k8s.io/kind >&2
    mod=$(GOPROXY=off go -C "$REPO_ROOT" list -m -f '{{.Version}} {{.Dir}}' sigs.k8s.io/kind) || return 1
  fi
  echo "$mod"
}

# The rollcheck CLI the scripts run; validate_knobs and ensure_cli build it.
RC=$ROLLCHECK_CACHE/bin/rollcheck
# The scripts that build the offline node image and its containerd 2 variant (a test puts fakes
# in their place).
NODE_IMAGE_BUILDER=$REPO_ROOT/scripts/node-image.sh
NODE_IMAGE_CONTAINERD_BUILDER=$REPO_ROOT/scripts/node-image-containerd.sh

# build_cli: build the rollcheck CLI into $RC under a time limit (seconds when Go's build cache is
# warm). Nothing else is built: it must answer quickly on a fresh machine too. Static
# (CGO_ENABLED=0), so that rollcheck's own images are made of it as they are of a release.
build_cli() {
  mkdir -p "$ROLLCHECK_CACHE/bin"
  retry_timeout 3 600 "go build the rollcheck CLI" -- env CGO_ENABLED=0 go -C "$REPO_ROOT" build -o "$RC" ./cmd/rollcheck
}

# ensure_cli: build the CLI unless it is newer than every Go source and go.mod (scripts that
# another script starts after validate_knobs then build nothing).
ensure_cli() {
  if [ -x "$RC" ] && [ -z "$(find "$REPO_ROOT" \( -name .git -o -name _artifacts \) -prune -o \
    \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$RC" -print -quit)" ]; then
    return 0
  fi
  build_cli
}

# knob NAME: print the knob's value by its rule in Go (its default when unset; a boolean as true
# or false); exits 2 with one line when the value is bad. Needs the CLI (ensure_cli).
knob() {
  "$RC" knobs get "$1" || exit 2
}

# use_target NAME: export the knobs make's e2e target NAME sets (internal/knobs.Targets, through
# `rollcheck knobs target NAME`: its label filter and suites, its cluster, workers, kube-proxy mode
# and artifacts subdirectory where they differ from make e2e's), and log them. Needs the CLI.
use_target() {
  local env kv
  env=$("$RC" knobs target "$1") || exit 2
  while IFS= read -r kv; do
    [ -n "$kv" ] || continue
    export "${kv%%=*}=${kv#*=}"
    log "target $1: ${kv%%=*}='${kv#*=}'"
  done <<<"$env"
}

# choose_node_image: the node image make uses. Go decides (`rollcheck cluster node-image`: the
# ROLLCHECK_NODE_IMAGE rule, kind's upstream image pulled under ROLLCHECK_PULL_TIMEOUT, and why
# in the log); bash only builds the offline image, or its containerd 2 variant, when that is the
# choice. Exports ROLLCHECK_NODE_IMAGE_REF for every later Go step.
choose_node_image() {
  local ref
  ref=$("$RC" cluster node-image) || exit "$?"
  case "$ref" in
    offline)
      ref=$(bash "$NODE_IMAGE_BUILDER") || die "building the offline node image failed"
      log "node image: $ref (offline)" ;;
    offline-containerd2)
      ref=$(bash "$NODE_IMAGE_CONTAINERD_BUILDER") || die "building the offline node image with containerd 2 failed"
      log "node image: $ref (offline, containerd 2)" ;;
  esac
  export ROLLCHECK_NODE_IMAGE_REF=$ref
}

# validate_knobs: check every knob before any Docker, tool or cluster work, with the rules that
# live in Go (internal/cluster.Knobs, through `rollcheck knobs`): one line per problem, all at
# once, and exit 2 if there is any.
validate_knobs() {
  ensure_cli
  "$RC" knobs || exit "$?"
}

# raise_inotify_limits: kind's known issue for clusters of several nodes ("too many open files"
# from the kubelets and kube-proxies of every node, which share the host's per-user inotify
# limits): raise fs.inotify.max_user_instances to 512 and max_user_watches to 524288 when they
# are lower and ROLLCHECK_WORKERS asks for workers. Root only; otherwise says what to run.
raise_inotify_limits() {
  local workers
  workers=$(knob ROLLCHECK_WORKERS)
  [ "${workers:-0}" -gt 0 ] || return 0
  local key want have
  for kv in fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288; do
    key=${kv%=*} want=${kv#*=}
    have=$(cat "/proc/sys/${key//.//}" 2>/dev/null || echo 0)
    [ "$have" -ge "$want" ] && continue
    if [ "$(id -u)" -eq 0 ] && sysctl -qw "$key=$want" 2>/dev/null; then
      log "$key raised from $have to $want for $workers worker node(s) (kind's known issue for several nodes)"
    else
      log "warning: $key is $have; kind's nodes may fail with 'too many open files': run sysctl -w $key=$want as root"
    fi
  done
}

# The scripts that run rollcheck as the ServiceAccount of examples/rbac (e2e-rbac.sh,
# e2e-inplace.sh), each on a kind cluster of its own ($ROLLCHECK_CLUSTER_NAME, node $NODE).

# sa_setup DIR: OUT=$ARTIFACTS/DIR, RBAC (examples/rbac), NODE (the control plane's container), SA
# (the ServiceAccount as RBAC names it), work (a private temporary directory, for the kubeconfigs)
# and created (empty: set by sa_cluster_up); OUT starts empty.
sa_setup() {
  OUT=$ARTIFACTS/$1
  RBAC=$REPO_ROOT/examples/rbac
  NODE=$ROLLCHECK_CLUSTER_NAME-control-plane
  SA=system:serviceaccount:rollcheck:rollcheck
  work=$(mktemp -d)
  chmod 0700 "$work"
  created=""
  rm -rf "$OUT"
  mkdir -p "$OUT"
}

# sa_finish RC: the end of such a script (its EXIT trap): the cluster down as sa_cluster_down says,
# the temporary directory removed, exit with RC (1 when the deletion failed).
sa_finish() {
  local rc
  rc=$(sa_cluster_down "$1" "$OUT")
  rm -rf "$work"
  exit "$rc"
}

# admin ARGS...: the cluster's own kubectl with kind's admin credentials, inside the node (nothing
# of them leaves the node).
admin() { docker exec -i "$NODE" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }

# sa_cluster_up: the Docker engine, the tools, the node image and the cluster (sets created=1 when
# this run created it); the example app's image into every node's containerd (as a user's
# registry would hold it) and the load pod's image (exports ROLLCHECK_LOAD_IMAGE).
sa_cluster_up() {
  local up
  step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
  step tools bash "$REPO_ROOT/scripts/tools.sh"
  choose_node_image
  up=$("$RC" cluster up)
  [ "$up" = created ] && created=1
  log "cluster $ROLLCHECK_CLUSTER_NAME: $up"
  step example-image bash "$REPO_ROOT/scripts/example-image.sh" hello
  # Into every node of the cluster (the control plane and its workers, by kind's own label): a
  # pod may start on any of them.
  timeout 300 docker save -o "$work/hello.tar" rollcheck-example/hello:dev || die "docker save rollcheck-example/hello:dev failed or took over 300 s"
  local n
  for n in $(docker ps --filter "label=io.x-k8s.kind.cluster=$ROLLCHECK_CLUSTER_NAME" --format '{{.Names}}'); do
    timeout 300 docker exec -i "$n" ctr -n k8s.io images import - <"$work/hello.tar" >/dev/null \
      || die "importing rollcheck-example/hello:dev into node $n failed or took over 300 s"
  done
  rm -f "$work/hello.tar"
  ROLLCHECK_LOAD_IMAGE=$("$RC" cluster load-image)
  export ROLLCHECK_LOAD_IMAGE
  log "load pod image: $ROLLCHECK_LOAD_IMAGE"
}

# sa_shop: the example app (examples/check/web.yaml) applied with kubectl into namespace shop, as a
# user deploys it, and rolled out; namespace rc-load for the load pods; the ServiceAccount with
# examples/rbac/in-place.yaml bound in shop and in-place-load.yaml in rc-load, no ClusterRole.
sa_shop() {
  admin create namespace shop
  admin create namespace rc-load
  admin apply -n shop -f - <"$REPO_ROOT/examples/check/web.yaml"
  admin rollout status -n shop deployment/web --timeout=3m
  admin apply -f - <"$RBAC/serviceaccount.yaml"
  admin apply -n shop -f - <"$RBAC/in-place.yaml"
  admin apply -n rc-load -f - <"$RBAC/in-place-load.yaml"
}

# sa_cluster_down RC OUT: export the cluster's logs into OUT/cluster-logs when RC is not 0 (a
# reused cluster's too), and delete the cluster if this run created it (created) and
# ROLLCHECK_KEEP_CLUSTER is not set; prints RC, or 1 when the deletion failed.
sa_cluster_down() {
  local rc=$1
  [ "$rc" -eq 0 ] || "$RC" cluster logs "$2/cluster-logs" >&2 || true
  if [ -n "${created:-}" ] && [ "$("$RC" knobs get ROLLCHECK_KEEP_CLUSTER)" = false ]; then
    log "deleting cluster $ROLLCHECK_CLUSTER_NAME (this script created it)"
    "$RC" cluster down >&2 || rc=1
  fi
  echo "$rc"
}

# sa_kubeconfig FILE: a kubeconfig (mode 0600) of the ServiceAccount rollcheck/rollcheck with a
# token valid 1h, which it sets in $token.
sa_kubeconfig() {
  local server ca
  token=$(admin create token rollcheck -n rollcheck --duration=1h)
  [ -n "$token" ] || die "no token for the ServiceAccount"
  server=https://$(docker port "$NODE" 6443/tcp | head -n1)
  ca=$(admin config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  (umask 077 && cat >"$1" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: kind, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: rollcheck, user: {token: "$token"}}]
contexts: [{name: rollcheck, context: {cluster: kind, user: rollcheck}}]
current-context: rollcheck
EOT
  )
  log "kubeconfig of the ServiceAccount written (server $server, a token valid 1h)"
}
