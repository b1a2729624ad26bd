"""``cardroom login`` and ``cardroom submit``: the command line against a
cardroom server's REST API (contract sections 3 and 4), standard library
only (urllib).

    cardroom login --server URL
    cardroom submit BOT --game GAME --name NAME [--server URL] [--token KEY] [--wait]

``login`` asks for the username and password and keeps the token in
``$XDG_CONFIG_HOME/cardroom/credentials.json`` (``~/.config/cardroom/``
when XDG_CONFIG_HOME is unset), created with mode 0600. ``submit`` takes the
token from --token, else CARDROOM_TOKEN, else that file (for the server in
question), and the server from --server, else CARDROOM_SERVER, else the one
``login`` signed in to last.

Exit statuses: 0 uploaded (with --wait: the version is active), 1 the version
failed validation (its log is printed), 2 the submission could not be made
(bad arguments, the server refused it, the server cannot be reached): one
line on stderr saying why and what to do.
"""

from __future__ import annotations

import getpass
import io
import json
import os
import re
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

EXIT_ACTIVE = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
# How often --wait asks the server (CARDROOM_SUBMIT_POLL_SECONDS overrides it).
POLL_SECONDS = 2.0
TIMEOUT_SECONDS = 60  # one HTTP request
PACKAGE_SUFFIXES = (".py", ".zip", ".tar.gz", ".tgz")


class RemoteError(Exception):
    """A submission that could not be made: one line for the user."""


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
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RemoteError(f"the server must be an http:// or https:// URL, such as https://cardroom.example.org, not {url!r}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


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


class Api:
    def __init__(self, server: str, token: str | None):
        self.server = server
        self.token = token

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> Any:
        headers = {"Accept": "application/json", "User-Agent": "cardroom-cli"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_SECONDS) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise RemoteError(self._refusal(exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RemoteError(f"cannot reach {self.server} ({reason}): check the server URL and your network") from None
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise RemoteError(f"{self.server}{path} did not answer with JSON: is {self.server} a cardroom server?") from None

    def _refusal(self, exc: urllib.error.HTTPError) -> str:
        try:
            body = json.loads(exc.read() or b"{}")
            message = body.get("error") or body.get("detail") or ""
        except (ValueError, AttributeError):
            message = ""
        message = str(message).strip() or exc.reason or "no reason given"
        if exc.code == 401:
            return (
                f"the server refused the token ({message}): it may have been replaced or the account deleted; "
                f"run `cardroom login --server {self.server}` or copy the token from {self.server}/account/"
            )
        if exc.code == 404 and not message.startswith(("not found", "no ")):
            return f"{message} (HTTP 404)"
        return f"{message} (HTTP {exc.code})"

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post_json(self, path: str, payload: dict) -> Any:
        return self.request("POST", path, json.dumps(payload).encode(), "application/json")

    def post_file(self, path: str, field: str, filename: str, data: bytes) -> Any:
        boundary = f"cardroom-{secrets.token_hex(12)}"
        # The file name goes in a quoted header: no quotes, backslashes or
        # line breaks in it (the server takes only the base name anyway).
        safe = re.sub(r'["\\\r\n]', "_", filename)
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{safe}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
        return self.request("POST", path, body, f"multipart/form-data; boundary={boundary}")


# -- login ------------------------------------------------------------------------------------


def cmd_login(args) -> int:
    server = normalise_server(args.server or os.environ.get("CARDROOM_SERVER", ""))
    username = args.username or input("Username: ").strip()
    if not username:
        raise RemoteError("no username given")
    password = getpass.getpass("Password: ")
    answer = Api(server, None).post_json("/api/auth/token/", {"username": username, "password": password})
    token = answer.get("token") if isinstance(answer, dict) else None
    if not token:
        raise RemoteError(f"{server} answered without a token: is it a cardroom server?")
    data = load_credentials()
    data["servers"][server] = {"username": username, "token": token}
    data["default_server"] = server
    path = save_credentials(data)
    print(f"signed in to {server} as {username}; the token is kept in {path}")
    return EXIT_ACTIVE


# -- submit -----------------------------------------------------------------------------------


def _server_and_token(args) -> tuple[str, str]:
    stored = None
    server = args.server or os.environ.get("CARDROOM_SERVER")
    if not server:
        stored = load_credentials()
        server = stored.get("default_server")
    if not server:
        raise RemoteError("which server? pass --server URL, set CARDROOM_SERVER, or run cardroom login --server URL first")
    server = normalise_server(server)
    token = args.token or os.environ.get("CARDROOM_TOKEN")
    if not token:
        stored = stored or load_credentials()
        token = (stored["servers"].get(server) or {}).get("token")
    if not token:
        raise RemoteError(
            f"no token for {server}: run `cardroom login --server {server}`, or pass --token KEY (or set CARDROOM_TOKEN) "
            f"with the token from {server}/account/"
        )
    return server, token


def read_package(spec: str) -> tuple[str, bytes]:
    """The upload: a .py file, a .zip or .tar.gz as it is, or a folder zipped
    (its files, relative to it, without caches or hidden files)."""
    path = Path(spec)
    if path.is_dir():
        buf = io.BytesIO()
        count = 0
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for file in sorted(path.rglob("*")):
                rel = file.relative_to(path)
                if any(part.startswith(".") or part == "__pycache__" for part in rel.parts) or not file.is_file():
                    continue
                zf.write(file, rel.as_posix())
                count += 1
        if not count:
            raise RemoteError(f"{spec}: the folder has no files to upload")
        return f"{path.resolve().name or 'bot'}.zip", buf.getvalue()
    if not path.is_file():
        raise RemoteError(f"{spec}: no such file or folder")
    if not path.name.lower().endswith(PACKAGE_SUFFIXES):
        raise RemoteError(f"{spec}: a bot is a .py file, a .zip or .tar.gz package, or a folder")
    try:
        return path.name, path.read_bytes()
    except OSError as exc:
        raise RemoteError(f"{spec}: cannot be read ({exc.strerror})") from None


def _find_or_create_bot(api: Api, game: str, name: str) -> tuple[dict, bool]:
    me = api.get("/api/auth/me/")["username"]
    query = urllib.parse.urlencode({"game": game, "name": name})
    found = api.get(f"/api/bots/?{query}")
    rows = found.get("results", found) if isinstance(found, dict) else found
    for bot in rows or []:
        if bot.get("name") == name and bot.get("game") == game:
            if bot.get("owner") != me:
                raise RemoteError(
                    f"the {game} bot {name!r} belongs to {bot.get('owner')}, not to you ({me}): choose another --name"
                )
            return bot, False
    return api.post_json("/api/bots/", {"game": game, "name": name}), True


def absolute_paths(text: str, server: str) -> str:
    """The site's paths in a validation log, as full URLs to click."""
    return re.sub(r"(?<![\w/.])(/(?:matches|docs)/[^\s)]*)", lambda m: server + m.group(1), text)


def cmd_submit(args) -> int:
    server, token = _server_and_token(args)
    filename, data = read_package(args.bot)
    api = Api(server, token)
    bot, created = _find_or_create_bot(api, args.game, args.name)
    if created:
        print(f"created the {args.game} bot {bot['name']} (id {bot['id']})")
    version = api.post_file(f"/api/bots/{bot['id']}/versions/", "file", filename, data)
    print(f"uploaded {filename} as version {version['number']} of {bot['name']}: {server}/my/bots/{bot['id']}/")
    if bot.get("withdrawn"):
        print(f"note: {bot['name']} is withdrawn from the ladders; re-enter it on {server}/my/bots/{bot['id']}/ to play")
    if not args.wait:
        print(f"its validation follows: watch it on {server}/my/bots/{bot['id']}/ (or submit with --wait)")
        return EXIT_ACTIVE
    return follow_validation(api, bot, version)


def poll_seconds() -> float:
    try:
        return max(0.1, float(os.environ.get("CARDROOM_SUBMIT_POLL_SECONDS", POLL_SECONDS)))
    except ValueError:
        return POLL_SECONDS


def follow_validation(api: Api, bot: dict, version: dict) -> int:
    url = f"/api/bots/{bot['id']}/versions/{version['number']}/"
    shown = None
    while True:
        status = version["status"]
        line = version.get("progress") or status
        if status in ("pending", "validating") and line != shown:
            print(absolute_paths(line, api.server), flush=True)
            shown = line
        if status == "active":
            print(f"active: version {version['number']} of {bot['name']} plays on the {bot['game']} ladders: {api.server}/bots/{bot['id']}/")
            return EXIT_ACTIVE
        if status in ("failed", "retired"):
            log = absolute_paths(version.get("validation_log") or "(no validation log)", api.server)
            if status == "retired":
                print(f"retired: version {version['number']} passed, but a newer version is active\n{log}")
                return EXIT_ACTIVE
            print(f"failed: version {version['number']} of {bot['name']} did not pass validation\n{log}")
            return EXIT_FAILED
        time.sleep(poll_seconds())
        version = api.get(url)


def add_parsers(sub) -> None:
    login = sub.add_parser("login", help="sign in to a cardroom server and keep its API token for cardroom submit")
    login.add_argument("--server", metavar="URL", help="the server (default: CARDROOM_SERVER)")
    login.add_argument("--username", help="the username (asked for when left out)")
    login.set_defaults(func=_guarded(cmd_login))

    submit = sub.add_parser("submit", help="upload a bot as a new version of your bot NAME on a server")
    submit.add_argument("bot", metavar="BOT", help="a .py file, a .zip / .tar.gz package, or a folder")
    submit.add_argument("--game", required=True, choices=["allegory", "allegra"])
    submit.add_argument("--name", required=True, help="your bot's name (created if you have none of that name)")
    submit.add_argument("--server", metavar="URL", help="the server (default: CARDROOM_SERVER, then the one you logged in to)")
    submit.add_argument("--token", metavar="KEY", help="the API token (default: CARDROOM_TOKEN, then cardroom login's)")
    submit.add_argument("--wait", action="store_true", help="follow validation: exit 0 when active, 1 when it failed")
    submit.set_defaults(func=_guarded(cmd_submit))


def _guarded(command):
    def run(args) -> int:
        try:
            return command(args)
        except RemoteError as exc:
            print(f"cardroom: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        except EOFError:
            print("cardroom: error: no answer to the prompt (standard input ended)", file=sys.stderr)
            return EXIT_ERROR

    return run


__all__ = ["add_parsers", "cmd_login", "cmd_submit", "config_dir", "credentials_path"]
