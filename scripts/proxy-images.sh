#!/usr/bin/env bash
# `make proxy-images`: build the proxy fixture images (internal/proxies' table: each proxy's
# version, where its binary comes from, its image recipe) in the local Docker engine, load them
# into rollcheck's kind cluster when it exists, and print their references, one a line. Cached:
# with nothing changed it takes seconds and builds nothing. The work is Go's (`rollcheck cluster
# proxy-images`, whose help lists the images): it checks the host's programs first, and every
# download and build there has a time limit and a retry, and a log line saying what it waits for.
# This script names no proxy: the table is the one place that does.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=proxy-images
validate_knobs
step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
# The entrypoint is built from this checkout: the CLI runs in it.
cd "$REPO_ROOT"
step proxy-images "$RC" cluster proxy-images
