"""Bot packages: what a bot author uploads, checked and unpacked safely.

A package is one of

* a single ``.py`` file (a ``python`` bot) or ``.js`` file (a ``node``
  bot): it is the entry point (no manifest needed);
* a folder, a ``.zip`` or a ``.tar.gz`` (``.tgz``) holding a manifest
  (``cardroom.toml`` or ``bot.json``) and the bot's files.

The manifest has exactly these keys::

    entry = "main.py"      # required: the program to run, a path inside the package
    protocol = 1           # required: the bot protocol version (only 1 exists)
    name = "my-bot"        # optional: a display name
    runtime = "python"     # optional: python (the default), node or native

A ``native`` entry must be an x86-64 Linux ELF program (``cardroom.runtimes``
reads its header and names what else it is); archives keep their files'
executable bits, and a native entry without one gets it, with a note for the
author (``BotPackage.notes``).

An archive may also hold everything under one top-level folder (what zipping a
folder usually gives); the manifest then lives in that folder.

Archives are never trusted: every entry's name and type is checked before
anything is written, the sizes the archive declares are added up before
anything is unpacked (a zip bomb is refused without being inflated), and the
limits are enforced again on the bytes actually written (an archive whose
headers lie is refused part way, and the partial output is removed). Nothing
but regular files and folders is ever created; symbolic links, hard links,
device files and FIFOs are refused, as are absolute paths and ``..``.

Every failure is a ``PackageError`` whose message is one line naming the file
and the rule, ready to show to the bot's author.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import tomllib
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cardroom import sizes
from cardroom.launch import BotLimits
from cardroom.runtimes import DEFAULT_RUNTIME, RUNTIMES, EntryRefused, check_native_entry, runtime_argv

__all__ = [
    "MANIFEST_NAMES",
    "PROTOCOL_VERSION",
    "BotPackage",
    "PackageError",
    "PackageLimits",
    "PackageTooLarge",
    "UploadCheck",
    "check_upload",
    "inspect_upload",
    "load_bot_package",
    "package_argv",
    "upload_name",
]

PROTOCOL_VERSION = 1
MANIFEST_NAMES = ("cardroom.toml", "bot.json")
MANIFEST_KEYS = {"entry": str, "protocol": int, "name": str, "runtime": str}
# A single file is a bot of the runtime its suffix names.
SINGLE_FILE_RUNTIMES = {".py": "python", ".js": "node"}
REQUIRED_KEYS = ("entry", "protocol")
MAX_NAME_CHARS = 64
MiB = sizes.MiB
_fmt = sizes.format_size  # every size a message names, in MiB as the docs give them
_CHUNK = 64 * 1024


class PackageError(ValueError):
    """A bot package that breaks a rule; ``str()`` is a one-line message."""


class PackageTooLarge(PackageError):
    """An upload over the size limit (the server answers 413)."""


@dataclass(frozen=True)
class PackageLimits:
    """The limits every package must keep (the upload limits)."""

    compressed_bytes: int = 10 * MiB  # the uploaded file: a .py, .zip or .tar.gz
    unpacked_bytes: int = 50 * MiB  # all the package's files together
    max_files: int = 1000  # files and folders in the package


DEFAULT_LIMITS = PackageLimits()


@dataclass(frozen=True)
class BotPackage:
    """An unpacked, checked bot package.

    ``root`` is the folder holding the bot's files (a fresh folder under the
    workdir), ``entry`` the entry point relative to it. ``sha256`` identifies
    the package: the hash of the file's bytes for a ``.py`` file or an
    archive; for a folder, the hash of its sorted listing of
    ``<path>\\0<sha256 of the content>\\n`` lines. ``size`` is the size in bytes
    of what was given: the file or archive, or a folder's files together.
    ``runtime``: python, node or native. ``notes``: what the platform did
    for the author (set the entry's executable bit), one line each.
    """

    root: Path
    entry: str
    name: str | None
    sha256: str
    size: int
    protocol: int
    runtime: str = DEFAULT_RUNTIME
    notes: tuple[str, ...] = ()


def package_argv(pkg: BotPackage, limits: BotLimits | None = None) -> list[str]:
    """The command that runs the package (relative to ``pkg.root``)."""
    return runtime_argv(pkg.runtime, pkg.entry, limits or BotLimits())


def load_bot_package(path: Path, workdir: Path, limits: PackageLimits = DEFAULT_LIMITS) -> BotPackage:
    """Check the package at ``path`` and unpack it into a fresh folder under
    ``workdir`` (created if missing). Raises ``PackageError``."""
    path = Path(path)
    label = path.name or str(path)
    if path.is_symlink():
        raise PackageError(f"{label}: is a symbolic link; give the file or folder itself")
    if path.is_dir():
        kind = "folder"
    elif path.is_file():
        kind = _file_kind(path, label)
    elif path.exists():
        raise PackageError(f"{label}: not a regular file or folder")
    else:
        raise PackageError(f"{label}: no such file or folder")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    dest = Path(tempfile.mkdtemp(prefix="bot-", dir=workdir)).resolve()
    try:
        if kind in SINGLE_FILE_RUNTIMES:
            return _load_single_file(path, label, dest, limits, SINGLE_FILE_RUNTIMES[kind])
        if kind == "folder":
            digest, size = _copy_folder(path, label, dest, limits)
        else:
            size = path.stat().st_size
            if size > limits.compressed_bytes:
                raise PackageError(
                    f"{label}: the archive is {_fmt(size)}, over the {_fmt(limits.compressed_bytes)} limit for an uploaded package"
                )
            digest = _sha256_file(path)
            if kind == "zip":
                _extract_zip(path, label, dest, limits)
            else:
                _extract_tar_gz(path, label, dest, limits)
        root, manifest_name, manifest = _read_manifest(dest, label)
        runtime = manifest.get("runtime", DEFAULT_RUNTIME)
        entry = _check_entry(root, label, manifest_name, manifest["entry"], runtime)
        notes: tuple[str, ...] = ()
        if runtime == "python":
            _check_no_shadowing(root, entry, label)
        elif runtime == "native":
            notes = _check_native(root, entry, label, manifest_name)
        return BotPackage(
            root=root,
            entry=entry,
            name=manifest.get("name"),
            sha256=digest,
            size=size,
            protocol=manifest["protocol"],
            runtime=runtime,
            notes=notes,
        )
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


# -- uploads -----------------------------------------------------------------
# What the server checks of an uploaded file (ladder.services.bots), and
# `cardroom submit` before it sends anything: the same rules, the same words.

UPLOAD_SUFFIXES = (".py", ".js", ".zip", ".tar.gz", ".tgz")
MAX_UPLOAD_NAME_CHARS = 200  # BotVersion.filename
# File systems count bytes (255 for a name): 100 x "中" is 300. The stored
# name also has the game, bot name and version before it.
MAX_UPLOAD_NAME_BYTES = 150


def upload_name(filename: str, data: bytes, max_bytes: int = DEFAULT_LIMITS.compressed_bytes) -> str:
    """The cheap checks of an upload, before its content is looked at: its
    size and its name. Returns the base name it is stored under."""
    if len(data) > max_bytes:
        raise PackageTooLarge(
            f"{filename}: the package is {len(data)} bytes; the limit is {max_bytes} bytes: leave out what the bot does not need"
        )
    if not data:
        raise PackageError(f"{filename}: the file is empty: upload your bot's program")
    safe_name = Path(filename.replace("\\", "/")).name or "bot.py"
    if len(safe_name) > MAX_UPLOAD_NAME_CHARS:
        raise PackageError(
            f"the file name is {len(safe_name)} characters long; the limit is {MAX_UPLOAD_NAME_CHARS}: rename the file"
        )
    encoded = len(safe_name.encode("utf-8", "surrogatepass"))
    if encoded > MAX_UPLOAD_NAME_BYTES:
        raise PackageError(
            f"the file name is too long: {encoded} bytes in UTF-8; the limit is {MAX_UPLOAD_NAME_BYTES} bytes: rename the file"
        )
    return safe_name


@dataclass(frozen=True)
class UploadCheck:
    """What the checks of an upload found: its sha256, its runtime and the
    notes for its author (``BotPackage``)."""

    sha256: str
    runtime: str
    notes: tuple[str, ...]


def check_upload(filename: str, data: bytes) -> str:
    """Check an uploaded file's bytes as the sandbox will load them (in a
    temporary folder, removed after); returns the package's sha256."""
    return inspect_upload(filename, data).sha256


def inspect_upload(filename: str, data: bytes) -> UploadCheck:
    """``check_upload``, saying also the package's runtime and notes."""
    lower = filename.lower()
    if not lower.endswith(UPLOAD_SUFFIXES):
        raise PackageError(f"{filename!r} is not a bot package: upload a .py or .js file, a .zip or a .tar.gz")
    if any(ord(c) < 32 or c in "/\\" for c in filename):
        raise PackageError(f"{filename!r}: the file name must not contain control characters or slashes")
    with tempfile.TemporaryDirectory(prefix="cardroom-upload-") as tmp:
        # Under the author's own name: a single .py file runs under it (and
        # the package's messages name the file the author knows).
        path = Path(tmp) / filename
        try:
            path.write_bytes(data)
        except (OSError, UnicodeEncodeError) as exc:  # a name this file system refuses
            raise PackageError(f"the file name {filename!r} cannot be stored: {getattr(exc, 'strerror', None) or exc}") from None
        package = load_bot_package(path, Path(tmp) / "unpacked")
        return UploadCheck(sha256=package.sha256, runtime=package.runtime, notes=package.notes)


# -- kinds -------------------------------------------------------------------


def _file_kind(path: Path, label: str) -> str:
    lower = path.name.lower()
    for suffix in SINGLE_FILE_RUNTIMES:
        if lower.endswith(suffix):
            return suffix
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if magic[:2] == b"\x1f\x8b":
        return "tar.gz"
    raise PackageError(f"{label}: not a bot package: give a .py or .js file, a folder, a .zip or a .tar.gz")


def _load_single_file(path: Path, label: str, dest: Path, limits: PackageLimits, runtime: str) -> BotPackage:
    size = path.stat().st_size
    if size > limits.compressed_bytes:
        raise PackageError(f"{label}: the file is {_fmt(size)}, over the {_fmt(limits.compressed_bytes)} limit for an uploaded package")
    name = path.name
    _check_member_name(name, label)
    if runtime == "python" and path.stem in sys.stdlib_module_names:
        raise _shadowing_error(label, None, path.stem)
    digest = hashlib.sha256()
    written = 0
    with open(path, "rb") as src, _create(dest / name) as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > limits.compressed_bytes:
                raise PackageError(f"{label}: the file is over the {_fmt(limits.compressed_bytes)} limit for an uploaded package")
            digest.update(chunk)
            out.write(chunk)
    return BotPackage(
        root=dest, entry=name, name=path.stem, sha256=digest.hexdigest(), size=written, protocol=PROTOCOL_VERSION, runtime=runtime
    )


# -- names -------------------------------------------------------------------


def _check_member_name(name: str, label: str) -> str:
    """A member's path made relative and canonical; refuses anything that
    could land outside the package folder."""
    shown = repr(name)
    if "\x00" in name or any(ord(c) < 32 for c in name):
        raise PackageError(f"{label}: {shown}: control characters are not allowed in a path")
    if "\\" in name:
        raise PackageError(f"{label}: {shown}: backslashes are not allowed in a path (use '/')")
    if name.startswith("/") or (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
        raise PackageError(f"{label}: {shown}: absolute paths are not allowed")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PackageError(f"{label}: {shown}: '..' is not allowed in a path")
    return "/".join(parts)


class _Tree:
    """The entries written so far: catches duplicates and file/folder clashes,
    and counts entries and bytes against the limits."""

    def __init__(self, label: str, dest: Path, limits: PackageLimits):
        self.label = label
        self.dest = dest
        self.limits = limits
        self.kinds: dict[str, str] = {"": "dir"}
        self.entries = 0
        self.bytes = 0

    def count(self, name: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise PackageError(
                f"{self.label}: has more than {self.limits.max_files} files and folders (the limit is {self.limits.max_files})"
            )

    def _parents(self, rel: str) -> None:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            kind = self.kinds.get(parent)
            if kind == "file":
                raise PackageError(f"{self.label}: {rel!r}: its folder {parent!r} is also a file")
            if kind is None:
                (self.dest / parent).mkdir(mode=0o755)
                self.kinds[parent] = "dir"

    def add_dir(self, rel: str) -> None:
        if not rel:
            return
        kind = self.kinds.get(rel)
        if kind == "file":
            raise PackageError(f"{self.label}: {rel!r} is both a file and a folder")
        if kind == "dir":
            return
        self._parents(rel)
        (self.dest / rel).mkdir(mode=0o755)
        self.kinds[rel] = "dir"

    def add_file(self, rel: str, stream: IO[bytes], declared: int | None = None, executable: bool = False) -> None:
        if not rel:
            raise PackageError(f"{self.label}: a file entry has an empty name")
        if rel in self.kinds:
            what = "appears twice" if self.kinds[rel] == "file" else "is both a file and a folder"
            raise PackageError(f"{self.label}: {rel!r} {what}")
        self._parents(rel)
        self.kinds[rel] = "file"
        written = 0
        with _create(self.dest / rel, 0o755 if executable else 0o644) as out:
            while True:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                written += len(chunk)
                if declared is not None and written > declared:
                    raise PackageError(
                        f"{self.label}: {rel!r}: unpacks to more than the {declared} bytes its header declares (a zip bomb?)"
                    )
                self.bytes += len(chunk)
                if self.bytes > self.limits.unpacked_bytes:
                    raise PackageError(
                        f"{self.label}: unpacks to more than {_fmt(self.limits.unpacked_bytes)} (the limit for a package's unpacked size)"
                    )
                out.write(chunk)
        if declared is not None and written != declared:
            raise PackageError(f"{self.label}: {rel!r}: unpacks to {written} bytes, not the {declared} its header declares")


def _create(path: Path, mode: int = 0o644) -> IO[bytes]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    os.fchmod(fd, mode)  # whatever the umask
    return os.fdopen(fd, "wb")


# -- zip ---------------------------------------------------------------------


def _extract_zip(path: Path, label: str, dest: Path, limits: PackageLimits) -> None:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise PackageError(f"{label}: not a valid zip archive ({_one_line(exc)})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_files:
            raise PackageError(
                f"{label}: has more than {limits.max_files} files and folders (the limit is {limits.max_files})"
            )
        plan: list[tuple[zipfile.ZipInfo, str, bool, bool]] = []
        declared_total = 0
        for info in infos:
            rel = _check_member_name(info.filename, label)
            mode = info.external_attr >> 16
            fmt = stat.S_IFMT(mode)
            is_dir = info.is_dir() or fmt == stat.S_IFDIR
            if fmt == stat.S_IFLNK:
                raise PackageError(f"{label}: {info.filename!r}: symbolic links are not allowed")
            if fmt in (stat.S_IFCHR, stat.S_IFBLK):
                raise PackageError(f"{label}: {info.filename!r}: device files are not allowed")
            if fmt in (stat.S_IFIFO, stat.S_IFSOCK):
                raise PackageError(f"{label}: {info.filename!r}: FIFOs and sockets are not allowed")
            if fmt not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise PackageError(f"{label}: {info.filename!r}: only regular files and folders are allowed")
            if info.flag_bits & 0x1:
                raise PackageError(f"{label}: {info.filename!r}: encrypted entries are not supported")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
                raise PackageError(f"{label}: {info.filename!r}: unsupported compression method {info.compress_type}")
            if not is_dir:
                declared_total += info.file_size
            plan.append((info, rel, is_dir, bool(mode & 0o100)))
        if declared_total > limits.unpacked_bytes:
            raise PackageError(
                f"{label}: declares {_fmt(declared_total)} of unpacked files, over the {_fmt(limits.unpacked_bytes)} limit"
            )
        tree = _Tree(label, dest, limits)
        for info, rel, is_dir, executable in plan:
            tree.count(rel)
            if is_dir:
                tree.add_dir(rel)
                continue
            # Read at most one byte more than declared: enough to catch a
            # header that lies, never enough to inflate a bomb.
            # (zipfile's own CRC check is switched off on that copy of the
            # header, since it would fire first; the CRC is checked below.)
            probe = copy.copy(info)
            probe.file_size = info.file_size + 1
            del probe.CRC
            try:
                with zf.open(probe) as stream:
                    crc = _CrcReader(stream)
                    tree.add_file(rel, crc, declared=info.file_size, executable=executable)
                if crc.crc != info.CRC:
                    raise PackageError(f"{label}: {info.filename!r}: corrupt entry (its CRC-32 does not match)")
            except PackageError:
                raise
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
                raise PackageError(f"{label}: {info.filename!r}: corrupt entry ({_one_line(exc)})") from None


class _CrcReader:
    def __init__(self, raw: IO[bytes]):
        self.raw = raw
        self.crc = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.crc = zlib.crc32(data, self.crc)
        return data


# -- tar.gz ------------------------------------------------------------------


class _CappedReader:
    """A file object over the decompressed tar stream that refuses to hand
    out more than ``cap`` bytes (so a gzip bomb stops early)."""

    def __init__(self, raw: IO[bytes], cap: int, label: str, limits: PackageLimits):
        self.raw = raw
        self.cap = cap
        self.read_bytes = 0
        self.label = label
        self.limits = limits

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.cap + 1 - self.read_bytes
        data = self.raw.read(min(size, self.cap + 1 - self.read_bytes))
        self.read_bytes += len(data)
        if self.read_bytes > self.cap:
            raise PackageError(
                f"{self.label}: unpacks to more than {_fmt(self.limits.unpacked_bytes)} (the limit for a package's unpacked size)"
            )
        return data

    def close(self) -> None:
        pass


def _extract_tar_gz(path: Path, label: str, dest: Path, limits: PackageLimits) -> None:
    # The tar stream is file data plus a 512-byte header (and padding) per
    # entry; allow that overhead and nothing more.
    cap = limits.unpacked_bytes + (limits.max_files + 4) * 2048 + 64 * 1024
    tree = _Tree(label, dest, limits)
    try:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            reader = _CappedReader(gz, cap, label, limits)
            with tarfile.open(fileobj=reader, mode="r|") as tf:  # type: ignore[call-overload]
                for member in _tar_members(tf):
                    rel = _check_member_name(member.name, label)
                    tree.count(rel)
                    if member.islnk():
                        raise PackageError(f"{label}: {member.name!r}: hard links are not allowed")
                    if member.issym():
                        raise PackageError(f"{label}: {member.name!r}: symbolic links are not allowed")
                    if member.ischr() or member.isblk():
                        raise PackageError(f"{label}: {member.name!r}: device files are not allowed")
                    if member.isfifo():
                        raise PackageError(f"{label}: {member.name!r}: FIFOs are not allowed")
                    if member.issparse():
                        raise PackageError(f"{label}: {member.name!r}: sparse files are not supported")
                    if member.isdir():
                        tree.add_dir(rel)
                        continue
                    if not member.isreg():
                        raise PackageError(f"{label}: {member.name!r}: only regular files and folders are allowed")
                    if tree.bytes + member.size > limits.unpacked_bytes:
                        raise PackageError(
                            f"{label}: declares {_fmt(tree.bytes + member.size)} of unpacked files (up to {member.name!r}), "
                            f"over the {_fmt(limits.unpacked_bytes)} limit"
                        )
                    stream = tf.extractfile(member)
                    assert stream is not None
                    tree.add_file(rel, stream, declared=member.size, executable=bool(member.mode & 0o100))
    except PackageError:
        raise
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise PackageError(f"{label}: not a valid .tar.gz archive ({_one_line(exc)})") from None


def _tar_members(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        member = tf.next()
        if member is None:
            return
        yield member


# -- folders -----------------------------------------------------------------


def _copy_folder(src: Path, label: str, dest: Path, limits: PackageLimits) -> tuple[str, int]:
    tree = _Tree(label, dest, limits)
    listing: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames) + sorted(filenames):
            full = base / name
            rel = full.relative_to(src).as_posix()
            _check_member_name(rel, label)
            st = os.lstat(full)
            tree.count(rel)
            if stat.S_ISLNK(st.st_mode):
                raise PackageError(f"{label}: {rel!r}: symbolic links are not allowed")
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                raise PackageError(f"{label}: {rel!r}: device files are not allowed")
            if stat.S_ISDIR(st.st_mode):
                tree.add_dir(rel)
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256()
                with open(full, "rb") as f:
                    tree.add_file(rel, _HashingReader(f, digest), executable=bool(st.st_mode & 0o100))
                listing.append(f"{rel}\0{digest.hexdigest()}\n")
            else:
                raise PackageError(f"{label}: {rel!r}: only regular files and folders are allowed")
    listing.sort()
    return hashlib.sha256("".join(listing).encode()).hexdigest(), tree.bytes


class _HashingReader:
    def __init__(self, raw: IO[bytes], digest: Any):
        self.raw = raw
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.digest.update(data)
        return data


# -- manifest ----------------------------------------------------------------


def _read_manifest(dest: Path, label: str) -> tuple[Path, str, dict[str, Any]]:
    root = dest
    found = [n for n in MANIFEST_NAMES if (root / n).exists()]
    if not found:
        # Everything under one top-level folder (a zipped folder): look in it.
        tops = [p for p in dest.iterdir() if p.name != "__MACOSX"]
        if len(tops) == 1 and tops[0].is_dir() and not tops[0].is_symlink():
            inner = [n for n in MANIFEST_NAMES if (tops[0] / n).exists()]
            if inner:
                root, found = tops[0], inner
    if not found:
        raise PackageError(
            f"{label}: no manifest: add cardroom.toml (or bot.json) at the top of the package, "
            f'e.g. entry = "main.py" and protocol = 1'
        )
    if len(found) > 1:
        raise PackageError(f"{label}: has both cardroom.toml and bot.json; keep one manifest")
    manifest_name = found[0]
    path = root / manifest_name
    if path.is_symlink() or not path.is_file():
        raise PackageError(f"{label}: {manifest_name} is not a regular file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PackageError(f"{label}: {manifest_name}: not UTF-8 text") from None
    if manifest_name.endswith(".toml"):
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PackageError(f"{label}: {manifest_name}: invalid TOML: {_one_line(exc)}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PackageError(f"{label}: {manifest_name}: invalid JSON: {_one_line(exc)}") from None
        if not isinstance(data, dict):
            raise PackageError(f"{label}: {manifest_name}: must be a JSON object, not {_type_name(data)}")
    return root, manifest_name, _check_manifest(data, label, manifest_name)


def _check_manifest(data: dict[str, Any], label: str, manifest_name: str) -> dict[str, Any]:
    where = f"{label}: {manifest_name}"
    allowed = ", ".join(sorted(MANIFEST_KEYS))
    for key in data:
        if key not in MANIFEST_KEYS:
            raise PackageError(f"{where}: unknown key {key!r} (allowed keys: {allowed})")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise PackageError(f"{where}: missing required key {key!r}")
    for key, value in data.items():
        expected = MANIFEST_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, expected):
            raise PackageError(f"{where}: {key!r} must be {_type_name(expected())}, not {_type_name(value)}")
    if data["protocol"] != PROTOCOL_VERSION:
        raise PackageError(f"{where}: protocol {data['protocol']} is not supported (this platform speaks protocol {PROTOCOL_VERSION})")
    name = data.get("name")
    if name is not None:
        if not name.strip():
            raise PackageError(f"{where}: 'name' must not be empty")
        if len(name) > MAX_NAME_CHARS:
            raise PackageError(f"{where}: 'name' is {len(name)} characters; the limit is {MAX_NAME_CHARS}")
        if any(ord(c) < 32 for c in name):
            raise PackageError(f"{where}: 'name' must not contain control characters")
    if not data["entry"]:
        raise PackageError(f"{where}: 'entry' must not be empty")
    runtime = data.get("runtime", DEFAULT_RUNTIME)
    if runtime not in RUNTIMES:
        known = ", ".join(repr(r) for r in RUNTIMES)
        raise PackageError(f"{where}: unknown runtime {runtime!r}: the runtimes are {known} (python when left out)")
    return dict(data)


MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the names make(1) looks for, in its order


def _check_entry(root: Path, label: str, manifest_name: str, entry: str, runtime: str = DEFAULT_RUNTIME) -> str:
    where = f"{label}: {manifest_name}"
    if "\\" in entry or entry.startswith("/") or ".." in entry.split("/"):
        raise PackageError(f"{where}: entry {entry!r} must be a relative path inside the package, without '..'")
    rel = _check_member_name(entry, label)
    path = root / rel
    if not rel or not os.path.lexists(path):
        missing = f"{label}: entry point {entry!r} (from {manifest_name}) is not in the package"
        if runtime == "native":
            # A starter kit's folder before its first build (decision 209).
            makefile = next((name for name in MAKEFILES if (root / name).is_file()), None)
            how = f"run `make` in the folder first (its {makefile} builds it)" if makefile else "build it first"
            missing += f": a native bot's entry is the compiled program; {how}, then play or submit the folder"
        raise PackageError(missing)
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise PackageError(f"{label}: entry point {entry!r} (from {manifest_name}) is not a regular file")
    return rel


def _check_native(root: Path, entry: str, label: str, manifest_name: str) -> tuple[str, ...]:
    """A native entry: an x86-64 Linux program (its header read), made
    executable if the package lost its bit (then a note says so)."""
    path = root / entry
    try:
        check_native_entry(path, f"{label}: entry point {entry!r} (runtime native, from {manifest_name})")
    except EntryRefused as exc:
        raise PackageError(str(exc)) from None
    if os.stat(path).st_mode & 0o100:
        return ()
    # Safe: a program we just read, in the package's own fresh folder.
    os.chmod(path, 0o755)
    return (
        f"the entry point {entry!r} was not executable (the package did not keep its executable bit); the platform set it: "
        "chmod +x it before packing (zip and tar keep the bit)",
    )


def _check_no_shadowing(root: Path, entry: str, label: str) -> None:
    """Python puts the entry's folder first on the import path: a module
    there named like a standard one (``random.py``, ``json/__init__.py``) is
    what ``import random`` loads, in the bot and in Python's own modules, and
    the bot crashes at its first move with a puzzling error. Refused here,
    with the fix. (A folder without ``__init__.py`` hides nothing.)"""
    folder = (root / entry).parent
    for child in sorted(folder.iterdir()):
        if child.name.endswith(".py") and child.is_file():
            module = child.name[:-3]
        elif child.is_dir() and (child / "__init__.py").is_file():
            module = child.name
        else:
            continue
        if module in sys.stdlib_module_names:
            raise _shadowing_error(label, child.relative_to(root).as_posix() + ("/" if child.is_dir() else ""), module)


def _shadowing_error(label: str, shown: str | None, module: str) -> PackageError:
    """``shown``: the module's file or folder in the package (None: the
    package is that one file)."""
    what = f"{shown!r} has" if shown else "has"
    return PackageError(
        f"{label}: {what} the name of Python's standard module {module!r}: the bot's folder comes first on the "
        f"import path, so 'import {module}' would load it instead; rename it"
    )


# -- helpers -----------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    for t, n in names.items():
        if type(value) is t:
            return n
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
