#!/bin/sh
# Install the system packages cardroom needs, only those that are missing
# (safe to run again and again; the Makefile and CI call it):
#   bubblewrap  - the bot sandbox (CARDROOM_SANDBOX=bwrap, the default)
#   util-linux  - prlimit(1), with which the sandbox sets a bot's rlimits
#   libseccomp2 - builds the bots' seccomp filter (through the pyseccomp binding)
#   nodejs      - the node runtime of bots (only if no node is installed: a
#                 machine may have its own, e.g. nodesource's, under /usr/bin)
#   python3-numpy - numpy for python bots (Debian's, under /usr like python3)
#   g++, libc6-dev - the tests build native (C) bots; g++ brings libstdc++'s
#                 static library, for starters built with -static
#   rustc       - the tests build the Rust starter (Debian's rustc, 1.63 on
#                 Debian 12; any rustc already on the PATH, e.g. rustup's, does)
#   chromium, fonts-liberation - headless browser (and a font) for tests/web
#   docker-compose - validates docker-compose.yml in CI (tests/ops)
#   docker.io, containerd, runc, tini, debootstrap - `containers` mode only:
#                 the private Docker daemon of `make test-containers` and
#                 `make bench-compose` (scripts/containers/), which builds its
#                 base image with debootstrap (no image registry needed)
#   python3-venv - a fresh venv of Debian's python3 for the author's-install tests
#   nginx - the reverse proxy, for its tests and `make load-test` (tests/ops,
#           benchmarks/load_test.py start their own on loopback ports)
# Runs as root, or through sudo when it is available.
# `install-system-packages.sh sandbox` installs only what running bots needs
# (make demo); with no argument, also what the tests need (make test, CI);
# `install-system-packages.sh containers` only what the container tests need.
set -eu

missing=""
if [ "${1:-all}" = "containers" ]; then
    [ -x /usr/sbin/dockerd ] || missing="$missing docker.io"
    [ -x /usr/bin/containerd ] || missing="$missing containerd"
    [ -x /usr/sbin/runc ] || missing="$missing runc"
    [ -x /usr/bin/tini-static ] || missing="$missing tini"
    command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
    command -v docker-compose >/dev/null 2>&1 || missing="$missing docker-compose"
else
command -v bwrap >/dev/null 2>&1 || [ -x /usr/bin/bwrap ] || missing="$missing bubblewrap"
command -v prlimit >/dev/null 2>&1 || [ -x /usr/bin/prlimit ] || missing="$missing util-linux"
if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p | grep -q 'libseccomp\.so\.2'; then
    missing="$missing libseccomp2"
fi
# The bots' runtimes: node (any, if one is there already) and Debian's numpy.
[ -x /usr/bin/node ] || missing="$missing nodejs"
[ -d /usr/lib/python3/dist-packages/numpy ] || missing="$missing python3-numpy"
if [ "${1:-all}" != "sandbox" ]; then
# The web suite (tests/web) drives a real headless Chromium (Playwright with
# executable_path=/usr/bin/chromium; no browser download), and its screenshots
# need a font (Debian's chromium only recommends one; we install without recommends).
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s fonts-liberation >/dev/null 2>&1; then
    missing="$missing fonts-liberation"
fi
# docker-compose (Debian's v1): CI checks docker-compose.yml with `docker-compose
# config -q` (tests/ops/test_compose.py); no Docker daemon is needed for that.
command -v docker-compose >/dev/null 2>&1 || missing="$missing docker-compose"
# nginx: the proxy tests and the load test run the real one in front of gunicorn
# with configs of their own on loopback ports; they never use the package's
# default site (which Debian starts on port 80 where an init system runs).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
# python3-venv: the author's-install tests put the wheel into a fresh venv of
# Debian's python3, as an author would (tests/web/test_author_install.py).
/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
# The runtime tests compile native bots (C, and the C++ and Rust starters, static).
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
[ -e /usr/include/stdio.h ] || missing="$missing libc6-dev"
command -v rustc >/dev/null 2>&1 || [ -x /usr/bin/rustc ] || missing="$missing rustc"
fi
fi

if [ -z "$missing" ]; then
    echo "install-system-packages: nothing to do ($(bwrap --version 2>/dev/null || echo bwrap), prlimit present${1:+, mode $1})"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-system-packages: need root (or sudo) to install:$missing" >&2
    exit 1
fi

echo "install-system-packages: installing:$missing"
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
elif command -v dnf >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $SUDO dnf install -y $(echo "$missing" | sed 's/libseccomp2/libseccomp/; s/rustc/rust/')
elif command -v apk >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $SUDO apk add --no-cache $(echo "$missing" | sed 's/util-linux/util-linux-misc/; s/libseccomp2/libseccomp/; s/rustc/rust/')
else
    echo "install-system-packages: no apt-get, dnf or apk here; install by hand:$missing" >&2
    exit 1
fi

[ "${1:-all}" = "containers" ] && /usr/sbin/dockerd --version || bwrap --version
