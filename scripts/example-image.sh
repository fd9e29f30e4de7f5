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
# Which images: "hello", "nginx" or both (no argument, as `make example-image` asks).
want=" ${*:-hello nginx grpc} "
if [[ $want == *" hello "* ]]; then
  log "building the hello binary (up to 5m)"
  CGO_ENABLED=0 timeout --kill-after=10s 300 go build -trimpath -ldflags '-s -w' -o "$dir/hello" ./examples/hello \
    || die "go build ./examples/hello failed or took longer than 5m"
  cp examples/hello/Dockerfile "$dir/"
  log "docker build $IMAGE (up to 5m)"
  DOCKER_BUILDKIT=0 timeout --kill-after=10s 300 docker build -q -t "$IMAGE" "$dir" >/dev/null \
    || die "docker build $IMAGE failed or took longer than 5m"
  log "built $IMAGE"
fi
# The stand-in for a user's gRPC server (examples/grpc): rollcheck's sample app, whose gRPC mode
# app.yaml turns on, tagged with the name examples/grpc/check.yaml uses.
GRPC_IMAGE=rollcheck-example/grpc:dev
if [[ $want == *" grpc "* ]]; then
  log "building the sample app binary for $GRPC_IMAGE (up to 5m)"
  CGO_ENABLED=0 timeout --kill-after=10s 300 go build -trimpath -ldflags '-s -w' -o "$dir/app" ./fixtures/app \
    || die "go build ./fixtures/app failed or took longer than 5m"
  cp fixtures/app/Dockerfile "$dir/"
  log "docker build $GRPC_IMAGE (up to 5m)"
  DOCKER_BUILDKIT=0 timeout --kill-after=10s 300 docker build -q -t "$GRPC_IMAGE" "$dir" >/dev/null \
    || die "docker build $GRPC_IMAGE failed or took longer than 5m"
  log "built $GRPC_IMAGE"
fi
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
