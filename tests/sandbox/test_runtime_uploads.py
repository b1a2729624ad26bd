"""The runtime of a package (docs/runtimes.md) and the checks of a native entry:
each bad upload gets the one-line message that names what is wrong."""

from __future__ import annotations

import io
import os
import struct
import tarfile
import zipfile

import pytest

from cardroom.launch import BotLimits, bot_python
from cardroom.packages import PackageError, inspect_upload, load_bot_package, package_argv
from cardroom.runtimes import bot_node

from .native import compile_c

NATIVE_MANIFEST = 'entry = "bot"\nprotocol = 1\nruntime = "native"\n'


@pytest.fixture(scope="session")
def programs(tmp_path_factory) -> dict[str, bytes]:
    """first_legal.c built as a dynamic program, an object file and a shared library."""
    out = tmp_path_factory.mktemp("programs")
    built = {
        "dynamic": compile_c("first_legal.c", out / "dynamic"),
        "object": compile_c("first_legal.c", out / "object.o", "-c"),
        "shared": compile_c("first_legal.c", out / "libbot.so", "-shared", "-fPIC"),
    }
    return {name: path.read_bytes() for name, path in built.items()}


def native_zip(program: bytes, mode: int | None = 0o755) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("cardroom.toml", NATIVE_MANIFEST)
        info = zipfile.ZipInfo("bot")
        if mode is not None:
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3
        zf.writestr(info, program)
    return buf.getvalue()


def refused(data: bytes, filename: str = "bot.zip") -> str:
    with pytest.raises(PackageError) as info:
        inspect_upload(filename, data)
    message = str(info.value)
    assert "\n" not in message
    return message


def patched(program: bytes, offset: int, fmt: str, *values: int) -> bytes:
    data = bytearray(program)
    struct.pack_into(fmt, data, offset, *values)
    return bytes(data)


# -- runtimes -------------------------------------------------------------------------------


def test_the_manifest_names_the_runtime(tmp_path):
    for runtime, entry in (("python", "main.py"), ("node", "main.js")):
        folder = tmp_path / runtime
        folder.mkdir()
        (folder / entry).write_text("")
        (folder / "cardroom.toml").write_text(f'entry = "{entry}"\nprotocol = 1\nruntime = "{runtime}"\n')
        assert load_bot_package(folder, tmp_path / "work").runtime == runtime
    # Left out: python, as before runtimes existed.
    (tmp_path / "python" / "cardroom.toml").write_text('entry = "main.py"\nprotocol = 1\n')
    pkg = load_bot_package(tmp_path / "python", tmp_path / "work")
    assert pkg.runtime == "python" and package_argv(pkg) == [bot_python(), "main.py"]


def test_a_single_js_file_is_a_node_bot(tmp_path):
    bot = tmp_path / "random.js"  # a standard Python module's name is no matter for node
    bot.write_text("console.log('hi')\n")
    pkg = load_bot_package(bot, tmp_path / "work")
    assert (pkg.runtime, pkg.entry, pkg.name) == ("node", "random.js", "random")
    # V8's heap at 3/5 of the bot's memory: it collects garbage before the cgroup's limit.
    assert package_argv(pkg, BotLimits(memory_bytes=500 * 1024 * 1024)) == [
        bot_node(),
        "--max-old-space-size=300",
        "--v8-pool-size=1",  # one V8 worker thread whatever the host's cores
        "random.js",
    ]
    assert inspect_upload("random.js", b"console.log(1)\n").runtime == "node"


@pytest.mark.parametrize(
    "manifest, message",
    [
        (
            'entry = "main.py"\nprotocol = 1\nruntime = "ruby"\n',
            "bot.zip: cardroom.toml: unknown runtime 'ruby': the runtimes are 'python', 'node', 'native' (python when left out)",
        ),
        ('entry = "main.py"\nprotocol = 1\nruntime = 3\n', "bot.zip: cardroom.toml: 'runtime' must be a string, not an integer"),
    ],
)
def test_an_unknown_runtime_is_refused(manifest, message):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("cardroom.toml", manifest)
        zf.writestr("main.py", "")
    assert refused(buf.getvalue()) == message


# -- native entries -------------------------------------------------------------------------


def test_a_native_program_is_accepted_with_its_bit(programs, tmp_path):
    check = inspect_upload("bot.zip", native_zip(programs["dynamic"]))
    assert check.runtime == "native" and check.notes == ()
    path = tmp_path / "bot.zip"
    path.write_bytes(native_zip(programs["dynamic"]))
    pkg = load_bot_package(path, tmp_path / "work")
    assert package_argv(pkg) == ["./bot"] and os.stat(pkg.root / "bot").st_mode & 0o777 == 0o755


def test_a_native_entry_without_its_exec_bit_gets_it_with_a_note(programs, tmp_path):
    path = tmp_path / "bot.zip"
    path.write_bytes(native_zip(programs["dynamic"], mode=None))  # what zipfile.writestr gives: no mode at all
    pkg = load_bot_package(path, tmp_path / "work")
    assert os.stat(pkg.root / "bot").st_mode & 0o100
    assert len(pkg.notes) == 1 and "'bot' was not executable" in pkg.notes[0] and "the platform set it" in pkg.notes[0]


def test_a_tar_keeps_the_exec_bit(programs, tmp_path):
    path = tmp_path / "bot.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, data, mode in (("cardroom.toml", NATIVE_MANIFEST.encode(), 0o644), ("bot", programs["dynamic"], 0o755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tf.addfile(info, io.BytesIO(data))
    pkg = load_bot_package(path, tmp_path / "work")
    assert pkg.notes == () and os.stat(pkg.root / "bot").st_mode & 0o777 == 0o755
    assert os.stat(pkg.root / "cardroom.toml").st_mode & 0o777 == 0o644


ENTRY = "bot.zip: entry point 'bot' (runtime native, from cardroom.toml) is"
HINT = "build it on x86-64 Linux (or cross-compile for x86_64-linux-gnu), as docs/bot-authors.md shows"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: patched(p, 18, "<H", 183), f"{ENTRY} an ELF program for 64-bit ARM (aarch64), not x86-64: {HINT}"),
        (lambda p: patched(p, 18, "<H", 243), f"{ENTRY} an ELF program for RISC-V, not x86-64: {HINT}"),
        (
            lambda p: patched(patched(p, 4, "B", 1), 18, "<H", 3),
            f"{ENTRY} a 32-bit ELF program (32-bit x86 (i386)); the native runtime runs 64-bit x86-64 programs only: {HINT}",
        ),
        (lambda p: patched(p, 5, "B", 2), f"{ENTRY} a big-endian ELF program; the native runtime runs x86-64 programs only: {HINT}"),
        (lambda p: patched(p, 7, "B", 9), f"{ENTRY} an x86-64 program for FreeBSD, not Linux: {HINT}"),
        (lambda p: b"MZ\x90\x00" + p[4:], f"{ENTRY} a Windows program (PE), not an ELF executable: a native bot's entry must be an x86-64 Linux program; {HINT}"),
        (lambda p: b"\xcf\xfa\xed\xfe" + p[4:], f"{ENTRY} a macOS program (Mach-O), not an ELF executable: a native bot's entry must be an x86-64 Linux program; {HINT}"),
        (lambda p: b"int main() { return 0; }\n", f"{ENTRY} a text file, not an ELF executable: a native bot's entry must be an x86-64 Linux program; {HINT}"),
        (lambda p: p[:40], f"{ENTRY} a truncated ELF file (40 bytes of header)"),
    ],
    ids=["aarch64", "riscv", "i386", "big-endian", "freebsd", "windows", "macos", "source", "truncated"],
)
def test_a_program_for_another_machine_is_named(programs, make, message):
    assert refused(native_zip(make(programs["dynamic"]))) == message


def test_an_object_file_and_a_shared_library_are_not_programs(programs):
    assert refused(native_zip(programs["object"])) == f"{ENTRY} an object file (.o), not a program: link it (e.g. g++ -static -o bot bot.o)"
    assert refused(native_zip(programs["shared"])) == f"{ENTRY} a shared library (.so), not a program: build an executable"


def test_a_loader_the_runtime_lacks_is_named(programs):
    """A musl build asks for musl's loader: named, with the fix."""
    program = programs["dynamic"]
    at = program.index(b"/lib64/ld-linux-x86-64.so.2\0")
    musl = program[:at] + b"/lib/ld-musl-x86_64.so.1\0\0\0\0" + program[at + 28 :]
    assert len(musl) == len(program)
    assert refused(native_zip(musl)) == (
        f"{ENTRY[:-3]} asks for the dynamic loader /lib/ld-musl-x86_64.so.1, which the native runtime lacks (it has glibc's "
        "/lib64/ld-linux-x86-64.so.2): link it statically (e.g. -static, or Rust's x86_64-unknown-linux-musl target) or against glibc"
    )


@pytest.mark.parametrize(
    "first_line, ending",
    [
        (b"#!/usr/bin/env python3\n", '; for a Python bot, set runtime = "python" (or leave runtime out)'),
        (b"#!/usr/bin/node\n", '; for a JavaScript bot, set runtime = "node"'),
        (b"#!/opt/lua/bin/lua -W\n", "; its interpreter 'lua' is not one the platform provides (python and node are)"),
        (b"#!\n", "; its #! line names no interpreter"),
    ],
)
def test_a_script_is_not_a_native_program(first_line, ending):
    shown = " ".join(first_line[2:].decode().split())
    assert refused(native_zip(first_line + b"print(1)\n")) == (
        f"{ENTRY} a script (#!{shown}), not an ELF executable: a native bot's entry must be the compiled program{ending}"
    )
