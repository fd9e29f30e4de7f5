#!/usr/bin/env bash
# Build the tools the scripts run (ginkgo: a `go tool` dependency pinned in go.mod; the rollcheck
# CLI) into $ROLLCHECK_CACHE/bin. kind needs no binary: rollcheck drives it in-process. Nothing is
# downloaded but Go modules: all of them first, under a time limit; the builds then run with
# GOPROXY=off, so none downloads silently.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=tools
need go "install Go (>= 1.25)"
mkdir -p "$ROLLCHECK_CACHE/bin"
cd "$REPO_ROOT"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
retry_timeout 3 600 "go build ginkgo" -- env GOPROXY=off go build -o "$ROLLCHECK_CACHE/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
# Static (CGO_ENABLED=0): rollcheck makes its load and app images of its own executable.
retry_timeout 3 600 "go build the rollcheck CLI" -- env GOPROXY=off CGO_ENABLED=0 go build -o "$RC" ./cmd/rollcheck
log "ginkgo $("$ROLLCHECK_CACHE/bin/ginkgo" version | awk '{print $NF}'), rollcheck (kind $("$RC" cluster default-image >/dev/null && echo in-process)) in $ROLLCHECK_CACHE/bin"
