#!/bin/sh
# Install the Python packages that python bots may import besides Debian's
# numpy: ONNX Runtime (contract 1.1; decision 220), from the package index,
# into Debian's own folder for locally installed packages of its python3
# (/usr/local/lib/python3.X/dist-packages, on that interpreter's sys.path),
# where the sandbox's image takes it from (cardroom/sandbox/image.py).
# Idempotent: nothing to do when the pinned version is there already.
#
#   install-bot-packages.sh [PIP]   PIP: any pip (default: python3 -m pip of
#                                   the bots' interpreter); the wheel is chosen
#                                   for the bots' interpreter, not PIP's.
# Runs as root, or through sudo when it is available.
set -eu

ONNXRUNTIME_VERSION=1.32.0
BOT_PYTHON="${CARDROOM_BOT_PYTHON:-/usr/bin/python3}"
PIP="${1:-$BOT_PYTHON -m pip}"

version="$("$BOT_PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
target="/usr/local/lib/python$version/dist-packages"
if [ -d "$target/onnxruntime-$ONNXRUNTIME_VERSION.dist-info" ]; then
    echo "install-bot-packages: nothing to do (onnxruntime $ONNXRUNTIME_VERSION in $target)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-bot-packages: need root (or sudo) to write $target" >&2
        exit 1
    fi
fi

# --no-deps: onnxruntime imports and runs with numpy alone (Debian's, 1.24 on
# Debian 12, within its numpy>=1.21.6); flatbuffers, packaging, protobuf and
# sympy serve only its offline tools. --target with the interpreter's
# version and platform: the wheel for the bots' python3, whichever pip runs.
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
# shellcheck disable=SC2086
$PIP install --quiet --no-deps --only-binary=:all: --implementation cp --python-version "$version" \
    --platform manylinux_2_28_x86_64 --target "$staging" "onnxruntime==$ONNXRUNTIME_VERSION"
$SUDO mkdir -p "$target"
for old in "$target"/onnxruntime "$target"/onnxruntime-*.dist-info; do
    [ -e "$old" ] && $SUDO rm -rf "$old"
done
$SUDO cp -R "$staging/onnxruntime" "$staging/onnxruntime-$ONNXRUNTIME_VERSION.dist-info" "$target/"
# Compiled once here for the bots' interpreter: a sandboxed bot cannot write
# its .pyc files, and would compile the modules again at every start.
$SUDO "$BOT_PYTHON" -m compileall -q "$target/onnxruntime" >/dev/null || true
$SUDO chmod -R a+rX "$target/onnxruntime" "$target/onnxruntime-$ONNXRUNTIME_VERSION.dist-info"
echo "install-bot-packages: onnxruntime $ONNXRUNTIME_VERSION installed in $target"
