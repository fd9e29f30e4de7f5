#!/usr/bin/env bash
# Build the tools the scripts run (kind, ginkgo: `go tool` dependencies pinned in go.mod; the
# rollcheck CLI) into $ROLLCHECK_CACHE/bin. Nothing is downloaded but Go modules.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=tools
need go "install Go (>= 1.25)"
mkdir -p "$ROLLCHECK_CACHE/bin"
cd "$REPO_ROOT"
go build -o "$ROLLCHECK_CACHE/bin/kind" sigs.k8s.io/kind || die "building kind failed"
go build -o "$ROLLCHECK_CACHE/bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || die "building ginkgo failed"
go build -o "$ROLLCHECK_CACHE/bin/rollcheck" ./cmd/rollcheck || die "building the rollcheck CLI failed"
log "kind $("$ROLLCHECK_CACHE/bin/kind" version | awk '{print $2}'), ginkgo $("$ROLLCHECK_CACHE/bin/ginkgo" version | awk '{print $NF}') in $ROLLCHECK_CACHE/bin"
