"""The versions of the bot runtimes on this server, read from the system
(never written down by hand) for the Runtimes page (docs/runtimes.md).

The web server and the workers run the same image (docker-compose.yml), so
what this process finds is what a bot gets in the sandbox: the sandbox binds
the host's /usr read-only. Each probe runs the program a bot would run (the
interpreter bots run on, their ``node``) or reads the library
file itself; anything missing is said in words, never an error page. The
result is kept for a few minutes: a probe starts Python with numpy (and
reads ONNX Runtime's version from its metadata)."""

from __future__ import annotations

import glob
import os
import platform
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MARKER = "<!-- runtime versions: the site shows them here, read from its system -->"
CACHE_SECONDS = 600
BOT_PATH = "/usr/bin:/bin"  # the PATH bots get (cardroom.launch)
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu")
_PROBE_TIMEOUT = 15


@dataclass(frozen=True)
class RuntimeVersions:
    python: str  # "Python 3.11.2 (/usr/bin/python3)"
    numpy: str
    onnxruntime: str
    node: str
    glibc: str
    libstdcxx: str
    libgcc_s: str
    system: str  # the distribution and the machine

    def markdown(self) -> str:
        """The table the Runtimes page shows in place of its marker line."""
        rows = [
            "| runtime | what is there |",
            "|---|---|",
            f"| `python` | {self.python}; numpy {self.numpy}; ONNX Runtime {self.onnxruntime} (CPU); `cardroom_sdk` {_cardroom_version()}; the standard library |",
            f"| `node` | {self.node}; Node's built-in modules |",
            f"| `native` | {self.glibc}; {self.libstdcxx}; {self.libgcc_s} |",
        ]
        return "\n".join(rows) + f"\n\nRead from this server when the page was made: {self.system}."


def _cardroom_version() -> str:
    from cardroom import __version__

    return __version__


def _run(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    """A program's standard output, stripped; None if it cannot be run."""
    try:
        out = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            env=env or {"PATH": BOT_PATH, "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _python() -> tuple[str, str, str]:
    from cardroom.launch import bot_python

    python = bot_python()
    # One BLAS thread, as in the sandbox: numpy's import starts no others.
    env = {"PATH": BOT_PATH, "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1"}
    script = (
        "import platform; print(platform.python_version())\n"
        "try:\n    import numpy; print(numpy.__version__)\nexcept ImportError:\n    print('not installed')\n"
        # its metadata, not an import (half a second)
        "from importlib import metadata\n"
        "try:\n    print(metadata.version('onnxruntime'))\nexcept metadata.PackageNotFoundError:\n    print('not installed')"
    )
    found = _run([python, "-c", script], env)
    if found is None or len(found.split("\n")) < 3:
        return f"no Python at `{python}`", "(no Python)", "(no Python)"
    version, numpy, onnxruntime = found.split("\n", 2)
    return f"Python {version} (`{python}`)", numpy, onnxruntime


def _node() -> str:
    from cardroom.runtimes import bot_node

    node = bot_node()
    if not os.access(node, os.X_OK):
        return "Node.js is not installed here"
    found = _run([node, "-p", "process.version + ' ' + process.versions.v8"])
    if not found or " " not in found:
        return f"`{node}` does not run here"
    version, v8 = found.split(" ", 1)
    return f"Node.js {version} (V8 {v8}, `{node}`)"


def _library(pattern: str) -> Path | None:
    for folder in LIBRARY_DIRS:
        for name in sorted(glob.glob(os.path.join(folder, pattern))):
            return Path(name)
    return None


def _newest_symbol_version(path: Path, prefix: bytes) -> str | None:
    """The newest symbol version a library defines (``GLIBCXX_3.4.30``): a
    binary that needs a newer one does not load here."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    found = {m.group(0).decode() for m in re.finditer(re.escape(prefix) + rb"_[0-9]+(?:\.[0-9]+)+", data)}
    if not found:
        return None
    return max(found, key=lambda v: tuple(int(x) for x in v.split("_", 1)[1].split(".")))


def _glibc() -> str:
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()  # "glibc 2.36"
    except (ValueError, OSError, AttributeError):
        return "glibc: not found"
    return f"{name} {version} with libm (symbol versions up to GLIBC_{version})"


def _libstdcxx() -> str:
    link = _library("libstdc++.so.6")
    if link is None:
        return "libstdc++: not installed"
    real = link.resolve()
    newest = _newest_symbol_version(real, b"GLIBCXX")
    return f"libstdc++ `{real.name}`" + (f" (symbol versions up to {newest})" if newest else "")


def _libgcc_s() -> str:
    link = _library("libgcc_s.so.1")
    return f"libgcc_s `{link.name}`" if link else "libgcc_s: not installed"


def _system() -> str:
    try:
        release = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        release = ""
    return ", ".join(x for x in (release, f"{platform.machine()}", f"Linux {platform.release()}") if x)


def probe() -> RuntimeVersions:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:  # two programs start at once: the page waits for the slower
        python_probe, node_probe = pool.submit(_python), pool.submit(_node)
        python, numpy, onnxruntime = python_probe.result()
        node = node_probe.result()
    return RuntimeVersions(
        python=python,
        numpy=numpy,
        onnxruntime=onnxruntime,
        node=node,
        glibc=_glibc(),
        libstdcxx=_libstdcxx(),
        libgcc_s=_libgcc_s(),
        system=_system(),
    )


_memo: tuple[float, RuntimeVersions] | None = None


def current() -> RuntimeVersions:
    """The probe's result, kept for CACHE_SECONDS in this process (each
    process probes its own system; the versions change only when the
    image does, and a new image means new processes)."""
    global _memo
    now = time.monotonic()
    if _memo is None or now - _memo[0] > CACHE_SECONDS:
        _memo = (now, probe())
    return _memo[1]
