#!/usr/bin/env bash
# Cluster lifecycle for humans and CI:
#   cluster.sh up      Docker engine, node image choice, create or reuse the kind cluster
#                      (prints created or reused)
#   cluster.sh down    delete the cluster, stop the dockerd rollcheck started (if any)
#   cluster.sh logs    export the cluster's logs into $ARTIFACTS/cluster-logs
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=cluster
validate_knobs

case "${1:-up}" in
  up)
    step docker bash "$REPO_ROOT/scripts/docker-engine.sh" up
    step tools bash "$REPO_ROOT/scripts/tools.sh"
    choose_node_image
    raise_inotify_limits
    step cluster-up "$RC" cluster up
    ;;
  down)
    if [ -x "$RC" ] && docker info >/dev/null 2>&1; then "$RC" cluster down; fi
    bash "$REPO_ROOT/scripts/docker-engine.sh" down
    ;;
  logs) "$RC" cluster logs "$ARTIFACTS/cluster-logs" ;;
  *) die "usage: $0 up|down|logs" ;;
esac
