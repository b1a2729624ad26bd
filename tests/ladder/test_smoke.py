import pytest

from ladder.models import Bot, BotVersion, Ladder


@pytest.mark.django_db
def test_fresh_installation_has_default_ladders_and_builtin_bots():
    assert sorted(Ladder.objects.values_list("game", "players_per_match")) == [
        ("allegory", 2), ("allegory", 4), ("allegra", 2), ("allegra", 4)
    ]
    for game in ("allegory", "allegra"):
        names = set(Bot.objects.filter(game=game, builtin=True).values_list("name", flat=True))
        assert names == {"greedy", "random"}
        assert BotVersion.objects.filter(bot__game=game, status="active").count() == 2
