"""Each ladder's luck-adjusted ranking (ladder.services.adjusted): anyone can
recompute it from the API alone, with the model it names; the leaderboard,
the bot's page and the version say whether a version's place is settled
and, if not, about how many more matches it needs, from the moment it is
validated."""

from __future__ import annotations

import re

import pytest

from cardroom.runner import run_match
from ladder import ranking
from ladder.models import AdjustedRanking, AdjustedRating, BotVersion, Ladder, Match
from ladder.services import adjusted, luck
from ladder.services import matches as m
from tests.ladder import factories as f
from tests.ladder.test_ranking_reader import recomputed_from_the_api

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_limits")]  # (every cache empty)
builtin = f.builtin_version


def play(ladder: Ladder, versions: list[BotVersion], seed: int, specs: list[str]) -> Match:
    """A ladder match recorded by the real services, its seats played by
    in-process built-ins (``specs``), and its luck kept as the worker does."""
    match = m.create_match(ladder=ladder, versions=versions, seed=seed)
    claim = m.claim_match(match.pk, worker="tests")
    record = run_match(ladder.game, specs, seed=seed, options=ladder.options, match_id=str(match.pk))
    assert m.record_result(claim, record)
    luck.keep_luck(match.pk, record.replay)
    return match


@pytest.fixture
def played_ladder():
    """Allegory at 2 players: greedy, random and an uploaded bot (playing
    as random) in a round of 24 matches, each seat order in turn."""
    ladder = f.ladder("allegory", 2)
    greedy, rand = builtin("allegory", "greedy"), builtin("allegory", "random")
    mine = BotVersion.objects.get(pk=f.active_bot(game="allegory").current_version_id)
    plays = {greedy.pk: "builtin:greedy", rand.pk: "builtin:random", mine.pk: "builtin:random"}
    pairs = [(greedy, rand), (greedy, mine), (rand, mine)]
    for i in range(24):
        a, b = pairs[i % 3]
        seats = [a, b] if (i // 3) % 2 == 0 else [b, a]
        play(ladder, seats, seed=500 + i, specs=[plays[v.pk] for v in seats])
    # one match without luck (played before luck was kept): it counts plainly
    Match.objects.filter(ladder=ladder).order_by("pk").first().luck.delete()
    adjusted.refresh(ladder)
    return ladder, greedy, rand, mine


def test_the_adjusted_ranking_is_recomputed_from_the_api_alone(played_ladder):
    ladder, greedy, _rand, _mine = played_ladder
    anyone = f.client()
    standings = anyone.get(f"/api/ladders/{ladder.pk}/standings/").json()
    about = standings["adjusted_ranking"]
    assert about["model"] == ranking.MODEL
    assert about["value_functions"] == ["allegory-net@1"]
    assert (about["matches"], about["adjusted_matches"]) == (24, 23)

    # The documented recipe (docs/ladder.md): the ladder's rated matches in
    # rating_sequence order, each seat's adjusted payoff (its payoff where the
    # luck is not known), fitted by ladder.ranking.rank.
    outcomes, used = recomputed_from_the_api(ladder)
    assert used == about["matches"]
    recomputed = {r.version: r for r in ranking.rank(outcomes)}

    rows = {row["bot_name"]: row["adjusted"] for row in standings["results"]}
    assert set(rows) >= {"greedy", "random"}
    for row in rows.values():
        r = recomputed[row["version"]]
        assert (row["rating"], row["low"], row["high"], row["place"], row["matches"]) == (
            r.rating,
            r.low,
            r.high,
            r.place,
            r.matches,
        )
        assert (row["settled"], row["more_matches"]) == (r.settled, r.more_matches)
    assert rows["greedy"]["place"] == 1 and rows["greedy"]["version"] == greedy.pk
    assert rows["greedy"]["low"] < rows["greedy"]["rating"] < rows["greedy"]["high"]


def test_the_ranking_is_refreshed_only_when_results_or_luck_came_in(played_ladder):
    ladder, greedy, rand, _mine = played_ladder
    computed = AdjustedRanking.objects.get(ladder=ladder).computed
    assert ladder.pk not in adjusted.refresh_all()  # nothing new: nothing recomputed
    assert AdjustedRanking.objects.get(ladder=ladder).computed == computed
    play(ladder, [greedy, rand], seed=900, specs=["builtin:greedy", "builtin:random"])
    assert ladder.pk in adjusted.refresh_all()
    assert AdjustedRanking.objects.get(ladder=ladder).matches == 25
    luck.backfill()  # the match whose luck was missing
    assert ladder.pk in adjusted.refresh_all()
    assert AdjustedRanking.objects.get(ladder=ladder).adjusted_matches == 25


def _cell(html: str, bot_name: str) -> str:
    row = re.search(rf'<tr data-bot="{re.escape(bot_name)}".*?</tr>', html, re.S)
    assert row, bot_name
    return re.search(r'<td class="num adjusted">(.*?)</td>', row.group(0), re.S).group(1)


def test_the_leaderboard_and_the_bot_page_say_whether_a_place_is_settled(played_ladder):
    ladder, greedy, rand, _mine = played_ladder
    # a newcomer with one match beside the round: the round settles every
    # place (greedy's, random's), the newcomer's is far from settled, so the
    # pages show both kinds
    late = BotVersion.objects.get(pk=f.active_bot(game="allegory", name="late").current_version_id)
    play(ladder, [late, rand], seed=700, specs=["builtin:greedy", "builtin:random"])
    adjusted.refresh(ladder)
    figures = {r.version_id: r for r in AdjustedRating.objects.filter(ladder=ladder)}
    assert figures[greedy.pk].settled and figures[rand.pk].settled and not figures[late.pk].settled
    page = f.client().get(f"/ladders/{ladder.pk}/").content.decode()
    for name, version in (("greedy", greedy), ("random", rand), ("late", late)):
        r = figures[version.pk]
        cell = _cell(page, name)
        assert f">{r.rating:.0f}<" in cell
        if r.settled:
            assert 'data-settled="true">settled<' in cell
        else:
            assert f'data-settled="false">not settled: about {r.more_matches} more matches<' in cell

    for version in (greedy, rand, late):
        bot_page = f.client().get(f"/bots/{version.bot_id}/?ladder={ladder.pk}").content.decode()
        shown = re.findall(r'data-testid="adjusted">(.*?)</span>\s*</a>', bot_page, re.S)
        r = figures[version.pk]
        [card] = [c for c in shown if f"adjusted {r.rating:.0f} " in c]
        assert (">settled<" in card) if r.settled else (f">not settled: about {r.more_matches} more matches<" in card)


def test_a_version_just_validated_is_shown_not_settled_with_the_matches_it_needs(played_ladder):
    ladder, _greedy, _rand, _mine = played_ladder
    snapshot = AdjustedRanking.objects.get(ladder=ladder)
    assert snapshot.settle_matches is not None  # a version here has settled: the new one needs about as many
    owner = f.user()
    bot = f.active_bot(owner=owner, game="allegory")  # validated: active now, no ladder match yet
    version = BotVersion.objects.get(pk=bot.current_version_id)

    me = f.client(owner)
    shown = me.get(f"/api/bots/{bot.pk}/versions/{version.number}/").json()["adjusted"]
    here = next(a for a in shown if a["ladder"] == ladder.pk)
    assert here["version"] == version.pk and here["matches"] == 0 and here["rating"] is None
    assert here["ladder_name"] == ladder.name
    assert here["settled"] is False and here["more_matches"] == snapshot.settle_matches

    page = me.get(f"/bots/{bot.pk}/?ladder={ladder.pk}").content.decode()
    cards = re.findall(r'data-testid="adjusted">(.*?)</span>\s*</a>', page, re.S)
    assert cards and all("not settled" in c for c in cards)
    assert any(f">not settled: about {snapshot.settle_matches} more matches<" in c for c in cards)

    standings = f.client().get(f"/api/ladders/{ladder.pk}/standings/").json()["results"]
    row = next(r for r in standings if r["bot"] == bot.pk)
    assert row["adjusted"]["settled"] is False and row["adjusted"]["version"] == version.pk


def test_the_standings_with_adjusted_figures_are_the_cached_page_until_a_refresh(
    played_ladder, django_assert_num_queries
):
    ladder, greedy, rand, _mine = played_ladder
    anyone = f.client()
    url = f"/api/ladders/{ladder.pk}/standings/"
    first = anyone.get(url)
    with django_assert_num_queries(0):  # an unknown parameter is the same page, from the cache
        junk = anyone.get(f"{url}?r=12345&adjusted=1")
    assert junk.status_code == 200 and junk.content == first.content
    assert anyone.get(f"{url}?page=x").status_code == 400  # bad input: a 400, not a 500

    play(ladder, [greedy, rand], seed=901, specs=["builtin:greedy", "builtin:random"])
    assert anyone.get(url).json()["adjusted_ranking"]["matches"] == 24  # cached again; not yet refreshed
    adjusted.refresh(ladder)  # the refresh replaces the cached page
    after = anyone.get(f"{url}?r=6789").json()
    assert after["adjusted_ranking"]["matches"] == 25
    row = next(r for r in after["results"] if r["bot"] == greedy.bot_id)
    assert row["adjusted"]["matches"] == AdjustedRating.objects.get(ladder=ladder, version=greedy).matches
