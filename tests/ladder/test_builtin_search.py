"""The search bot on the default ladders (issue 22): installed beside greedy
as an active built-in on every ladder of its game, and never a validation
opponent (validation checks the protocol, and stays quick)."""

from __future__ import annotations

import pytest

from ladder.models import Bot, Rating
from ladder.services import validation
from ladder.services.bots import install_defaults


@pytest.mark.django_db
def test_the_search_bot_is_installed_on_every_ladder_but_never_validates(settings):
    settings.CARDROOM_BUILTIN_BOTS = ["greedy", "ismcts", "random"]
    install_defaults()
    for game in ("allegory", "allegra"):
        search = Bot.objects.get(game=game, name="ismcts", builtin=True)
        assert search.current_version is not None and search.current_version.filename == "ismcts_bot.py"
        ladders = set(Rating.objects.filter(bot=search).values_list("ladder__players_per_match", flat=True))
        assert ladders == {2, 4}
        opponents = {v.bot.name for v in validation._opponents(game, 5)}
        assert opponents == {"greedy", "random"}
