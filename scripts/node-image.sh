#!/usr/bin/env bash
# Build rollcheck's offline kind node image: every Kubernetes binary, etcd, CoreDNS and pause
# built from source (Go module proxy, gcc), a Debian rootfs from debootstrap, the control-plane
# images preloaded, a bridge CNI per node from containerd's template, and every registry pointed at a dead loopback endpoint
# so nothing is ever pulled from outside the machine.
#
# Cached and idempotent: the image is tagged by a hash of what went into it (this script, the
# pinned versions, kind's base files), and a run with nothing changed returns in seconds. Build
# caches live in $ROLLCHECK_CACHE/node-image (outside the repository) and are reused.
#
# Prints the image reference on stdout (logs go to stderr).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=node-image
need go "install Go (>= 1.25)"
# The pinned versions are knobs: their defaults and rules are Go's (internal/knobs).
ensure_cli
K8S_VERSION=$(knob K8S_VERSION)
ETCD_VERSION=$(knob ETCD_VERSION)
COREDNS_VERSION=$(knob COREDNS_VERSION)
DEBIAN_SUITE=$(knob DEBIAN_SUITE)
DEBIAN_MIRROR=$(knob DEBIAN_MIRROR)
# The pause image's version is the one kubeadm of K8S_VERSION asks for, not a knob.
PAUSE_VERSION=3.10.1

W=$ROLLCHECK_CACHE/node-image
BIN=$W/bin/$K8S_VERSION
mkdir -p "$W" "$BIN"
IMAGE_REPO=rollcheck/kind-node

docker info >/dev/null 2>&1 || die "no Docker engine answers: run scripts/docker-engine.sh (make docker) first"

read -r KIND_VERSION KIND_DIR < <(kind_module) || die "cannot download sigs.k8s.io/kind (go.mod's version) from the Go module proxy"
KIND_FILES=$KIND_DIR/images/base/files
[ -d "$KIND_FILES" ] || die "kind base files not found in $KIND_FILES"

# The tag: a hash of every input.
inputs_hash() {
  {
    cat "$REPO_ROOT/scripts/node-image.sh"
    echo "$K8S_VERSION $ETCD_VERSION $COREDNS_VERSION $PAUSE_VERSION $KIND_VERSION $DEBIAN_SUITE"
    (cd "$KIND_FILES" && find . -type f | LC_ALL=C sort | xargs sha256sum)
  } | sha256sum | cut -c1-12
}
TAG=$IMAGE_REPO:$K8S_VERSION-$(inputs_hash)

if docker image inspect "$TAG" >/dev/null 2>&1; then
  log "offline node image $TAG is cached: nothing to build"
  echo "$TAG"
  exit 0
fi
log "building offline node image $TAG (cold: about 21 minutes on 2 cores, docs/maintainers.md; caches in $W)"

export CGO_ENABLED=0 GOFLAGS=-trimpath GOTOOLCHAIN=local

# quiet CMD...: run a command, showing its output only when it fails (the legacy builder's
# deprecation banner otherwise drowns the log).
quiet() {
  local out
  if ! out=$(DOCKER_BUILDKIT=0 "$@" 2>&1); then printf '%s\n' "$out" >&2; return 1; fi
}

# --- Go builds: each in its own wrapper module under $W, reused across runs --------------------
k8s_ldflags() {
  local p ld="-s -w" minor
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  # kubeadm refuses binaries without a proper version.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld="$ld -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=2025-01-01T00:00:00Z"
  done
  echo "$ld"
}

K8S_BINS="kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy"
build_k8s() {
  local b missing=()
  for b in $K8S_BINS; do [ -x "$BIN/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { log "kubernetes $K8S_VERSION binaries cached"; return 0; }
  local m=$W/k8sbuild-$K8S_VERSION
  # $m/.tidy-done marks a finished wrapper module (written after go mod tidy succeeded).
  if [ ! -f "$m/.tidy-done" ]; then
    mkdir -p "$m"
    local mc staging sv=v0.${K8S_VERSION#v1.}
    mc=$(go env GOMODCACHE)
    retry_timeout 3 300 "go mod download k8s.io/kubernetes@$K8S_VERSION" -- \
      go -C "$m" mod download "k8s.io/kubernetes@$K8S_VERSION"
    [ -f "$mc/k8s.io/kubernetes@$K8S_VERSION/go.mod" ] || die "cannot download k8s.io/kubernetes@$K8S_VERSION"
    # k8s.io/kubernetes requires its staging modules at v0.0.0: replace them with the published v0.X.
    staging=$(grep -E '^\s+k8s.io/[a-z0-9-]+ v0.0.0$' "$mc/k8s.io/kubernetes@$K8S_VERSION/go.mod" | awk '{print $1}')
    {
      printf 'module rollcheck.local/k8sbuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
      for s in $staging; do printf '\t%s => %s %s\n' "$s" "$s" "$sv"; done
      printf ')\n'
    } >"$m/go.mod"
    { echo '//go:build tools'; echo 'package tools'; echo 'import ('
      for b in $K8S_BINS; do echo "	_ \"k8s.io/kubernetes/cmd/$b\""; done; echo ')'; } >"$m/tools.go"
    retry_timeout 3 900 "go mod tidy for kubernetes $K8S_VERSION (downloads its dependencies)" -- go -C "$m" mod tidy
    touch "$m/.tidy-done"
  fi
  # One go build, the longest step (about 8 minutes cold on 2 cores); everything it needs was
  # downloaded above, so it runs with GOPROXY=off.
  retry_timeout 3 1500 "go build ${missing[*]} (kubernetes $K8S_VERSION)" -- \
    env GOPROXY=off go -C "$m" build -ldflags "$(k8s_ldflags)" -o "$BIN/" \
    $(for b in "${missing[@]}"; do echo "k8s.io/kubernetes/cmd/$b"; done)
}

# build_tool NAME MODULE VERSION PACKAGE: build one static binary from a pinned module.
build_tool() {
  local name=$1 mod=$2 ver=$3 pkg=$4 m=$W/$1build-$3
  [ -x "$BIN/$name" ] && { log "$name $ver cached"; return 0; }
  if [ ! -f "$m/.tidy-done" ]; then
    mkdir -p "$m"
    printf 'module rollcheck.local/%sbuild\n\ngo 1.24.0\n' "$name" >"$m/go.mod"
    printf '//go:build tools\npackage tools\n\nimport _ "%s"\n' "$pkg" >"$m/tools.go"
    retry_timeout 3 300 "go get $mod@$ver" -- go -C "$m" get "$mod@$ver"
    retry_timeout 3 600 "go mod tidy for $name $ver (downloads its dependencies)" -- go -C "$m" mod tidy
    touch "$m/.tidy-done"
  fi
  retry_timeout 3 900 "go build $name $ver" -- env GOPROXY=off go -C "$m" build -ldflags "-s -w" -o "$BIN/$name" "$pkg"
}

build_pause() {
  [ -x "$BIN/pause" ] && return 0
  local src
  src=$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c
  [ -f "$src" ] || die "pause.c not found at $src"
  need gcc "install gcc (apt-get install gcc libc6-dev)"
  retry_timeout 3 120 "gcc pause" -- gcc -Os -static -DVERSION="v$PAUSE_VERSION" -o "$BIN/pause" "$src"
}

# --- Debian rootfs -------------------------------------------------------------------------------
ROOTFS_PKGS=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,jq,procps,socat,ebtables,iputils-ping,less,curl
SRC_ROOTFS=$W/rootfs/$DEBIAN_SUITE
build_rootfs() {
  local stamp="$DEBIAN_SUITE $ROOTFS_PKGS"
  if [ -f "$SRC_ROOTFS.stamp" ] && [ "$(cat "$SRC_ROOTFS.stamp")" = "$stamp" ]; then
    log "debian $DEBIAN_SUITE rootfs cached"; return 0
  fi
  apt_install debootstrap
  rm -f "$SRC_ROOTFS.stamp"
  log "debootstrap $DEBIAN_SUITE: log in $W/debootstrap.log"
  # Each try starts from an empty directory; on failure the log's last lines say why.
  # shellcheck disable=SC2016
  retry_timeout 3 1200 "debootstrap $DEBIAN_SUITE (downloads and unpacks the Debian rootfs)" -- \
    bash -c 'rm -rf "$2" && mkdir -p "$2" && debootstrap --variant=minbase --include="$3" "$1" "$2" "$4" >"$5" 2>&1 \
      || { rc=$?; echo "debootstrap failed: $(tail -3 "$5" | tr "\n" " ")" >&2; exit "$rc"; }' \
    debootstrap "$DEBIAN_SUITE" "$SRC_ROOTFS" "$ROOTFS_PKGS" "$DEBIAN_MIRROR" "$W/debootstrap.log"
  echo "$stamp" >"$SRC_ROOTFS.stamp"
}

# --- component images (FROM scratch + static binaries, tagged as kubeadm expects) --------------
IMGCTX=$W/imgctx
IMAGES=$W/images/$K8S_VERSION
image_ctx() { # dir binaries...
  local d=$IMGCTX/$1 b; shift
  rm -rf "$d"; mkdir -p "$d/usr/local/bin"
  for b in "$@"; do cp "$BIN/$b" "$d/usr/local/bin/"; done
}
image_build() { # ctxdir ref [entrypoint]
  local d=$IMGCTX/$1 ref=$2 ep=${3:-}
  {
    echo "FROM scratch"; echo "COPY . /"
    echo 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin'
    if [ -n "$ep" ]; then echo "ENTRYPOINT [\"$ep\"]"; fi
  } >"$d/Dockerfile"
  quiet docker build -q -t "$ref" "$d" || die "docker build $ref failed"
  docker save "$ref" -o "$IMAGES/$1.tar" || die "docker save $ref failed"
}
build_images() {
  rm -rf "$IMGCTX" "$IMAGES"; mkdir -p "$IMGCTX" "$IMAGES"
  local c
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    image_ctx "$c" "$c"; image_build "$c" "registry.k8s.io/$c:$K8S_VERSION"
  done
  image_ctx etcd etcd; mkdir -p "$IMGCTX/etcd/tmp" "$IMGCTX/etcd/var/lib/etcd"
  image_build etcd "registry.k8s.io/etcd:${ETCD_VERSION#v}-0"
  image_ctx pause pause; image_build pause "registry.k8s.io/pause:$PAUSE_VERSION" /usr/local/bin/pause
  image_ctx coredns coredns; image_build coredns "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" /usr/local/bin/coredns
  # kube-proxy execs iptables/nft/conntrack: copy them and their libraries out of the rootfs.
  local d=$IMGCTX/kube-proxy f files libs="" t mode
  image_ctx kube-proxy kube-proxy
  files="/usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/nft /usr/sbin/conntrack /usr/sbin/ipset"
  for f in $files $(cd "$SRC_ROOTFS" && ls usr/lib/x86_64-linux-gnu/xtables/*.so | sed 's|^|/|'); do
    [ -e "$SRC_ROOTFS$f" ] || continue
    libs="$libs $f $(chroot "$SRC_ROOTFS" ldd "$f" 2>/dev/null | awk '/=>/{print $3} /ld-linux/{print $1}')"
  done
  for f in $(echo "$libs" | tr ' ' '\n' | sort -u); do
    mkdir -p "$d$(dirname "$f")"; cp -L "$SRC_ROOTFS$f" "$d$f"
  done
  mkdir -p "$d/lib64" "$d/usr/sbin" "$d/etc" "$d/run" "$d/tmp" "$d/var/lib"
  cp -L "$SRC_ROOTFS/lib64/ld-linux-x86-64.so.2" "$d/lib64/"
  for mode in nft legacy; do
    for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
      ln -sf "xtables-$mode-multi" "$d/usr/sbin/$t-$mode"
    done
  done
  for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do ln -sf "$t-nft" "$d/usr/sbin/$t"; done
  cp "$SRC_ROOTFS/etc/protocols" "$SRC_ROOTFS/etc/services" "$d/etc/"
  image_build kube-proxy "registry.k8s.io/kube-proxy:$K8S_VERSION"
}

# --- the node image ------------------------------------------------------------------------------
build_node() {
  local R=$W/rootfs/node
  rm -rf "$R"; cp -a "$SRC_ROOTFS" "$R"
  # kind's base image files (kind images/base/Dockerfile)
  install -m 0755 "$KIND_FILES"/usr/local/bin/* "$R/usr/local/bin/"
  mkdir -p "$R/kind/bin" "$R/etc/containerd" "$R/etc/systemd/system/kubelet.service.d" "$R/etc/kubernetes/manifests" "$R/kind/manifests"
  cp -r "$KIND_FILES/kind/." "$R/kind/"; chmod 0755 "$R"/kind/bin/*
  install -m 0644 "$KIND_FILES/etc/crictl.yaml" "$R/etc/"
  install -m 0644 "$KIND_FILES/etc/containerd/config.toml" "$R/etc/containerd/"
  install -m 0644 "$KIND_FILES/etc/default/kubelet" "$R/etc/default/"
  install -m 0644 "$KIND_FILES"/etc/sysctl.d/* "$R/etc/sysctl.d/"
  install -m 0644 "$KIND_FILES"/etc/systemd/system/*.service "$KIND_FILES"/etc/systemd/system/*.slice "$R/etc/systemd/system/"
  install -m 0644 "$KIND_FILES"/etc/systemd/system/kubelet.service.d/* "$R/etc/systemd/system/kubelet.service.d/"
  # Debian's containerd is in /usr/bin and its CNI plugins in /usr/lib/cni; kind expects other paths.
  ln -sf /usr/bin/containerd "$R/usr/local/bin/containerd"
  mkdir -p "$R/opt/cni"; rm -rf "$R/opt/cni/bin"; ln -s /usr/lib/cni "$R/opt/cni/bin"
  # Entrypoint wrapper: the node also works without a real --privileged (cgroups remounted rw, /dev/kmsg).
  cat >"$R/usr/local/bin/rollcheck-entrypoint" <<'EOT'
#!/bin/bash
for m in $(findmnt -rn -R -o TARGET /sys/fs/cgroup); do
  findmnt -rn -o OPTIONS "$m" | grep -q '^ro' && mount -o remount,bind,rw "$m"
done
[ -e /dev/kmsg ] || mknod -m 600 /dev/kmsg c 1 11 || true
exec /usr/local/bin/entrypoint "$@"
EOT
  chmod 0755 "$R/usr/local/bin/rollcheck-entrypoint"
  # crictl (cri-tools) cannot be had from the Go module proxy. kind calls it twice: `crictl images`
  # when exporting logs and `crictl inspecti` to skip loading an image a node has; this shim
  # answers the first and says "unknown" to the second (kind then loads the image anyway).
  cat >"$R/usr/local/bin/crictl" <<'EOT'
#!/bin/sh
case "$1" in
  images) exec ctr --namespace k8s.io images ls ;;
  *) echo "crictl shim (rollcheck offline node): only 'crictl images' is supported; use ctr --namespace k8s.io" >&2; exit 1 ;;
esac
EOT
  chmod 0755 "$R/usr/local/bin/crictl"
  # Without CAP_SYS_RESOURCE runc cannot lower oom_score_adj below its parent's: clamp it (as kind rootless does).
  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$R/etc/containerd/config.toml"
  sed -i "s#sandbox_image = .*#sandbox_image = \"registry.k8s.io/pause:$PAUSE_VERSION\"#" "$R/etc/containerd/config.toml"
  # Offline: every registry resolves to a dead loopback endpoint, so a missing image fails fast
  # ("dial tcp 127.0.0.1:9: connect: connection refused") and nothing leaves the machine.
  # containerd 1.6 needs the [host] entry; a `server` line alone is ignored.
  printf '\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n' >>"$R/etc/containerd/config.toml"
  local reg
  for reg in _default registry.k8s.io docker.io registry-1.docker.io quay.io ghcr.io gcr.io k8s.gcr.io; do
    mkdir -p "$R/etc/containerd/certs.d/$reg"
    printf 'server = "http://127.0.0.1:9"\n\n[host."http://127.0.0.1:9"]\n  capabilities = ["pull", "resolve"]\n' \
      >"$R/etc/containerd/certs.d/$reg/hosts.toml"
  done
  chroot "$R" ctr oci spec | chroot "$R" jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
    | chroot "$R" jq 'del(.process.rlimits)' >"$R/etc/containerd/cri-base.json"
  # systemd trimming as kind does
  find "$R/lib/systemd/system/sysinit.target.wants/" -name "systemd-tmpfiles-setup.service" -delete
  rm -f "$R"/lib/systemd/system/multi-user.target.wants/* "$R"/etc/systemd/system/*.wants/* \
    "$R"/lib/systemd/system/local-fs.target.wants/* "$R"/lib/systemd/system/sockets.target.wants/*udev* \
    "$R"/lib/systemd/system/sockets.target.wants/*initctl* "$R"/lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>"$R/etc/systemd/journald.conf"
  chroot "$R" systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
  chroot "$R" systemctl mask systemd-binfmt.service >/dev/null 2>&1
  install -m 0755 "$BIN/kubeadm" "$BIN/kubelet" "$BIN/kubectl" "$R/usr/bin/"
  echo -n "$K8S_VERSION" >"$R/kind/version"
  # Networking without kindnet (whose image would need a registry): containerd writes each node's
  # bridge CNI config from this template once the kubelet passes it the node's podCIDR (the
  # controller-manager allocates one /24 of the cluster's podSubnet per node). Until then the node
  # is NotReady, so no pod starts on a subnet another node also uses. Routes between the nodes'
  # podCIDRs are set by rollcheck's kind front end after create (internal/cluster, routes.go).
  mkdir -p "$R/etc/cni/net.d"
  cat >"$R/etc/cni/rollcheck-bridge.template" <<'EOT'
{
  "cniVersion": "1.0.0",
  "name": "rollcheck",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "{{.PodCIDR}}"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOT
  printf '\n[plugins."io.containerd.grpc.v1.cri".cni]\n  conf_template = "/etc/cni/rollcheck-bridge.template"\n' >>"$R/etc/containerd/config.toml"
  cat >"$R/kind/manifests/default-cni.yaml" <<'EOT'
apiVersion: v1
kind: ConfigMap
metadata:
  name: rollcheck-cni
  namespace: kube-system
data:
  note: "each node's bridge CNI config is written by containerd from /etc/cni/rollcheck-bridge.template (its podCIDR); routes between nodes by rollcheck"
EOT
  cat >"$R/kind/manifests/default-storage.yaml" <<'EOT'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
EOT
  rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/locale/*

  local base=$IMAGE_REPO-base:$K8S_VERSION
  tar -C "$R" -c . | docker import --change 'ENV container=docker' \
    --change 'ENTRYPOINT ["/usr/local/bin/rollcheck-entrypoint", "/sbin/init"]' - "$base" >/dev/null \
    || die "docker import of the node rootfs failed"
  rm -rf "$R"
  # Preload the images into the node's containerd inside a build container (as kind's nodeimage builder does).
  local id=rollcheck-node-build-$$
  docker run -d --name "$id" --entrypoint=sleep --security-opt seccomp=unconfined "$base" infinity >/dev/null \
    || die "starting the node build container failed"
  trap 'docker rm -f -v '"$id"' >/dev/null 2>&1 || true' EXIT
  docker exec "$id" mkdir -p /kind/images
  local t
  for t in "$IMAGES"/*.tar; do docker cp "$t" "$id:/kind/images/" >/dev/null; done
  docker exec "$id" bash -c 'set -e
    nohup containerd >/tmp/containerd.log 2>&1 &
    for i in $(seq 1 60); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.5; done
    ctr version >/dev/null
    for t in /kind/images/*.tar; do
      ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests "$t" >/dev/null
    done
    ctr --namespace=k8s.io images list -q | grep -v -e "^sha256:" -e "^import-"
    pkill containerd; sleep 1; rm -rf /kind/images /tmp/containerd.log' >&2 || die "preloading images into the node failed"
  # docker commit cannot set STOPSIGNAL: add it with a metadata-only build.
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/rollcheck-entrypoint", "/sbin/init" ]' "$id" "$TAG.tmp" >/dev/null \
    || die "docker commit of the node failed"
  printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\nLABEL io.rollcheck.k8s-version=%s io.rollcheck.kind-version=%s\n' "$TAG.tmp" "$K8S_VERSION" "$KIND_VERSION" \
    | quiet docker build -q -t "$TAG" - || die "finishing the node image failed"
  docker rmi "$TAG.tmp" "$base" >/dev/null 2>&1 || true
  docker rm -f -v "$id" >/dev/null 2>&1 || true
  trap - EXIT
}

# debootstrap (network-bound) overlaps the Go builds (CPU-bound).
rootfs_pid=""
if [ ! -f "$SRC_ROOTFS.stamp" ]; then
  build_rootfs & rootfs_pid=$!
fi
step kubernetes-binaries build_k8s
step etcd build_tool etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
step coredns build_tool coredns github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns
step pause build_pause
if [ -n "$rootfs_pid" ]; then
  s=$(date +%s)
  wait "$rootfs_pid" || die "building the rootfs failed"
  log "step rootfs (debootstrap, alongside the Go builds): waited $(($(date +%s) - s))s more"
else
  step rootfs build_rootfs
fi
step component-images build_images
step node-image build_node
log "built $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
echo "$TAG"
