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
# The Ginkgo suites that need a cluster run under make e2e: here the matrix package's own unit
# tests run (-skip its Ginkgo entry point) and the examples suite is compiled.
step unit go test -count=1 -skip '^TestConformance$' $(go list ./... | grep -v -e '/examples/check$')
step compile-examples go test -c -o /dev/null ./examples/check
step scripts bash scripts/test-scripts.sh
