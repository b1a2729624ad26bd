"""Ratings applied to recorded results (ladder.services.ratings), through the
real path: create_match -> claim_match -> run_match -> record_result."""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
import time
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.db.models import F

from cardroom.players import BotFault, Player
from cardroom.runner import run_match
from ladder import rating_math as calc
from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating, RatingChange
from ladder.services import bots as bot_services
from ladder.services.matches import claim_match, create_match, record_result
from ladder.services.ratings import _Standing, apply_match_ratings, recompute_all

_names = itertools.count(1)

ON_POSTGRES = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: concurrent writers and row locks (SQLite serialises every write transaction)",
)


# --- helpers -----------------------------------------------------------------


def make_owner():
    return get_user_model().objects.create(username=f"owner{next(_names)}")  # no password: hashing is slow


def add_version(bot: Bot) -> BotVersion:
    """A new version of the bot, activated (it takes over on the ladders)."""
    number = bot.versions.count() + 1
    version = BotVersion.objects.create(
        bot=bot, number=number, package=f"tests/{bot.name}-v{number}.py", filename="bot.py",
        sha256=hashlib.sha256(f"{bot.pk}:{number}".encode()).hexdigest(), size=1,
    )
    bot_services.activate_version(version)
    bot.refresh_from_db()
    return version


def make_bot(game: str, owner=None) -> Bot:
    bot = Bot.objects.create(owner=owner or make_owner(), game=game, name=f"t{next(_names)}")
    add_version(bot)
    return bot


def make_ladder(game: str, players: int) -> Ladder:
    return Ladder.objects.create(name=f"test {game} {players}p #{next(_names)}", game=game, players_per_match=players)


class Crasher(Player):
    """A bot that fails at its first decision: a forfeit."""

    name = "crasher"
    spec = "test:crasher"

    def act(self, state, seat):
        raise BotFault("crashed", "deliberately, for the test")


def queue(ladder: Ladder, versions: list[BotVersion], seed: int) -> Match:
    with transaction.atomic():
        return create_match(ladder=ladder, versions=versions, seed=seed)


def finish(match: Match, crash: frozenset[int] = frozenset()) -> Match:
    """Claim, play (in-process built-in bots) and record a queued match."""
    claim = claim_match(match.pk, worker="tests")
    assert claim is not None
    players = [Crasher() if seat in crash else "builtin:random" for seat in range(match.num_players)]
    record = run_match(match.game, players, seed=match.seed, options=match.options)
    assert record_result(claim, record)
    match.refresh_from_db()
    return match


def play(ladder: Ladder, bots: list[Bot], seed: int = 1, crash: frozenset[int] = frozenset()) -> Match:
    return finish(queue(ladder, [b.current_version for b in bots], seed), crash)


def rating(ladder: Ladder, bot: Bot) -> Rating:
    return Rating.objects.get(ladder=ladder, bot=bot)


# --- applying a result ---------------------------------------------------------


@pytest.mark.django_db
def test_a_result_is_rated_once_with_its_history():
    ladder = make_ladder("allegra", 3)
    bots = [make_bot("allegra") for _ in range(3)]
    match = play(ladder, bots, seed=11)
    parts = list(match.participants.order_by("seat"))
    changes = list(RatingChange.objects.filter(match=match).order_by("participant__seat"))
    assert [c.participant_id for c in changes] == [p.pk for p in parts]
    total = Decimal(0)
    for p, c in zip(parts, changes):
        r = rating(ladder, p.bot)
        assert (c.elo_before, c.elo_after) == (calc.ELO_START, r.elo) == (p.elo_before, p.elo_after)
        assert (c.mu_after, c.sigma_after) == (r.mu, r.sigma) == (p.mu_after, p.sigma_after)
        assert r.ordinal == calc.ordinal(r.mu, r.sigma)
        assert (r.games, r.wins, r.version_games, r.provisional) == (1, int(p.rank == 1), 1, True)
        assert r.version_id == p.version_id == c.version_id
        assert r.last_played == match.finished
        total += r.elo - calc.ELO_START
    assert total == 0
    winners = [p for p in parts if p.rank == 1]
    assert winners and all(rating(ladder, p.bot).elo >= calc.ELO_START for p in winners)


@pytest.mark.django_db
def test_ratings_apply_only_inside_the_result_transaction():
    ladder = make_ladder("allegory", 2)
    match = play(ladder, [make_bot("allegory"), make_bot("allegory")])
    with pytest.raises(RuntimeError):
        # pytest-django's test transaction is not "the result's": leave it by
        # pretending there is none.
        conn = transaction.get_connection()
        saved, conn.in_atomic_block = conn.in_atomic_block, False
        try:
            apply_match_ratings(match, list(match.participants.all()))
        finally:
            conn.in_atomic_block = saved


@pytest.mark.django_db
def test_a_failing_rating_update_rolls_the_whole_result_back(monkeypatch):
    ladder = make_ladder("allegory", 2)
    a, b = make_bot("allegory"), make_bot("allegory")
    match = queue(ladder, [a.current_version, b.current_version], seed=3)
    claim = claim_match(match.pk)
    record = run_match("allegory", ["builtin:random"] * 2, seed=3)

    def broken(seats):
        raise calc.RatingInvariantError("simulated")

    monkeypatch.setattr(calc, "rate_match", broken)
    with pytest.raises(calc.RatingInvariantError):
        record_result(claim, record)
    match.refresh_from_db()
    assert match.status == Match.Status.RUNNING and not match.replay
    assert list(match.participants.values_list("rank", flat=True)) == [None, None]
    assert not RatingChange.objects.exists()
    assert rating(ladder, a).games == rating(ladder, b).games == 0
    monkeypatch.undo()
    assert record_result(claim, record)  # the result, kept in memory, is recorded on a retry
    assert RatingChange.objects.filter(match=match).count() == 2


@pytest.mark.django_db
def test_the_history_is_append_only_and_chained():
    ladder = make_ladder("allegra", 2)
    bots = [make_bot("allegra") for _ in range(4)]
    rng = random.Random(5)
    play(ladder, rng.sample(bots, 2), seed=1)
    first = list(RatingChange.objects.order_by("id").values())
    for seed in range(2, 14):
        play(ladder, rng.sample(bots, 2), seed=seed)
    assert list(RatingChange.objects.order_by("id").values())[: len(first)] == first
    for r in Rating.objects.filter(ladder=ladder, games__gt=0):
        changes = list(r.changes.order_by("id"))
        assert len(changes) == r.games
        assert changes[0].elo_before == calc.ELO_START and changes[0].mu_before == calc.MU_START
        for prev, nxt in zip(changes, changes[1:]):
            assert nxt.elo_before == prev.elo_after and nxt.mu_before == prev.mu_after
        assert (changes[-1].elo_after, changes[-1].mu_after, changes[-1].sigma_after) == (r.elo, r.mu, r.sigma)
    assert sum(Rating.objects.filter(ladder=ladder).values_list("elo", flat=True)) == 4 * calc.ELO_START


# --- a new version takes over ------------------------------------------------------


def test_take_over_keeps_elo_and_mu_and_raises_sigma():
    st = _Standing(Decimal("1620.00"), 31.0, 1.5, 40, 25, 1, 40, 7)
    assert not st.provisional
    assert st.take_over(7) and st.sigma == 1.5 and st.version_games == 40  # the same version: nothing
    assert st.take_over(9)
    assert (st.elo, st.mu, st.sigma, st.version_id, st.version_games) == (Decimal("1620.00"), 31.0, calc.SIGMA_NEW_VERSION, 9, 0)
    assert st.provisional and (st.games, st.wins, st.forfeits) == (40, 25, 1)
    # An uncertain rating keeps its larger sigma.
    st = _Standing(Decimal("1500.00"), 25.0, 7.0, 3, 1, 0, 3, 7)
    st.take_over(8)
    assert st.sigma == 7.0 and st.version_games == 0
    # The first game ever: the version simply starts.
    st = _Standing.fresh()
    assert st.take_over(3) and st.version_id == 3 and st.sigma == calc.SIGMA_START


def test_a_late_game_of_an_older_version_takes_nothing_back():
    st = _Standing(Decimal("1600.00"), 30.0, 4.5, 20, 12, 0, 2, 9)
    assert not st.take_over(7)
    assert (st.version_id, st.version_games, st.sigma) == (9, 2, 4.5)


@pytest.mark.django_db
def test_a_new_version_takes_over_the_rating_on_its_first_game():
    ladder = make_ladder("allegory", 2)
    bot, rival = make_bot("allegory"), make_bot("allegory")
    for seed in range(calc.PROVISIONAL_GAMES + 2):
        play(ladder, [bot, rival], seed=seed)
    # A settled bot, and sure of itself (a dozen games leave sigma near 6;
    # hundreds bring it below SIGMA_NEW_VERSION).
    Rating.objects.filter(ladder=ladder, bot=bot).update(sigma=2.0)
    settled = rating(ladder, bot)
    assert not settled.provisional and settled.sigma < calc.SIGMA_NEW_VERSION
    old_version = settled.version_id

    v2 = add_version(bot)
    assert BotVersion.objects.get(pk=old_version).status == BotVersion.Status.RETIRED
    match = play(ladder, [bot, rival], seed=100)
    r, rv = rating(ladder, bot), rating(ladder, rival)
    assert r.version_id == v2.pk and r.version_games == 1 and r.provisional
    assert r.games == settled.games + 1
    # Rated from the kept Elo and mu, with sigma raised and provisional K.
    me, them = match.participants.order_by("seat")
    seats = [
        calc.Seat(settled.elo, settled.mu, calc.SIGMA_NEW_VERSION, True, me.rank),
        calc.Seat(them.elo_before, them.mu_before, them.sigma_before, False, them.rank),
    ]
    expected = calc.rate_match(seats)
    assert (r.elo, r.mu, r.sigma) == (expected[0].elo, expected[0].mu, expected[0].sigma)
    assert rv.elo == expected[1].elo and not rv.provisional
    assert me.elo_before == settled.elo and me.mu_before == settled.mu
    # Provisional again until PROVISIONAL_GAMES games of the new version.
    for seed in range(calc.PROVISIONAL_GAMES - 2):
        play(ladder, [bot, rival], seed=200 + seed)
    assert rating(ladder, bot).provisional and rating(ladder, bot).version_games == calc.PROVISIONAL_GAMES - 1
    play(ladder, [bot, rival], seed=300)
    assert not rating(ladder, bot).provisional


@pytest.mark.django_db
def test_a_match_queued_before_a_new_version_does_not_hand_the_rating_back():
    ladder = make_ladder("allegra", 2)
    bot, rival = make_bot("allegra"), make_bot("allegra")
    play(ladder, [bot, rival], seed=1)
    stale = queue(ladder, [bot.current_version, rival.current_version], seed=2)
    v2 = add_version(bot)
    play(ladder, [bot, rival], seed=3)
    sigma_after_take_over = rating(ladder, bot).sigma
    finish(stale)  # the old version's match finishes last
    r = rating(ladder, bot)
    assert r.version_id == v2.pk and r.version_games == 1 and r.games == 3
    assert r.sigma < sigma_after_take_over  # not raised again
    assert recompute_all(write=False) == []


# --- recompute_ratings ---------------------------------------------------------------


@pytest.mark.django_db
def test_recompute_reproduces_the_live_ratings_exactly():
    rng = random.Random(2024)
    owner = make_owner()
    pool = {game: [make_bot(game, owner) for _ in range(7)] for game in ("allegory", "allegra")}
    ladders = [make_ladder("allegra", 2), make_ladder("allegory", 3), make_ladder("allegra", 6), make_ladder("allegory", 4)]
    stale = []
    for i in range(40):
        ladder = ladders[i % len(ladders)]
        lineup = rng.sample(pool[ladder.game], ladder.players_per_match)
        crash = frozenset({rng.randrange(ladder.players_per_match)}) if i % 5 == 0 else frozenset()
        if i % 9 == 4:
            stale.append((queue(ladder, [b.current_version for b in lineup], seed=rng.randrange(2**62)), crash))
        else:
            play(ladder, lineup, seed=rng.randrange(2**62), crash=crash)
        if i % 6 == 5:
            add_version(rng.choice(pool[ladder.game]))
        if stale and i % 9 == 8:
            finish(*stale.pop())
    for match, crash in stale:
        finish(match, crash)

    assert Match.objects.filter(status=Match.Status.FINISHED, ladder__in=ladders).count() == 40
    assert Participant.objects.exclude(forfeit_reason="").count() >= 8
    assert Rating.objects.filter(ladder__in=ladders, forfeits__gt=0).exists()
    assert BotVersion.objects.filter(status=BotVersion.Status.RETIRED).count() >= 6
    live = list(Rating.objects.order_by("pk").values())
    assert recompute_all(write=False) == []
    call_command("recompute_ratings", "--check", stdout=open("/dev/null", "w"))
    assert recompute_all() == []
    assert list(Rating.objects.order_by("pk").values()) == live


@pytest.mark.django_db
def test_recompute_reports_and_repairs_a_rating_that_drifted(capsys):
    ladder = make_ladder("allegory", 2)
    a, b = make_bot("allegory"), make_bot("allegory")
    for seed in range(4):
        play(ladder, [a, b], seed=seed)
    good = rating(ladder, a)
    Rating.objects.filter(pk=good.pk).update(elo=F("elo") + 1, games=F("games") + 1)
    with pytest.raises(CommandError) as failed:
        call_command("recompute_ratings", "--check")
    assert failed.value.returncode == 1
    out = capsys.readouterr().out
    assert f"bot {a.pk}: elo live {good.elo + 1} rebuilt {good.elo}" in out
    assert f"bot {a.pk}: games" in out
    assert rating(ladder, a).elo == good.elo + 1  # --check changes nothing
    call_command("recompute_ratings")
    assert "difference(s); the rebuilt ratings are stored now" in capsys.readouterr().out
    assert rating(ladder, a).elo == good.elo and rating(ladder, a).games == good.games
    call_command("recompute_ratings", "--check")
    assert "exactly" in capsys.readouterr().out


@pytest.mark.django_db
def test_recompute_reports_a_finished_match_that_was_never_rated():
    ladder = make_ladder("allegory", 2)
    match = play(ladder, [make_bot("allegory"), make_bot("allegory")])
    RatingChange.objects.filter(match=match).delete()
    assert any(f"match {match.pk}: finished but never rated" in d for d in recompute_all(write=False))


# --- the same result twice ---------------------------------------------------------


@pytest.mark.django_db
def test_the_same_result_delivered_twice_is_applied_once():
    ladder = make_ladder("allegra", 2)
    a, b = make_bot("allegra"), make_bot("allegra")
    match = queue(ladder, [a.current_version, b.current_version], seed=8)
    claim = claim_match(match.pk)
    record = run_match("allegra", ["builtin:random"] * 2, seed=8)
    assert record_result(claim, record) is True
    after = list(Rating.objects.filter(ladder=ladder).order_by("pk").values())
    assert record_result(claim, record) is False
    with transaction.atomic():
        apply_match_ratings(Match.objects.get(pk=match.pk), list(match.participants.all()))
    with transaction.atomic():
        apply_match_ratings(Match.objects.get(pk=match.pk), list(match.participants.all()))
    assert RatingChange.objects.filter(match=match).count() == 2
    assert list(Rating.objects.filter(ladder=ladder).order_by("pk").values()) == after
    assert rating(ladder, a).games == rating(ladder, b).games == 1


# --- concurrency (PostgreSQL) ----------------------------------------------------------


def _in_threads(jobs):
    """Run each job in its own thread (its own database connection), all
    released at once by a barrier; returns their results, raises their errors."""
    barrier = threading.Barrier(len(jobs))
    results, errors = [None] * len(jobs), []

    def run(i, job):
        try:
            barrier.wait(timeout=30)
            results[i] = job()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hangs (deadlock?)"
    if errors:
        raise errors[0]
    return results


def _slow_rating(monkeypatch, seconds=0.3):
    """Hold the rating locks a while, so concurrent results surely collide."""
    real = calc.rate_match

    def slow(seats):
        time.sleep(seconds)
        return real(seats)

    monkeypatch.setattr(calc, "rate_match", slow)


@pytest.mark.postgres
@ON_POSTGRES
@pytest.mark.parametrize("reverse_seats", [False, True], ids=["one-shared-bot", "two-shared-bots-seats-swapped"])
def test_concurrent_results_sharing_a_bot_lose_no_update(transactional_db, monkeypatch, reverse_seats):
    ladder = make_ladder("allegory", 2)
    a, b, c = (make_bot("allegory") for _ in range(3))
    second = [b, a] if reverse_seats else [b, c]
    matches = [
        queue(ladder, [a.current_version, b.current_version], seed=21),
        queue(ladder, [x.current_version for x in second], seed=22),
    ]
    claims = [claim_match(m.pk) for m in matches]
    records = [run_match("allegory", ["builtin:random"] * 2, seed=m.seed) for m in matches]
    _slow_rating(monkeypatch)
    started = time.monotonic()
    assert _in_threads([lambda i=i: record_result(claims[i], records[i]) for i in range(2)]) == [True, True]
    # Serialised on the shared rating's row lock: one waited for the other.
    assert time.monotonic() - started >= 0.55

    shared = rating(ladder, b)
    assert shared.games == 2
    changes = list(shared.changes.order_by("id"))
    assert len(changes) == 2
    assert changes[0].elo_before == calc.ELO_START
    assert changes[1].elo_before == changes[0].elo_after  # the second saw the first
    assert changes[1].mu_before == changes[0].mu_after
    assert (shared.elo, shared.mu) == (changes[1].elo_after, changes[1].mu_after)
    everyone = sum(Rating.objects.filter(ladder=ladder).values_list("elo", flat=True))
    assert everyone == Rating.objects.filter(ladder=ladder).count() * calc.ELO_START
    assert recompute_all(write=False) == []


@pytest.mark.postgres
@ON_POSTGRES
def test_the_same_result_delivered_twice_at_once_is_applied_once(transactional_db, monkeypatch):
    ladder = make_ladder("allegra", 2)
    a, b = make_bot("allegra"), make_bot("allegra")
    match = queue(ladder, [a.current_version, b.current_version], seed=31)
    claim = claim_match(match.pk)
    record = run_match("allegra", ["builtin:random"] * 2, seed=31)
    _slow_rating(monkeypatch, 0.2)
    assert sorted(_in_threads([lambda: record_result(claim, record)] * 2)) == [False, True]
    assert RatingChange.objects.filter(match=match).count() == 2
    assert rating(ladder, a).games == rating(ladder, b).games == 1
    assert recompute_all(write=False) == []


@pytest.mark.postgres
@ON_POSTGRES
def test_apply_twice_at_once_is_applied_once(transactional_db, monkeypatch):
    """Without record_result's match lock: apply_match_ratings alone holds."""
    ladder = make_ladder("allegory", 2)
    a, b = make_bot("allegory"), make_bot("allegory")
    match = play(ladder, [a, b], seed=41)
    RatingChange.objects.filter(match=match).delete()
    Rating.objects.filter(ladder=ladder).update(elo=calc.ELO_START, mu=calc.MU_START, sigma=calc.SIGMA_START, games=0, wins=0, version_games=0, version_id=None)
    _slow_rating(monkeypatch, 0.2)

    def apply():
        with transaction.atomic():
            apply_match_ratings(Match.objects.get(pk=match.pk), list(Participant.objects.filter(match=match)))

    _in_threads([apply, apply])
    assert RatingChange.objects.filter(match=match).count() == 2
    assert rating(ladder, a).games == rating(ladder, b).games == 1
