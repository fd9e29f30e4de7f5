#!/usr/bin/env bash
# Make sure a Docker engine answers. A running engine is used untouched. When none answers,
# install Debian's docker.io (root only) and start dockerd ourselves; if the host's capability
# bounding set lacks capabilities that `docker run --privileged` asks for, that dockerd gets a
# runtime wrapper (scripts/runtime/runc-nosysres) as its default runtime.
#   docker-engine.sh [up|down|status]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=docker

STATE=$ROLLCHECK_CACHE/docker
PIDFILE=$STATE/dockerd.pid

# Capability names by number (linux/capability.h), to name what the host lacks.
CAPS=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID CAP_KILL CAP_SETGID
  CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_ADMIN
  CAP_NET_RAW CAP_IPC_LOCK CAP_IPC_OWNER CAP_SYS_MODULE CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE
  CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT CAP_SYS_NICE CAP_SYS_RESOURCE CAP_SYS_TIME
  CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE CAP_AUDIT_WRITE CAP_AUDIT_CONTROL CAP_SETFCAP
  CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ
  CAP_PERFMON CAP_BPF CAP_CHECKPOINT_RESTORE)

answers() { timeout 10 docker info >/dev/null 2>&1; }

started_by_us() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

lacking_caps() {
  local i out=()
  for i in "${!CAPS[@]}"; do host_lacks_cap "$i" && out+=("${CAPS[$i]}"); done
  (IFS=,; echo "${out[*]:-}")
}

up() {
  if answers; then
    if started_by_us; then log "Docker engine answers (started by rollcheck, pid $(cat "$PIDFILE"))"
    else log "Docker engine answers: using it untouched"; fi
    return 0
  fi
  [ -n "${DOCKER_HOST:-}" ] && die "DOCKER_HOST=$DOCKER_HOST does not answer (docker info failed); start that engine or unset DOCKER_HOST"
  [ "$(id -u)" -eq 0 ] || die "no Docker engine answers and rollcheck can only start one as root: start Docker yourself (docker info must work)"
  # Two runs that find no engine at once would start two dockerds on one socket: the second
  # waits for the first here, then uses the engine it started.
  mkdir -p "$STATE"
  exec 9>"$STATE/up.lock"
  log "waiting up to 300s for: another rollcheck starting the Docker engine, if any"
  flock -w 300 9 || die "another rollcheck has been starting the Docker engine for 300s ($STATE/up.lock); see $STATE/dockerd.log"
  if answers; then
    log "Docker engine answers (started meanwhile by another rollcheck): using it"
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || apt_install docker.io
  apt_install jq iptables
  need dockerd "install Debian's docker.io"
  ensure_cli
  local limit
  limit=$(knob ROLLCHECK_DOCKER_WAIT)
  mkdir -p "$STATE"
  local drop config=$STATE/daemon.json
  drop=$(lacking_caps)
  if [ -n "$drop" ]; then
    local real
    real=$(command -v runc) || die "runc not found (Debian's docker.io should have installed it)"
    sed -e "s|@DROP_CAPS@|$drop|" -e "s|@REAL_RUNC@|$real|" "$REPO_ROOT/scripts/runtime/runc-nosysres" >"$STATE/runc-nosysres"
    chmod 0755 "$STATE/runc-nosysres"
    printf '{\n  "runtimes": {"runc-nosysres": {"path": "%s"}},\n  "default-runtime": "runc-nosysres"\n}\n' \
      "$STATE/runc-nosysres" >"$config"
    log "host lacks ${drop}: dockerd gets the runtime wrapper $STATE/runc-nosysres"
  else
    echo '{}' >"$config"
  fi
  # A stale socket or pid file from an engine that died would stop dockerd from starting.
  rm -f /var/run/docker.pid
  log "starting dockerd (log: $STATE/dockerd.log)"
  # dockerd outlives this script: it keeps none of the descriptors its caller holds beyond the
  # three it is given (a lock taken with flock(1) around a run would stay held by the engine,
  # a pipe a CI runner reads would never reach its end).
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if ((fd > 2)); then eval "exec ${fd}>&-" 2>/dev/null || true; fi
    done
    exec nohup dockerd --config-file "$config" >"$STATE/dockerd.log" 2>&1 </dev/null
  ) &
  echo $! >"$PIDFILE"
  local i
  log "waiting up to ${limit}s for: dockerd to answer (docker info)"
  for ((i = 0; i < limit; i++)); do
    answers && { log "dockerd answers after ${i}s ($(docker version -f '{{.Server.Version}}' 2>/dev/null))"; return 0; }
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || die "dockerd exited at once; last lines of $STATE/dockerd.log: $(tail -3 "$STATE/dockerd.log" | tr '\n' ' ')"
    sleep 1
  done
  die "dockerd did not answer within ${limit}s; see $STATE/dockerd.log"
}

down() {
  if started_by_us; then
    local pid
    pid=$(cat "$PIDFILE")
    log "stopping the dockerd rollcheck started (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$PIDFILE"
  else
    log "no dockerd started by rollcheck is running: nothing to stop"
  fi
}

status() {
  if answers; then echo "docker engine: answers$(started_by_us && echo ", started by rollcheck (pid $(cat "$PIDFILE"))")"
  else echo "docker engine: not answering"; return 1; fi
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 [up|down|status]" ;;
esac
