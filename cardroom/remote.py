"""``cardroom login`` and ``cardroom submit``: the command line against a
cardroom server's REST API (docs/bot-authors.md, "Submitting"; docs/api.md), standard library
only (urllib).

    cardroom login --server URL
    cardroom submit BOT --game GAME --name NAME [--server URL] [--token KEY] [--wait]
        [--wait-timeout SECONDS] [--new-bot]

``login`` asks for the username and password and keeps the token in
``$XDG_CONFIG_HOME/cardroom/credentials.json`` (``~/.config/cardroom/``
when XDG_CONFIG_HOME is unset), created with mode 0600. ``submit`` takes the
token from --token, else CARDROOM_TOKEN, else that file (for the server in
question), and the server from --server, else CARDROOM_SERVER, else the one
``login`` signed in to last. (--token shows in ``ps`` to every user of the
machine: the file or CARDROOM_TOKEN do not.)

``submit`` checks the package here first, with the server's own upload
checks (cardroom.packages), and sends nothing when it fails them; a new bot
is created together with its first version (POST /api/bots/ with the file),
so a refused package leaves no empty bot. A NAME you have only for the other
game is refused as a likely typo of --game unless --new-bot says otherwise.

The server is not trusted: the token goes only to the origin given (a
redirect elsewhere is refused, not followed), every answer is read up to
MAX_ANSWER_BYTES and in TIMEOUT_SECONDS, checked for the shape it must have,
and its text is printed without terminal control characters.

Exit statuses: 0 uploaded (with --wait: the version is active), 1 the version
failed validation (its log is printed), 2 the submission could not be made or
followed to its end (bad arguments or package, the server refused it, cannot
be reached, answered something unexpected, or --wait-timeout ran out): one
line on stderr saying why and what to do.
"""

from __future__ import annotations

import getpass
import http.client
import io
import ipaddress
import json
import os
import re
import secrets
import sys
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from cardroom import packages
from engine import game_ids

EXIT_ACTIVE = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
# How often --wait asks the server (CARDROOM_SUBMIT_POLL_SECONDS overrides it).
POLL_SECONDS = 2.0
# How long --wait follows validation (--wait-timeout): two validation
# matches, each up to a few minutes of thinking time, and a queue before them.
WAIT_TIMEOUT_SECONDS = 1800
TIMEOUT_SECONDS = 60  # one HTTP request, its answer read in full
MAX_ANSWER_BYTES = 1024 * 1024  # an answer of the API (a version with its log is a few KiB)
MAX_ERROR_BYTES = 64 * 1024  # the body of an error answer
# A token is sent in a header: printable ASCII, no spaces (the server's are 40 hex digits).
TOKEN_RE = re.compile(r"[!-~]{1,256}")
VERSION_STATUSES = ("pending", "validating", "active", "failed", "retired")


class RemoteError(Exception):
    """A submission that could not be made: one line for the user."""


# -- what is printed -----------------------------------------------------------------

# Bidirectional overrides and isolates reorder what a terminal shows.
_BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: Any, one_line: bool = False) -> str:
    """Text from the server (or any text shown to the user) made safe for a
    terminal: control characters (escape sequences, carriage returns, C1
    codes), bidirectional overrides and lone surrogates are shown escaped
    (``\x1b``), never sent as they are. Line breaks stay, or become spaces
    with ``one_line``; tabs stay."""
    text = str(text).replace("\r\n", "\n")
    out = []
    for c in text:
        if c == "\n":
            out.append(" " if one_line else c)
        elif c == "\t" or not (unicodedata.category(c) in ("Cc", "Cs") or c in _BIDI_CONTROLS):
            out.append(c)
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def say(text: str) -> None:
    print(printable(text), flush=True)


# -- where the token is kept ---------------------------------------------------------


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    # The XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored.
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "cardroom"


def credentials_path() -> Path:
    return config_dir() / "credentials.json"


def normalise_server(url: str) -> str:
    url = (url or "").strip()
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteError(f"the server must be an http:// or https:// URL, such as https://cardroom.example.org, not {url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


def is_loopback(server: str) -> bool:
    host = urllib.parse.urlsplit(server).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn_if_plain_http(server: str) -> None:
    if server.startswith("http://") and not is_loopback(server):
        print(
            f"cardroom: warning: {printable(server, True)} is plain http: your password and token cross the network "
            "unencrypted, for anyone on the way to read; use the server's https:// address",
            file=sys.stderr,
        )


def checked_token(token: str, source: str) -> str:
    token = token.strip()
    if not TOKEN_RE.fullmatch(token):
        raise RemoteError(f"the token from {source} is not a cardroom API token (printable characters, no spaces): copy it again")
    return token


def load_credentials() -> dict[str, Any]:
    path = credentials_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"servers": {}}
    except (OSError, ValueError) as exc:
        raise RemoteError(f"{path} cannot be read ({exc}): delete it and run cardroom login again") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise RemoteError(f"{path} is not a cardroom credentials file: delete it and run cardroom login again")
    return data


def save_credentials(data: dict[str, Any]) -> Path:
    """Write the file atomically, never readable by others: a temporary file
    created with mode 0600 in the same folder, then renamed over the old one."""
    folder = config_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "credentials.json"
    tmp = folder / f".credentials.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# -- HTTP ----------------------------------------------------------------------------------


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same origin (scheme, host and port)
    and only for a GET: urllib would send the Authorization header to any
    host a server names, https to http included, and turn a POST into a GET."""

    def __init__(self, server: str):
        self.server = server

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        shown = printable(newurl, one_line=True)
        if _origin(newurl) != _origin(req.full_url):
            raise RemoteError(
                f"{self.server} redirected to {shown}, another address: the token is not sent there. "
                f"If that is the cardroom server, pass --server with its address"
            )
        if req.get_method() not in ("GET", "HEAD"):
            raise RemoteError(f"{self.server} redirected the {req.get_method()} to {shown}: pass --server with the server's own address")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Api:
    def __init__(self, server: str, token: str | None):
        self.server = server
        self.token = token
        self.opener = urllib.request.build_opener(_SameOriginRedirects(server))
        self.deadline: float | None = None  # --wait's: no request outlasts it

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> Any:
        headers = {"Accept": "application/json", "User-Agent": "cardroom-cli"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=body, headers=headers, method=method)
        timeout = TIMEOUT_SECONDS
        if self.deadline is not None:
            timeout = max(1.0, min(timeout, self.deadline - time.monotonic()))
        try:
            with self.opener.open(req, timeout=timeout) as response:
                raw = self._read(response, MAX_ANSWER_BYTES, timeout)
        except urllib.error.HTTPError as exc:
            with exc:
                raise RemoteError(self._refusal(exc, timeout)) from None
        except urllib.error.URLError as exc:
            reason = printable(getattr(exc, "reason", exc), one_line=True)
            raise RemoteError(f"cannot reach {self.server} ({reason}): check the server URL and your network") from None
        except http.client.HTTPException as exc:  # not HTTP at all, or cut short
            raise RemoteError(
                f"{self.server} sent an answer that is not valid HTTP ({type(exc).__name__}): is it a cardroom server?"
            ) from None
        except OSError as exc:  # reset, or timed out, once connected
            reason = printable(exc.strerror or exc or type(exc).__name__, one_line=True)
            raise RemoteError(f"the connection to {self.server} broke off ({reason}): try again later") from None
        try:
            return json.loads(raw) if raw else None
        except (ValueError, RecursionError):
            raise RemoteError(f"{self.server}{path} did not answer with JSON: is {self.server} a cardroom server?") from None

    def _read(self, response, limit: int, timeout: float) -> bytes:
        """The answer's body, at most ``limit`` bytes, within ``timeout``
        seconds in all (a server that drips bytes is not waited for)."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise RemoteError(f"{self.server} answered with {int(declared)} bytes, over the {limit} a cardroom answer can be")
        ends = time.monotonic() + timeout
        data = bytearray()
        while chunk := response.read1(64 * 1024):
            data += chunk
            if len(data) > limit:
                raise RemoteError(f"{self.server} answered with more than {limit} bytes, more than a cardroom answer can be")
            if time.monotonic() > ends:
                raise RemoteError(f"{self.server} took more than {timeout:.0f} seconds to answer: try again later")
        if declared.isdigit() and len(data) < int(declared):  # (read1 does not raise IncompleteRead)
            raise RemoteError(f"the answer from {self.server} was cut short ({len(data)} of {declared} bytes): try again later")
        return bytes(data)

    def _refusal(self, exc: urllib.error.HTTPError, timeout: float) -> str:
        try:
            body = json.loads(self._read(exc, MAX_ERROR_BYTES, timeout) or b"{}")
        except (RemoteError, ValueError, RecursionError, OSError, http.client.HTTPException):
            body = None
        message = body.get("error") or body.get("detail") if isinstance(body, dict) else None
        reason = printable(exc.reason or "", one_line=True).strip()
        if not isinstance(message, str) or not message.strip():
            # Not the API's own error: a proxy's page, or not a cardroom server.
            if exc.code >= 500:
                return f"{self.server} failed (HTTP {exc.code} {reason}): the server or its proxy has a problem; try again later"
            return f"{self.server} answered HTTP {exc.code} {reason}, not with a cardroom error: is it a cardroom server?"
        message = printable(message, one_line=True).strip()
        if exc.code == 401:
            return (
                f"the server refused the token ({message}): it may have been replaced or the account deleted; "
                f"run `cardroom login --server {self.server}` or copy the token from {self.server}/account/"
            )
        return f"{message} (HTTP {exc.code})"

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post_json(self, path: str, payload: dict) -> Any:
        return self.request("POST", path, json.dumps(payload).encode(), "application/json")

    def post_form(self, path: str, fields: dict[str, str], file: tuple[str, str, bytes]) -> Any:
        """A multipart/form-data POST: text ``fields`` and one file (field, name, bytes)."""
        boundary = f"cardroom-{secrets.token_hex(12)}"
        field, filename, data = file
        # Names go in quoted headers: no quotes, backslashes or line breaks.
        safe = re.sub(r'["\\\r\n]', "_", filename)
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        ]
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{safe}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
        )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        return self.request("POST", path, body, f"multipart/form-data; boundary={boundary}")

    def expect(self, answer: Any, what: str, **fields: type | tuple[type, ...]) -> dict:
        """``answer`` if it is an object with ``fields`` of those types; else
        the server is not the cardroom server it claims to be."""
        ok = isinstance(answer, dict) and all(_is(answer.get(k), t) for k, t in fields.items())
        if not ok:
            raise RemoteError(f"{self.server} answered with something other than {what}: is it a cardroom server (of this version)?")
        return answer


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


# -- login ------------------------------------------------------------------------------------


def cmd_login(args) -> int:
    server = normalise_server(args.server or os.environ.get("CARDROOM_SERVER", ""))
    warn_if_plain_http(server)
    username = args.username or input("Username: ").strip()
    if not username:
        raise RemoteError("no username given")
    password = getpass.getpass("Password: ")
    api = Api(server, None)
    answer = api.expect(api.post_json("/api/auth/token/", {"username": username, "password": password}), "a token", token=str)
    token = checked_token(answer["token"], server)
    data = load_credentials()
    data["servers"][server] = {"username": username, "token": token}
    data["default_server"] = server
    path = save_credentials(data)
    say(f"signed in to {server} as {username}; the token is kept in {path}")
    return EXIT_ACTIVE


# -- submit -----------------------------------------------------------------------------------


def _server_and_token(args) -> tuple[str, str]:
    stored = None
    server = args.server or os.environ.get("CARDROOM_SERVER")
    if not server:
        stored = load_credentials()
        server = stored.get("default_server")
    if not server or not isinstance(server, str):
        raise RemoteError("which server? pass --server URL, set CARDROOM_SERVER, or run cardroom login --server URL first")
    server = normalise_server(server)
    warn_if_plain_http(server)
    if args.token:
        return server, checked_token(args.token, "--token")
    if os.environ.get("CARDROOM_TOKEN"):
        return server, checked_token(os.environ["CARDROOM_TOKEN"], "CARDROOM_TOKEN")
    stored = stored or load_credentials()
    entry = stored["servers"].get(server)
    token = entry.get("token") if isinstance(entry, dict) else None
    if not token or not isinstance(token, str):
        raise RemoteError(
            f"no token for {server}: run `cardroom login --server {server}` (or set CARDROOM_TOKEN "
            f"to the token from {server}/account/)"
        )
    return server, checked_token(token, str(credentials_path()))


def read_package(spec: str, limit: int = packages.DEFAULT_LIMITS.compressed_bytes) -> tuple[str, bytes]:
    """The upload: a .py or .js file, a .zip or .tar.gz as it is, or a folder zipped
    (its files, relative to it, without caches or hidden files); never more
    than ``limit`` + 1 bytes read (the size check then refuses it)."""
    path = Path(spec)
    if path.is_dir():
        files = []
        for file in sorted(path.rglob("*")):
            rel = file.relative_to(path)
            if file.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                files.append((file, rel))
        if not files:
            raise RemoteError(f"{spec}: the folder has no files to upload")
        unpacked = packages.DEFAULT_LIMITS.unpacked_bytes
        total = sum(file.stat().st_size for file, _ in files)
        if total > unpacked:
            raise RemoteError(f"{spec}: the folder's files are {total} bytes, over the {unpacked} bytes a package may unpack to")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for file, rel in files:
                zf.write(file, rel.as_posix())
                if buf.tell() > limit:
                    break  # the size check says so
        return f"{path.resolve().name or 'bot'}.zip", buf.getvalue()
    if not path.is_file():
        raise RemoteError(f"{spec}: no such file or folder")
    if not path.name.lower().endswith(packages.UPLOAD_SUFFIXES):
        raise RemoteError(f"{spec}: a bot is a .py or .js file, a .zip or .tar.gz package, or a folder")
    try:
        with path.open("rb") as f:
            return path.name, f.read(limit + 1)
    except OSError as exc:
        raise RemoteError(f"{spec}: cannot be read ({exc.strerror})") from None


def check_package(filename: str, data: bytes) -> str:
    """The server's upload checks, here, before anything is sent: the name
    the package is stored under."""
    try:
        safe_name = packages.upload_name(filename, data)
        packages.check_upload(safe_name, data)
    except packages.PackageError as exc:
        raise RemoteError(f"{exc} (checked here: nothing was sent)") from None
    return safe_name


BOT_FIELDS = {"id": int, "name": str, "game": str, "owner": str}
VERSION_FIELDS = {"number": int, "status": str}


def find_bot(api: Api, game: str, name: str, new_bot: bool) -> dict | None:
    """The user's bot NAME of ``game``, or None when it is to be created."""
    me = api.expect(api.get("/api/auth/me/"), "the signed-in user", username=str)["username"]
    found = api.get(f"/api/bots/?{urllib.parse.urlencode({'name': name})}")
    rows = found.get("results") if isinstance(found, dict) else found
    if not isinstance(rows, list):
        raise RemoteError(f"{api.server} answered with something other than a list of bots: is it a cardroom server?")
    bots = [api.expect(row, "a bot", **BOT_FIELDS) for row in rows]
    bots = [bot for bot in bots if bot["name"] == name]
    for bot in bots:
        if bot["game"] == game:
            if bot["owner"] != me:
                raise RemoteError(f"the {game} bot {name!r} belongs to {bot['owner']}, not to you ({me}): choose another --name")
            return bot
    mine = [bot for bot in bots if bot["owner"] == me]
    if mine and not new_bot:
        other = mine[0]
        raise RemoteError(
            f"you have no {game} bot named {name!r}, but you have the {other['game']} bot {name!r} "
            f"({api.server}/bots/{other['id']}/): did you mean --game {other['game']}? "
            f"(To make a second bot of that name, for {game}, add --new-bot.)"
        )
    return None


def create_bot_with_version(api: Api, game: str, name: str, filename: str, data: bytes) -> tuple[dict, dict]:
    """POST /api/bots/ with the package: the server creates the bot only if
    it accepts the package. (A server from before that ignores the file and
    creates the bot alone: the version is then uploaded after it.)"""
    answer = api.post_form("/api/bots/", {"game": game, "name": name}, ("file", filename, data))
    bot = api.expect(answer, "a bot", **BOT_FIELDS)
    if "version" in bot:
        return bot, api.expect(bot["version"], "a bot version", **VERSION_FIELDS)
    return bot, upload_version(api, bot, filename, data)


def upload_version(api: Api, bot: dict, filename: str, data: bytes) -> dict:
    answer = api.post_form(f"/api/bots/{bot['id']}/versions/", {}, ("file", filename, data))
    return api.expect(answer, "a bot version", **VERSION_FIELDS)


def absolute_paths(text: str, server: str) -> str:
    """The site's paths in a validation log, as full URLs to click."""
    return re.sub(r"(?<![\w/.])(/(?:matches|docs)/[^\s)]*)", lambda m: server + m.group(1), text)


def cmd_submit(args) -> int:
    server, token = _server_and_token(args)
    filename, data = read_package(args.bot)
    filename = check_package(filename, data)
    api = Api(server, token)
    bot = find_bot(api, args.game, args.name, args.new_bot)
    if bot is None:
        bot, version = create_bot_with_version(api, args.game, args.name, filename, data)
        say(f"created the {args.game} bot {bot['name']} (id {bot['id']})")
    else:
        version = upload_version(api, bot, filename, data)
    say(f"uploaded {filename} as version {version['number']} of {bot['name']}: {server}/my/bots/{bot['id']}/")
    if bot.get("withdrawn"):
        say(f"note: {bot['name']} is withdrawn from the ladders; re-enter it on {server}/my/bots/{bot['id']}/ to play")
    if not args.wait:
        say(f"its validation follows: watch it on {server}/my/bots/{bot['id']}/ (or submit with --wait)")
        return EXIT_ACTIVE
    return follow_validation(api, bot, version, args.wait_timeout)


def settled_lines(adjusted: Any) -> list[str]:
    """What an active version's ``adjusted`` says, a line per ladder: whether
    its place there is settled and, if not, about how many more matches it
    needs (docs/ladder.md); entries not of that shape are passed over."""
    lines = []
    for entry in adjusted if isinstance(adjusted, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("settled"), bool):
            continue
        where = printable(entry.get("ladder_name") or entry.get("ladder"), one_line=True)
        more = entry.get("more_matches")
        if entry["settled"]:
            lines.append(f"  {where}: its place is settled")
        elif isinstance(more, int) and not isinstance(more, bool):
            lines.append(f"  {where}: its place is not settled yet: about {more} more matches")
        else:
            lines.append(f"  {where}: its place is not settled yet")
    return lines


def poll_seconds() -> float:
    try:
        return max(0.1, float(os.environ.get("CARDROOM_SUBMIT_POLL_SECONDS", POLL_SECONDS)))
    except ValueError:
        return POLL_SECONDS


def follow_validation(api: Api, bot: dict, version: dict, timeout: float = WAIT_TIMEOUT_SECONDS) -> int:
    url = f"/api/bots/{bot['id']}/versions/{version['number']}/"
    api.deadline = time.monotonic() + timeout
    shown = None
    while True:
        status = version["status"]
        if status not in VERSION_STATUSES:
            raise RemoteError(f"{api.server} gave version {version['number']} the status {status!r}, which cardroom does not have")
        line = version.get("progress") or status
        if status in ("pending", "validating") and line != shown:
            say(absolute_paths(str(line), api.server))
            shown = line
        if status == "active":
            say(f"active: version {version['number']} of {bot['name']} plays on the {bot['game']} ladders: {api.server}/bots/{bot['id']}/")
            for line in settled_lines(version.get("adjusted")):
                say(line)
            return EXIT_ACTIVE
        if status in ("failed", "retired"):
            log = absolute_paths(str(version.get("validation_log") or "(no validation log)"), api.server)
            if status == "retired":
                say(f"retired: version {version['number']} passed, but a newer version is active\n{log}")
                return EXIT_ACTIVE
            say(f"failed: version {version['number']} of {bot['name']} did not pass validation\n{log}")
            return EXIT_FAILED
        pause = poll_seconds()
        if time.monotonic() + pause > api.deadline:
            raise RemoteError(
                f"gave up waiting after {timeout:g} seconds (--wait-timeout): version {version['number']} of {bot['name']} "
                f"is still {status}; follow it on {api.server}/my/bots/{bot['id']}/"
            )
        time.sleep(pause)
        version = api.expect(api.get(url), "a bot version", **VERSION_FIELDS)


def _positive_seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"takes a number of seconds above 0, not {text!r}")
    return value


def add_parsers(sub) -> None:
    login = sub.add_parser("login", help="sign in to a cardroom server and keep its API token for cardroom submit")
    login.add_argument("--server", metavar="URL", help="the server (default: CARDROOM_SERVER)")
    login.add_argument("--username", help="the username (asked for when left out)")
    login.set_defaults(func=_guarded(cmd_login))

    submit = sub.add_parser(
        "submit",
        help="upload a bot as a new version of your bot NAME on a server",
        description="Upload BOT as a new version of your bot NAME (checked here first; a new bot is created "
        "with it). The token: run `cardroom login` once, or set CARDROOM_TOKEN; --token shows in `ps` to "
        "every user of the machine.",
    )
    submit.add_argument("bot", metavar="BOT", help="a .py or .js file, a .zip / .tar.gz package, or a folder")
    submit.add_argument("--game", required=True, choices=game_ids())
    submit.add_argument("--name", required=True, help="your bot's name (created if you have none of that name)")
    submit.add_argument("--server", metavar="URL", help="the server (default: CARDROOM_SERVER, then the one you logged in to)")
    submit.add_argument(
        "--token", metavar="KEY",
        help="the API token; avoid it: others see it in `ps`. Default: CARDROOM_TOKEN, then cardroom login's",
    )  # fmt: skip
    submit.add_argument("--wait", action="store_true", help="follow validation: exit 0 when active, 1 when it failed")
    submit.add_argument(
        "--wait-timeout", metavar="SECONDS", type=_positive_seconds, default=WAIT_TIMEOUT_SECONDS,
        help=f"with --wait: give up (exit 2) after this long (default {WAIT_TIMEOUT_SECONDS})",
    )  # fmt: skip
    submit.add_argument(
        "--new-bot", action="store_true",
        help="create NAME for GAME even though you have a bot NAME for the other game (refused without it, as a likely --game typo)",
    )  # fmt: skip
    submit.set_defaults(func=_guarded(cmd_submit))


def _guarded(command):
    def run(args) -> int:
        try:
            return command(args)
        except RemoteError as exc:
            print(f"cardroom: error: {printable(exc, one_line=True)}", file=sys.stderr)
            return EXIT_ERROR
        except EOFError:
            print("cardroom: error: no answer to the prompt (standard input ended)", file=sys.stderr)
            return EXIT_ERROR

    return run


__all__ = ["add_parsers", "cmd_login", "cmd_submit", "config_dir", "credentials_path", "printable"]
