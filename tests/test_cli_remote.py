"""cardroom.remote without the platform: where the token is kept and how,
what a folder uploads as, the one-line errors, and the command line against
a hostile HTTP server on loopback (redirects, garbage, huge bodies, control
characters). (Against the real platform and worker: tests/ladder/test_cli_submit.py.)"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import ssl
import stat
import struct
import subprocess
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cardroom import packages, remote
from cardroom.cli import main

RANDOM_BOT = (Path(__file__).resolve().parents[1] / "bots" / "random_bot.py").read_bytes()


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
        (["submit", "{notes}", "--game", "allegra", "--name", "x", "--server", "http://127.0.0.1:9", "--token", "k"], "a bot is a .py or .js file"),
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


# -- against a hostile server ----------------------------------------------------------------
# A small HTTP server on loopback that answers as a test tells it to: a
# cardroom server's answers by default, and redirects, garbage, huge or
# endless bodies, and control characters where a test says so.

ME = {"username": "author"}
BOT = {"id": 7, "name": "lowball", "game": "allegra", "owner": "author", "withdrawn": False}
VERSION = {"number": 1, "status": "pending", "progress": "queued for validation", "validation_log": ""}


class Hostile(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, tls=None):
        super().__init__(("127.0.0.1", 0), _Handler)
        scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server_address[1]}"
        self.seen: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self.sent = 0  # bytes of body written by the streaming answers
        self.routes = {
            ("GET", "/api/auth/me/"): json_answer(ME),
            ("GET", "/api/bots/"): json_answer({"count": 0, "next": None, "previous": None, "results": []}),
            ("POST", "/api/bots/"): json_answer({**BOT, "version": VERSION}, 201),
            ("GET", "/api/bots/7/versions/1/"): json_answer(VERSION),
            ("POST", "/api/auth/token/"): json_answer({"token": "t" * 40}),
        }


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.split("?")[0]
        self.server.seen.append((self.command, path, self.headers.get("Authorization")))
        route = self.server.routes.get((self.command, path))
        if route is None:
            return json_answer({"error": f"not found: {path}"}, 404)(self)
        return route(self)

    do_GET = do_POST = _answer


def json_answer(body, status=200):
    def answer(handler):
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return answer


def raw_answer(status, content_type, data: bytes, headers=()):
    def answer(handler):
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        for name, value in headers:
            handler.send_header(name, value)
        if not any(name == "Content-Length" for name, _ in headers):
            handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return answer


def redirect(location, status=302):
    return raw_answer(status, "text/html", b"moved", [("Location", location)])


@pytest.fixture
def hostile():
    servers = []

    def start(tls=None) -> Hostile:
        server = Hostile(tls)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def bot_file(tmp_path, xdg, monkeypatch):
    for name in ("CARDROOM_TOKEN", "CARDROOM_SERVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CARDROOM_SUBMIT_POLL_SECONDS", "0.1")
    path = tmp_path / "lowball.py"
    path.write_bytes(RANDOM_BOT)
    return str(path)


def submit(server, bot_file, *extra, token="k" * 40):
    return main(["submit", bot_file, "--game", "allegra", "--name", "lowball", "--server", server.url, "--token", token, *extra])


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cardroom: error: "), err
    return err


def test_a_hostile_server_that_behaves_is_a_normal_submission(hostile, bot_file, capsys):
    """The control: the hostile server's defaults are a cardroom server's answers."""
    server = hostile()
    assert submit(server, bot_file) == 0
    out = capsys.readouterr().out
    assert "created the allegra bot lowball (id 7)" in out and "uploaded lowball.py as version 1 of lowball" in out
    assert ("POST", "/api/bots/", "Token " + "k" * 40) in server.seen


def test_a_server_from_before_bots_with_packages_gets_the_version_uploaded_after(hostile, bot_file, capsys):
    """An older server creates the bot from POST /api/bots/ and ignores the file: the
    answer has no "version", and the version is uploaded the old way."""
    server = hostile()
    server.routes[("POST", "/api/bots/")] = json_answer(BOT, 201)
    server.routes[("POST", "/api/bots/7/versions/")] = json_answer(VERSION, 201)
    assert submit(server, bot_file) == 0, capsys.readouterr().err
    assert "uploaded lowball.py as version 1 of lowball" in capsys.readouterr().out
    assert [(m, p) for m, p, _ in server.seen if m == "POST"] == [("POST", "/api/bots/"), ("POST", "/api/bots/7/versions/")]


def test_the_token_is_never_sent_to_another_origin_after_a_redirect(hostile, bot_file, capsys):
    server, elsewhere = hostile(), hostile()
    server.routes[("GET", "/api/auth/me/")] = redirect(elsewhere.url + "/api/auth/me/")
    status = submit(server, bot_file)
    assert elsewhere.seen == []  # not followed at all
    assert status == 2
    err = one_error_line(capsys)
    assert f"redirected to {elsewhere.url}/api/auth/me/" in err and "the token is not sent there" in err
    # Another host name for the same address is another origin too.
    server.routes[("GET", "/api/auth/me/")] = redirect(server.url.replace("127.0.0.1", "localhost") + "/api/auth/me/", 301)
    assert submit(server, bot_file) == 2
    assert "the token is not sent there" in one_error_line(capsys)


def test_from_https_the_token_is_not_sent_on_to_plain_http(hostile, bot_file, tmp_path, monkeypatch, capsys):
    if shutil.which("openssl") is None:
        pytest.skip("openssl(1) makes the test's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts it, and only it
    server, plain = hostile(tls=(cert, key)), hostile()
    assert server.url.startswith("https://")
    server.routes[("GET", "/api/auth/me/")] = redirect(plain.url + "/api/auth/me/")
    status = submit(server, bot_file)
    assert plain.seen == []  # not followed: no token in clear
    assert status == 2 and f"redirected to {plain.url}/api/auth/me/" in one_error_line(capsys)
    assert ("GET", "/api/auth/me/", "Token " + "k" * 40) in server.seen  # it was over TLS, trusted


def test_the_password_is_not_posted_after_a_redirect(hostile, xdg, monkeypatch, capsys):
    server, elsewhere = hostile(), hostile()
    server.routes[("POST", "/api/auth/token/")] = redirect(elsewhere.url + "/api/auth/token/", 307)
    monkeypatch.setattr("getpass.getpass", lambda prompt: "secret-password")
    assert main(["login", "--server", server.url, "--username", "author"]) == 2
    assert "another address" in one_error_line(capsys)
    assert elsewhere.seen == [] and not (xdg / "credentials.json").exists()


def test_a_redirect_on_the_same_origin_is_followed_with_the_token(hostile, bot_file, capsys):
    server = hostile()
    server.routes[("GET", "/api/auth/me/")] = redirect("/api/auth/me-now/")
    server.routes[("GET", "/api/auth/me-now/")] = json_answer(ME)
    assert submit(server, bot_file) == 0, capsys.readouterr().err
    assert ("GET", "/api/auth/me-now/", "Token " + "k" * 40) in server.seen


def test_plain_http_to_another_host_is_warned_about_and_loopback_is_not(bot_file, hostile, capsys):
    assert main(["submit", bot_file, "--game", "allegra", "--name", "x", "--server", "http://cardroom.example.org"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("cardroom: warning: http://cardroom.example.org is plain http") and "https://" in err[0]
    assert err[1].startswith("cardroom: error: no token for http://cardroom.example.org")
    assert submit(hostile(), bot_file) == 0
    assert "warning" not in capsys.readouterr().err


def test_control_characters_from_the_server_are_not_printed(hostile, bot_file, capsys):
    server = hostile()
    hostile_text = "\x1b[2J\x1b]0;owned\x07 name taken\r\nby \x9b31m someone\u202e"
    server.routes[("POST", "/api/bots/")] = json_answer({"error": hostile_text, "field": "name"}, 400)
    assert submit(server, bot_file) == 2
    err = one_error_line(capsys)
    assert not any(c in err for c in "\x1b\x07\r\x9b\u202e"), repr(err)
    assert "\\x1b[2J\\x1b]0;owned\\x07 name taken by \\x9b31m someone\\u202e" in err
    # A validation log and a progress line, with --wait: lines kept, controls shown escaped.
    server.routes[("POST", "/api/bots/")] = json_answer({**BOT, "version": {**VERSION, "progress": "queued\x1b[1A"}}, 201)
    failed = {**VERSION, "status": "failed", "validation_log": "seat 1 crashed:\n\x1b[31mTraceback\x1b[0m\rfake: active"}
    server.routes[("GET", "/api/bots/7/versions/1/")] = json_answer(failed)
    assert submit(server, bot_file, "--wait") == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    assert "queued\\x1b[1A" in out and "seat 1 crashed:\n\\x1b[31mTraceback\\x1b[0m\\rfake: active" in out


def _not_http(handler):
    handler.wfile.write(b"SSH-2.0-OpenSSH_9.2\r\n")
    handler.close_connection = True


def _cut_short(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b'{"username": "au')
    handler.close_connection = True


def _reset(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(b'{"username"')
    handler.wfile.flush()
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()  # a TCP reset
    handler.close_connection = True


HTML_500 = b"<html><body><h1>Server Error (500)</h1></body></html>"


@pytest.mark.parametrize(
    "route, answer, message",
    [
        (("GET", "/api/auth/me/"), raw_answer(500, "text/html", HTML_500), "failed (HTTP 500"),
        (("GET", "/api/auth/me/"), raw_answer(502, "text/html", b"<h1>502 Bad Gateway</h1>"), "failed (HTTP 502"),
        (("GET", "/api/auth/me/"), raw_answer(404, "text/html", b"<h1>nope</h1>"), "not with a cardroom error"),
        (("GET", "/api/auth/me/"), raw_answer(200, "text/html", b"<html>welcome</html>"), "did not answer with JSON"),
        (("GET", "/api/auth/me/"), json_answer([1, 2, 3]), "something other than the signed-in user"),
        (("GET", "/api/auth/me/"), json_answer({"username": 5}), "something other than the signed-in user"),
        (("GET", "/api/bots/"), json_answer({"results": "lowball"}), "something other than a list of bots"),
        (("GET", "/api/bots/"), json_answer({"results": [{"name": "lowball"}]}), "something other than a bot"),
        (("POST", "/api/bots/"), json_answer({**BOT, "id": "../../admin"}, 201), "something other than a bot"),
        (("POST", "/api/bots/"), json_answer({**BOT, "version": {"status": "pending"}}, 201), "something other than a bot version"),
        (("POST", "/api/bots/"), json_answer({**BOT, "version": {**VERSION, "status": "hacked"}}, 201), "the status 'hacked'"),
        (("GET", "/api/auth/me/"), raw_answer(200, "application/json", b"[" * 200_000), "did not answer with JSON"),
        (("GET", "/api/auth/me/"), _not_http, "not valid HTTP"),
        (("GET", "/api/auth/me/"), _cut_short, "was cut short (16 of 1000 bytes)"),
        (("GET", "/api/auth/me/"), _reset, "broke off"),
    ],
    ids=[
        "html-500", "html-502", "html-404", "html-200", "a-list", "wrong-type", "results-not-a-list", "bot-without-fields",
        "bot-id-a-path", "version-without-number", "unknown-status", "deep-json", "not-http", "cut-short", "reset",
    ],
)  # fmt: skip
def test_an_unexpected_answer_is_one_line_and_exit_2(hostile, bot_file, capsys, route, answer, message):
    server = hostile()
    server.routes[route] = answer
    assert submit(server, bot_file, "--wait") == 2
    err = one_error_line(capsys)
    assert message in err and "Traceback" not in err, err


def _endless(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()  # no Content-Length: the body ends when the connection does
    handler.close_connection = True
    chunk = b" " * 65536
    try:
        while handler.server.sent < 64 * 1024 * 1024:
            handler.wfile.write(chunk)
            handler.server.sent += len(chunk)
    except OSError:
        pass  # the client hung up


def test_answers_are_read_up_to_a_size_bound(hostile, bot_file, capsys):
    server = hostile()
    server.routes[("GET", "/api/auth/me/")] = _endless
    assert submit(server, bot_file) == 2
    assert f"more than {remote.MAX_ANSWER_BYTES} bytes" in one_error_line(capsys)
    assert server.sent < 8 * remote.MAX_ANSWER_BYTES  # it stopped reading (the rest sits in socket buffers at most)
    # A declared length over the bound is refused before any of it is read.
    server.routes[("GET", "/api/auth/me/")] = raw_answer(200, "application/json", b"{}", [("Content-Length", str(10**10))])
    assert submit(server, bot_file) == 2
    assert f"answered with {10**10} bytes" in one_error_line(capsys)


def _drip(handler):
    body = json.dumps({**ME, "pad": " " * 10}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    try:
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass  # the client hung up


def test_an_answer_that_drips_in_is_not_waited_for_past_the_time_limit(hostile, bot_file, monkeypatch, capsys):
    monkeypatch.setattr(remote, "TIMEOUT_SECONDS", 1)
    server = hostile()
    server.routes[("GET", "/api/auth/me/")] = _drip  # each byte well within the socket's timeout
    started = time.monotonic()
    assert submit(server, bot_file) == 2
    assert time.monotonic() - started < 2.5
    assert "took more than 1 seconds to answer" in one_error_line(capsys)


def test_wait_gives_up_after_its_time_limit(hostile, bot_file, capsys):
    server = hostile()  # the version stays pending
    started = time.monotonic()
    assert submit(server, bot_file, "--wait", "--wait-timeout", "1") == 2
    assert time.monotonic() - started < 10
    captured = capsys.readouterr()
    assert "queued for validation" in captured.out
    err = captured.err
    assert err.count("\n") == 1 and "gave up waiting after 1 seconds (--wait-timeout)" in err and "still pending" in err
    assert f"{server.url}/my/bots/7/" in err


@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf", "nan"])
def test_wait_timeout_takes_a_positive_number_of_seconds(bot_file, capsys, value):
    assert main(["submit", bot_file, "--game", "allegra", "--name", "x", "--wait", "--wait-timeout", value]) == 2
    assert "--wait-timeout" in capsys.readouterr().err


def test_a_token_that_cannot_be_a_header_is_a_clear_error(hostile, bot_file, monkeypatch, capsys):
    server = hostile()
    monkeypatch.setenv("CARDROOM_TOKEN", "k" * 40 + "\r\nX-Injected: 1")
    assert main(["submit", bot_file, "--game", "allegra", "--name", "lowball", "--server", server.url]) == 2
    assert "the token from CARDROOM_TOKEN is not a cardroom API token" in one_error_line(capsys)
    assert server.seen == []
    monkeypatch.setenv("CARDROOM_TOKEN", "k" * 40 + "\n")  # pasted with its line break: fine
    assert main(["submit", bot_file, "--game", "allegra", "--name", "lowball", "--server", server.url]) == 0


@pytest.mark.parametrize(
    "filename, content, message",
    [
        ("empty.py", b"", "empty.py: the file is empty"),
        ("random.py", RANDOM_BOT, "the name of Python's standard module 'random'"),
        ("pkg.zip", b"PK\x03\x04 not really a zip", "not a valid zip archive"),
    ],
)
def test_a_package_the_server_would_refuse_is_refused_before_anything_is_sent(hostile, tmp_path, xdg, capsys, filename, content, message):
    server = hostile()
    path = tmp_path / filename
    path.write_bytes(content)
    assert submit(server, str(path)) == 2
    err = one_error_line(capsys)
    assert message in err and "nothing was sent" in err
    assert server.seen == []


def test_a_folder_too_large_to_unpack_is_refused_before_it_is_zipped(hostile, tmp_path, xdg, capsys):
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "cardroom.toml").write_text('entry = "main.py"\nprotocol = 1\n')
    (folder / "main.py").write_bytes(RANDOM_BOT)
    with open(folder / "weights.bin", "wb") as f:
        f.truncate(packages.DEFAULT_LIMITS.unpacked_bytes + 1)  # sparse: no disk used
    server = hostile()
    assert submit(server, str(folder)) == 2
    assert "over the 52428800 bytes a package may unpack to" in one_error_line(capsys)
    assert server.seen == []


def test_the_help_steers_away_from_token_on_the_command_line(capsys):
    with pytest.raises(SystemExit):
        main(["submit", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--token KEY the API token; avoid it: others see it in `ps`" in help_text
    assert "cardroom login" in help_text and "CARDROOM_TOKEN" in help_text


def test_an_active_versions_settled_lines_say_each_ladder_and_pass_over_what_is_not_of_their_shape():
    settled_lines = remote.settled_lines
    adjusted = [
        {"ladder": 1, "ladder_name": "Allegra 2p", "settled": False, "more_matches": 16},
        {"ladder": 2, "ladder_name": "Allegra 4p", "settled": True, "more_matches": None},
        {"ladder": 3, "ladder_name": "Allegra\x1b[2J 6p", "settled": False, "more_matches": None},
        {"ladder": 4, "settled": False, "more_matches": True},  # a boolean is no count
        {"ladder": 5, "settled": "yes"},
        "not an entry",
    ]
    assert settled_lines(adjusted) == [
        "  Allegra 2p: its place is not settled yet: about 16 more matches",
        "  Allegra 4p: its place is settled",
        "  Allegra\\x1b[2J 6p: its place is not settled yet",  # no terminal control reaches the screen
        "  4: its place is not settled yet",
    ]
    assert settled_lines(None) == settled_lines({"settled": True}) == []
