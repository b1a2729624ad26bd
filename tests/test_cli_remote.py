"""cardroom.remote without a server: where the token is kept and how, what
a folder uploads as, the one-line errors. (Against a real server and worker:
tests/ladder/test_cli_submit.py.)"""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile

import pytest

from cardroom import remote
from cardroom.cli import main


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "xdg" / "cardroom"


def test_config_dir_follows_xdg_and_ignores_a_relative_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    assert remote.config_dir() == tmp_path / "conf" / "cardroom"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/conf")
    assert remote.config_dir() == tmp_path / ".config" / "cardroom"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert remote.config_dir() == tmp_path / ".config" / "cardroom"


def test_credentials_are_written_0600_whatever_the_umask_and_replace_the_old_file(xdg):
    xdg.mkdir(parents=True)
    old = xdg / "credentials.json"
    old.write_text('{"servers": {}}')
    old.chmod(0o644)
    previous = os.umask(0)
    try:
        path = remote.save_credentials({"servers": {"http://x": {"token": "k", "username": "u"}}})
    finally:
        os.umask(previous)
    assert path == old
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["servers"]["http://x"]["token"] == "k"
    assert [p.name for p in xdg.iterdir()] == ["credentials.json"]  # no temporary file left


def test_a_folder_is_uploaded_as_a_zip_without_hidden_files(tmp_path):
    bot = tmp_path / "mybot"
    (bot / "lib").mkdir(parents=True)
    (bot / "main.py").write_text("print('hi')\n")
    (bot / "lib" / "util.py").write_text("X = 1\n")
    (bot / ".git").mkdir()
    (bot / ".git" / "config").write_text("secret\n")
    (bot / "lib" / "__pycache__").mkdir()
    (bot / "lib" / "__pycache__" / "util.pyc").write_bytes(b"\0")
    name, data = remote.read_package(str(bot))
    assert name == "mybot.zip"
    assert sorted(zipfile.ZipFile(io.BytesIO(data)).namelist()) == ["lib/util.py", "main.py"]


def test_log_paths_become_links_on_the_server():
    text = "the match: /matches/7/#event=3&view=seat-1 (event 3); log: /matches/7/logs/1/ see /docs/protocol/"
    out = remote.absolute_paths(text, "https://c.example")
    assert "https://c.example/matches/7/#event=3&view=seat-1 " in out
    assert "https://c.example/matches/7/logs/1/" in out and "https://c.example/docs/protocol/" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["submit", "nothing.py", "--game", "allegra", "--name", "x", "--server", "http://127.0.0.1:9", "--token", "k"], "no such file"),
        (["submit", "{bot}", "--game", "allegra", "--name", "x", "--server", "ftp://h", "--token", "k"], "http:// or https://"),
        (["submit", "{bot}", "--game", "allegra", "--name", "x"], "which server?"),
        (["submit", "{bot}", "--game", "allegra", "--name", "x", "--server", "http://127.0.0.1:9"], "no token for http://127.0.0.1:9"),
        (["submit", "{bot}", "--game", "allegra", "--name", "x", "--server", "http://127.0.0.1:9", "--token", "k"], "cannot reach"),
        (["submit", "{notes}", "--game", "allegra", "--name", "x", "--server", "http://127.0.0.1:9", "--token", "k"], "a bot is a .py file"),
    ],
)
def test_submit_failures_are_one_line_and_exit_2(argv, message, xdg, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CARDROOM_TOKEN", raising=False)
    monkeypatch.delenv("CARDROOM_SERVER", raising=False)
    (tmp_path / "bot.py").write_text("print()\n")
    (tmp_path / "notes.txt").write_text("hello\n")
    argv = [a.format(bot=tmp_path / "bot.py", notes=tmp_path / "notes.txt") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cardroom: error: ") and message in err, err
