"""The bubblewrap launcher: the bwrap command line (``BwrapLauncher.argv``,
the one place it is built), starting a bot in its uid, cgroups and rlimits,
and the running bot (``BwrapProcess``)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

from cardroom.fdwait import fd_ready
from cardroom.launch import BotLimits, BotProcess, Launcher, PlainLauncher, PlainProcess, StartupRefused

from .botexec import bot_exec_program
from .cgroups import CPU_PERIOD_US, _Controller
from .config import (
    BOT_DIR,
    BOT_ENV,
    CGROUP_SLACK_BYTES,
    NONE_WARNING,
    SDK_DIR,
    START_TIMEOUT_S,
    SandboxError,
    _ensure_dir,
    runs_dir,
    uid_range,
)
from .devdir import DEV_ENTRIES, host_devices_problem, prepare_dev
from .filecache import copy_file
from .image import IMAGE_PLATFORM, Image, prepare_image
from .netns import NetnsPool
from .procview import MEMINFO, REPLACED, covered, meminfo, show_only_processes, subset_supported
from .ready_proc import pid_inside, ready_view_folder, replace_proc, ways_in
from .reaping import (
    _children,
    _cleanup,
    _pid_namespace,
    _pidfd_open,
    _status_fields,
    _uids_of,
    freezer_first,
    kill_sandbox_strays,
)
from .seccomp import SeccompFilter, filter_fd
from .shim import SHIM_DIR, SHIM_ENV, _install_shim
from .startup_gate import StartupGate
from .tmpfs import check_tmpfs_mounts, mount_bot_tmpfs
from .uids import UidLease, lease_uid
from .vdso import VdsoWarmer

# Where Debian's python3-numpy lives (the only package of dist-packages a bot sees).
NUMPY_DIR = Path("/usr/lib/python3/dist-packages/numpy")
NO_CGROUP_ADDRESS_FACTOR = 8
# Where every bot's sandbox shows bot-exec, which installs the start-up
# gate's filter (decision 237) and hands a node or native bot its stdin and
# stdout (decision 166); beside a Python bot's shim.
BOT_EXEC_IN_SANDBOX = f"/{IMAGE_PLATFORM}/bot-exec"
# Once a bot answers ready and its /proc is switched, its tasks must all be
# frozen before they are looked at (decision 267): the kernel says so within
# milliseconds, unless a task is stuck in a call that does not end.
FREEZE_SETTLE_S = 1.0
FREEZE_POLL_S = 0.0001


# -- the process -----------------------------------------------------------------------


class BwrapProcess(BotProcess):
    """A bot running in the sandbox. ``pid`` is the outer bwrap process
    (whose exit status is the bot's), ``inner_pid`` the bot's own process
    (pid 1 of its namespace);
    ``uid``, ``run_dir``, ``cgroups`` and ``mounts`` (its /tmp and /dev/shm)
    say what it was given on the host. ``pause``/``resume`` freeze and thaw
    its cgroup (when the freezer is in force)."""

    def __init__(
        self,
        popen: subprocess.Popen,
        stdin_fd: int,
        stdout_fd: int,
        inner_pid: int,
        inner_pidfd: int | None,
        lease: UidLease,
        run_dir: Path,
        cgroups: list[tuple[_Controller, Path]],
        pidns: tuple[int, int] | None = None,
        mounts: list[Path] | None = None,
        freezer_file: tuple[int, bytes, bytes] | None = None,
        netns: tuple[NetnsPool, int] | None = None,
        gate: StartupGate | None = None,
        ready_view: Path | None = None,
        vdso: VdsoWarmer | None = None,
    ):
        self._popen = popen
        # Loads the host's vDSO on every CPU before this bot thaws after
        # another one (decision 273); None: the kernel maps none.
        self._vdso = vdso
        self._vdso_token = -1 if vdso is None else vdso.new_token()
        self._gate = gate  # answers the start-up filter's calls (decision 237)
        # What its /proc becomes once it is ready (decision 267); None: no switch.
        self._ready_view = ready_view
        self.proc_switch_s: float | None = None  # what the switch took (the benchmark reads it)
        self._netns = netns  # the pooled network namespace it was lent
        assert popen.stderr is not None
        self.stdin = os.fdopen(stdin_fd, "wb")
        self.stdout_fd = stdout_fd
        self.stderr_fd = popen.stderr.fileno()
        self.pid = popen.pid
        self.inner_pid = inner_pid
        self.uid = lease.uid
        self.run_dir = run_dir
        self.cgroups = [path for _, path in cgroups]
        self._inner_pidfd = inner_pidfd
        self._lease = lease
        self._cgroups = cgroups
        self._freezer = [(c, path) for c, path in cgroups if c.name == "freezer"]
        self._cpuacct = next(((c, path) for c, path in cgroups if c.name == "cpuacct"), None)
        # One pwrite to a file opened once (``freezer_file``: its descriptor
        # and the values that freeze and thaw), closed with this object.
        self._freeze_fd, self._freeze_value, self._thaw_value = freezer_file or (-1, b"", b"")  # -1: no freezer
        self._pidns = pidns
        self.mounts = list(mounts or [])
        self._killed = False
        self._lock = threading.Lock()

    def pause(self) -> None:
        self._write_freezer(self._freeze_value, "freeze")

    def close_startup(self) -> None:
        if self._gate is not None:
            self._gate.close_startup()
        if self._ready_view is not None:
            self._replace_proc(self._ready_view)

    def _replace_proc(self, view: Path) -> None:
        """Its procfs gives way to the static ``view`` (ready_proc, decision
        267); killed (StartupRefused) if a task of it still reaches the old
        one once every task is frozen. Fails closed: SandboxError."""
        started = time.perf_counter()
        self.pause()  # (the runner froze it already: a second write changes nothing)
        proc = f"/proc/{self.inner_pid}/root/proc"
        try:
            old_dev = os.stat(proc).st_dev
            if old_dev == os.stat("/proc").st_dev:  # never the host's own
                raise OSError(f"{proc} is the host's /proc")
            assert self._inner_pidfd is not None
            # While the freeze settles: a lookup under way meanwhile gets the
            # old procfs or the new view, and what it kept of the old is in
            # its task's descriptors by the time the task is frozen.
            replace_proc(self._inner_pidfd, view, pid_inside(self.inner_pid))
            if os.stat(proc).st_dev != os.stat(view).st_dev:
                raise OSError(f"{proc} is not the static view {view} after the switch")
        except OSError as exc:
            if self.poll() is not None:
                raise StartupRefused("its program ended as it answered ready") from None
            raise SandboxError(f"cannot replace the bot's /proc once it is ready: {exc}") from None
        # Every task frozen: none is in a system call, so none can still
        # open something of the old procfs after the check below.
        freezer, path = self._freezer[0]
        deadline = time.monotonic() + FREEZE_SETTLE_S
        while not freezer.settled_frozen(path):
            if self.poll() is not None:
                raise StartupRefused("its program ended as it answered ready")
            if time.monotonic() > deadline:
                self.kill()
                raise StartupRefused(
                    f"its processes did not freeze within {FREEZE_SETTLE_S:.0f} s of its ready reply "
                    "(a system call that would not end): the sandbox killed it"
                )
            time.sleep(FREEZE_POLL_S)
        try:
            held = ways_in(freezer.tasks(path), old_dev)
        except OSError as exc:
            if self.poll() is not None:
                raise StartupRefused("its program ended as it answered ready") from None
            raise SandboxError(f"cannot look for ways into the bot's old /proc: {exc}") from None
        if held:
            self.kill()
            raise StartupRefused(
                f"it kept a way into its procfs across its ready reply ({'; '.join(held[:4])}), which would let it read "
                "a counter the other seats move: the sandbox killed it (decision 267)"
            )
        self.proc_switch_s = time.perf_counter() - started

    def prepare_resume(self) -> None:
        if self._vdso is not None and not self._killed:
            # The seat that moved before is frozen: what it left in the
            # vDSO's lines is overwritten before this one can time them
            # (once per change of bot: a second call does nothing).
            self._vdso.before_thaw(self._vdso_token)

    def resume(self) -> None:
        self.prepare_resume()
        self._write_freezer(self._thaw_value, "thaw")

    def _write_freezer(self, value: bytes, what: str) -> None:
        # Twice per decision, so no lock; after kill() nothing to do. A kill()
        # from another thread while a write is under way is safe without one:
        # the descriptor's number stays ours until this object is gone (never
        # another file's: after kill() it names /dev/null), and a freeze that
        # lands after kill() thawed the cgroup is undone at once by the thread
        # that wrote it (for a thaw, a second thaw: harmless).
        fd = self._freeze_fd
        if fd < 0 or self._killed:
            return
        try:
            os.pwrite(fd, value, 0)
        except OSError as exc:
            if not self._killed:  # else its cgroup went with it: nothing to do
                # Never let a bot run on unfrozen by mistake: a platform failure.
                paths = ", ".join(str(path) for _, path in self._freezer)
                raise SandboxError(f"cannot {what} the bot's cgroup {paths}: {exc}") from None
        if self._killed:
            self._thaw_after_kill()

    def _thaw_after_kill(self) -> None:
        # A frozen task acts on its SIGKILL only once thawed (cgroup v1): a
        # late freeze would hold the dying bot until the clean-up's 5 s wait.
        try:
            os.pwrite(self._freeze_fd, self._thaw_value, 0)
        except OSError:
            pass

    def cpu_ns(self) -> int | None:
        if self._killed or self._cpuacct is None:
            return None
        controller, path = self._cpuacct
        return controller.cpu_usage_ns(path)

    def memory_report(self) -> tuple[int | None, int] | None:
        memory = self.cgroup("memory")
        if self._killed or memory is None:
            return None
        controller = next(c for c, path in self._cgroups if path == memory)
        return controller.memory_report(memory)

    def frozen(self) -> bool | None:
        """Is the bot frozen now? (None: no freezer here, the weak mode.)"""
        if not self._freezer:
            return None
        return all(controller.frozen(path) for controller, path in self._freezer)

    def cgroup(self, name: str) -> Path | None:
        """The bot's cgroup of controller ``name`` (None if not in force)."""
        return next((path for controller, path in self._cgroups if controller.name == name), None)

    def _retire_freezer_file(self) -> None:
        # The descriptor of a removed cgroup's file keeps that cgroup in the
        # kernel (a dying cgroup) for as long as it is open. It cannot be
        # closed here (see _write_freezer), but its number can be pointed at
        # /dev/null: a write from another thread, this late, goes nowhere.
        if self._freeze_fd < 0:
            return
        try:
            null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return  # out of descriptors: it is closed with this object instead
        try:
            os.dup2(null, self._freeze_fd, inheritable=False)
        finally:
            os.close(null)

    def _close_freezer_file(self) -> None:
        if self._freeze_fd >= 0:
            try:
                os.close(self._freeze_fd)
            except OSError:
                pass
            self._freeze_fd = -1

    def poll(self) -> int | None:
        status = self._popen.poll()
        if status is not None and 128 < status <= 128 + 64:
            return -(status - 128)  # bwrap reports "killed by signal N" as 128+N
        return status

    def kill(self) -> None:
        with self._lock:
            if self._killed:
                return
            self._killed = True
        gone = False
        if self._gate is not None:
            self._gate.stop()
        try:
            gone = _cleanup(self._popen, self._inner_pidfd, self._pidns, self._cgroups, self.run_dir, self.mounts)
        finally:
            if self._netns is not None:
                pool, fd = self._netns
                self._netns = None
                pool.release(fd, clean=gone)
            if self._inner_pidfd is not None:
                os.close(self._inner_pidfd)
                self._inner_pidfd = None
            self._retire_freezer_file()  # before the uid (and its cgroup paths) can be leased again
            self._lease.release()
            try:
                self.stdin.close()
            except OSError:
                pass
            try:
                os.close(self.stdout_fd)
            except OSError:
                pass
            # stderr stays open: the runner's log thread may still be reading
            # the last lines; it is closed with this object.

    def __del__(self) -> None:
        try:
            if not self._killed:
                self.kill()
        except Exception:
            pass
        try:
            self._close_freezer_file()  # no thread can be in pause/resume now
            if self._popen.stderr is not None:
                self._popen.stderr.close()
        except Exception:
            pass


# -- the launcher ---------------------------------------------------------------------


def _copy_bot_files(src: Path, dest: Path, gid: int) -> None:
    """Copy the bot's files into ``dest`` (root-owned, readable by ``gid``
    only at the top, by anyone below it); only regular files and folders,
    hard-linked from the file cache (``filecache``)."""
    dest.mkdir(mode=0o750)
    os.chown(dest, 0, gid)
    os.chmod(dest, 0o750)
    src = Path(src)
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        rel = Path(dirpath).relative_to(src)
        target = dest / rel
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                continue
            os.mkdir(target / name, 0o755)
            os.chmod(target / name, 0o755)
        for name in filenames:
            source = os.path.join(dirpath, name)
            st = os.lstat(source)
            if not stat.S_ISREG(st.st_mode):
                continue
            # Executable where the package says so (a native bot's program);
            # a link to the copy cached for every run.
            copy_file(source, st, target / name, 0o755 if st.st_mode & 0o100 else 0o644)


def _bwrap_supports(bwrap: str, option: str) -> bool:
    try:
        result = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in result.stdout + result.stderr


class BwrapLauncher(Launcher):
    """Starts bots in bubblewrap, each as its own pool uid (see the module)."""

    name = "bwrap"
    isolated = True

    def __init__(
        self,
        bwrap: str,
        controllers: list[_Controller],
        prlimit: str | None = None,
        disable_userns: bool | None = None,
        tmpfs_mounts: bool | None = None,
        seccomp: SeccompFilter | None = None,
        prepared_dev: bool = True,
        bot_exec: str | None = None,
        bot_exec_note: str | None = None,
    ):
        self.bwrap = bwrap
        self.seccomp = seccomp  # None only in the weak mode the operator chose
        if disable_userns is None:
            disable_userns = _bwrap_supports(bwrap, "--disable-userns")
        # bubblewrap 0.8+: the bot cannot create user namespaces of its own
        # (less kernel attack surface).
        self.disable_userns = disable_userns
        self.as_pid_1 = True  # the bot is pid 1: no init process to fork
        # bot-exec sets the uid and the rlimits and executes bwrap, started
        # with a vfork (decision 164); else prlimit(1), in a fork of the
        # worker that changed its uid: the same limits, a slower start.
        # (``bot_exec``: as the probe found it, with how, or "" for none.)
        if bot_exec is None:
            bot_exec, self.bot_exec_note = bot_exec_program()
        else:
            self.bot_exec_note = bot_exec_note or bot_exec or "not asked for"
        self.bot_exec = bot_exec or None
        # Empty network namespaces, reused (decision 165); bot-exec joins them.
        self.netns = NetnsPool() if self.bot_exec is not None else None
        self.prlimit = prlimit or shutil.which("prlimit")
        if self.bot_exec is None and self.prlimit is None:  # the probe says so first, with the fix
            raise SandboxError("prlimit(1) is not installed (util-linux): it sets each bot's rlimits")
        self.controllers = controllers
        if tmpfs_mounts is None:
            tmpfs_mounts = check_tmpfs_mounts() is None
        # /tmp and /dev/shm mounted by us, with an inode limit (else bwrap's
        # own tmpfs, size-limited only: the weak mode).
        self.tmpfs_mounts = tmpfs_mounts
        self.shim = _install_shim()
        # The seats of a match share the kernel's vDSO (decision 273): its
        # lines are loaded on every CPU between the turns of different bots.
        # None where the kernel maps none (vdso=0): nothing shared to load.
        try:
            self.vdso: VdsoWarmer | None = VdsoWarmer.of_this_process()
        except ValueError:
            self.vdso = None
        # What a bot sees of files: its runtime's tree of the image, in
        # memory, bound read-only as its root (decision 175); a node or
        # native bot sees none of Python's files (decision 160).
        proc = covered()
        self.image: Image = prepare_image(self.shim / "sitecustomize.py" if self.shim else None, self.bot_exec, proc)
        # /proc (decision 177): where the bot's start waits for a hand-over,
        # its procfs is remounted to show its processes only, and just what
        # a runtime reads is bound; else every host file is covered. meminfo
        # is per bot.
        self.proc_subset = subset_supported()
        # per memory limit and seat: what /proc becomes once a bot is ready
        self._ready_views: dict[tuple[int, int], Path] = {}
        self._bwrap_stat = os.stat(bwrap)
        # (The host's sysctls: a bot needs none, and their counters
        # (fs.aio-nr, kernel.pty.nr, fs.file-nr ...) are moved by every
        # sandbox: a channel between seats that freezing does not close.
        # subset=pid hides them too.)
        self._proc_binds: dict[bool, list[str]] = {True: [], False: ["--ro-bind", str(self.image.empty), "/proc/sys"]}
        for name in proc:
            bind = ["--ro-bind", str(self.image.proc_view / name), f"/proc/{name}"]
            self._proc_binds[False] += bind
            if name in REPLACED:
                self._proc_binds[True] += bind
        # /dev: one bind of a prepared read-only folder (decision 159), else
        # the same entries built per bot; ``dev_note`` says which, and why,
        # for the probe.
        self.dev: Path | None = None
        self.dev_note = "built for each bot (a prepared /dev was not asked for)"
        if prepared_dev:
            self.dev, how = prepare_dev()
            self.dev_note = how if self.dev is not None else f"built for each bot (no prepared /dev here: {how})"

    def argv(
        self,
        inner_argv: list[str],
        limits: BotLimits,
        run_dir: Path,
        info_fd: int,
        block_fd: int | None,
        tmpfs: tuple[Path, Path] | None = None,
        seccomp_fd: int | None = None,
        netns_joined: bool = False,
        stdio_socket: int | None = None,
        proc_subset: bool = False,
        seat: int = 0,
    ) -> list[str]:
        """The bwrap command line; ``tmpfs``: the bot's (tmp, shm) mounts
        made by ``mount_bot_tmpfs``, else bwrap makes size-limited ones;
        ``seccomp_fd``: the filter program (``filter_fd``); ``netns_joined``:
        bwrap starts in an empty network namespace of the pool (bot-exec
        joined it), else it makes a new one; ``stdio_socket``: bot-exec runs
        in the sandbox before the bot and sends the start-up filter's
        listener over this socket (decision 237), and a bot's stdin and
        stdout come over it, to bot-exec for a node or native bot (decision
        166), to the shim for a Python bot; ``proc_subset``:
        the launcher will remount its procfs with subset=pid before the bot
        runs (only what a runtime reads is bound over it then; decision
        177); ``seat``: which copy of the image is its root (decision 268)."""
        runtime = runtime_of(inner_argv[0])
        if tmpfs is not None:
            shm_args = ["--bind", str(tmpfs[1]), "/dev/shm"]
            tmp_args = ["--bind", str(tmpfs[0]), "/tmp"]
        else:
            shm_args = ["--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]
            tmp_args = ["--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        args = [
            self.bwrap,
            "--unshare-user",
            "--unshare-pid",
            *([] if netns_joined else ["--unshare-net"]),
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *(["--disable-userns"] if self.disable_userns else []),
            *(["--as-pid-1"] if self.as_pid_1 else []),
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "cardroom-bot",
            # Its whole root, read-only: the runtime's files, the platform's
            # (SDK and shim, or bot-exec), the mount points below.
            "--ro-bind",
            str(self.image.tree(runtime, seat)),
            "/",
        ]
        if stdio_socket is not None:
            # bot-exec first (decision 237): it installs the start-up filter
            # and sends its listener; then it hands a node or native bot its
            # stdin and stdout, and leaves that to a Python bot's shim.
            assert self.bot_exec is not None
            only = ["--listener-only"] if _is_python(inner_argv[0]) else []
            inner_argv = [BOT_EXEC_IN_SANDBOX, f"--stdio-socket={stdio_socket}", *only, "--", *inner_argv]
        proc_binds = self._proc_binds[proc_subset]
        if seat:  # the seat's own copies of those files (decision 268)
            proc_binds = _moved(proc_binds, self.image.proc_view, self.image.seat_proc_view(runtime, seat))
        args += [
            "--proc",
            "/proc",
            *proc_binds,
            "--ro-bind",
            str(_meminfo_file(limits.memory_bytes, seat)),
            f"/proc/{MEMINFO}",
        ]
        if self.dev is not None:
            # Read-only already (its superblock is), with no pts or ptmx:
            # one mount where bwrap's --dev made nine (decision 159).
            args += ["--dev-bind", str(self.dev), "/dev", *shm_args]
        else:
            # The same entries built for this bot: a tmpfs, a bind of each of
            # the host's device nodes, the links, then read-only (the device
            # binds are mounts of their own: the remount leaves them usable).
            # Not bwrap's --dev, whose devpts instance would draw on the
            # host's one kernel.pty.max (decision 93), and which is two more
            # mounts (the devpts and the folder that hid it).
            problem = host_devices_problem()
            if problem is not None:  # never bind a file every seat could write
                raise SandboxError(f"the host's device nodes cannot be given to a bot: {problem}")
            args += ["--tmpfs", "/dev"]
            for name, entry in DEV_ENTRIES.items():
                if entry[0] == "char":
                    args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
                elif entry[0] == "link":
                    args += ["--symlink", entry[1], f"/dev/{name}"]
            args += [*shm_args, "--remount-ro", "/dev"]
        args += [
            *tmp_args,
            "--ro-bind",
            str(run_dir),
            BOT_DIR,
            "--chdir",
            BOT_DIR,
            "--info-fd",
            str(info_fd),
            *(["--block-fd", str(block_fd)] if block_fd is not None else []),
            # Installed by bwrap as its last step before it executes the bot.
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            "--",
            *inner_argv,
        ]
        return args

    def _ready_view(self, limits: BotLimits, seat: int) -> Path:
        """The folder a bot's /proc becomes once it is ready (decision 267):
        the image's static texts and its own meminfo, one per memory limit
        and seat (the seats of a match read no file page in common:
        decision 268), made or found once per launcher."""
        key = (limits.memory_bytes, seat)
        folder = self._ready_views.get(key)
        if folder is None:
            texts = self.image.proc_view
            folder = ready_view_folder(runs_dir() / "proc", texts, _meminfo_file(limits.memory_bytes, seat), seat)
            self._ready_views[key] = folder
        return folder

    def as_bot(self, command: list[str], uid: int, rlimits: list[str], netns_fd: int | None) -> tuple[list[str], dict]:
        """``command`` (bwrap's) as the bot's uid under ``rlimits`` (in the
        pool's namespace ``netns_fd``): the command line to start, and
        Popen's arguments for it. bot-exec switches itself, so Popen may
        vfork; prlimit needs a child that Popen has switched (a fork)."""
        if self.bot_exec is not None:
            netns = [] if netns_fd is None else [f"--netns-fd={netns_fd}"]
            return [self.bot_exec, *netns, f"--uid={uid}", f"--gid={uid}", *rlimits, "--", *command], {}
        assert self.prlimit is not None and netns_fd is None
        return [self.prlimit, *rlimits, "--", *command], {"user": uid, "group": uid, "extra_groups": []}

    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> BotProcess:
        interpreter = argv[0]
        if not interpreter.startswith(("/usr/", "/bin/", "./")):  # ./ENTRY: a native bot, in /bot
            raise SandboxError(f"the bot interpreter {interpreter!r} is not under /usr: the sandbox shows its runtime's files under /usr only")
        if interpreter.startswith("/") and not os.access(interpreter, os.X_OK):
            # The platform's to fix (a runtime not installed), never the bot's forfeit.
            raise SandboxError(f"the bot interpreter {interpreter} is not installed (scripts/install-system-packages.sh installs the runtimes)")
        runtime = runtime_of(interpreter)
        tree = self.image.tree(runtime, seat)  # made here the first time a seat needs it, before any lease
        if interpreter.startswith("/") and not os.path.lexists(tree / interpreter.lstrip("/")):
            raise SandboxError(f"{interpreter} is not in the {runtime} runtime's files (cardroom/sandbox/image.py lists them)")
        lease = lease_uid()
        uid = lease.uid
        popen: subprocess.Popen | None = None
        inner_pidfd: int | None = None
        cgroups: list[tuple[_Controller, Path]] = []
        mounts: list[Path] = []
        tmpfs: tuple[Path, Path] | None = None
        pidns: tuple[int, int] | None = None
        run_dir = runs_dir() / f"uid-{uid}"
        fds: list[int] = []
        socks: list[socket.socket] = []
        forking = False
        netns_fd: int | None = None
        gate: StartupGate | None = None
        try:
            # A run folder left behind means a worker died without cleaning
            # up after this uid (what still ran of it, in its cgroups, is
            # killed by ``prepare``).
            if os.path.lexists(run_dir):
                kill_sandbox_strays(uid, run_dir)
                shutil.rmtree(run_dir)
            _copy_bot_files(Path(root), run_dir, uid)
            if self.tmpfs_mounts:
                tmpfs = mount_bot_tmpfs(uid, limits)
                mounts = [*tmpfs, tmpfs[0].parent]
            for controller in freezer_first(self.controllers):
                if controller.name == "memory":
                    limit = limits.memory_bytes + limits.tmp_bytes + limits.shm_bytes + CGROUP_SLACK_BYTES
                elif controller.name == "cpu":
                    limit = max(1000, int(limits.cpu_cores * CPU_PERIOD_US))
                else:
                    limit = limits.max_processes  # the bot's own; the outer bwrap stays outside
                cgroups.append((controller, controller.prepare(uid, limit)))

            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            fds += [info_r, info_w]
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            fds += [block_r, block_w]
            stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
            fds += [stdin_r, stdin_w]
            stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
            fds += [stdout_r, stdout_w]
            env = dict(BOT_ENV)
            python = _is_python(argv[0])
            # The bot's stdin and stdout handed over once it is in its
            # cgroups: to a Python bot's shim (its interpreter starts up
            # meanwhile), to bot-exec before a node or native bot (decision
            # 166); where neither can be had, bwrap's own pipes.
            shim_handover = self.shim is not None and python
            exec_handover = self.bot_exec is not None and not python
            handover = shim_handover or exec_handover
            child_fd = -1
            # What keeps the bot's own code from running before its processes
            # are in the cgroups: the wait for its stdin and stdout, or else
            # bwrap's --block-fd.
            use_block = bool(cgroups) and not handover
            # The procfs remounted once bwrap is done, before the hand-over
            # lets the bot's code run (decision 177).
            proc_subset = handover and self.proc_subset
            pass_fds = [info_w] + ([block_r] if use_block else [])
            seccomp_fd = None
            if self.seccomp is not None:
                seccomp_fd = filter_fd(self.seccomp.program)
                fds.append(seccomp_fd)
                pass_fds.append(seccomp_fd)
            if handover:
                # The bot's stdin/stdout travel over a socket (SCM_RIGHTS) to
                # the shim in its own interpreter, or to bot-exec, so that only
                # the bot holds them (bwrap's two helpers would keep them open
                # otherwise: a bot closing its stdout would never look closed).
                parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                socks += [parent_sock, child_sock]
                child_fd = child_sock.fileno()
                dummy_r, dummy_w = os.pipe2(os.O_CLOEXEC)
                fds += [dummy_r, dummy_w]
                if shim_handover:
                    env["PYTHONPATH"] = f"{SHIM_DIR}:{SDK_DIR}"
                    env[SHIM_ENV] = str(child_fd)
                pass_fds.append(child_fd)
                child_stdin, child_stdout = dummy_r, dummy_w
            else:
                child_stdin, child_stdout = stdin_r, stdout_w
                if _is_python(argv[0]):
                    env["PYTHONPATH"] = SDK_DIR
            if self.netns is not None:
                netns_fd = self.netns.acquire()
            if netns_fd is not None:
                pass_fds.append(netns_fd)
            command = self.argv(
                argv,
                limits,
                run_dir,
                info_w,
                block_r if use_block else None,
                tmpfs,
                seccomp_fd,
                netns_joined=netns_fd is not None,
                stdio_socket=child_fd if self.bot_exec is not None and handover else None,
                proc_subset=proc_subset,
                seat=seat,
            )
            memory_cgroup = any(controller.name == "memory" for controller, _ in cgroups)
            command, as_uid = self.as_bot(command, uid, _rlimit_options(limits, memory_cgroup), netns_fd)
            forking = True  # from here on a launcher of ours may run, even if Popen never returns
            popen = subprocess.Popen(
                command,
                stdin=child_stdin,
                stdout=child_stdout,
                stderr=subprocess.PIPE,
                cwd="/",
                env=env,
                **as_uid,  # type: ignore[arg-type]
                start_new_session=True,
                pass_fds=pass_fds,
                close_fds=True,
            )
            keep = [info_r, block_w, stdin_w, stdout_r, stdin_r, stdout_w]
            for fd in fds:
                if fd not in keep:
                    os.close(fd)
            fds = keep
            if handover:
                child_sock.close()
            inner_pid = _read_child_pid(info_r, popen)
            inner_pidfd = _pidfd_open(inner_pid)
            if inner_pidfd is None or uid not in _uids_of(_status_fields(inner_pid)):
                raise SandboxError(f"the bot's process ({inner_pid}) vanished during start-up")
            pidns = _pid_namespace(inner_pid)
            if cgroups:
                # Everything in the sandbox descends from this process (pid 1
                # of the sandbox: the bot's interpreter, starting up, before
                # any of the bot's code). The first cgroup move after a quiet
                # spell waits for an RCU grace period and for the forks and
                # execs under way on the machine (from 0.1 ms on an idle
                # machine to 15 ms on a busy one): bwrap's set-up and the
                # interpreter's start-up go on meanwhile.
                for controller, path in cgroups:
                    controller.join(path, inner_pid)
                    # The outer bwrap runs as the bot's uid too, outside the
                    # sandbox: in the cgroups, the clean-up (and the stale
                    # sweep after a worker was killed) kills it with the bot.
                    # Not in the freezer's: it runs none of the bot's code,
                    # and a task frozen in its wait would be woken at every
                    # freeze and every thaw (a third of a round trip, here).
                    if controller.name != "freezer":
                        controller.join(path, popen.pid)
                # Anything it forked before that (nothing, unless bwrap runs
                # an init: without --as-pid-1) goes too; a later fork is born
                # inside.
                for child in _children(inner_pid):
                    if uid in _uids_of(_status_fields(child)):
                        for controller, path in cgroups:
                            controller.join(path, child)
            if use_block:
                try:
                    os.write(block_w, b"1")
                except BrokenPipeError:
                    raise SandboxError(f"bwrap failed to start the sandbox: {_bwrap_error(popen)}") from None
            if proc_subset:
                try:
                    show_only_processes(inner_pid, self._bwrap_stat, time.monotonic() + START_TIMEOUT_S)
                except (OSError, TimeoutError) as exc:
                    if popen.poll() is not None:
                        raise SandboxError(f"bwrap failed to start the sandbox: {_bwrap_error(popen)}") from None
                    raise SandboxError(f"cannot hide the host's /proc from the bot: {exc}") from None
            if handover and self.bot_exec is not None:
                gate = StartupGate(_receive_listener(parent_sock, popen))
            if handover:
                # Now the bot's code may run: hand it its stdin and stdout.
                try:
                    socket.send_fds(parent_sock, [b"\0"], [stdin_r, stdout_w])
                except OSError:
                    raise SandboxError(f"the bot's sandbox did not start: {_bwrap_error(popen)}") from None
                parent_sock.close()
            for fd in fds:
                if fd not in (stdin_w, stdout_r):
                    os.close(fd)
            fds = [stdin_w, stdout_r]
            freezer_file = next((c.freezer_file(path) for c, path in cgroups if c.name == "freezer"), None)
            if freezer_file is not None:
                fds.append(freezer_file[0])
            process = BwrapProcess(
                popen,
                stdin_w,
                stdout_r,
                inner_pid,
                inner_pidfd,
                lease,
                run_dir,
                cgroups,
                pidns,
                mounts,
                freezer_file,
                None if netns_fd is None else (self.netns, netns_fd),  # type: ignore[arg-type]
                gate,
                self._ready_view(limits, seat) if gate is not None and proc_subset and freezer_file is not None else None,
                self.vdso,
            )
            gate = None  # the process's now
            fds = []
            netns_fd = None  # the process's now
            return process
        except BaseException:
            if gate is not None:
                gate.stop()
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            for sock in socks:
                sock.close()
            if netns_fd is not None and self.netns is not None:
                self.netns.release(netns_fd, clean=False)  # a start that failed: never lent again
            try:
                _cleanup(popen, inner_pidfd, pidns, cgroups, run_dir, mounts)
                if inner_pidfd is None and forking:
                    # Stopped before the bot's pid was known (a timeout, the
                    # worker shutting down), perhaps inside Popen itself with
                    # the launcher already forked: bwrap's child, outside the
                    # cgroups, outlives the outer bwrap.
                    kill_sandbox_strays(uid, run_dir, settle=0.0 if popen is not None else 0.05)
            finally:
                if inner_pidfd is not None:
                    os.close(inner_pidfd)
                lease.release()
                if popen is not None and popen.stderr is not None:
                    popen.stderr.close()
            raise


def runtime_of(program: str) -> str:
    """Which runtime's tree of the image a bot started as ``program`` sees:
    python's for the interpreter, node's for node, else native's (a native
    bot's own program, ldd)."""
    from cardroom.runtimes import bot_node

    if _is_python(program):
        return "python"
    if program == bot_node() or os.path.basename(program) in ("node", "nodejs"):
        return "node"
    return "native"


def _moved(args: list[str], folder: Path, to: Path) -> list[str]:
    """``args`` with every path in ``folder`` replaced by the same path in
    ``to``."""
    inside = f"{folder}/"
    return [f"{to}/{arg[len(inside) :]}" if arg.startswith(inside) else arg for arg in args]


def _meminfo_file(memory_bytes: int, seat: int = 0) -> Path:
    """/proc/meminfo of a bot with ``memory_bytes`` (procview.meminfo),
    written once per value and seat beside the run folders (in memory: one
    file per seat, so that no seat reads the pages another's read left in
    the caches; decision 268)."""
    path = runs_dir() / "proc" / (f"{MEMINFO}-{memory_bytes}" + (f"-seat{seat}" if seat else ""))
    if not path.exists():
        _ensure_dir(path.parent, 0o755)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        temporary.write_bytes(meminfo(memory_bytes))
        os.chmod(temporary, 0o444)
        os.replace(temporary, path)
    return path


def _is_python(program: str) -> bool:
    """Is ``program`` the Python interpreter (under /usr)? Never a native
    bot's own program (``./ENTRY``), whatever its name."""
    return program.startswith("/") and os.path.basename(program).startswith("python")


def _address_space(limits: BotLimits, memory_cgroup: bool) -> int | None:
    """RLIMIT_AS: the bot's memory, or for a runtime whose reservations dwarf
    what it uses (V8) none, the memory cgroup holding it to the same memory;
    without that cgroup (the weak mode) eight times the memory, a backstop."""
    if limits.limit_address_space:
        return limits.memory_bytes
    return None if memory_cgroup else NO_CGROUP_ADDRESS_FACTOR * limits.memory_bytes


def _rlimit_options(limits: BotLimits, memory_cgroup: bool = True) -> list[str]:
    """``--as=SOFT:HARD …``, as prlimit(1) and bot-exec both read them: the
    rlimits, set by the (already unprivileged) child on itself just before
    it becomes bwrap (decision 74). (Setting them from outside with
    prlimit(2) would need CAP_SYS_RESOURCE, which root does not always have:
    the VMs this was developed on drop it from the bounding set.)"""
    address_space = _address_space(limits, memory_cgroup)
    rlimits = [
        ("as", address_space or "unlimited", address_space or "unlimited"),
        ("cpu", limits.cpu_seconds, limits.cpu_seconds + 1),
        ("nproc", limits.max_processes, limits.max_processes),
        ("fsize", limits.file_size_bytes, limits.file_size_bytes),
        ("nofile", limits.open_files, limits.open_files),
        ("core", 0, 0),
        ("memlock", 0, 0),
        ("msgqueue", 0, 0),
    ]
    return [f"--{option}={soft}:{hard}" for option, soft, hard in rlimits]


def _receive_listener(sock: socket.socket, popen: subprocess.Popen) -> int:
    """The start-up filter's listener, sent by bot-exec in the sandbox
    before the bot's program runs (decision 237)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not fd_ready(sock.fileno(), deadline - time.monotonic()):
        if time.monotonic() >= deadline:
            raise SandboxError(f"bot-exec did not send the start-up filter's listener within {START_TIMEOUT_S:.0f} s")
    try:
        # close-on-exec at once: no other child of the worker may hold it
        message, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(2 * 4), socket.MSG_CMSG_CLOEXEC)
    except OSError as exc:
        raise SandboxError(f"cannot receive the start-up filter's listener: {exc}") from None
    fds = [
        int.from_bytes(data[i : i + 4], sys.byteorder, signed=True)
        for level, kind, data in ancillary
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
        for i in range(0, len(data) - 3, 4)
    ]
    if message != b"L" or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        raise SandboxError(f"the bot's sandbox did not start: {_bwrap_error(popen)}")
    return fds[0]


def _read_child_pid(fd: int, popen: subprocess.Popen) -> int:
    """bwrap's --info-fd JSON: {"child-pid": N} (pid 1 of the sandbox: the
    bot itself, with --as-pid-1)."""
    data = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError(f"bwrap did not report its sandbox within {START_TIMEOUT_S:.0f} s")
        if not fd_ready(fd, left):
            continue
        chunk = os.read(fd, 4096)
        data += chunk
        if b"}" in data:
            try:
                return int(json.loads(data[: data.index(b"}") + 1])["child-pid"])
            except (ValueError, KeyError, TypeError):
                raise SandboxError(f"unexpected bwrap --info-fd output {data[:200]!r}") from None
        if not chunk:
            message = _bwrap_error(popen)
            raise SandboxError(f"bwrap failed to start the sandbox: {message}")


def _bwrap_error(popen: subprocess.Popen) -> str:
    try:
        popen.wait(timeout=5)
    except subprocess.TimeoutExpired:
        popen.kill()
    text = b""
    if popen.stderr is not None:
        os.set_blocking(popen.stderr.fileno(), False)
        try:
            text = popen.stderr.read() or b""
        except OSError:
            pass
    return " ".join(text.decode("utf-8", "replace").split())[:500] or f"exit status {popen.returncode}"


def remove_old_run_user_folders() -> list[str]:
    """Remove the /run/user/UID/.bubblewrap folders earlier versions made for
    the pool's uids (bubblewrap 0.3.2 and later need none), where they hold
    nothing else. Returns what was removed."""
    pool = uid_range()
    removed = []
    try:
        names = os.listdir("/run/user")
    except OSError:
        return removed
    for name in names:
        if not name.isdigit() or int(name) not in pool:
            continue
        folder = Path("/run/user") / name
        try:
            st = os.lstat(folder)
            if st.st_uid != 0 or not stat.S_ISDIR(st.st_mode):  # not ours: never follow a link
                continue
            if (folder / ".bubblewrap").is_dir() and not (folder / ".bubblewrap").is_symlink():
                os.rmdir(folder / ".bubblewrap")  # only if empty
            os.rmdir(folder)  # only if empty
        except OSError:
            continue
        removed.append(str(folder))
    return removed


# -- the none mode ------------------------------------------------------------------------


class UnsandboxedLauncher(PlainLauncher):
    """``CARDROOM_SANDBOX=none``: the plain launcher, with a warning on every
    spawn."""

    name = "none"
    isolated = False

    def spawn(self, root: Path, argv: list[str], limits: BotLimits, seat: int = 0) -> PlainProcess:
        print(NONE_WARNING, file=sys.stderr, flush=True)
        return super().spawn(root, argv, limits, seat)  # type: ignore[return-value]
