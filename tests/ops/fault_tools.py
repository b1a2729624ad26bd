"""The Django side of the fault-injection tests, run in a subprocess against
the private database (``manage.py shell -c "from tests.ops.fault_tools
import …"``): the test process itself stays on pytest's test database and
checks the private one with plain SQL."""

from __future__ import annotations

import hashlib
from pathlib import Path

SLOW_BOT = Path(__file__).resolve().parents[1] / "ladder" / "bots" / "slow_bot.py"
LIMITS = {"startup_ms": 5000, "per_move_ms": 1000, "overage_ms": 5000, "total_ms": 60000}


def prepare() -> None:
    """After ``migrate`` (default ladders, built-in bots): short time limits,
    only Allegory's 2-player ladder (two built-in bots; its matches take a
    few seconds, Allegra's several times that, and which game is played is
    not what these tests are about), and a slow bot for
    matches that must still be running when a fault strikes (it plays no
    ladder matches of its own: no current version)."""
    from django.core.files.base import ContentFile

    from ladder.models import Bot, BotVersion, Ladder
    from ladder.services import bots as bot_services

    Ladder.objects.update(**LIMITS)
    Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
    if not Bot.objects.filter(name="slowpoke").exists():
        data = SLOW_BOT.read_bytes()
        bot = bot_services.create_bot(owner=bot_services.system_user(), game="allegory", name="slowpoke")
        version = BotVersion(bot=bot, number=1, filename="slow_bot.py", sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        version.package.save("faults-slow_bot.py", ContentFile(data), save=False)
        version.save()
        bot_services.activate_version(version)  # no validation: not what these tests are about
        Bot.objects.filter(pk=bot.pk).update(current_version=None)  # rated, but never matched by matchmaking
    print("prepared")


def slow_match(seed: int = 4242) -> None:
    """Queue (and send) one Allegory match: the slow bot against greedy."""
    from ladder.models import BotVersion, Ladder
    from ladder.services import match_kinds, matches

    ladder = Ladder.objects.get(game="allegory", players_per_match=2)
    slow = BotVersion.objects.select_related("bot").filter(bot__name="slowpoke").latest("number")
    greedy = BotVersion.objects.select_related("bot").get(bot__game="allegory", bot__name="greedy", status="active")
    match = matches.create_match(ladder=ladder, versions=[slow, greedy], seed=seed)
    match_kinds.send_match(match.pk)
    print(f"match={match.pk}")
