#!/usr/bin/env bash
# `make tune ARGS="--sample exit"`: find the smallest preStop that meets the threshold
# (rollcheck tune; ARGS are its flags, quoted as in a shell), from nothing: Docker engine, tools
# and node image as make e2e gets them, then `rollcheck tune ARGS` (which creates or reuses the
# cluster, and deletes only a cluster it created unless ROLLCHECK_KEEP_CLUSTER or --keep-cluster
# is set). Its exit code is rollcheck tune's: 0 found and confirmed, 1 not found or not
# confirmed, 2 bad input or no verdict, 130 interrupted.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=tune
validate_knobs
[ -n "${ARGS:-}" ] || { printf 'make tune: ARGS is required, e.g. ARGS="--sample exit" (rollcheck tune -h)\n' >&2; exit 2; }
# ARGS keeps its quotes: ARGS="-f check.yaml --exec 'sleep {}'".
eval "set -- $ARGS"
step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
step tools bash "$REPO_ROOT/scripts/tools.sh"
# Bad input is found before any cluster work: the same command with --dry-run.
"$RC" tune "$@" --dry-run >/dev/null
choose_node_image
exec "$RC" tune "$@"
