"""Test data for the ladder tests, made through the real services.

Users, bots and versions go through ``ladder.services.bots`` (a version is a
real, tiny protocol-v1 package that ``cardroom.packages`` accepts); finished
matches are queued with ``create_match``, claimed with ``claim_match``, played
by the real runner (``cardroom.runner.run_match``) with in-process built-in
players, and stored with ``record_result`` (replay, logs, forfeits, ratings).
"""

from __future__ import annotations

import io
import itertools
import json
import tarfile
import zipfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.cache import caches
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bots import builtin_chooser
from cardroom.players import CRASH, BotFault, InProcessPlayer
from cardroom.runner import run_match
from ladder.models import Bot, BotVersion, Ladder, Match
from ladder.services import bots as bot_services
from ladder.services import matches as match_services

PASSWORD = "correct-Horse-battery-staple-41"
RANDOM_BOT = (Path(__file__).resolve().parents[2] / "bots" / "random_bot.py").read_bytes()

_seq = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}{next(_seq)}"


# -- API helpers ----------------------------------------------------------------


def clear_caches() -> None:
    """Every cache, the rate limits' ("limits", the shared store) included."""
    for store in caches.all():
        store.clear()


def limit_rate(settings, scope: str, rate: str) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], scope: rate},
    }


def assert_error(response, status: int, field: str | None = None, contains: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.content)
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert isinstance(body.get("error"), str) and body["error"], body
    if field is not None:
        assert body.get("field") == field, body
    if contains is not None:
        assert contains.lower() in body["error"].lower(), body
    return body


# -- users --------------------------------------------------------------------


def fast_passwords(settings) -> None:
    """A fast hasher for the tests (PBKDF2 costs ~0.5 s a user)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def user(username: str | None = None, password: str = PASSWORD):
    return get_user_model().objects.create_user(username or unique("user"), password=password)


def token(of_user) -> str:
    return Token.objects.get_or_create(user=of_user)[0].key


def client(as_user=None) -> APIClient:
    """An API client, signed in with ``as_user``'s token when given."""
    api = APIClient()
    if as_user is not None:
        api.credentials(HTTP_AUTHORIZATION=f"Token {token(as_user)}")
    return api


def all_pages(api: APIClient, url: str) -> list[dict]:
    """Every result of a paged list, following ``next``."""
    out = []
    while url:
        page = api.get(url).json()
        out += page["results"]
        url = page["next"]
    return out


# -- packages -----------------------------------------------------------------


def bot_program(tag: str | None = None) -> bytes:
    """The built-in random bot's program, made unique by a comment (every
    call gives a different package, hence a different sha256)."""
    return RANDOM_BOT + f"\n# {tag or unique('variant-')}\n".encode()


def zip_bytes(files: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    return buf.getvalue()


def tar_gz_bytes(files: dict[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def manifest(entry: str = "main.py", **extra) -> str:
    lines = [f'entry = "{entry}"', "protocol = 1"] + [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def zip_package(tag: str | None = None) -> bytes:
    """A valid zipped package: cardroom.toml + main.py."""
    return zip_bytes({"cardroom.toml": manifest(), "main.py": bot_program(tag)})


# -- bots and versions ----------------------------------------------------------


def bot(owner=None, game: str = "allegra", name: str | None = None, description: str = "") -> Bot:
    return bot_services.create_bot(owner=owner or user(), game=game, name=name or unique("bot-"), description=description)


def version(of_bot: Bot, data: bytes | None = None, filename: str = "bot.py", activate: bool = True) -> BotVersion:
    """Upload a version (as the API does) and, by default, activate it as a
    passed validation would."""
    v = bot_services.upload_version(bot=of_bot, filename=filename, data=data or bot_program())
    if activate:
        bot_services.activate_version(v)
        v.refresh_from_db()
        of_bot.refresh_from_db()
    return v


def active_bot(owner=None, game: str = "allegra", name: str | None = None) -> Bot:
    b = bot(owner, game, name)
    version(b)
    return b


def builtin_version(game: str, name: str) -> BotVersion:
    """The active version of one of the built-in bots (``greedy``, ``random``)."""
    return BotVersion.objects.select_related("bot").get(bot__game=game, bot__name=name, bot__builtin=True, status="active")


def ladder(game: str = "allegra", players: int = 2) -> Ladder:
    """One of the default ladders (post_migrate installs them)."""
    return Ladder.objects.filter(game=game, players_per_match=players).order_by("pk").first()


# -- matches --------------------------------------------------------------------


class ScriptedPlayer(InProcessPlayer):
    """A built-in random player that writes a log line per move, and crashes
    (a forfeit) after ``crash_after`` moves when that is given."""

    def __init__(self, game: str, log_prefix: str, crash_after: int | None = None):
        super().__init__("random", builtin_chooser("random", game))
        self.spec = "builtin:random"
        self.crash_after = crash_after
        self.moves = 0
        self.lines = [f"{log_prefix}: hello from stderr"]

    def act(self, state, seat):
        if self.crash_after is not None and self.moves >= self.crash_after:
            self.lines.append(f"Traceback: deliberate crash after {self.moves} moves")
            raise BotFault(CRASH, "the bot exited with status 1 (test crash)")
        self.moves += 1
        self.lines.append(f"move {self.moves}")
        return super().act(state, seat)

    def log(self) -> str:
        return "\n".join(self.lines) + "\n"


def queued_match(on_ladder: Ladder, bots: list[Bot], seed: int = 7) -> Match:
    versions = [BotVersion.objects.select_related("bot").get(pk=b.current_version_id) for b in bots]
    return match_services.create_match(ladder=on_ladder, versions=versions, seed=seed)


def finished_match(
    on_ladder: Ladder, bots: list[Bot], seed: int = 7, crash: dict[int, int] | None = None
) -> Match:
    """Play a real match of ``bots`` (seat order) and record it.
    ``crash`` maps a seat to the number of moves after which it crashes."""
    crash = crash or {}
    match = queued_match(on_ladder, bots, seed)
    claim = match_services.claim_match(match.pk, worker="tests")
    assert claim is not None
    players = [ScriptedPlayer(on_ladder.game, f"seat {seat} ({b.name})", crash.get(seat)) for seat, b in enumerate(bots)]
    record = run_match(
        on_ladder.game,
        players,
        seed=match.seed,
        options=match.options,
        match_id=str(match.pk),
        names=[b.name for b in bots],
    )
    assert match_services.record_result(claim, record)
    return Match.objects.get(pk=match.pk)


def running_match(on_ladder: Ladder, bots: list[Bot], seed: int = 7) -> Match:
    match = queued_match(on_ladder, bots, seed)
    assert match_services.claim_match(match.pk, worker="tests") is not None
    return Match.objects.get(pk=match.pk)


def cancelled_match(on_ladder: Ladder, bots: list[Bot], seed: int = 7) -> Match:
    match = queued_match(on_ladder, bots, seed)
    match_services.cancel(match)
    return Match.objects.get(pk=match.pk)
