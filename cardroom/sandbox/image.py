"""The files a bot sees: an image in memory, made once per host, holding
only what its runtime needs (decision 175).

A bot used to see the host's ``/usr``, read-only. Read-only is not enough
for a hidden-information game: the page cache remembers every read, and
``getrusage``'s ``ru_inblock`` or ``/proc/self/io``'s ``read_bytes`` (0
for a cached file, its size otherwise) tell a later bot, in another seat or
the next rotation of a duplicate deal, which rarely read file an earlier one
read. Here each runtime gets a tree of its own files only, copied once per
host into a tmpfs mounted ``noatime`` and then read-only: a read there never
reaches a disk (nothing to count, nothing to time), changes no access time,
and no bot, nor root without remounting it, can change a byte of it. The
three trees share their common files (hard links: one copy in memory).

Each tree is the bot's whole root, bound read-only as ``/`` (one mount
where there were a dozen): ``usr``, the few ``etc`` files, the root links
(``lib64`` -> ``usr/lib64`` ...), the mount points the launcher fills
(``proc``, ``dev``, ``tmp``, ``bot``) and the platform's own files (a Python
bot's SDK at ``/cardroom-sdk`` and its shim in ``/cardroom``; every bot's
``/cardroom/bot-exec``).

What goes in: ``runtime_files()``, a few host paths per runtime (a folder
brings all of it, a glob every match), plus every shared library that
``ldd`` says an ELF file among them needs, with the symbolic links on the
way (``/lib`` -> ``usr/lib``, Debian's ``/etc/alternatives`` links to the
BLAS numpy uses). Adding a runtime's files is one more path in its tuple.

The image is named by a digest of the list and of the identity (size,
modification time, mode) of every file it copies, the ``ld.so.cache`` (which
every library package's installation rewrites) and the platform's own
files, so a changed package, SDK or shim makes a new image; an old one is
left for the workers of another version on the host, and goes at the next
reboot or by hand (docs/operations.md). Where the worker cannot mount a
tmpfs, the image is an ordinary folder of the state folder, which is in
memory only if the operator put the state folder on a ``noatime`` tmpfs
(the compose deployment does); ``in_memory`` says which, and the probe
refuses a sandbox whose files are not in memory unless the weak mode is
asked for.

The bots' run folders and the file cache (``filecache``) live on a tmpfs
of their own for the same reasons (``prepare_runs``): a bot's own package
shows no trace of an earlier rotation's reads either.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import glob
import hashlib
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cardroom.launch import bot_python, sdk_packages

from .config import SandboxError, _ensure_dir, runs_dir, state_dir
from .devdir import _detach, _mount

TMPFS_MAGIC = 0x01021994
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MOUNT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOATIME

RUNTIMES = ("python", "node", "native")
LIBRARIES = "/usr/lib/x86_64-linux-gnu"
DIST_PACKAGES = "/usr/lib/python3/dist-packages"
# The C and C++ runtime libraries a native bot may link against: glibc's,
# libstdc++ and libgcc_s (docs/runtimes.md: no other library).
NATIVE_LIBRARIES = (
    "libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "libresolv.so.2", "libanl.so.1", "libstdc++.so.6", "libgcc_s.so.1",
)  # fmt: skip
# Read by every runtime's programs through glibc: its loader's cache, the
# time zone; libgcc_s, which glibc loads itself to unwind a thread.
COMMON_FILES = ("/etc/ld.so.cache", "/etc/localtime", f"{LIBRARIES}/libgcc_s.so.1")
# Of a folder named above, what no bot needs: the static libpython and its
# build files (25 MB), and any distribution or pip packages.
# ONNX Runtime's offline tools (quantization, transformer optimisation),
# which need packages a bot does not have: 9 MB.
LEFT_OUT = re.compile(
    r"/usr/lib/python3\.\d+/(config-[^/]*|dist-packages|site-packages)"
    r"|/usr/local/lib/python3\.\d+/dist-packages/onnxruntime/(tools|quantization|transformers)"
)
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
MOUNT_POINTS = ("proc", "dev", "tmp", "bot")
IMAGE_SDK = "cardroom-sdk"  # as config.SDK_DIR, without its slash
IMAGE_PLATFORM = "cardroom"  # as shim.SHIM_DIR
# Outside the trees: the empty folder bound over /proc/sys, the files over /proc's.
EMPTY = "empty"
PROC_VIEW = "proc"


def runtime_files() -> dict[str, tuple[str, ...]]:
    """Each runtime's host paths (folders whole, globs expanded): what its
    interpreter, standard library and packages read. The shared libraries
    the ELF files among them link are added by ``ldd``."""
    from cardroom.runtimes import bot_node

    python = bot_python()
    version = re.sub(r"^python", "", os.path.basename(os.path.realpath(python)))
    return {
        "python": (
            python,
            f"/usr/lib/python{version}",
            f"/etc/python{version}",  # sitecustomize, which the standard library's links to
            f"{DIST_PACKAGES}/numpy",  # Debian's python3-numpy, and its metadata
            f"{DIST_PACKAGES}/numpy-*-info",
            # ONNX Runtime (decision 220): scripts/install-bot-packages.sh puts
            # it in the interpreter's folder for local packages.
            f"/usr/local/lib/python{version}/dist-packages/onnxruntime",
            f"/usr/local/lib/python{version}/dist-packages/onnxruntime-*.dist-info",
        ),
        # Debian's own nodejs (the container image's) loads a few builtins
        # from /usr/share/nodejs at start (--shared-builtin-*: without them it
        # aborts, "Cannot load externalized builtin"); other builds have none.
        "node": (
            bot_node(),
            "/usr/share/nodejs/cjs-module-lexer",
            "/usr/share/nodejs/undici",
            "/usr/share/nodejs/acorn",
            "/usr/share/nodejs/acorn-walk",
        ),
        # ldd (a bash script) names what a native bot lacks: runtimes.missing_libraries.
        "native": ("/usr/bin/ldd", "/usr/bin/bash", *(f"{LIBRARIES}/{name}" for name in NATIVE_LIBRARIES)),
    }


@dataclass
class Image:
    """A prepared image: ``root`` holds a tree per runtime; ``in_memory``:
    on a tmpfs (mounted noatime by us, or the operator's); ``how`` says
    which, for the probe."""

    root: Path
    in_memory: bool
    how: str
    size_bytes: int
    files: int

    def tree(self, runtime: str, seat: int = 0) -> Path:
        """The runtime's tree a bot of ``seat`` (of its match) is given:
        seat 0 this image's own, any other seat a copy of it (decision 268:
        the seats of one match never read the same physical page, so
        nothing a seat read is still in the CPU's caches for the next)."""
        if seat == 0:
            return self.root / runtime
        return seat_copy(self.root, runtime, seat)

    @property
    def empty(self) -> Path:
        return self.root / EMPTY

    @property
    def proc_view(self) -> Path:
        return self.root / PROC_VIEW

    def seat_proc_view(self, runtime: str, seat: int) -> Path:
        """The files bound over /proc's for a bot of ``seat``: seat 0 the
        image's, any other seat's copy's (cpuinfo, stat ... are files every
        runtime reads: shared, they would be pages one seat's read leaves in
        the caches for another)."""
        return self.proc_view if seat == 0 else self.tree(runtime, seat).parent / PROC_VIEW


_libc = ctypes.CDLL(None, use_errno=True)


def _mount_tmpfs(target: Path, flags: int, options: str) -> None:
    _mount(b"tmpfs", target, flags, options)


def in_memory(folder: Path) -> bool:
    """Is ``folder`` on a tmpfs mounted noatime (no read of it reaches a
    disk or changes an access time)?"""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return _fs_type(folder) == TMPFS_MAGIC and bool(st.f_flag & os.ST_NOATIME)


class _Statfs(ctypes.Structure):
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 120)]


def _fs_type(folder: Path) -> int | None:
    buf = _Statfs()
    if _libc.statfs(os.fsencode(folder), ctypes.byref(buf)) != 0:
        return None
    return buf.f_type & 0xFFFFFFFF


def _locked(name: str):
    _ensure_dir(state_dir() / "locks", 0o700)
    lock = os.open(state_dir() / "locks" / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


# -- the run folders ----------------------------------------------------------------------


def prepare_runs() -> tuple[bool, str]:
    """Put the run folders (and the file cache inside them) on a tmpfs
    mounted noatime: (in memory, how)."""
    folder = runs_dir()
    lock = _locked("runs.lock")
    try:
        if in_memory(folder):
            return True, f"{folder}: a noatime tmpfs"
        if os.path.ismount(folder):
            return False, f"{folder} is a mount, but not a noatime tmpfs"
        try:
            _mount_tmpfs(folder, MOUNT_FLAGS, "mode=0711,uid=0,gid=0")
        except OSError as exc:
            return False, f"cannot mount a tmpfs on {folder}: {exc.strerror or exc}"
        return True, f"{folder}: a noatime tmpfs of ours"
    finally:
        os.close(lock)


# -- the image --------------------------------------------------------------------------------


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


class _Builder:
    """Copies host paths into a runtime's tree, replicating the symbolic
    links on their way; a file already copied (into any tree) is linked."""

    def __init__(self, root: Path):
        self.root = root
        self.copied: dict[str, Path] = {}  # host path -> its copy
        self.elf: dict[str, set[str]] = {}  # runtime -> host ELF files of its tree

    def add(self, runtime: str, pattern: str) -> None:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        for path in matches:
            if os.path.lexists(path):
                self._add_path(runtime, os.path.normpath(path), 0)

    def _add_path(self, runtime: str, path: str, depth: int) -> None:
        if depth > 40:
            raise OSError(f"too many symbolic links at {path}")
        tree = self.root / runtime
        parts = Path(path).parts[1:]
        current = "/"
        for i, part in enumerate(parts):
            host = os.path.join(current, part)
            target = tree / host.lstrip("/")
            try:
                st = os.lstat(host)
            except FileNotFoundError:
                return  # a link to nothing, here as on the host
            if stat.S_ISLNK(st.st_mode):
                link = os.readlink(host)
                if not os.path.lexists(target):
                    os.symlink(link, target)
                resolved = os.path.normpath(os.path.join(current, link))
                self._add_path(runtime, os.path.join(resolved, *parts[i + 1 :]), depth + 1)
                return
            last = i == len(parts) - 1
            if stat.S_ISDIR(st.st_mode):
                if not target.is_dir():
                    target.mkdir(mode=0o755)
                    os.chmod(target, 0o755)
                if last:
                    self._add_tree(runtime, host)
            elif last and stat.S_ISREG(st.st_mode):
                self._add_file(runtime, host, st, target)
            current = host

    def _add_tree(self, runtime: str, folder: str) -> None:
        for dirpath, dirnames, filenames in os.walk(folder):
            kept = []
            for name in dirnames:
                path = os.path.join(dirpath, name)
                if LEFT_OUT.fullmatch(path):
                    continue
                if os.path.islink(path):
                    self._add_path(runtime, path, 0)
                else:
                    kept.append(name)
                    target = self.root / runtime / path.lstrip("/")
                    if not target.is_dir():
                        target.mkdir(mode=0o755)
                        os.chmod(target, 0o755)
            dirnames[:] = kept
            for name in filenames:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    self._add_path(runtime, path, 0)
                elif stat.S_ISREG(st.st_mode):
                    self._add_file(runtime, path, st, self.root / runtime / path.lstrip("/"))

    def _add_file(self, runtime: str, host: str, st: os.stat_result, target: Path) -> None:
        if os.path.lexists(target):
            return
        copy = self.copied.get(host)
        if copy is not None:
            os.link(copy, target)
        else:
            shutil.copyfile(host, target, follow_symlinks=False)
            os.chmod(target, 0o755 if st.st_mode & 0o111 else 0o644)
            # Its modification time kept: a .pyc holds its source's, and a
            # source that looks newer is compiled again at every start.
            os.utime(target, ns=(st.st_mtime_ns, st.st_mtime_ns))
            self.copied[host] = target
        if _is_elf(host):
            self.elf.setdefault(runtime, set()).add(host)

    def put(self, runtime: str, inside: str, source: Path, mode: int) -> None:
        """A platform file (not a host path the bot sees as such) at ``inside``."""
        target = self.root / runtime / inside
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, mode)

    def libraries(self, runtime: str) -> None:
        """Add what ``ldd`` says the tree's ELF files need, until nothing new."""
        done: set[str] = set()
        while True:
            todo = sorted(self.elf.get(runtime, set()) - done)
            if not todo:
                return
            done.update(todo)
            for path in _ldd(todo):
                self._add_path(runtime, path, 0)


def _ldd(paths: list[str]) -> list[str]:
    """The shared libraries (and loaders) ``ldd`` resolves for ``paths``."""
    found: list[str] = []
    for start in range(0, len(paths), 200):
        result = subprocess.run(["ldd", *paths[start : start + 200]], capture_output=True, text=True, timeout=120)
        for line in result.stdout.splitlines():
            m = re.match(r"\s*(?:\S+ => )?(/\S+) \(0x", line)
            if m:
                found.append(m.group(1))
    return list(dict.fromkeys(found))


def _identity(paths: list[str]) -> list[str]:
    """What the digest covers of ``paths``: every file under them, by path,
    size, modification time and mode (no contents: it is computed at each
    worker start)."""
    out: list[str] = []

    def note(path: str) -> None:
        try:
            st = os.lstat(path)
        except OSError:
            out.append(f"{path} -")
            return
        out.append(f"{path} {st.st_size} {st.st_mtime_ns} {st.st_mode:o}")

    for pattern in paths:
        for path in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            note(path)
            if os.path.isdir(path) and not os.path.islink(path):
                for dirpath, dirnames, filenames in os.walk(path):
                    dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" or not dirpath.startswith(tuple(_sdk_roots())))
                    for name in sorted(filenames):
                        note(os.path.join(dirpath, name))
    return out


def _sdk_roots() -> list[str]:
    return [str(folder) for folder in sdk_packages().values()]


def digest(shim: Path | None, bot_exec: str | None, proc_files: dict[str, bytes | None]) -> str:
    """Names the image: how it is made (this module), the list, the
    identity of what it copies, the platform's own files (SDK, shim,
    bot-exec) and the /proc files."""
    files = runtime_files()
    # This module's own text too: a change to how the image is made makes a new one.
    text = [Path(__file__).read_text(), repr(sorted(files.items())), repr(sorted(proc_files.items()))]
    for paths in files.values():
        text += _identity(list(paths))
    text += _identity([*COMMON_FILES, *_sdk_roots(), *([str(shim)] if shim else []), *([bot_exec] if bot_exec else [])])
    return hashlib.sha256("\n".join(text).encode()).hexdigest()[:16]


def _complete(root: Path, name: str) -> bool:
    try:
        return (root / ".complete").read_text() == name
    except OSError:
        return False


def size_of(root: Path) -> tuple[int, int]:
    """(bytes, files) a folder of the image holds, each inode once."""
    seen: set[int] = set()
    total = 0
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_size
    return total, len(seen)


# The images this process uses: a shared lock on each, held for its life
# (and its forks'), so that no other worker removes them.
_in_use: dict[str, int] = {}


def _use_lock(name: str) -> int:
    return os.open(state_dir() / "locks" / f"{name}.use", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _remove_unused(current: str) -> list[str]:
    """Remove the images of other versions that no living worker uses
    (none holds its lock): their memory back to the host. A sandbox still
    running on one keeps its own mount of it."""
    removed = []
    for other in sorted(state_dir().glob("image-*")):
        if other.name == current or other.name in _in_use:
            continue
        fd = _use_lock(other.name)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a worker of that version is alive
        finally:
            os.close(fd)
        _detach(other)
        shutil.rmtree(other, ignore_errors=True)
        if not os.path.lexists(other):
            (state_dir() / "locks" / f"{other.name}.use").unlink(missing_ok=True)
            removed.append(other.name)
    return removed


def prepare_image(shim: Path | None, bot_exec: str | None, proc_files: dict[str, bytes | None]) -> Image:
    """The image for this host and version, made if it is not there yet
    (under a lock: one worker makes it, the others wait and use it); the
    images no living worker uses are removed."""
    name = f"image-{digest(shim, bot_exec, proc_files)}"
    root = state_dir() / name
    lock = _locked("image.lock")
    try:
        if name not in _in_use:
            use = _use_lock(name)
            fcntl.flock(use, fcntl.LOCK_SH)  # never blocks: an exclusive holder holds image.lock too
            _in_use[name] = use
        _remove_unused(name)
        if not _complete(root, name):
            _build(root, name, shim, bot_exec, proc_files)
        mounted = os.path.ismount(root) and in_memory(root)
        memory = mounted or in_memory(root)
        how = (
            f"a read-only noatime tmpfs at {root}"
            if mounted
            else f"a folder {root} on {'a noatime tmpfs' if memory else 'disk: its reads reach the page cache, which a later bot can probe'}"
        )
        size, files = size_of(root)
        return Image(root, memory, how, size, files)
    finally:
        os.close(lock)


@contextlib.contextmanager
def _filling(folder: Path, name: str, mount: bool):
    """``folder`` afresh, a tmpfs of its own if ``mount`` and the mount
    works (else an ordinary folder: Image.in_memory says so), to fill in
    the block; then marked complete as ``name`` and, mounted, read-only.
    Removed if the filling fails."""
    _detach(folder)
    if os.path.lexists(folder):
        shutil.rmtree(folder)
    folder.mkdir(mode=0o755)
    mounted = False
    if mount:
        try:
            _mount_tmpfs(folder, MOUNT_FLAGS, "mode=0755,uid=0,gid=0")
            mounted = True
        except OSError:
            pass
    try:
        yield
        (folder / ".complete").write_text(name)
        if mounted:
            # The superblock read-only: every bind of it is, and root itself
            # would have to remount it to change a byte.
            _mount_tmpfs(folder, MS_REMOUNT | MS_RDONLY | MOUNT_FLAGS, "mode=0755,uid=0,gid=0")
    except BaseException:
        _detach(folder)
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _build(root: Path, name: str, shim: Path | None, bot_exec: str | None, proc_files: dict[str, bytes | None]) -> None:
    with _filling(root, name, mount=not in_memory(root.parent)):
        builder = _Builder(root)
        for runtime, paths in runtime_files().items():
            tree = root / runtime
            tree.mkdir(mode=0o755)
            for link in ROOT_LINKS:
                if os.path.islink(f"/{link}"):
                    os.symlink(os.readlink(f"/{link}"), tree / link)
            for folder in MOUNT_POINTS:
                (tree / folder).mkdir(mode=0o755)
            for path in (*COMMON_FILES, *paths):
                builder.add(runtime, path)
            builder.libraries(runtime)
            (tree / IMAGE_PLATFORM).mkdir(mode=0o755, exist_ok=True)
            if runtime == "python":
                if shim is not None:
                    builder.put(runtime, f"{IMAGE_PLATFORM}/sitecustomize.py", shim, 0o644)
                for package, folder in sdk_packages().items():
                    shutil.copytree(folder, tree / IMAGE_SDK / package, ignore=shutil.ignore_patterns("__pycache__"))
                _compile(tree / IMAGE_SDK)
            if bot_exec is not None:  # every bot's first program (decisions 166 and 237)
                builder.put(runtime, f"{IMAGE_PLATFORM}/bot-exec", Path(bot_exec), 0o755)
        (root / EMPTY).mkdir(mode=0o555)
        view = root / PROC_VIEW
        view.mkdir(mode=0o755)
        for entry, content in proc_files.items():
            if content is None:
                (view / entry).mkdir(mode=0o555)
            else:
                (view / entry).write_bytes(content)
                os.chmod(view / entry, 0o444)
        _root_only(root)


def seat_copy(root: Path, runtime: str, seat: int) -> Path:
    """The copy of image ``root``'s ``runtime`` tree for ``seat``, made the
    first time a bot of that seat starts on this host (under the image
    lock) and kept, like the image, while a worker uses it: a tmpfs of its
    own beside the image, ``IMAGE-seatN-RUNTIME``, with every file copied
    (``cp -a``: the tree's hard links stay links within the copy), and the
    files bound over /proc's, then read-only. Where the image is an ordinary folder (the weak mode), so
    is the copy; a copy that is not in memory where the image is, is
    refused (SandboxError): its reads would reach a disk."""
    name = f"{root.name}-seat{seat}-{runtime}"
    copy = root.parent / name
    tree = copy / runtime
    if name in _in_use and _complete(copy, name):
        return tree
    lock = _locked("image.lock")
    try:
        if name not in _in_use:
            use = _use_lock(name)
            fcntl.flock(use, fcntl.LOCK_SH)
            _in_use[name] = use
        if not _complete(copy, name):
            with _filling(copy, name, mount=os.path.ismount(root)):
                sources = [str(root / runtime), str(root / PROC_VIEW)]
                subprocess.run(["cp", "-a", *sources, str(copy)], check=True, capture_output=True, timeout=300)
        if in_memory(root) and not in_memory(copy):
            raise SandboxError(f"the copy of the image for seat {seat} ({copy}) is not in memory: no tmpfs could be mounted")
        return tree
    finally:
        os.close(lock)


def _compile(folder: Path) -> None:
    """The SDK's bytecode, made by the bots' interpreter for the copies
    (whose modification times copytree kept): without it every Python bot
    would compile the SDK and the engine at each start."""
    subprocess.run(
        [bot_python(), "-m", "compileall", "-q", "-j", "0", str(folder)],
        check=True, capture_output=True, timeout=300, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def _root_only(root: Path) -> None:
    """Everything root's, and no one else's to write (copytree keeps modes)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            os.lchown(path, 0, 0)
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o022:
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)
