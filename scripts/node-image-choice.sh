# shellcheck shell=bash
# choose_node_image: decide which kind node image `make e2e` uses, and say why.
# ROLLCHECK_NODE_IMAGE selects:
#   auto (default)  kind's upstream image if it is present locally or can be pulled, else the offline one
#   upstream        kind's upstream image (pulled if missing; an error if it cannot be)
#   offline         rollcheck's offline image, built by scripts/node-image.sh (cached)
#   <image ref>     that image; "offline" source when it is a rollcheck/kind-node image
# Exports ROLLCHECK_NODE_IMAGE_REF for internal/cluster (which tells the source from the reference)
# and sets NODE_IMAGE_SOURCE (upstream|offline) for the log. Needs lib.sh sourced and $RC built
# (validate_knobs builds it).

# upstream_node_image: kind's default node image, kind's own Go constant (defaults.Image).
upstream_node_image() {
  "$RC" cluster default-image
}

use_offline() { # reason
  local ref
  ref=$(bash "${ROLLCHECK_NODE_IMAGE_BUILDER:-$REPO_ROOT/scripts/node-image.sh}") || die "building the offline node image failed"
  export ROLLCHECK_NODE_IMAGE_REF=$ref; NODE_IMAGE_SOURCE=offline
  log "node image: $ref (offline: $1)"
}

use_upstream() { # ref reason
  export ROLLCHECK_NODE_IMAGE_REF=$1; NODE_IMAGE_SOURCE=upstream
  log "node image: $1 (upstream: $2)"
}

choose_node_image() {
  local want=${ROLLCHECK_NODE_IMAGE:-auto} up err
  case "$want" in
    offline) use_offline "ROLLCHECK_NODE_IMAGE=offline" ;;
    upstream | auto)
      up=$(upstream_node_image) && [ -n "$up" ] || die "cannot read kind's default node image (rollcheck cluster default-image)"
      if docker image inspect "$up" >/dev/null 2>&1; then
        use_upstream "$up" "present locally"
      elif log "waiting up to ${ROLLCHECK_PULL_TIMEOUT:-120}s for: docker pull $up (one try: auto falls back to the offline image)" \
        && err=$(timeout --kill-after=10s "${ROLLCHECK_PULL_TIMEOUT:-120}s" docker pull -q "$up" 2>&1); then
        use_upstream "$up" "pulled"
      elif [ "$want" = upstream ]; then
        die "ROLLCHECK_NODE_IMAGE=upstream but $up cannot be pulled: $(echo "$err" | tail -1)"
      else
        use_offline "kind's upstream image $up cannot be pulled: $(echo "${err:-timed out}" | tail -1)"
      fi
      ;;
    *:*)
      docker image inspect "$want" >/dev/null 2>&1 || die "ROLLCHECK_NODE_IMAGE=$want: no such image in the Docker engine"
      case "$want" in
        rollcheck/kind-node:*) export ROLLCHECK_NODE_IMAGE_REF=$want; NODE_IMAGE_SOURCE=offline ;;
        *) export ROLLCHECK_NODE_IMAGE_REF=$want; NODE_IMAGE_SOURCE=upstream ;;
      esac
      log "node image: $want (ROLLCHECK_NODE_IMAGE, $NODE_IMAGE_SOURCE)"
      ;;
    *) die "ROLLCHECK_NODE_IMAGE=$want: want auto, upstream, offline or an image reference (repo:tag)" ;;
  esac
}
