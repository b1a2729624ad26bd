"""Bot packages: every rule, with crafted archives, each asserting the exact
one-line message an author would see."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest

from cardroom.launch import bot_python
from cardroom.packages import BotPackage, PackageError, PackageLimits, load_bot_package, package_argv

from .conftest import REPO

MANIFEST = 'entry = "main.py"\nprotocol = 1\nname = "tester"\n'
MAIN = "print('hello')\n"
MiB = 1024 * 1024


# -- builders ------------------------------------------------------------------------


def make_zip(path: Path, members: dict[str, bytes | str], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    info.create_system = 3  # unix
    return info


def make_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return path


def tar_file(name: str, data: bytes | str) -> tuple[tarfile.TarInfo, bytes]:
    raw = data.encode() if isinstance(data, str) else data
    return tarfile.TarInfo(name), raw


def tar_special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def good_tar(path: Path, *extra: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    return make_tar(path, [tar_file("cardroom.toml", MANIFEST), tar_file("main.py", MAIN), *extra])


def error_of(path: Path, workdir: Path, limits: PackageLimits | None = None) -> str:
    with pytest.raises(PackageError) as info:
        if limits is None:
            load_bot_package(path, workdir)
        else:
            load_bot_package(path, workdir, limits)
    message = str(info.value)
    assert "\n" not in message
    # Nothing half-unpacked is left behind.
    assert not workdir.exists() or list(workdir.iterdir()) == []
    return message


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path / "work"


# -- what is accepted --------------------------------------------------------------------


def test_single_py_file(tmp_path, workdir):
    bot = tmp_path / "my_bot.py"
    bot.write_text(MAIN)
    pkg = load_bot_package(bot, workdir)
    assert isinstance(pkg, BotPackage)
    assert pkg.entry == "my_bot.py"
    assert pkg.name == "my_bot"
    assert pkg.protocol == 1
    assert pkg.size == len(MAIN)
    assert pkg.sha256 == hashlib.sha256(MAIN.encode()).hexdigest()
    assert (pkg.root / "my_bot.py").read_text() == MAIN
    assert pkg.root.is_absolute() and pkg.root.parent == workdir.resolve()
    assert package_argv(pkg) == [bot_python(), "my_bot.py"]


def test_a_file_named_like_a_standard_module_is_refused(tmp_path, workdir):
    """`import random` in random.py would import the bot itself."""
    bot = tmp_path / "random.py"
    bot.write_text("import random\n")
    assert error_of(bot, workdir) == (
        "random.py: has the name of Python's standard module 'random': the bot's folder comes first on the "
        "import path, so 'import random' would load it instead; rename it"
    )


@pytest.mark.parametrize(
    "members, shown",
    [
        ({"json.py": "X = 1\n"}, "json.py"),
        ({"queue/__init__.py": "", "queue/q.py": ""}, "queue/"),
    ],
)
def test_a_module_beside_the_entry_named_like_a_standard_one_is_refused(tmp_path, workdir, members, shown):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN, **members})
    module = shown.split(".")[0].rstrip("/")
    assert error_of(archive, workdir) == (
        f"bot.zip: {shown!r} has the name of Python's standard module {module!r}: the bot's folder comes first on "
        f"the import path, so 'import {module}' would load it instead; rename it"
    )


def test_standard_names_away_from_the_import_path_are_fine(tmp_path, workdir):
    """Only the entry's own folder is on the import path; a folder without
    __init__.py hides nothing."""
    archive = make_zip(
        tmp_path / "bot.zip",
        {"cardroom.toml": MANIFEST, "main.py": MAIN, "lib/random.py": "", "test/notes.txt": "", "email/readme.md": ""},
    )
    assert load_bot_package(archive, workdir).entry == "main.py"


def test_each_load_gets_a_fresh_folder(tmp_path, workdir):
    bot = tmp_path / "b.py"
    bot.write_text(MAIN)
    assert load_bot_package(bot, workdir).root != load_bot_package(bot, workdir).root


def test_folder(tmp_path, workdir):
    folder = tmp_path / "botdir"
    (folder / "lib").mkdir(parents=True)
    (folder / "cardroom.toml").write_text(MANIFEST)
    (folder / "main.py").write_text(MAIN)
    (folder / "lib" / "util.py").write_text("X = 1\n")
    pkg = load_bot_package(folder, workdir)
    assert (pkg.entry, pkg.name, pkg.protocol) == ("main.py", "tester", 1)
    assert (pkg.root / "lib" / "util.py").read_text() == "X = 1\n"
    assert pkg.size == len(MANIFEST) + len(MAIN) + len("X = 1\n")
    # The hash is the content's: the same files give the same hash, a change another.
    assert load_bot_package(folder, workdir).sha256 == pkg.sha256
    (folder / "lib" / "util.py").write_text("X = 2\n")
    assert load_bot_package(folder, workdir).sha256 != pkg.sha256


def test_folder_with_bot_json(tmp_path, workdir):
    folder = tmp_path / "jsonbot"
    folder.mkdir()
    (folder / "bot.json").write_text(json.dumps({"entry": "src/run.py", "protocol": 1}))
    (folder / "src").mkdir()
    (folder / "src" / "run.py").write_text(MAIN)
    pkg = load_bot_package(folder, workdir)
    assert (pkg.entry, pkg.name) == ("src/run.py", None)


def test_zip(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN, "data/table.json": "[1, 2]"})
    pkg = load_bot_package(archive, workdir)
    assert pkg.entry == "main.py" and pkg.name == "tester"
    assert pkg.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert pkg.size == archive.stat().st_size
    assert (pkg.root / "data" / "table.json").read_text() == "[1, 2]"
    for path in pkg.root.rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) in (0o644, 0o755)


def test_zip_of_a_folder(tmp_path, workdir):
    """Zipping a folder puts everything under one top-level folder."""
    archive = make_zip(tmp_path / "bot.zip", {"mybot/": "", "mybot/cardroom.toml": MANIFEST, "mybot/main.py": MAIN})
    pkg = load_bot_package(archive, workdir)
    assert pkg.root.name == "mybot" and (pkg.root / "main.py").is_file()


def test_tar_gz(tmp_path, workdir):
    archive = good_tar(tmp_path / "bot.tar.gz", tar_file("lib/x.py", "X = 1\n"))
    pkg = load_bot_package(archive, workdir)
    assert (pkg.entry, pkg.name) == ("main.py", "tester")
    assert pkg.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (pkg.root / "lib" / "x.py").read_text() == "X = 1\n"


def test_tgz_and_dot_slash_names(tmp_path, workdir):
    archive = make_tar(tmp_path / "bot.tgz", [tar_file("./cardroom.toml", MANIFEST), tar_file("./main.py", MAIN)])
    assert load_bot_package(archive, workdir).entry == "main.py"


# -- sizes and counts ----------------------------------------------------------------------


def test_oversize_single_file(tmp_path, workdir):
    bot = tmp_path / "huge.py"
    bot.write_bytes(b"#" * (10 * MiB + 1))
    assert error_of(bot, workdir) == "huge.py: the file is 10.0 MiB, over the 10 MiB limit for an uploaded package"


def test_oversize_compressed_archive(tmp_path, workdir):
    archive = make_zip(
        tmp_path / "big.zip",
        {"cardroom.toml": MANIFEST, "main.py": MAIN, "noise.bin": os.urandom(11 * MiB)},
        zipfile.ZIP_STORED,
    )
    assert error_of(archive, workdir) == "big.zip: the archive is 11.0 MiB, over the 10 MiB limit for an uploaded package"


def test_zip_bomb_high_ratio_refused_before_unpacking(tmp_path, workdir):
    """60 MiB of zeros deflate to ~60 KB: the declared sizes give it away and
    nothing is inflated."""
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        zf.writestr("main.py", MAIN)
        with zf.open("zeros.bin", "w") as f:
            for _ in range(60):
                f.write(bytes(MiB))
    assert archive.stat().st_size < MiB
    message = error_of(archive, workdir)
    assert re.fullmatch(r"bomb\.zip: declares 60\.0 MiB of unpacked files, over the 50 MiB limit", message), message


def test_zip_bomb_many_members(tmp_path, workdir):
    """Ten members of 6 MiB each: no single one is big, the total is."""
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        zf.writestr("main.py", MAIN)
        for i in range(10):
            zf.writestr(f"part{i}.bin", bytes(6 * MiB))
    assert error_of(archive, workdir).startswith("bomb.zip: declares 60.0 MiB of unpacked files, over the 50 MiB limit")


def _lie_about_size(archive: Path, member: bytes, size: int) -> None:
    """Rewrite the uncompressed size of ``member`` in the local header and
    the central directory."""
    raw = bytearray(archive.read_bytes())
    for m in re.finditer(rb"PK\x03\x04", raw):
        off = m.start()
        n = struct.unpack("<H", raw[off + 26 : off + 28])[0]
        if raw[off + 30 : off + 30 + n] == member:
            struct.pack_into("<I", raw, off + 22, size)
    for m in re.finditer(rb"PK\x01\x02", raw):
        off = m.start()
        n = struct.unpack("<H", raw[off + 28 : off + 30])[0]
        if raw[off + 46 : off + 46 + n] == member:
            struct.pack_into("<I", raw, off + 24, size)
    archive.write_bytes(raw)


def test_zip_bomb_lying_about_its_size(tmp_path, workdir):
    """The headers say 10 bytes; the data inflates to 100 MiB. Caught after
    reading 11 bytes of it."""
    archive = tmp_path / "liar.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        with zf.open("main.py", "w") as f:
            for _ in range(100):
                f.write(bytes(MiB))
    _lie_about_size(archive, b"main.py", 10)
    message = error_of(archive, workdir)
    assert message == "liar.zip: 'main.py': unpacks to more than the 10 bytes its header declares (a zip bomb?)"


def test_stored_member_longer_than_declared(tmp_path, workdir):
    archive = make_zip(tmp_path / "long.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN}, zipfile.ZIP_STORED)
    _lie_about_size(archive, b"main.py", len(MAIN) - 3)
    assert error_of(archive, workdir) == f"long.zip: 'main.py': unpacks to more than the {len(MAIN) - 3} bytes its header declares (a zip bomb?)"


def test_member_shorter_than_declared(tmp_path, workdir):
    archive = make_zip(tmp_path / "short.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN})
    _lie_about_size(archive, b"main.py", 1000)
    assert error_of(archive, workdir) == f"short.zip: 'main.py': unpacks to {len(MAIN)} bytes, not the 1000 its header declares"


def test_tar_gz_bomb(tmp_path, workdir):
    archive = tmp_path / "bomb.tar.gz"
    zeros = tarfile.TarInfo("zeros.bin")
    zeros.size = 60 * MiB
    with tarfile.open(archive, "w:gz") as tf:
        for info, data in (tar_file("cardroom.toml", MANIFEST), tar_file("main.py", MAIN)):
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        tf.addfile(zeros, io.BytesIO(bytes(60 * MiB)))
    assert archive.stat().st_size < MiB
    message = error_of(archive, workdir)
    assert message.startswith("bomb.tar.gz: declares 60.0 MiB of unpacked files (up to 'zeros.bin'), over the 50 MiB limit"), message


def test_gzip_bomb_stops_while_streaming(tmp_path, workdir):
    """A .tar.gz whose gzip stream inflates to 60 MiB that no member header
    declares (one giant pax extended header): the stream is cut off at the
    cap while inflating, never inflated whole."""
    import gzip

    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = 60 * MiB
    raw = header.tobuf(tarfile.GNU_FORMAT) + b"x" * header.size + bytes(1024)
    archive = tmp_path / "gz.tar.gz"
    archive.write_bytes(gzip.compress(raw, compresslevel=1))
    assert archive.stat().st_size < MiB
    message = error_of(archive, workdir)
    assert message == "gz.tar.gz: unpacks to more than 50 MiB (the limit for a package's unpacked size)"


def test_too_many_files_zip(tmp_path, workdir):
    members: dict[str, bytes | str] = {"cardroom.toml": MANIFEST, "main.py": MAIN}
    members.update({f"f/{i}.txt": "" for i in range(999)})
    archive = make_zip(tmp_path / "many.zip", members)
    assert error_of(archive, workdir) == "many.zip: has more than 1000 files and folders (the limit is 1000)"


def test_too_many_files_tar(tmp_path, workdir):
    archive = good_tar(tmp_path / "many.tar.gz", *[tar_file(f"f/{i}.txt", "") for i in range(999)])
    assert error_of(archive, workdir) == "many.tar.gz: has more than 1000 files and folders (the limit is 1000)"


def test_too_many_files_folder(tmp_path, workdir):
    folder = tmp_path / "crowded"
    folder.mkdir()
    (folder / "cardroom.toml").write_text(MANIFEST)
    (folder / "main.py").write_text(MAIN)
    for i in range(5):
        (folder / f"{i}.txt").write_text("")
    limits = PackageLimits(max_files=6)
    assert error_of(folder, workdir, limits) == "crowded: has more than 6 files and folders (the limit is 6)"


def test_exactly_1000_files_is_fine(tmp_path, workdir):
    members: dict[str, bytes | str] = {"cardroom.toml": MANIFEST, "main.py": MAIN}
    members.update({f"{i}.txt": "" for i in range(998)})
    assert load_bot_package(make_zip(tmp_path / "full.zip", members), workdir).entry == "main.py"


def test_unpacked_size_folder(tmp_path, workdir):
    folder = tmp_path / "fat"
    folder.mkdir()
    (folder / "cardroom.toml").write_text(MANIFEST)
    (folder / "main.py").write_text(MAIN)
    (folder / "data.bin").write_bytes(bytes(2 * MiB))
    message = error_of(folder, workdir, PackageLimits(unpacked_bytes=MiB))
    assert message == "fat: unpacks to more than 1 MiB (the limit for a package's unpacked size)"


# -- names and entry types -------------------------------------------------------------------


def test_zip_path_traversal(tmp_path, workdir):
    archive = make_zip(tmp_path / "evil.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN, "../x": "pwned"})
    assert error_of(archive, workdir) == "evil.zip: '../x': '..' is not allowed in a path"
    assert not (tmp_path / "x").exists()


def test_zip_nested_traversal(tmp_path, workdir):
    archive = make_zip(tmp_path / "evil.zip", {"cardroom.toml": MANIFEST, "a/b/../../../x": "pwned"})
    assert error_of(archive, workdir) == "evil.zip: 'a/b/../../../x': '..' is not allowed in a path"


def test_tar_path_traversal(tmp_path, workdir):
    archive = good_tar(tmp_path / "evil.tar.gz", tar_file("../x", "pwned"))
    assert error_of(archive, workdir) == "evil.tar.gz: '../x': '..' is not allowed in a path"


def test_zip_absolute_path(tmp_path, workdir):
    archive = make_zip(tmp_path / "abs.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN, "/etc/cron.d/evil": "pwned"})
    assert error_of(archive, workdir) == "abs.zip: '/etc/cron.d/evil': absolute paths are not allowed"


def test_tar_absolute_path(tmp_path, workdir):
    archive = good_tar(tmp_path / "abs.tar.gz", tar_file("/tmp/evil", "pwned"))
    assert error_of(archive, workdir) == "abs.tar.gz: '/tmp/evil': absolute paths are not allowed"


def test_zip_windows_paths(tmp_path, workdir):
    archive = make_zip(tmp_path / "win.zip", {"cardroom.toml": MANIFEST, "src\\main.py": MAIN})
    assert error_of(archive, workdir) == "win.zip: 'src\\\\main.py': backslashes are not allowed in a path (use '/')"


def test_zip_symlink(tmp_path, workdir):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        zf.writestr("main.py", MAIN)
        zf.writestr(zip_info("secrets", stat.S_IFLNK | 0o777), "/etc/shadow")
    assert error_of(archive, workdir) == "link.zip: 'secrets': symbolic links are not allowed"


def test_zip_device_file(tmp_path, workdir):
    archive = tmp_path / "dev.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        zf.writestr(zip_info("disk", stat.S_IFBLK | 0o600), "")
    assert error_of(archive, workdir) == "dev.zip: 'disk': device files are not allowed"


def test_tar_symlink(tmp_path, workdir):
    archive = good_tar(tmp_path / "link.tar.gz", tar_special("secrets", tarfile.SYMTYPE, "/etc/shadow"))
    assert error_of(archive, workdir) == "link.tar.gz: 'secrets': symbolic links are not allowed"


def test_tar_hardlink(tmp_path, workdir):
    archive = good_tar(tmp_path / "hard.tar.gz", tar_special("copy", tarfile.LNKTYPE, "/etc/shadow"))
    assert error_of(archive, workdir) == "hard.tar.gz: 'copy': hard links are not allowed"


def test_tar_device_file(tmp_path, workdir):
    archive = good_tar(tmp_path / "dev.tar.gz", tar_special("null", tarfile.CHRTYPE))
    assert error_of(archive, workdir) == "dev.tar.gz: 'null': device files are not allowed"


def test_tar_block_device(tmp_path, workdir):
    archive = good_tar(tmp_path / "dev.tar.gz", tar_special("sda", tarfile.BLKTYPE))
    assert error_of(archive, workdir) == "dev.tar.gz: 'sda': device files are not allowed"


def test_tar_fifo(tmp_path, workdir):
    archive = good_tar(tmp_path / "fifo.tar.gz", tar_special("pipe", tarfile.FIFOTYPE))
    assert error_of(archive, workdir) == "fifo.tar.gz: 'pipe': FIFOs are not allowed"


def test_folder_symlink(tmp_path, workdir):
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "cardroom.toml").write_text(MANIFEST)
    (folder / "main.py").write_text(MAIN)
    (folder / "shadow").symlink_to("/etc/shadow")
    assert error_of(folder, workdir) == "linked: 'shadow': symbolic links are not allowed"


def test_folder_given_as_a_symlink(tmp_path, workdir):
    real = tmp_path / "real.py"
    real.write_text(MAIN)
    (tmp_path / "alias.py").symlink_to(real)
    assert error_of(tmp_path / "alias.py", workdir) == "alias.py: is a symbolic link; give the file or folder itself"


def test_duplicate_member(tmp_path, workdir):
    archive = tmp_path / "dup.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("cardroom.toml", MANIFEST)
        zf.writestr("main.py", MAIN)
        with pytest.warns(UserWarning):
            zf.writestr("main.py", "print('other')\n")
    assert error_of(archive, workdir) == "dup.zip: 'main.py' appears twice"


def test_file_and_folder_clash(tmp_path, workdir):
    archive = make_zip(tmp_path / "clash.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN, "lib": "", "lib/x.py": ""})
    assert error_of(archive, workdir) == "clash.zip: 'lib/x.py': its folder 'lib' is also a file"


def test_corrupt_zip(tmp_path, workdir):
    archive = make_zip(tmp_path / "cut.zip", {"cardroom.toml": MANIFEST, "main.py": MAIN})
    archive.write_bytes(archive.read_bytes()[:40])
    assert error_of(archive, workdir).startswith("cut.zip: not a valid zip archive (")


def test_corrupt_tar_gz(tmp_path, workdir):
    archive = tmp_path / "junk.tar.gz"
    archive.write_bytes(b"\x1f\x8b" + os.urandom(200))
    assert error_of(archive, workdir).startswith("junk.tar.gz: not a valid .tar.gz archive (")


def test_not_a_package(tmp_path, workdir):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert error_of(other, workdir) == "notes.txt: not a bot package: give a .py or .js file, a folder, a .zip or a .tar.gz"


def test_missing_path(tmp_path, workdir):
    assert error_of(tmp_path / "nope.zip", workdir) == "nope.zip: no such file or folder"


# -- the manifest ----------------------------------------------------------------------------


def test_missing_manifest(tmp_path, workdir):
    archive = make_zip(tmp_path / "bare.zip", {"main.py": MAIN})
    assert error_of(archive, workdir) == (
        "bare.zip: no manifest: add cardroom.toml (or bot.json) at the top of the package, "
        'e.g. entry = "main.py" and protocol = 1'
    )


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ('entry = "main.py"\nprotocol = 1\ncolour = "red"\n', "cardroom.toml: unknown key 'colour' (allowed keys: entry, name, protocol, runtime)"),
        ('protocol = 1\n', "cardroom.toml: missing required key 'entry'"),
        ('entry = "main.py"\n', "cardroom.toml: missing required key 'protocol'"),
        ('entry = "main.py"\nprotocol = "1"\n', "cardroom.toml: 'protocol' must be an integer, not a string"),
        ('entry = "main.py"\nprotocol = true\n', "cardroom.toml: 'protocol' must be an integer, not a boolean"),
        ('entry = 3\nprotocol = 1\n', "cardroom.toml: 'entry' must be a string, not an integer"),
        ('entry = "main.py"\nprotocol = 1\nname = ["a"]\n', "cardroom.toml: 'name' must be a string, not a list"),
        ('entry = "main.py"\nprotocol = 2\n', "cardroom.toml: protocol 2 is not supported (this platform speaks protocol 1)"),
        ('entry = "main.py"\nprotocol = 1\nname = ""\n', "cardroom.toml: 'name' must not be empty"),
        ('entry = "main.py"\nprotocol = 1\nname = "' + "x" * 65 + '"\n', "cardroom.toml: 'name' is 65 characters; the limit is 64"),
        ('entry = ""\nprotocol = 1\n', "cardroom.toml: 'entry' must not be empty"),
        ('entry = "../main.py"\nprotocol = 1\n', "cardroom.toml: entry '../main.py' must be a relative path inside the package, without '..'"),
        ('entry = "/usr/bin/python3"\nprotocol = 1\n', "cardroom.toml: entry '/usr/bin/python3' must be a relative path inside the package, without '..'"),
    ],
)
def test_bad_toml_manifest(tmp_path, workdir, manifest, message):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": manifest, "main.py": MAIN})
    assert error_of(archive, workdir) == f"bot.zip: {message}"


def test_invalid_toml(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": 'entry = "main.py\n', "main.py": MAIN})
    assert error_of(archive, workdir).startswith("bot.zip: cardroom.toml: invalid TOML: ")


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ('{"entry": "main.py", "protocol": 1', "bot.json: invalid JSON: "),
        ('["main.py", 1]', "bot.json: must be a JSON object, not a list"),
        ('{"entry": "main.py", "protocol": 1.0}', "bot.json: 'protocol' must be an integer, not a number"),
        ('{"entry": "main.py", "protocol": 1, "version": 3}', "bot.json: unknown key 'version' (allowed keys: entry, name, protocol, runtime)"),
        ('{"entry": null, "protocol": 1}', "bot.json: 'entry' must be a string, not null"),
    ],
)
def test_bad_json_manifest(tmp_path, workdir, manifest, message):
    archive = make_zip(tmp_path / "bot.zip", {"bot.json": manifest, "main.py": MAIN})
    assert error_of(archive, workdir).startswith(f"bot.zip: {message}")


def test_two_manifests(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": MANIFEST, "bot.json": '{"entry": "main.py", "protocol": 1}', "main.py": MAIN})
    assert error_of(archive, workdir) == "bot.zip: has both cardroom.toml and bot.json; keep one manifest"


def test_missing_entry(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": MANIFEST, "other.py": MAIN})
    assert error_of(archive, workdir) == "bot.zip: entry point 'main.py' (from cardroom.toml) is not in the package"


def test_an_unbuilt_native_starter_says_to_run_make(tmp_path, workdir):
    # The C++ starter kit as cloned: its Makefile and source, no program yet.
    kit = tmp_path / "cpp"
    shutil.copytree(REPO / "bots" / "starters" / "cpp", kit, ignore=shutil.ignore_patterns("bot", "*.o"))
    assert error_of(kit, workdir) == (
        "cpp: entry point 'bot' (from cardroom.toml) is not in the package: a native bot's entry is the compiled program; "
        "run `make` in the folder first (its Makefile builds it), then play or submit the folder"
    )
    (kit / "Makefile").unlink()
    assert error_of(kit, workdir).endswith("a native bot's entry is the compiled program; build it first, then play or submit the folder")


def test_entry_is_a_folder(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": MANIFEST, "main.py/": "", "main.py/x.py": MAIN})
    assert error_of(archive, workdir) == "bot.zip: entry point 'main.py' (from cardroom.toml) is not a regular file"


def test_manifest_not_utf8(tmp_path, workdir):
    archive = make_zip(tmp_path / "bot.zip", {"cardroom.toml": b"\xff\xfe entry", "main.py": MAIN})
    assert error_of(archive, workdir) == "bot.zip: cardroom.toml: not UTF-8 text"
