"""Real data for the web tests, made through the services: users and bots
through ``ladder.services.bots``, matches queued with ``create_match``,
claimed with ``claim_match``, really played by ``cardroom.runner.run_match``
(in-process built-in players) and stored with ``record_result``, which also
moves the ratings."""

from __future__ import annotations

import itertools
from pathlib import Path

from django.contrib.auth import get_user_model

from bots import builtin_chooser
from cardroom.players import InProcessPlayer
from cardroom.runner import run_match
from ladder.models import Bot, BotVersion, Ladder, Match
from ladder.services import bots as bot_services
from ladder.services import matches as match_services

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "web-Tests-are-fun-42"
_seq = itertools.count(1)


def user(username: str | None = None, password: str = PASSWORD):
    return get_user_model().objects.create_user(username or f"user{next(_seq)}", password=password)


def program(kind: str, game: str) -> bytes:
    """A real protocol-v1 program: the built-in ``kind`` bot's file, made
    unique by a comment (so every upload is a new package)."""
    path = ROOT / "bots" / ("random_bot.py" if kind == "random" else f"{game}_greedy.py")
    return path.read_bytes() + f"\n# variant {next(_seq)}\n".encode()


def active_bot(owner, game: str, name: str, kind: str = "random", description: str = "") -> Bot:
    """A bot with one version, activated as a passed validation would do;
    ``bot.plays`` says which built-in policy plays it in these tests."""
    bot = bot_services.create_bot(owner=owner, game=game, name=name, description=description)
    version = bot_services.upload_version(bot=bot, filename=f"{name}.py", data=program(kind, game))
    bot_services.activate_version(version)
    bot.refresh_from_db()
    return bot


def ladder(game: str, players: int) -> Ladder:
    return Ladder.objects.filter(game=game, players_per_match=players).order_by("pk").first()


def builtin(game: str, name: str) -> Bot:
    return Bot.objects.get(game=game, name=name, builtin=True)


class LoggingPlayer(InProcessPlayer):
    """A built-in policy that also writes a line of stderr per move."""

    def __init__(self, kind: str, game: str, label: str):
        super().__init__(kind, None if kind == "random" else builtin_chooser(kind, game))
        self.spec = f"builtin:{kind}"
        self.lines = [f"{label}: starting"]

    def act(self, state, seat):
        action = super().act(state, seat)
        if len(self.lines) < 50:
            self.lines.append(f"move {len(self.lines)}: {action}")
        return action

    def log(self) -> str:
        return "\n".join(self.lines) + "\n"


def play(on_ladder: Ladder, bots: list[Bot], kinds: dict[str, str], seed: int) -> Match:
    """Queue, claim, play and record one real match (seats in ``bots`` order);
    ``kinds`` maps a bot name to the built-in policy that plays it."""
    versions = [BotVersion.objects.select_related("bot").get(pk=b.current_version_id) for b in bots]
    match = match_services.create_match(ladder=on_ladder, versions=versions, seed=seed)
    claim = match_services.claim_match(match.pk, worker="web-tests")
    assert claim is not None
    players = [LoggingPlayer(kinds.get(b.name, b.name if b.builtin else "random"), on_ladder.game, b.name) for b in bots]
    record = run_match(
        on_ladder.game,
        players,
        seed=seed,
        options=match.options,
        match_id=str(match.pk),
        names=[f"{b.name} v{v.number}" for b, v in zip(bots, versions)],
    )
    assert match_services.record_result(claim, record)
    return Match.objects.get(pk=match.pk)


def league(game: str = "allegra", players: int = 2, matches: int = 12, owner=None, seed: int = 1) -> dict:
    """A small real ladder: the two built-ins plus three users' bots (two
    greedy, one random), ``matches`` matches played round robin."""
    owner = owner or user()
    kinds = {"greedy": "greedy", "random": "random"}
    bots = [builtin(game, "greedy"), builtin(game, "random")]
    for name, kind in ((f"{game[:4]}-ace", "greedy"), (f"{game[:4]}-bolt", "random"), (f"{game[:4]}-crux", "greedy")):
        bots.append(active_bot(owner, game, name, kind, description=f"A test bot that plays like the built-in {kind} bot."))
        kinds[name] = kind
    lad = ladder(game, players)
    played = []
    n = len(bots)
    for k in range(matches):
        seats = [bots[(k + j * (1 + k % (n - 1))) % n] for j in range(players)]
        if len({b.pk for b in seats}) < players:
            seats = [bots[(k + j) % n] for j in range(players)]
        played.append(play(lad, seats, kinds, seed=seed * 1000 + k))
    return {"owner": owner, "bots": bots, "ladder": lad, "matches": played, "kinds": kinds}
