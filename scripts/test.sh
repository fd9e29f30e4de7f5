#!/usr/bin/env bash
# `make test`: everything that needs no cluster. The suites under suites/, examples/check and
# examples/gotest need a cluster: their files carry the build tag e2e, so `go test ./...` leaves
# them out and `make e2e` runs them; here they are vetted (and so compiled) with the tag.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=test
cd "$REPO_ROOT"
need go "install Go (>= 1.25)"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
# The HTML reports' test (internal/report, TestReportsInBrowser) draws them in headless
# Chromium and fails without it: Debian's package, installed once (apt_install: a time limit,
# retries, and a line saying what it waits for).
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  apt_install chromium
fi
step vet go vet ./...
step vet-e2e go vet -tags e2e ./...
# The darwin build (make release ships it; docs/reference.md, "On a Mac"): vetted, and so
# compiled, for darwin/arm64 (minutes with a cold build cache, seconds after).
step vet-darwin env GOOS=darwin GOARCH=arm64 go vet ./...
step unit go test -count=1 ./...
# examples/gotest is a module of its own (a user's plain go test, with a replace to this
# checkout): ./... above does not reach it. Its go.sum must be tidy: its e2e test builds the
# rollcheck command in that module when it runs as a test binary, and a module this checkout
# added (kustomize's) was missing there, which only make e2e found.
step gotest-example bash -c 'cd examples/gotest && go mod tidy -diff && go vet ./... && go vet -tags e2e ./... && go test -count=1 ./...'
step scripts bash scripts/test-scripts.sh
# The CI workflow users copy (examples/ci): actionlint, pinned, installed once into the cache
# under a time limit (the Go module proxy only), then run offline (with shellcheck on the run:
# scripts when shellcheck is on PATH). go test ./... above ran its
# rollcheck commands with --dry-run (examples/ci/workflow_test.go).
ACTIONLINT_VERSION=v1.7.12
actionlint=$ROLLCHECK_CACHE/tools/actionlint-$ACTIONLINT_VERSION/actionlint
if [ ! -x "$actionlint" ]; then
  retry_timeout 3 600 "go install actionlint $ACTIONLINT_VERSION" -- \
    env GOBIN="$(dirname "$actionlint")" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
step actionlint run_limited 120 "$actionlint" -no-color examples/ci/rollcheck.yaml
