"""The ``sitecustomize`` shim that hands a Python bot its stdin and stdout
inside the sandbox (see the package's docstring)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from .config import _ensure_dir, state_dir

SHIM_DIR = "/cardroom"  # inside the sandbox, on PYTHONPATH
SHIM_ENV = "CARDROOM_STDIO_FD"
SHIM = f'''"""cardroom sandbox: hands the bot its stdin and stdout.

The platform sends the two pipe ends over a Unix socket (fd ${SHIM_ENV});
this runs at interpreter start-up (sitecustomize), before the bot's code,
puts them on fds 0 and 1, and removes its own traces (the variable, its
folder on sys.path and in PYTHONPATH). See cardroom/sandbox/.
"""


def _cardroom_stdio():
    import os
    import sys
    import _socket

    fd = os.environ.pop("{SHIM_ENV}", None)
    path = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p and p != "{SHIM_DIR}"]
    if path:  # the SDK's folder stays, for the bot's own child interpreters
        os.environ["PYTHONPATH"] = ":".join(path)
    else:
        os.environ.pop("PYTHONPATH", None)
    while "{SHIM_DIR}" in sys.path:
        sys.path.remove("{SHIM_DIR}")
    if fd is None:
        return
    sock = _socket.socket(fileno=int(fd))
    try:
        _, ancillary, _, _ = sock.recvmsg(1, _socket.CMSG_SPACE(8))
    finally:
        sock.close()
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder, signed=True) for i in range(0, len(data) - 3, 4)]
    if len(fds) == 2:
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
    for extra in fds:
        os.close(extra)


_cardroom_stdio()
del _cardroom_stdio
'''.replace("${SHIM_ENV}", SHIM_ENV)


def _install_shim() -> Path | None:
    """Write the sitecustomize shim (root-owned, world-readable) once, in a
    folder named after its text: workers of two versions on one host (a
    rolling upgrade) each bind their own, never rewrite each other's."""
    folder = state_dir() / f"shim-{hashlib.sha256(SHIM.encode()).hexdigest()[:12]}"
    target = folder / "sitecustomize.py"
    try:
        _ensure_dir(folder, 0o755)
        if not target.exists() or target.read_text() != SHIM:
            tmp = folder / f".sitecustomize.{os.getpid()}.{threading.get_ident()}"
            tmp.write_text(SHIM)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
    except OSError:
        return None
    return folder
