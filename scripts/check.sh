#!/usr/bin/env bash
# `make check SPEC=file.yaml`: check a user's app described by a check file on the kind
# cluster, from nothing: Docker engine, tools and node image as make e2e gets them, then
# `rollcheck check -f SPEC` (which creates or reuses the cluster, and deletes only a cluster
# it created unless ROLLCHECK_KEEP_CLUSTER is set). Its exit code is rollcheck check's:
# 0 every row passed, 1 a threshold broken, 2 bad input or no verdict, 130 interrupted.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=check
validate_knobs
[ -n "${SPEC:-}" ] || { printf 'make check: SPEC=path/to/check.yaml is required\n' >&2; exit 2; }
[ -f "$SPEC" ] || { printf 'make check: SPEC=%s: no such file\n' "$SPEC" >&2; exit 2; }
step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
step tools bash "$REPO_ROOT/scripts/tools.sh"
# Bad input is found before any cluster work: the same command with --dry-run.
"$RC" check -f "$SPEC" --dry-run >/dev/null
choose_node_image
exec "$RC" check -f "$SPEC" --artifacts "$ARTIFACTS" ${ROLLCHECK_CHECK_FLAGS:-}
