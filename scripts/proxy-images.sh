#!/usr/bin/env bash
# `make proxy-images`: build the proxy fixture images (internal/proxies: HAProxy and nginx from
# Debian 12's packages, Caddy and Traefik from their Go modules at pinned versions, each FROM scratch) in the
# local Docker engine, load them into rollcheck's kind cluster when it exists, and print their
# references, one a line. Cached: with nothing changed it takes seconds and builds nothing. The
# work is Go's (`rollcheck cluster proxy-images`): every download and build there has a time
# limit and a retry, and a log line saying what it waits for.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=proxy-images
validate_knobs
need apt-get "HAProxy and nginx come from Debian 12 (bookworm) packages: run this on Debian 12"
need dpkg-deb "HAProxy and nginx come from Debian 12 (bookworm) packages: run this on Debian 12"
step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
# The entrypoint is built from this checkout: the CLI runs in it.
cd "$REPO_ROOT"
step proxy-images "$RC" cluster proxy-images
