#!/usr/bin/env bash
# The base image, debian:bookworm-slim, made from Debian's own packages where
# no image registry is reachable: `debootstrap --variant=minbase bookworm`
# from the Debian mirror this machine's apt uses, then `docker import`.
# The root file system's tar is kept (in /var/cache/cardroom/base as root,
# for every checkout; else var/base/) and imported again when the daemon
# lacks the image (about a minute saved); a tar older than a week is made
# again, so the base follows Debian's point releases and security fixes.
#
#   DOCKER_HOST=unix://... scripts/containers/base-image.sh
#   DEBIAN_MIRROR=http://... to choose another mirror
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOCKER=${DOCKER:-/usr/bin/docker}
TAG=debian:bookworm-slim
if [ "$(id -u)" -eq 0 ]; then CACHE=${CARDROOM_BASE_CACHE:-/var/cache/cardroom/base}; else CACHE=${CARDROOM_BASE_CACHE:-$ROOT/var/base}; fi
TAR=$CACHE/debian-bookworm-minbase.tar
if [ -e "$TAR" ] && [ -n "$(find "$TAR" -mtime +7)" ]; then
  echo "base-image: $TAR is over a week old: making it again"
  rm -f "$TAR"
  "$DOCKER" image rm "$TAG" >/dev/null 2>&1 || true
fi

if "$DOCKER" image inspect "$TAG" >/dev/null 2>&1; then
  echo "base-image: $TAG is there"
  exit 0
fi

# The first Debian mirror (and security mirror) in apt's configuration:
# deb822 .sources files or one-line sources.list entries.
apt_uri() {  # $1: suite to look for
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk -v suite="$1" '
      /^[[:space:]]*$/ { if (uri != "" && hit) { print uri; exit } uri=""; hit=0; next }
      tolower($1) == "uris:" { uri=$2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) hit=1 }
      END { if (uri != "" && hit) print uri }' "$f" | head -1
  done
  if [ -e /etc/apt/sources.list ]; then
    awk -v suite="$1" '$1 == "deb" && $3 == suite { print $2; exit }' /etc/apt/sources.list
  fi
}

if [ ! -s "$TAR" ]; then
  MIRROR=${DEBIAN_MIRROR:-$(apt_uri bookworm | head -1)}
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
  SECURITY=$(apt_uri bookworm-security | head -1)
  SECURITY=${SECURITY:-${MIRROR%/debian}/debian-security}
  mkdir -p "$CACHE"
  ROOTFS=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$ROOTFS"' EXIT
  echo "base-image: debootstrap --variant=minbase bookworm from $MIRROR"
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
    tail -20 "$CACHE/debootstrap.log" >&2
    exit 1
  }
  cat >"$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
  # What a slim image leaves out: package caches, lists, man pages and docs.
  cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  echo 'APT::Install-Recommends "false"; APT::Install-Suggests "false";' >"$ROOTFS/etc/apt/apt.conf.d/90slim"
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* "$ROOTFS"/var/log/*.log
  tar -C "$ROOTFS" --numeric-owner -cf "$TAR.part" .
  mv "$TAR.part" "$TAR"
fi

echo "base-image: docker import $TAR as $TAG"
"$DOCKER" import --change 'CMD ["bash"]' "$TAR" "$TAG" >/dev/null
"$DOCKER" image ls "$TAG"
