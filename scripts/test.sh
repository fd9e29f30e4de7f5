#!/usr/bin/env bash
# `make test`: everything that needs no cluster. The suites under suites/ need a cluster and
# are compiled here (go vet) but run by `make e2e`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=test
cd "$REPO_ROOT"
need go "install Go (>= 1.25)"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
step vet go vet ./...
step unit go test -count=1 $(go list ./... | grep -v '/suites/')
step scripts bash scripts/test-scripts.sh
