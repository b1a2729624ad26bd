#!/usr/bin/env bash
# The container deployment built and run for real, around one command:
#   scripts/containers/run.sh COMMAND...   (make test-containers, make bench-compose)
#   1. a private Docker daemon (scripts/containers/dockerd.sh: its own roots
#      and socket, no bridge, no iptables; every container on the host's network);
#   2. the base image debian:bookworm-slim made with debootstrap when the
#      daemon lacks it (the tar is kept for a week, base-image.sh);
#   3. the images: cardroom (app), cardroom-postgres, cardroom-redis, cardroom-proxy;
#   4. COMMAND, with CARDROOM_TEST_DOCKER_HOST set to the daemon's socket
#      (tests/containers: the compose stack with the test override, on
#      unusual ports, and the scenario from the host over HTTP);
#   5. always (a trap, on failure too): the stack down, the daemon and its
#      containerd stopped, nothing of theirs left mounted.
# Needs root (CI runs as root). Where no daemon can run it says SKIPPED and
# why, and exits 0; under CI=true that is a failure.
#
# BUILD_EXTRA_CA_CERTS: files of PEM certificates the image builds trust
# besides Debian's (for pip behind a re-signing HTTPS proxy: the Dockerfile's
# EXTRA_CA_CERTS argument). Default: the certificates this machine added
# itself, /usr/local/share/ca-certificates/*.crt; "none" for none.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
START=$(date +%s)
DOCKER=/usr/bin/docker

skip() {
  if [ "${CI:-}" = "true" ]; then
    echo "test-containers: FAILED: cannot run here (CI must): $1" >&2
    exit 1
  fi
  echo "test-containers: SKIPPED: $1"
  exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root to run a Docker daemon"
bash scripts/install-system-packages.sh containers >/dev/null || skip "could not install docker.io, debootstrap, docker-compose"
[ $# -gt 0 ] || { echo "usage: $0 COMMAND..." >&2; exit 2; }
why=$(scripts/containers/dockerd.sh check) || skip "$why"

# One run at a time on this machine, whatever the checkout: the daemon's
# socket, its data root (dockerd.sh) and the ports are the machine's.
mkdir -p var /run/lock
exec 9>/run/lock/cardroom-test-containers.lock
flock -n 9 || skip "another test-containers run holds /run/lock/cardroom-test-containers.lock"

eval "export $(scripts/containers/dockerd.sh env)"
export CARDROOM_TEST_DOCKER_HOST=$DOCKER_HOST

cleanup() {
  local status=$?
  echo "== test-containers: tearing down"
  if [ -S "${DOCKER_HOST#unix://}" ]; then
    COMPOSE_PROJECT_NAME=cardroomtest SECRET_KEY=x POSTGRES_PASSWORD=x \
      docker-compose -f docker-compose.yml -f docker-compose.test.yml down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
    # The shared data root keeps what builds reuse; untagged images over a
    # week old go. (Not the new ones: the classic builder's cache of the
    # app's untagged build stage is such images, and pruning them cost 95 s
    # of rebuilding a run.)
    "$DOCKER" image prune -f --filter until=168h >/dev/null 2>&1 || true
  fi
  scripts/containers/dockerd.sh stop || status=1
  echo "test-containers: $( [ $status -eq 0 ] && echo passed || echo FAILED ) in $(( $(date +%s) - START )) s"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== test-containers: private dockerd ($DOCKER_HOST)"
scripts/containers/dockerd.sh start || exit 1

echo "== test-containers: base image"
scripts/containers/base-image.sh || exit 1

ca_args=()
certs=${BUILD_EXTRA_CA_CERTS:-$(ls /usr/local/share/ca-certificates/*.crt 2>/dev/null | tr '\n' ' ')}
if [ -n "${certs// /}" ] && [ "$certs" != "none" ]; then
  echo "== test-containers: the builds trust these CA certificates too (EXTRA_CA_CERTS): $certs"
  # shellcheck disable=SC2086
  ca_args=(--build-arg "EXTRA_CA_CERTS=$(cat $certs)")
fi
build() {  # tag, dockerfile
  local t0=$(date +%s)
  if ! "$DOCKER" build --network host "${ca_args[@]}" -f "$2" -t "$1" . >"var/build-${1%%:*}.log" 2>&1; then
    echo "test-containers: building $1 failed; the end of var/build-${1%%:*}.log:" >&2
    tail -30 "var/build-${1%%:*}.log" >&2
    return 1
  fi
  echo "   $1: $("$DOCKER" image inspect -f '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1 / 1e6}') ($(( $(date +%s) - t0 )) s)"
}
echo "== test-containers: images"
build cardroom:latest Dockerfile || exit 1
build cardroom-postgres:latest deploy/postgres/Dockerfile || exit 1
build cardroom-redis:latest deploy/redis/Dockerfile || exit 1
build cardroom-proxy:latest deploy/proxy/Dockerfile || exit 1

echo "== test-containers: $*"
"$@"
