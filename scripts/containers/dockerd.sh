#!/usr/bin/env bash
# A private Docker daemon for the container tests and benchmarks, never the
# machine's own: its own data root, exec root, pid file and socket, and no
# networking of its own at all:
# no bridge, no iptables rules, no IP forwarding or masquerading, so no
# private-range address is ever created. Every container runs on the host's
# network (docker-compose.yml says network_mode: host), every build too.
#
#   scripts/containers/dockerd.sh start   # prints nothing; exports nothing
#   scripts/containers/dockerd.sh stop    # daemon, its containerd, mounts: gone
#   scripts/containers/dockerd.sh env     # DOCKER_HOST=... for eval
#   scripts/containers/dockerd.sh check   # exit 0 when a daemon can run here
#
# The worker containers use the runtime `cardroom-bwrap`
# (deploy/docker/cardroom-runc, registered here with --add-runtime).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# Short paths: containerd's shim sockets must fit in a Unix socket path.
RUN_DIR=${CARDROOM_DOCKER_RUN:-/run/cardroom-docker}
# The data root (images and build layers) is the machine's, shared by every
# checkout, so that a fresh clone (CI's) rebuilds only the layers its changes
# touch: the images took 6 minutes of a 26-minute CI run when each clone
# started empty. One daemon at a time uses it (run.sh holds a machine-wide
# lock; the socket above is machine-wide anyway). Not root: under var/.
if [ -z "${CARDROOM_DOCKER_DATA:-}" ] && [ "$(id -u)" -eq 0 ]; then
  CARDROOM_DOCKER_DATA=/var/lib/cardroom-docker
fi
DATA_ROOT=${CARDROOM_DOCKER_DATA:-$ROOT/var/docker}
SOCK=$RUN_DIR/docker.sock
PIDFILE=$RUN_DIR/dockerd.pid
LOG=$ROOT/var/dockerd.log
DOCKERD=${DOCKERD:-/usr/sbin/dockerd}
DOCKER=${DOCKER:-/usr/bin/docker}

# Containers go below this process's own cgroups (a memory cgroup the machine
# may have put us in), not beside them at the top of each hierarchy.
cgroup_parent() {
  local own
  own=$(awk -F: '$2 == "memory" || $2 == "" {print $3; exit}' /proc/self/cgroup)
  own=${own%/}
  echo "${own}/cardroom-docker"
}

check() {
  [ "$(id -u)" -eq 0 ] || { echo "not root"; return 1; }
  [ -x "$DOCKERD" ] || { echo "$DOCKERD is missing (scripts/install-system-packages.sh containers installs docker.io)"; return 1; }
  command -v debootstrap >/dev/null || { echo "debootstrap is missing (scripts/install-system-packages.sh containers)"; return 1; }
  command -v docker-compose >/dev/null || { echo "docker-compose is missing (scripts/install-system-packages.sh containers)"; return 1; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || { echo "no overlay file system in this kernel"; return 1; }
  return 0
}

running() { [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  mkdir -p "$RUN_DIR" "$DATA_ROOT" "$(dirname "$LOG")"
  if running; then
    echo "dockerd.sh: a private dockerd already runs (pid $(cat "$PIDFILE"), $SOCK)" >&2
    return 1
  fi
  "$DOCKERD" \
    --data-root "$DATA_ROOT" --exec-root "$RUN_DIR/exec" --pidfile "$PIDFILE" \
    --host "unix://$SOCK" --config-file "$ROOT/deploy/docker/daemon.json" \
    --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --userland-proxy=false --storage-driver overlay2 \
    --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "$(cgroup_parent)" \
    --add-runtime "cardroom-bwrap=$ROOT/deploy/docker/cardroom-runc" \
    >"$LOG" 2>&1 &
  local i
  for i in $(seq 1 120); do
    if DOCKER_HOST="unix://$SOCK" "$DOCKER" version >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.5
  done
  echo "dockerd.sh: dockerd did not come up in 60 s; its log ($LOG):" >&2
  tail -20 "$LOG" >&2
  stop
  return 1
}

# Everything the daemon leaves mounted under our roots, deepest first.
our_mounts() {
  awk '{print $5}' /proc/self/mountinfo | grep -E "^($RUN_DIR|$DATA_ROOT)(/|$)" | sort -r || true
}

# The sandbox keeps bots frozen between their moves, and a frozen process
# cannot die: thaw every cgroup of our containers, so that killing them works
# (the cardroom-bwrap runtime does the same on each SIGKILL).
thaw_ours() {
  local top f
  for top in /sys/fs/cgroup/freezer"$(cgroup_parent)" /sys/fs/cgroup/unified"$(cgroup_parent)" /sys/fs/cgroup"$(cgroup_parent)"; do
    [ -d "$top" ] || continue
    find "$top" -name freezer.state 2>/dev/null | while read -r f; do echo THAWED >"$f" 2>/dev/null || true; done
    find "$top" -name cgroup.freeze 2>/dev/null | while read -r f; do echo 0 >"$f" 2>/dev/null || true; done
  done
}

# containerd's shims of our containers (left behind when containerd went
# first): the processes whose -address is our containerd's socket, by pid.
our_shims() {
  local d
  for d in /proc/[0-9]*; do
    { tr '\0' '\n' <"$d/cmdline"; } 2>/dev/null | grep -qxF -- "$RUN_DIR/exec/containerd/containerd.sock" && echo "${d#/proc/}"
  done
}

stop() {
  thaw_ours
  if [ -S "$SOCK" ] && running; then
    # Containers first, so their shims and mounts go with them.
    local ids
    ids=$(DOCKER_HOST="unix://$SOCK" "$DOCKER" ps -aq 2>/dev/null || true)
    if [ -n "$ids" ]; then
      # shellcheck disable=SC2086
      DOCKER_HOST="unix://$SOCK" "$DOCKER" rm -f $ids >/dev/null 2>&1 || true
    fi
  fi
  if [ -s "$PIDFILE" ]; then
    local pid i
    pid=$(cat "$PIDFILE")
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # The daemon's own containerd (a daemon killed hard leaves it behind).
  local cpid=$RUN_DIR/exec/containerd/containerd.pid
  if [ -s "$cpid" ]; then
    kill -TERM "$(cat "$cpid")" 2>/dev/null || true
    sleep 1
    kill -KILL "$(cat "$cpid")" 2>/dev/null || true
  fi
  thaw_ours
  local shim
  for shim in $(our_shims); do kill -KILL "$shim" 2>/dev/null || true; done
  # The cgroups runc left (empty now), deepest first.
  local top
  for top in /sys/fs/cgroup/*"$(cgroup_parent)" /sys/fs/cgroup"$(cgroup_parent)"; do
    [ -d "$top" ] && find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  local m
  for m in $(our_mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$RUN_DIR"
  local left
  left=$(our_mounts)
  if [ -n "$left" ]; then
    echo "dockerd.sh: still mounted: $left" >&2
    return 1
  fi
}

case "${1:-}" in
  start) check >/dev/null || { echo "dockerd.sh: cannot run dockerd here: $(check)" >&2; exit 1; }; start ;;
  stop) stop ;;
  env) echo "DOCKER_HOST=unix://$SOCK" ;;
  check) check ;;
  *) echo "usage: $0 start|stop|env|check" >&2; exit 2 ;;
esac
