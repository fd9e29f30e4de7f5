#!/usr/bin/env bash
# `make example-image` (or `scripts/example-image.sh hello|nginx|grpc` for one): build the hello example app (examples/hello), a plain
# net/http server that knows nothing of rollcheck, into rollcheck-example/hello:dev in the local
# Docker engine (the binary is built on the host, static; the image holds nothing else), and the
# nginx in front of it in examples/proxy into rollcheck-example/nginx:dev, and the gRPC stand-in of
# examples/grpc into rollcheck-example/grpc:dev. No argument: all three.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=example-image
IMAGE=rollcheck-example/hello:dev # the image examples/check/check.yaml names
need go "install Go (>= 1.25)"
need docker "install Docker (make docker does it on Debian as root)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$REPO_ROOT"
# Which images: "hello", "nginx", "grpc" or all three (no argument, as `make example-image` asks).
want=" ${*:-hello nginx grpc} "
# static IMAGE PKG BIN DIR: build Go package PKG into a static binary BIN, then the image IMAGE
# from DIR's Dockerfile (FROM scratch, COPY BIN), each step bounded and named when it fails.
static() {
  local image=$1 pkg=$2 bin=$3 ctx=$dir/$3
  mkdir -p "$ctx"
  log "building the $bin binary of $image (up to 5m)"
  CGO_ENABLED=0 timeout --kill-after=10s 300 go build -trimpath -ldflags '-s -w' -o "$ctx/$bin" "$pkg" \
    || die "go build $pkg failed or took longer than 5m"
  cp "$4/Dockerfile" "$ctx/"
  log "docker build $image (up to 5m)"
  DOCKER_BUILDKIT=0 timeout --kill-after=10s 300 docker build -q -t "$image" "$ctx" >/dev/null \
    || die "docker build $image failed or took longer than 5m"
  log "built $image"
}
if [[ $want == *" hello "* ]]; then static "$IMAGE" ./examples/hello hello examples/hello; fi
# The stand-in for a user's gRPC server (examples/grpc): rollcheck's sample app, whose gRPC mode
# app.yaml turns on, tagged with the name examples/grpc/check.yaml uses.
GRPC_IMAGE=rollcheck-example/grpc:dev
if [[ $want == *" grpc "* ]]; then static "$GRPC_IMAGE" ./fixtures/app app fixtures/app; fi
# The nginx in front of it (examples/proxy): Debian 12's nginx, FROM scratch, as rollcheck builds
# its proxy fixtures; tagged with the name examples/proxy/nginx.yaml uses.
PROXY_IMAGE=rollcheck-example/nginx:dev
if [[ $want == *" nginx "* ]]; then
  log "rollcheck cluster proxy-images --no-load nginx (up to 20m; seconds when nothing changed)"
  ref=$(timeout --kill-after=10s 1200 go run ./cmd/rollcheck cluster proxy-images --no-load nginx | tail -n 1) \
    || die "rollcheck cluster proxy-images nginx failed or took longer than 20m"
  docker tag "$ref" "$PROXY_IMAGE" || die "docker tag $ref $PROXY_IMAGE failed"
  log "built $PROXY_IMAGE ($ref)"
fi
