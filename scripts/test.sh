#!/usr/bin/env bash
# `make test`: everything that needs no cluster. The suites under suites/ and examples/check
# need a cluster: they are compiled here but run by `make e2e`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=test
cd "$REPO_ROOT"
need go "install Go (>= 1.25)"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
step vet go vet ./...
# The Ginkgo suites that need a cluster (the matrix, the examples suite) are compiled, not run.
cluster_suites=(./suites ./examples/check)
step unit go test -count=1 $(go list ./... | grep -v -e '/suites$' -e '/examples/check$')
step compile-suites bash -c 'for p in "$@"; do go test -c -o /dev/null "$p" || exit 1; done' _ "${cluster_suites[@]}"
step scripts bash scripts/test-scripts.sh
