"""bot-exec (``bot_exec.c``): the small program that starts each sandboxed
bot's bwrap as the bot's uid, under its rlimits (decision 164).

Without it the worker forks itself (``Popen(user=...)`` cannot vfork: the
child changes its uid) and the child executes prlimit(1), which sets the
rlimits and executes bwrap. A fork copies the worker's page tables, and
every glibc program's start-up costs about 0.4 ms of CPU in a virtual
machine (CPUID is trapped): together 3-4 ms of a native bot's 12 ms start
here. bot-exec is started with a vfork and does both jobs without a C
library.

It is compiled from its source, once per host and version, into the
sandbox's state folder (root-owned, like the prepared ``/dev``), named by a
hash of its source and flags so that a changed source is never run stale. A
worker without a compiler (the container image has none at run time) finds
it prebuilt next to this module, where the image's build stage puts it under
the same name. Where neither can be had, ``bot_exec_program`` says why and
the launcher uses prlimit(1) as before: the same limits, a slower start.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .config import _ensure_dir, state_dir

SOURCE = Path(__file__).with_name("bot_exec.c")
CFLAGS = [
    "-O2",
    "-static",
    "-nostdlib",
    "-ffreestanding",
    "-fno-stack-protector",  # no C library: nothing sets up the canary's TLS
    "-fno-pie",
    "-no-pie",
    "-Wall",
    "-Werror",
]
EXIT_REFUSED = 126  # bot-exec's exit status when it refuses to start the program


def program_name() -> str:
    """``bot-exec-HASH``: the hash of the source and the flags."""
    digest = hashlib.sha256(SOURCE.read_bytes() + "\0".join(CFLAGS).encode()).hexdigest()[:16]
    return f"bot-exec-{digest}"


def build(target: Path, compiler: str) -> None:
    """Compile bot-exec to ``target`` (atomically: a temporary file renamed
    into place) and check that it runs: with no arguments it must refuse."""
    folder = target.parent
    fd, temporary = tempfile.mkstemp(prefix=".bot-exec-", dir=folder)
    os.close(fd)
    try:
        result = subprocess.run([compiler, *CFLAGS, "-o", temporary, str(SOURCE)], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise OSError(f"{compiler} failed: {' '.join(result.stderr.split())[:300]}")
        os.chown(temporary, 0, 0)
        os.chmod(temporary, 0o755)
        check = subprocess.run([temporary], capture_output=True, text=True, timeout=10)
        if check.returncode != EXIT_REFUSED or "--uid and --gid are required" not in check.stderr:
            raise OSError(f"the program built does not work (exit status {check.returncode}: {check.stderr.strip()[:200]})")
        os.rename(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _trusted(path: Path) -> bool:
    """Root's own file that no one else may change (it runs as root)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == 0 and not st.st_mode & 0o022 and os.access(path, os.X_OK)


def _compiler() -> str | None:
    return shutil.which("cc") or shutil.which("gcc")


def build_prebuilt() -> Path:
    """Build bot-exec beside this module (the image's build stage)."""
    target = Path(__file__).with_name(program_name())
    compiler = _compiler()
    if compiler is None:
        raise OSError("no C compiler (cc or gcc) to build bot-exec")
    build(target, compiler)
    return target


def bot_exec_program() -> tuple[str | None, str]:
    """(the path of bot-exec, how it was found), or (None, why not)."""
    try:
        name = program_name()
    except OSError as exc:
        return None, f"its source is missing ({exc})"
    prebuilt = Path(__file__).with_name(name)
    if _trusted(prebuilt):
        return str(prebuilt), f"{prebuilt} (prebuilt)"
    folder = state_dir() / "libexec"
    target = folder / name
    if _trusted(target):
        return str(target), str(target)
    compiler = _compiler()
    if compiler is None:
        return None, f"no C compiler to build {name} from {SOURCE.name}, and no prebuilt {prebuilt}"
    try:
        _ensure_dir(folder, 0o755)
        build(target, compiler)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cannot build {target}: {exc}"
    return str(target), f"{target} (built with {compiler})"
