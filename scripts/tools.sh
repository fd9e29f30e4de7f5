#!/usr/bin/env bash
# Build the tools the scripts run (kind, ginkgo: `go tool` dependencies pinned in go.mod; the
# rollcheck CLI) into $ROLLCHECK_CACHE/bin. Nothing is downloaded but Go modules: all of them
# first, under a time limit; the builds then run with GOPROXY=off, so none downloads silently.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=tools
need go "install Go (>= 1.25)"
mkdir -p "$ROLLCHECK_CACHE/bin"
cd "$REPO_ROOT"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
retry_timeout 3 600 "go build kind" -- env GOPROXY=off go build -o "$ROLLCHECK_CACHE/bin/kind" sigs.k8s.io/kind
retry_timeout 3 600 "go build ginkgo" -- env GOPROXY=off go build -o "$ROLLCHECK_CACHE/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
retry_timeout 3 600 "go build the rollcheck CLI" -- env GOPROXY=off go build -o "$ROLLCHECK_CACHE/bin/rollcheck" ./cmd/rollcheck
log "kind $("$ROLLCHECK_CACHE/bin/kind" version | awk '{print $2}'), ginkgo $("$ROLLCHECK_CACHE/bin/ginkgo" version | awk '{print $NF}') in $ROLLCHECK_CACHE/bin"
