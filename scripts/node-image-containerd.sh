#!/usr/bin/env bash
# Build the offline node image's containerd 2 variant (ROLLCHECK_NODE_IMAGE=offline-containerd2,
# make e2e-stopsignal): the offline node image of scripts/node-image.sh (built or cached there,
# unchanged) with containerd, its runc shim and ctr of CONTAINERD_VERSION built from the Go
# module proxy over Debian's containerd 1.6, and a containerd config of version 3.
#
# Why: containerd's CRI sends a container's lifecycle.stopSignal (Kubernetes' ContainerStopSignals,
# the CRI ContainerConfig's stop_signal) and reports it in ContainerStatus from containerd 2.3 on;
# Debian's 1.6.20 and kind v0.30.0's 2.1.4 read only the image's STOPSIGNAL. Debian's runc (1.1.5)
# is kept: containerd asks it what it supports (`runc features`).
#
# A separate repository (rollcheck/kind-node-containerd2), tagged by a hash of this script (the
# config below is in it), its containerd wrapper (scripts/runtime/containerd-dump-v3),
# CONTAINERD_VERSION and the base image's ID: the default offline image,
# its tag and `ROLLCHECK_NODE_IMAGE=offline` are untouched. Only `docker build` (COPY, no RUN) is
# used on top of the base. Cached and idempotent; prints the image reference on stdout.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=node-image-containerd
need go "install Go (>= 1.25)"
need jq "install jq (apt-get install jq)"
ensure_cli
K8S_VERSION=$(knob K8S_VERSION)
CONTAINERD_VERSION=$(knob CONTAINERD_VERSION)
# The pause image's version is the one kubeadm of K8S_VERSION asks for (as in node-image.sh).
PAUSE_VERSION=3.10.1
IMAGE_REPO=rollcheck/kind-node-containerd2
CONTAINERD_MODULE=github.com/containerd/containerd/v2

W=$ROLLCHECK_CACHE/node-image
BIN=$W/bin/containerd-$CONTAINERD_VERSION
mkdir -p "$W" "$BIN"
export CGO_ENABLED=0 GOFLAGS=-trimpath GOTOOLCHAIN=local

# build_containerd: containerd, containerd-shim-runc-v2 and ctr of CONTAINERD_VERSION, static
# (CGO_ENABLED=0), into $BIN, from a wrapper module under $W reused across runs. The build tags
# are kind's (no optional snapshotters) and containerd's Makefile's (no CLI docs; no gRPC in the shim).
build_containerd() {
  local b missing=() m=$W/containerdbuild-$CONTAINERD_VERSION
  for b in containerd containerd-shim-runc-v2 ctr; do [ -x "$BIN/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { log "containerd $CONTAINERD_VERSION binaries cached"; return 0; }
  if [ ! -f "$m/.tidy-done" ]; then
    mkdir -p "$m"
    printf 'module rollcheck.local/containerdbuild\n\ngo 1.24.0\n' >"$m/go.mod"
    printf '//go:build tools\npackage tools\n\nimport (\n\t_ "%s/cmd/containerd"\n\t_ "%s/cmd/containerd-shim-runc-v2"\n\t_ "%s/cmd/ctr"\n)\n' \
      "$CONTAINERD_MODULE" "$CONTAINERD_MODULE" "$CONTAINERD_MODULE" >"$m/tools.go"
    retry_timeout 3 300 "go get $CONTAINERD_MODULE@$CONTAINERD_VERSION" -- go -C "$m" get "$CONTAINERD_MODULE@$CONTAINERD_VERSION"
    retry_timeout 3 600 "go mod tidy for containerd $CONTAINERD_VERSION (downloads its dependencies)" -- go -C "$m" mod tidy
    touch "$m/.tidy-done"
  fi
  local v=$CONTAINERD_MODULE/version tags="urfave_cli_no_docs no_aufs no_zfs no_btrfs no_devmapper"
  local ld="-s -w -X $v.Version=$CONTAINERD_VERSION -X $v.Revision=module-proxy -X $v.Package=github.com/containerd/containerd"
  for b in "${missing[@]}"; do
    local t=$tags
    [ "$b" = containerd-shim-runc-v2 ] && t="$tags no_grpc"
    retry_timeout 3 900 "go build $b $CONTAINERD_VERSION" -- \
      env GOPROXY=off go -C "$m" build -tags "$t" -ldflags "$ld" -o "$BIN/$b" "$CONTAINERD_MODULE/cmd/$b"
  done
}

# write_config DIR: containerd's config and the CRI base runtime spec, into DIR. The config is of
# version 3, which every containerd 2 reads (2.3 migrates it to its version 4 in memory at start,
# logging a warning; its plugin sections are the same). The settings are the offline image's (kind's base config and
# what node-image.sh adds to it), each under its containerd 2 name:
#   - snapshotter "overlayfs" (kind's entrypoint seds this very line for zfs or fuse), layers
#     discarded once unpacked;
#   - the sandbox image, now pinned_images.sandbox (was sandbox_image);
#   - registry.config_path, to the certs.d hosts.toml files that point every registry at a dead
#     loopback endpoint (the base image has them);
#   - restrict_oom_score_adj = true (no CAP_SYS_RESOURCE) and a missing hugetlb controller tolerated;
#   - runc (and kind's test-handler) through the v2 shim, systemd cgroups, the base runtime spec
#     with kind's mount-product-files hook;
#   - cni.conf_template: the bridge CNI config containerd writes from the node's podCIDR (the
#     offline node has no kindnet: without it no pod gets a network).
write_config() {
  local d=$1
  cat >"$d/config.toml" <<EOT
# rollcheck's offline node image with containerd $CONTAINERD_VERSION (scripts/node-image-containerd.sh).
version = 3

[proxy_plugins]
# fuse-overlayfs is used for rootless (kind)
[proxy_plugins."fuse-overlayfs"]
  type = "snapshot"
  address = "/run/containerd-fuse-overlayfs.sock"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  discard_unpacked_layers = true
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "registry.k8s.io/pause:$PAUSE_VERSION"
[plugins."io.containerd.cri.v1.images".registry]
  config_path = "/etc/containerd/certs.d"

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  SystemdCgroup = true
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.test-handler]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.test-handler.options]
  SystemdCgroup = true
[plugins."io.containerd.cri.v1.runtime".cni]
  conf_template = "/etc/cni/rollcheck-bridge.template"
EOT
  # The base runtime spec of this containerd, with kind's hook and no rlimits (as node-image.sh
  # makes it from Debian's ctr): `ctr oci spec` only prints, it needs no daemon.
  "$BIN/ctr" oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
    | jq 'del(.process.rlimits)' >"$d/cri-base.json"
  jq -e '.hooks.createContainer[0].path == "/kind/bin/mount-product-files.sh"' "$d/cri-base.json" >/dev/null \
    || die "the CRI base runtime spec from ctr $CONTAINERD_VERSION lacks kind's hook"
  # kind v0.30.0 cannot parse containerd 2.3's `config dump` (version 4) when it loads an image:
  # a wrapper that says 3 shadows containerd on the PATH of kind's `docker exec` (see its comment).
  sed "s#@REAL_CONTAINERD@#/usr/bin/containerd#" "$REPO_ROOT/scripts/runtime/containerd-dump-v3" >"$d/containerd-wrapper"
  chmod 0755 "$d/containerd-wrapper"
}

# check_config DIR: containerd itself reads the config (no daemon: `config dump` prints what it
# would run with, migrated and merged with its defaults) and every setting above is in force;
# through the wrapper, the dump is of a version kind parses, with the snapshotter where kind
# reads it.
check_config() {
  local d=$1 dump want w
  w=$d/.wrapper-check
  sed "s#@REAL_CONTAINERD@#$BIN/containerd#" "$REPO_ROOT/scripts/runtime/containerd-dump-v3" >"$w" && chmod 0755 "$w"
  # Its stdout only, as kind reads it (containerd logs the migration from version 3 on stderr).
  dump=$("$w" --config "$d/config.toml" config dump 2>"$w.err") || die "containerd $CONTAINERD_VERSION refuses the config: $(cat "$w.err")"
  rm -f "$w" "$w.err"
  case "$(head -n 1 <<<"$dump")" in
    "version = 2" | "version = 3") ;;
    *) die "containerd $CONTAINERD_VERSION's config dump, through the wrapper, starts with '$(head -n 1 <<<"$dump")': kind's image loader cannot parse it" ;;
  esac
  sed -n "/^  \[plugins.'io.containerd.cri.v1.images'\]\$/,/^\$/p" <<<"$dump" | grep -qx "    snapshotter = 'overlayfs'" \
    || die "containerd $CONTAINERD_VERSION's config dump has no snapshotter in its CRI images section, where kind reads it"
  for want in "conf_template = '/etc/cni/rollcheck-bridge.template'" "config_path = '/etc/containerd/certs.d'" \
    "sandbox = 'registry.k8s.io/pause:$PAUSE_VERSION'" "restrict_oom_score_adj = true" "SystemdCgroup = true" \
    "base_runtime_spec = '/etc/containerd/cri-base.json'" "snapshotter = 'overlayfs'"; do
    grep -qF "$want" <<<"$dump" || die "containerd $CONTAINERD_VERSION's view of the config lacks: $want"
  done
}

docker info >/dev/null 2>&1 || die "no Docker engine answers: run scripts/docker-engine.sh (make docker) first"
# The base: the offline node image, built or cached by its own script (its tag is its inputs').
BASE=$(bash "$NODE_IMAGE_BUILDER") || die "building the offline node image (the base) failed"
BASE_ID=$(docker image inspect -f '{{.Id}}' "$BASE") || die "no image $BASE"
inputs_hash() {
  { cat "$REPO_ROOT/scripts/node-image-containerd.sh" "$REPO_ROOT/scripts/runtime/containerd-dump-v3"; echo "$K8S_VERSION $CONTAINERD_VERSION $PAUSE_VERSION $BASE_ID"; } | sha256sum | cut -c1-12
}
TAG=$IMAGE_REPO:$K8S_VERSION-containerd-$CONTAINERD_VERSION-$(inputs_hash)
if docker image inspect "$TAG" >/dev/null 2>&1; then
  log "node image $TAG is cached: nothing to build"
  echo "$TAG"
  exit 0
fi
log "building node image $TAG: $BASE with containerd $CONTAINERD_VERSION (cold: a few minutes on 2 cores; caches in $W)"
step containerd build_containerd
build_variant() {
  local ctx=$W/imgctx-containerd-$CONTAINERD_VERSION
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp "$BIN/containerd" "$BIN/containerd-shim-runc-v2" "$BIN/ctr" "$ctx/"
  write_config "$ctx"
  check_config "$ctx"
  # Debian's binaries are in /usr/bin (/usr/local/bin/containerd, which kind's unit runs, links
  # there): replaced in place. Only COPY: no container runs to build it.
  cat >"$ctx/Dockerfile" <<EOT
FROM $BASE
COPY containerd containerd-shim-runc-v2 ctr /usr/bin/
COPY containerd-wrapper /usr/local/sbin/containerd
COPY config.toml cri-base.json /etc/containerd/
LABEL io.rollcheck.containerd-version=$CONTAINERD_VERSION io.rollcheck.base-image=$BASE
EOT
  local out
  out=$(DOCKER_BUILDKIT=0 docker build -q -t "$TAG" "$ctx" 2>&1) || { printf '%s\n' "$out" >&2; die "docker build $TAG failed"; }
  rm -rf "$ctx"
}
step node-image build_variant
log "built $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
echo "$TAG"
