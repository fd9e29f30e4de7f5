#!/usr/bin/env bash
# `make bench`: loadgen/attack's benchmarks (CPU time and allocations per request against bare vegeta,
# and of the gRPC attacker; achieved-rate error at 1,000 req/s, and over HTTP/1.1, h2c and gRPC
# at the same rates). Traffic goes to a loopback server the benchmark starts.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${BENCHTIME:-3x}" -count "${COUNT:-1}" ./loadgen/attack/
