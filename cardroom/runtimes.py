"""The runtimes a bot may run on (docs/runtimes.md), and what each needs
checked and set before it starts.

* ``python`` (the default): ``python3 ENTRY``, the standard library, numpy
  (Debian's ``python3-numpy``), ONNX Runtime (PyPI's, decision 220) and
  ``cardroom_sdk``.
* ``node``: ``node ENTRY``, the distribution's Node.js, no npm packages.
* ``native``: ENTRY itself, an x86-64 Linux ELF executable, static or linked
  against the C/C++ runtime libraries under ``/usr``.

Every runtime runs through the same launcher (``cardroom.launch`` /
``cardroom.sandbox``) under the same limits; what differs is only the command
line, whether ``RLIMIT_AS`` is the memory limit (V8 reserves far more address
space than it uses: for ``node`` the memory cgroup is the limit that counts,
decision "RLIMIT_AS and node"), which tree of the sandbox's image is the
bot's root (each runtime's files only: a node or native bot sees no SDK,
shim, numpy or ``/etc/python3.11``, decisions 160 and 175) and what an
upload must pass:
``check_native_entry`` reads the ELF header of a native entry, so a wrong
architecture, a script or an object file is refused at upload with a message
that names it; ``missing_libraries`` runs ``ldd`` in the sandbox when a native
bot could not start, to name the libraries the runtime lacks.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
import time
from collections.abc import Callable
from pathlib import Path

from cardroom.fdwait import fd_ready
from cardroom.launch import BotLimits, Launcher, bot_python

__all__ = [
    "DEFAULT_RUNTIME",
    "RUNTIMES",
    "NativeEntry",
    "EntryRefused",
    "bot_node",
    "check_native_entry",
    "explain_native_exit",
    "missing_libraries",
    "runtime_argv",
    "runtime_limits",
]

RUNTIMES = ("python", "node", "native")
DEFAULT_RUNTIME = "python"
# The dynamic loader of glibc on x86-64: the one a native bot may ask for.
X86_64_LOADER = "/lib64/ld-linux-x86-64.so.2"
# The part of the bot's memory V8's old generation may take (the rest: new
# space, code, buffers outside the heap, the process itself).
NODE_HEAP_SHARE = (3, 5)
# ldd's own exit status when the program's loader fails: glibc exits 127.
LOADER_FAILED = 127


class EntryRefused(ValueError):
    """An entry that cannot run on its runtime; ``str()`` is one line."""


def bot_node() -> str:
    """Node.js as bots run it: ``CARDROOM_BOT_NODE`` or the distribution's
    ``node`` under /usr (the sandbox shows /usr only)."""
    configured = os.environ.get("CARDROOM_BOT_NODE")
    if configured:
        return configured
    for path in ("/usr/bin/node", "/usr/bin/nodejs"):  # Debian's name, and the package's link
        if os.access(path, os.X_OK):
            return path
    return "/usr/bin/node"


def runtime_argv(runtime: str, entry: str, limits: BotLimits) -> list[str]:
    """The command that runs ``entry`` (relative to the bot's folder)."""
    if runtime == "python":
        return [bot_python(), entry]
    if runtime == "node":
        share, whole = NODE_HEAP_SHARE
        heap_mib = max(16, limits.memory_bytes * share // whole // (1024 * 1024))
        # One V8 worker thread, not one per core of the host: the bot has one
        # core, its threads count against its 32 processes, and every thread
        # is frozen and thawed at every move.
        return [bot_node(), f"--max-old-space-size={heap_mib}", "--v8-pool-size=1", entry]
    if runtime == "native":
        return ["./" + entry]
    raise EntryRefused(f"unknown runtime {runtime!r}")


def runtime_limits(runtime: str, limits: BotLimits) -> BotLimits:
    """The limits a bot of ``runtime`` runs under: the same memory for all;
    for ``node`` the memory cgroup, not ``RLIMIT_AS``, holds it to that."""
    if runtime == "node":
        return dataclasses.replace(limits, limit_address_space=False)
    return limits


# -- native entries -------------------------------------------------------------------------

_MACHINES = {
    2: "SPARC",
    3: "32-bit x86 (i386)",
    8: "MIPS",
    20: "PowerPC",
    21: "64-bit PowerPC",
    22: "IBM S/390",
    40: "32-bit ARM",
    62: "x86-64",
    183: "64-bit ARM (aarch64)",
    243: "RISC-V",
    258: "LoongArch",
}
_OS_ABIS = {0: None, 3: None, 1: "HP-UX", 2: "NetBSD", 6: "Solaris", 9: "FreeBSD", 12: "OpenBSD"}
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
PT_INTERP = 3
EM_X86_64 = 62
BUILD_HINT = "build it on x86-64 Linux (or cross-compile for x86_64-linux-gnu), as docs/bot-authors.md shows"


@dataclasses.dataclass(frozen=True)
class NativeEntry:
    """A native entry that passed the header checks: ``loader`` is the
    dynamic loader it asks for (None: a static program)."""

    loader: str | None


def check_native_entry(path: Path, shown: str) -> NativeEntry:
    """Read the head of a native bot's entry and refuse, naming what it is,
    anything but an x86-64 Linux program the sandbox can load. ``shown``: how
    the message names the file."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:2] == b"#!":
            f.seek(0)
            raise EntryRefused(_script_message(shown, f.readline(256)))
        if head[:4] != b"\x7fELF":
            raise EntryRefused(f"{shown} is {_what_it_is(head)}, not an ELF executable: a native bot's entry must be an x86-64 Linux program; {BUILD_HINT}")
        if len(head) < 64:
            raise EntryRefused(f"{shown} is a truncated ELF file ({len(head)} bytes of header)")
        elf_class, data, os_abi = head[4], head[5], head[7]
        if elf_class == 1:
            machine = struct.unpack_from("<H" if data == 1 else ">H", head, 18)[0]
            raise EntryRefused(
                f"{shown} is a 32-bit ELF program ({_MACHINES.get(machine, f'machine {machine}')}); the native runtime runs 64-bit x86-64 programs only: {BUILD_HINT}"
            )
        if elf_class != 2:
            raise EntryRefused(f"{shown} is an ELF file of unknown class {elf_class}")
        if data != 1:
            raise EntryRefused(f"{shown} is a big-endian ELF program; the native runtime runs x86-64 programs only: {BUILD_HINT}")
        e_type, e_machine = struct.unpack_from("<HH", head, 16)
        if e_machine != EM_X86_64:
            raise EntryRefused(
                f"{shown} is an ELF program for {_MACHINES.get(e_machine, f'machine {e_machine}')}, not x86-64: {BUILD_HINT}"
            )
        if _OS_ABIS.get(os_abi, f"OS ABI {os_abi}") is not None:
            raise EntryRefused(f"{shown} is an x86-64 program for {_OS_ABIS.get(os_abi, f'OS ABI {os_abi}')}, not Linux: {BUILD_HINT}")
        if e_type == ET_REL:
            raise EntryRefused(f"{shown} is an object file (.o), not a program: link it (e.g. g++ -static -o bot bot.o)")
        if e_type == ET_CORE:
            raise EntryRefused(f"{shown} is a core dump, not a program")
        if e_type not in (ET_EXEC, ET_DYN):
            raise EntryRefused(f"{shown} is an ELF file of type {e_type}, not an executable program")
        e_entry, e_phoff = struct.unpack_from("<QQ", head, 24)
        e_phentsize, e_phnum = struct.unpack_from("<HH", head, 54)
        loader = _loader(f, e_phoff, e_phentsize, e_phnum, shown)
    if e_type == ET_DYN and loader is None and e_entry == 0:
        raise EntryRefused(f"{shown} is a shared library (.so), not a program: build an executable")
    if loader is not None and loader != X86_64_LOADER and not _in_sandbox(loader):
        raise EntryRefused(
            f"{shown} asks for the dynamic loader {loader}, which the native runtime lacks (it has glibc's {X86_64_LOADER}): "
            "link it statically (e.g. -static, or Rust's x86_64-unknown-linux-musl target) or against glibc"
        )
    return NativeEntry(loader=loader)


def _loader(f, phoff: int, phentsize: int, phnum: int, shown: str) -> str | None:
    if phnum == 0:
        return None
    if phentsize < 56 or phnum > 4096:
        raise EntryRefused(f"{shown} has a corrupt ELF header (program headers of {phentsize} bytes, {phnum} of them)")
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    if len(table) < phentsize * phnum:
        raise EntryRefused(f"{shown} is a truncated ELF file (its program headers end past the file)")
    for i in range(phnum):
        p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == PT_INTERP:
            if not 0 < p_filesz <= 4096:
                raise EntryRefused(f"{shown} has a corrupt ELF header (a loader name of {p_filesz} bytes)")
            f.seek(p_offset)
            return f.read(p_filesz).split(b"\0", 1)[0].decode("utf-8", "replace")
    return None


def _in_sandbox(path: str) -> bool:
    """Does ``path`` exist in the sandbox (which shows /usr and the /lib links)?"""
    return path.startswith(("/usr/", "/lib/", "/lib64/")) and not path.startswith("/usr/local/") and os.path.exists(path)


def _script_message(shown: str, first_line: bytes) -> str:
    words = first_line[2:].decode("utf-8", "replace").split()
    interpreter = words[0] if words else ""
    if os.path.basename(interpreter) == "env" and len(words) > 1:
        program = words[1]
    else:
        program = os.path.basename(interpreter)
    start = f"{shown} is a script (#!{' '.join(words)[:80]}), not an ELF executable: a native bot's entry must be the compiled program"
    if program.startswith("python"):
        return f'{start}; for a Python bot, set runtime = "python" (or leave runtime out)'
    if program in ("node", "nodejs"):
        return f'{start}; for a JavaScript bot, set runtime = "node"'
    if not interpreter:
        return f"{start}; its #! line names no interpreter"
    path = interpreter if os.path.basename(interpreter) != "env" else f"/usr/bin/{program}"
    if not _in_sandbox(path):
        return f"{start}; its interpreter {program!r} is not one the platform provides (python and node are)"
    return f"{start} (the runtimes are python, node and native)"


def _what_it_is(head: bytes) -> str:
    if head[:2] == b"MZ":
        return "a Windows program (PE)"
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce", b"\xca\xfe\xba\xbe"):
        return "a macOS program (Mach-O)"
    if head[:4] in (b"PK\x03\x04",):
        return "a zip archive"
    if not head:
        return "an empty file"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return f"a file starting with the bytes {head[:4].hex(' ')}"
    return "a text file"


def explain_native_exit(launcher: Launcher, root: Path, entry: str) -> Callable[[int], str | None]:
    """For ``ProtocolPlayer``: a native bot that exited with the loader's
    status 127 is asked of ``ldd`` in the sandbox, and what it lacks named."""

    def explain(status: int) -> str | None:
        if status != LOADER_FAILED:
            return None
        try:
            missing = missing_libraries(launcher, root, entry)
        except Exception:  # the explanation is a courtesy: never a new failure
            return None
        if not missing:
            return None
        return (
            f"the program needs {', '.join(missing)}, which the native runtime lacks (ldd in the sandbox): "
            "link those statically (e.g. g++ -static, or -static-libstdc++ -static-libgcc) or build against Debian 12's glibc"
        )

    return explain


def missing_libraries(launcher: Launcher, root: Path, entry: str, limits: BotLimits | None = None) -> list[str]:
    """What ``ldd`` in the sandbox (``launcher``) says the entry lacks: lines
    such as ``libfoo.so.1 => not found`` or glibc's ``version `GLIBC_2.38'
    not found``, each as one short phrase."""
    proc = launcher.spawn(root, ["/usr/bin/ldd", "./" + entry], limits or BotLimits())
    out = b""
    try:
        proc.stdin.close()
        deadline = time.monotonic() + 10
        for fd in (proc.stdout_fd, proc.stderr_fd):
            while time.monotonic() < deadline:
                if not fd_ready(fd, deadline - time.monotonic()):
                    break
                chunk = os.read(fd, 1 << 16)
                if not chunk or len(out) > 1 << 20:
                    break
                out += chunk
    finally:
        proc.kill()
    found: list[str] = []
    for line in out.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*(\S+) => not found", line)
        if m:
            found.append(m.group(1))
            continue
        m = re.search(r"version `([^']+)' not found(?: \(required by ([^)]+)\))?", line)
        if m:
            lib = line.split(":")[1].strip() if line.count(":") >= 2 else ""
            found.append(f"{m.group(1)} (of {os.path.basename(lib)})" if lib else m.group(1))
    return list(dict.fromkeys(found))
