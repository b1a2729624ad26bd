"""Starting a bot program: the seam where the sandbox wraps the process.

The match runner never calls ``subprocess`` itself: it asks a ``Launcher`` for
a ``BotProcess`` and talks to its pipes. ``PlainLauncher`` starts the program
directly (local development only); ``cardroom.sandbox.BwrapLauncher`` starts
it inside bubblewrap. Both hand back the same ``BotProcess`` interface, so the
runner does not change with the isolation.
"""

from __future__ import annotations

import abc
import ctypes
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from cardroom.fdwait import fd_ready


def bot_python() -> str:
    """The interpreter bots run on: world-readable so that an unprivileged
    sandboxed user can execute it (the default python3 here may live under a
    0700 home directory)."""
    configured = os.environ.get("CARDROOM_BOT_PYTHON")
    if configured:
        return configured
    if os.access("/usr/bin/python3", os.X_OK):
        return "/usr/bin/python3"
    return sys.executable


def sdk_packages() -> dict[str, Path]:
    """The packages every Python bot may import besides the standard
    library: the platform's own ``engine`` and ``cardroom_sdk``, by name."""
    import cardroom_sdk
    import engine

    return {p.__name__: Path(p.__file__).resolve().parent for p in (engine, cardroom_sdk)}


@dataclass(frozen=True)
class BotLimits:
    """Resource limits for one bot process (enforced by the sandbox; the plain
    launcher applies only what it can without isolation)."""

    memory_bytes: int = 512 * 1024 * 1024
    cpu_seconds: int = 120
    max_processes: int = 32
    file_size_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    tmp_bytes: int = 16 * 1024 * 1024
    shm_bytes: int = 1024 * 1024
    tmp_inodes: int = 4096  # files and folders in /tmp
    shm_inodes: int = 256
    cpu_cores: float = 1.0  # all of the bot's processes together
    # RLIMIT_AS at memory_bytes too (False for runtimes that reserve far more
    # address space than they use, V8's: the memory cgroup alone holds them).
    limit_address_space: bool = True


# Threads of numpy's BLAS (and OpenMP) and of libuv's pool (node): one, not
# one per core of the host (a bot has one core).
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "UV_THREADPOOL_SIZE": "1"}


class StartupRefused(Exception):
    """What the bot did before it was ready forfeits its seat (it kept a way
    into its procfs across ``ready``, decision 267): the launcher has killed
    it. The message says what it did."""


class BotProcess(abc.ABC):
    """A running bot: its pipes, and a way to end it and everything it started."""

    stdin: IO[bytes]
    stdout_fd: int
    stderr_fd: int
    pid: int

    @abc.abstractmethod
    def poll(self) -> int | None:
        """The exit status once the bot's main process has ended, else None."""

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the bot's main process to end;
        its exit status, or None if it still runs. Woken by the exit itself
        (a pidfd), not by polling."""
        status = self.poll()
        if status is not None or timeout <= 0:
            return status
        try:
            pidfd = os.pidfd_open(self.pid)
        except OSError:  # (gone meanwhile: poll says how)
            return self.poll()
        try:
            fd_ready(pidfd, timeout)
        finally:
            os.close(pidfd)
        return self.poll()

    @abc.abstractmethod
    def kill(self) -> None:
        """Kill the bot and every process it started, reap them, and remove
        its temporary files. Idempotent."""

    def pause(self) -> None:  # noqa: B027 - optional: only the sandbox freezes
        """Freeze the bot and everything it started (it is not due to move:
        it may neither think on the others' time nor take their CPU). The
        plain launcher does nothing."""

    def prepare_resume(self) -> None:  # noqa: B027 - optional: only the sandbox has work here
        """The platform's work between another bot's turn and this bot's
        thaw (the sandbox's: the vDSO's lines, decision 273), done before
        the bot's clock starts; ``resume`` does it where this was not called."""

    def resume(self) -> None:  # noqa: B027
        """Thaw what ``pause`` froze (we are about to send a message the bot
        must answer)."""

    def close_startup(self) -> None:  # noqa: B027 - optional: only the sandbox gates calls
        """The bot answered ``ready``: the calls only a runtime's start needs
        (new pipes, sockets, memfds ...: decision 237) are refused from now
        on, and its procfs gives way to static texts (decision 267). Raises
        StartupRefused (the bot killed) if it kept a way into its procfs.
        The plain launcher does nothing."""

    def memory_report(self) -> tuple[int | None, int] | None:
        """Of the bot and everything it started: the most memory held at once
        (bytes; None if the kernel does not say) and how many processes the
        kernel killed for the memory limit; None where it is not counted
        (the plain launcher, a sandbox without the memory cgroup, a bot gone)."""
        return None

    def cpu_ns(self) -> int | None:
        """CPU time used so far by the bot and everything it started, frozen
        or not (nanoseconds); None where it cannot be counted (the plain
        launcher, a sandbox without the cpuacct cgroup, a bot gone)."""
        return None


class Launcher(abc.ABC):
    """Starts bot programs. ``name`` is what ``CARDROOM_SANDBOX`` calls it."""

    name: str
    isolated: bool

    @abc.abstractmethod
    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> BotProcess:
        """Start ``argv`` with working directory ``root`` (the bot's own
        files); argv[0] is the interpreter (under /usr), or ``./ENTRY``, a
        native program of root's; the rest relative to root. ``seat``: the
        bot's seat in its match (the sandbox gives the seats of one match
        no file page in common: decision 268)."""


class PlainProcess(BotProcess):
    def __init__(self, popen: subprocess.Popen):
        self._popen = popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self.stdin = popen.stdin
        self.stdout_fd = popen.stdout.fileno()
        self.stderr_fd = popen.stderr.fileno()
        self.pid = popen.pid
        self._killed = False

    def poll(self) -> int | None:
        return self._popen.poll()

    def kill(self) -> None:
        if self._killed:
            return
        self._killed = True
        try:
            # The bot leads its own process group: take its children too.
            os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self._popen.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not wait
            pass
        # Only stdin: the log thread may still be draining stderr (the tail of
        # a crash traceback); the read ends close with this object.
        try:
            self._popen.stdin.close()
        except OSError:
            pass


# glibc refuses to change the real-time signals it keeps for itself (32 and
# 33 on Linux), but an ignored one survives an exec all the same (seen: a
# test run whose parent ignored signal 32). The kernel's own rt_sigaction
# resets it; x86-64 only, like bot-exec, which does the same for sandboxed bots.
_SYS_RT_SIGACTION = 13 if os.uname().machine == "x86_64" else None
_LIBC = ctypes.CDLL(None, use_errno=True) if _SYS_RT_SIGACTION is not None else None
_DEFAULT_ACTION = (ctypes.c_ulong * 4)()  # struct kernel_sigaction: handler 0 is SIG_DFL


def _default_reserved_signal(sig: int) -> None:
    if _LIBC is not None:
        _LIBC.syscall(ctypes.c_long(_SYS_RT_SIGACTION), ctypes.c_long(sig), ctypes.byref(_DEFAULT_ACTION), None, ctypes.c_long(8))


class PlainLauncher(Launcher):
    """No isolation at all: the bot runs as this user with this user's rights.
    For local development with bots you wrote yourself."""

    name = "none"
    isolated = False

    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> BotProcess:
        env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8", **ONE_THREAD_ENV}
        # cardroom_sdk where it is installed (unsandboxed, nothing hides the rest of that folder).
        env["PYTHONPATH"] = ":".join(dict.fromkeys(str(folder.parent) for folder in sdk_packages().values()))

        def limit_self() -> None:  # runs in the child before exec
            import resource
            import signal

            # Ignored signals and the mask survive exec: a bot starts with the
            # defaults whatever this process was started with (decision 207).
            for sig in set(range(1, signal.NSIG)) - {signal.SIGKILL, signal.SIGSTOP}:  # (valid_signals() leaves out 32 and 33)
                try:
                    signal.signal(sig, signal.SIG_DFL)
                except (OSError, ValueError):
                    _default_reserved_signal(sig)  # the C library's own real-time signals
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if limits.limit_address_space:
                resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))

        popen = subprocess.Popen(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=limit_self,
            close_fds=True,
        )
        return PlainProcess(popen)

