"""benchmarks/ladder_convergence.py: its measures on known cases, and its
quick form end to end against the test database (real matchmaking, real
Elo, real matches of the built-in bots)."""

from __future__ import annotations

import argparse
import json

import pytest

from tests.benchmarks import benchmark


def _benchmark():
    return benchmark("ladder_convergence")


TRUE = ["a", "b", "c", "d", "e", "f", "g", "h"]


def test_kendall_tau_on_known_orders():
    lc = _benchmark()
    assert lc.kendall_tau(TRUE, TRUE) == 1.0
    assert lc.kendall_tau(list(reversed(TRUE)), TRUE) == -1.0
    one_swap = ["a", "b", "c", "e", "d", "f", "g", "h"]
    assert lc.kendall_tau(one_swap, TRUE) == pytest.approx(1 - 2 / 28)  # 0.929: at least 0.9
    two_swaps = ["b", "a", "c", "e", "d", "f", "g", "h"]
    assert lc.kendall_tau(two_swaps, TRUE) == pytest.approx(1 - 4 / 28)  # 0.857: not
    assert lc.top_exact(one_swap, TRUE) and not lc.top_exact(two_swaps, TRUE)


def test_reached_and_held():
    lc = _benchmark()
    series = [(1, False), (2, True), (3, False), (4, True), (5, True)]
    assert lc.reached(series) == 2
    assert lc.held(series) == 4
    assert lc.held(series[:3]) is None
    assert lc.reached([(1, False)]) is None


def test_summary_counts_on_a_known_run():
    lc = _benchmark()
    run = lc.Run("single", checkpoints=[1.0, 2.0, 3.0, 4.0])
    two_swaps = ["b", "a", "c", "e", "d", "f", "g", "h"]
    one_swap = ["a", "b", "c", "e", "d", "f", "g", "h"]
    run.orders = {
        "elo": [two_swaps, two_swaps, one_swap, TRUE],
        "plain": [two_swaps, one_swap, TRUE, TRUE],
        "adjusted": [TRUE, two_swaps, TRUE, TRUE],
    }
    run.settled = {"plain": [(0, 0), (1, 2), (3, 3), (4, 4)], "adjusted": [(2, 2), (0, 1), (1, 1), (1, 1)]}
    summary = lc.summarise([run], TRUE)
    rows = summary["rankings"]
    assert rows["elo"]["tau_reached"]["values"] == [3.0]
    assert rows["elo"]["top_reached"]["values"] == [3.0]  # one swap below the top three
    assert rows["plain"]["tau_reached"]["values"] == [2.0]
    assert rows["adjusted"]["tau_reached"]["values"] == [1.0]
    assert rows["adjusted"]["tau_held"]["values"] == [3.0]
    assert rows["plain"]["settled_within_one"]["estimate"] == pytest.approx(8 / 9)
    assert rows["adjusted"]["settled_within_one"]["estimate"] == pytest.approx(4 / 5)
    assert summary["ratios"]["elo/plain"]["tau_reached"]["estimate"] == pytest.approx(1.5)


def test_more_matches_calibration_on_a_known_run():
    lc = _benchmark()
    waiting = [
        {"a": (10, 20), "b": (10, 5), "c": (10, 10_000)},
        {"a": (20, 8), "b": (15, None), "c": (20, 10_000)},
        {"a": (30, None), "b": (20, None), "c": (30, 10_000)},
    ]
    pairs = sorted(lc.more_matches_calibration(waiting))
    # a: shown 20 at 10 and 8 at 20, settled at 30; b: shown 5 at 10, settled at 15; c: the cap, never counted
    assert pairs == [(5, 5), (8, 10), (20, 20)]
    summary = lc.calibration_summary(pairs + [(7, None)])
    assert summary["shown"] == 4 and summary["settled_in_run"] == 3
    assert summary["ratio_quartiles"][1] == pytest.approx(1.0)


@pytest.mark.django_db
def test_quick_form_end_to_end(tmp_path):
    lc = _benchmark()
    args = argparse.Namespace(games="allegory", players="2", quick=True, repeats=2, cache=str(tmp_path / "m.jsonl"))
    report = lc.run_all(args, {2: 2}, {2: 6.0})
    assert report["model"] == "bradley-terry-points@2"
    (result,) = report["results"]
    assert sorted(result["truth"]["order"]) == sorted(lc.QUICK_FIELD)
    assert result["truth"]["matches"] == 6 * 2 * 2  # 6 pairs, 2 deals, 2 rotations
    assert len(result["truth"]["neighbours"]) == 3
    rankings = result["summary"]["rankings"]
    assert set(rankings) == {
        *("elo", "plain", "adjusted", "plain-seatfit", "adjusted-seatfit"),
        *("elo-sets", "plain-sets", "adjusted-sets", "plain-seatfit-sets", "adjusted-seatfit-sets"),
    }
    for label, row in rankings.items():
        assert row["runs"] == 2
        assert -1.0 <= row["final_tau"]["estimate"] <= 1.0
        for name in ("tau_reached", "tau_held", "top_reached", "top_held"):
            assert row[name]["runs_reaching"] == len(row[name]["values"]) <= 2
            assert all(0 < x for x in row[name]["values"])
        if not label.startswith("elo"):
            assert row["more_matches"]["settled_in_run"] <= row["more_matches"]["shown"]
            share = row["settled_within_one"]
            assert share["shown"] == 0 or 0.0 <= share["estimate"] <= 1.0
    assert "elo/adjusted-sets" in result["summary"]["ratios"]
    assert "adjusted-sets/adjusted" in result["summary"]["ratios"]
    assert result["summary"]["ratios"]["adjusted/adjusted-seatfit"]["tau_held_or_horizon"]["runs"] == 2
    assert result["seats"] == "shuffled by the scheduler"
    # every match was kept: a second pass plays none
    again = lc.run_all(args, {2: 2}, {2: 6.0})
    assert again["matches_played_now"] == 0
    assert again["results"][0]["summary"] == result["summary"]


@pytest.mark.django_db
def test_runs_shared_among_processes_give_the_report_one_process_gives(tmp_path, capfd):
    """--jobs 2: the runs played by two processes, each on a database of its
    own, give the very report one process gives, keep the same matches, and
    leave no database behind."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("--jobs plays the runs on PostgreSQL databases of their own")
    lc = _benchmark()
    summaries, rows = [], []
    for jobs, name in ((1, "one.jsonl"), (2, "two.jsonl")):
        args = argparse.Namespace(
            games="allegory", players="2", quick=True, repeats=2, cache=str(tmp_path / name), jobs=jobs
        )
        report = lc.run_all(args, {2: 2}, {2: 6.0})
        summaries.append(report["results"][0]["summary"])
        rows.append(set((tmp_path / name).read_text().splitlines()))
        assert report["matches_played_now"] >= len(rows[-1]) > 0
    assert summaries[0] == summaries[1]
    assert rows[0] == rows[1]
    # the runs were played by the processes (their progress lines), and their databases are gone
    out = capfd.readouterr().out
    assert out.count("allegory 2p run ") >= 8, out
    with connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [connection.settings_dict["NAME"] + "_job%"])
        assert cursor.fetchall() == []


@pytest.mark.django_db
def test_quick_form_with_informative_pairing(tmp_path):
    lc = _benchmark()
    args = argparse.Namespace(
        games="allegra",
        players="2",
        quick=True,
        repeats=2,
        cache=str(tmp_path / "m.jsonl"),
        sets_games="",
        informative=True,
    )
    report = lc.run_all(args, {2: 2}, {2: 6.0})
    (result,) = report["results"]
    assert result["modes"] == ["single", "informative"]
    rankings = result["summary"]["rankings"]
    assert set(rankings) == {
        *("elo", "plain", "adjusted", "plain-seatfit", "adjusted-seatfit"),
        *("elo-informative", "plain-informative", "adjusted-informative"),
        *("plain-seatfit-informative", "adjusted-seatfit-informative"),
    }
    assert rankings["plain-informative"]["runs"] == 2
    ratios = result["summary"]["ratios"]
    assert {"elo/plain-informative", "plain/plain-informative", "adjusted/adjusted-informative"} <= set(ratios)


@pytest.mark.django_db
def test_the_oracle_keeps_the_share_of_variance_it_says(tmp_path):
    """--oracle (decision 302): each line-up's means are the truth's own;
    an oracle keeping all of the variance is the plain ranking, run for run;
    one keeping a quarter of it keeps a quarter of every match's squared
    deviation; and the luck's kept share is reported with its interval."""
    lc = _benchmark()
    args = argparse.Namespace(
        games="allegory", players="2", quick=True, repeats=2, cache=str(tmp_path / "m.jsonl"), sets_games="",
        oracle="1,0.25",
    )  # fmt: skip
    report = lc.run_all(args, {2: 2}, {2: 6.0})
    (result,) = report["results"]
    store = lc.MatchStore(tmp_path / "m.jsonl")
    centres = lc.lineup_means(store, "allegory", 2, lc.QUICK_FIELD, 2)
    assert len(centres) == 6 * 2  # each bot of each pair
    for a, b in (("greedy", "random"), ("greedy-e0.3", "greedy-e0.7")):
        # a 2-player line-up's two means add up to one point a match
        assert centres[lc.lineup_key((a, b), a)] + centres[lc.lineup_key((b, a), b)] == pytest.approx(1.0)
    assert centres[lc.lineup_key(("greedy", "random"), "greedy")] > 0.5
    kept = lc.with_oracle({"greedy": (1, 9, 1.0, 0.8, None), "random": (2, 3, 0.0, 0.2, None)},
                          ("greedy", "random"), centres, (1.0, 0.25))  # fmt: skip
    m = centres[lc.lineup_key(("greedy", "random"), "greedy")]
    assert kept["greedy"][5] == pytest.approx(1.0)
    assert (kept["greedy"][6] - m) ** 2 == pytest.approx(0.25 * (1.0 - m) ** 2)
    rankings = result["summary"]["rankings"]
    assert {"oracle-1", "oracle-0.25"} <= set(rankings)
    oracle, plain = rankings["oracle-1"], rankings["plain"]
    for name in ("tau_held_or_horizon", "top_held_or_horizon"):
        assert oracle[name]["values"] == plain[name]["values"]
    assert oracle["final_tau"] == plain["final_tau"]
    assert {"elo/oracle-0.25", "plain/oracle-0.25"} <= set(result["summary"]["ratios"])
    kept_share = result["summary"]["variance_kept"]["single"]
    assert 0.0 < kept_share["low"] <= kept_share["estimate"] <= kept_share["high"]


def test_paired_ratio_keeps_runs_together():
    lc = _benchmark()
    # run 2 not measured by the second ranking: left out of both means
    paired = lc.paired_ratio_interval([10.0, 20.0, 99.0, 30.0], [5.0, 10.0, None, 15.0])
    assert paired["runs"] == 3
    # every run's ratio is 2: a paired bootstrap cannot move off it (an unpaired one would)
    assert paired["estimate"] == paired["low"] == paired["high"] == pytest.approx(2.0)
    assert lc.paired_ratio_interval([None], [1.0])["estimate"] is None


@pytest.mark.django_db
def test_quick_form_with_another_value_function(tmp_path):
    """--allegra-value: rows adjusted-alt beside the record's, which stay as
    they were; the cache keys and the report name the value function."""
    lc = _benchmark()
    args = argparse.Namespace(
        games="allegra", players="2", quick=True, repeats=2, cache=str(tmp_path / "record.jsonl"), sets_games=""
    )
    record = lc.run_all(args, {2: 2}, {2: 6.0})["results"][0]
    args.cache, args.allegra_value = str(tmp_path / "net.jsonl"), "allegra-net@1"
    report = lc.run_all(args, {2: 2}, {2: 6.0})
    (result,) = report["results"]
    assert record["value_functions"] == {"adjusted": "allegra-net@2"}
    assert result["value_functions"] == {"adjusted": "allegra-net@2", "adjusted-alt": "allegra-net@1"}
    rankings, before = result["summary"]["rankings"], record["summary"]["rankings"]
    assert set(rankings) == {"elo", "plain", "adjusted", "adjusted-alt", "plain-seatfit", "adjusted-seatfit"}
    for label in ("elo", "plain", "adjusted"):  # the same runs: the record's rows unchanged
        assert rankings[label] == before[label]
    assert {"elo/adjusted-alt", "adjusted/adjusted-alt"} <= set(result["summary"]["ratios"])
    rows = [json.loads(line) for line in (tmp_path / "net.jsonl").read_text().splitlines()]
    ladder_rows = [r for r in rows if r["key"].endswith("|1|1|allegra-net@1")]
    assert ladder_rows and all(r["alt_value_function"] == "allegra-net@1" for r in ladder_rows)
    # the net moves the adjusted points: not the record's under another name
    assert any(r["adjusted_alt"] != r["adjusted"] for r in ladder_rows)
    assert all(r["key"].endswith("|0") for r in rows if r not in ladder_rows)  # the truth's: no luck, shared keys


def test_fields_by_game_and_player_count():
    lc = _benchmark()
    assert set(lc.FIELDS) == {(g, k) for g in ("allegory", "allegra") for k in (2, 4)}
    for (game, _k), names in lc.FIELDS.items():
        assert len(set(names)) == len(names) >= 8
        for name in names:
            assert lc.make_player(name, game).name == name


def test_field_choice_plays_seeds_of_its_own(tmp_path):
    """--field GAME:K overrides one player count; --choose plays the round
    robin on other deals than the truth's."""
    lc = _benchmark()
    cache = tmp_path / "m.jsonl"
    four = ["greedy", "greedy-e0.5", "greedy-e0.9", "random"]
    args = argparse.Namespace(
        games="allegra", players="4", quick=False, truth_only=True, choose=True,
        field="allegra:4=" + ",".join(four), cache=str(cache),
    )  # fmt: skip
    chosen = lc.run_all(args, {4: 1}, {})
    (result,) = chosen["results"]
    assert result["field"] == four and result["truth"]["matches"] == 4  # one table, its 4 rotations
    args.choose = False
    assert lc.run_all(args, {4: 1}, {})["matches_played_now"] == 4  # none of the choice's deals again
    assert len(cache.read_text().splitlines()) == 8


def test_truth_played_in_two_processes_is_the_truth_played_in_one(tmp_path):
    """--jobs: the round robin's matches played two at a time, in processes
    of their own, give the same rows and standings as one process, and a
    rerun plays none of them again."""
    lc = _benchmark()
    four = ["greedy", "greedy-e0.5", "greedy-e0.9", "random"]
    docs, rows = [], []
    for jobs, name in ((1, "one.jsonl"), (2, "two.jsonl")):
        args = argparse.Namespace(
            games="allegra", players="4", quick=False, truth_only=True, choose=False, jobs=jobs,
            field="allegra:4=" + ",".join(four), cache=str(tmp_path / name),
        )  # fmt: skip
        report = lc.run_all(args, {4: 2}, {})
        assert report["matches_played_now"] == 8  # one table, 2 deals in 4 rotations
        docs.append(report["results"][0]["truth"])
        rows.append(sorted((tmp_path / name).read_text().splitlines()))
        assert lc.run_all(args, {4: 2}, {})["matches_played_now"] == 0
    assert docs[0] == docs[1] and rows[0] == rows[1]


@pytest.mark.django_db
def test_modes_follow_the_scheduler_not_the_settings(tmp_path, settings, monkeypatch):
    """With the ladder listed in CARDROOM_DUPLICATE_SETS, "single" still
    plays single matches (each on a deal of its own, in the seats the
    scheduler shuffled), and "sets" plays the scheduler's sets: k matches a
    set, the rotations of one deal."""
    from ladder.services import duplicate_sets

    lc = _benchmark()
    settings.CARDROOM_DUPLICATE_SETS = ["allegory:2"]
    made = []
    real_create_set = duplicate_sets.create_set

    def create_set(ladder, versions):
        made.append(len(versions))
        return real_create_set(ladder, versions)

    monkeypatch.setattr(duplicate_sets, "create_set", create_set)
    store = lc.MatchStore(tmp_path / "m.jsonl")
    calls = []
    real_deal = store.ladder_deal

    def ladder_deal(game, lineup, deal, rotation=0, seats=None, run=None):
        calls.append((lineup, deal, rotation, seats))
        return real_deal(game, lineup, deal, rotation, seats, run)

    store.ladder_deal = ladder_deal
    names = lc.QUICK_FIELD
    lc.ladder_run(store, "allegory", 2, names, names, "single", horizon=6.0, seed=0)
    assert made == []
    assert len({(lineup, deal) for lineup, deal, _r, _s in calls}) == len(calls)
    assert all(sorted(seats) == list(lineup) for lineup, _d, _r, seats in calls)
    # the scheduler's shuffle, not the line-up's order: both orders occur
    assert {tuple(seats) == lineup for lineup, _d, _r, seats in calls} == {True, False}
    calls.clear()
    lc.ladder_run(store, "allegory", 2, names, names, "single", horizon=6.0, seed=0, rotate_seats=True)
    assert all(seats is None and rotation == deal % 2 for _l, deal, rotation, seats in calls)

    calls.clear()
    lc.ladder_run(store, "allegory", 2, names, names, "sets", horizon=6.0, seed=0)
    assert made and all(k == 2 for k in made)
    by_deal = {}
    for lineup, deal, rotation, _seats in calls:
        by_deal.setdefault((lineup, deal), []).append(rotation)
    sets = [r for r in by_deal.values() if len(r) > 1]
    singles = [r for r in by_deal.values() if len(r) == 1]
    # every set the scheduler made is played once, its two rotations on one deal;
    # the rest are the single matches of bots whose cost was not known yet
    assert len(sets) == len(made) and all(sorted(r) == [0, 1] for r in sets)
    assert len(calls) == 2 * len(sets) + len(singles)


@pytest.mark.django_db
def test_each_mode_pairs_and_seats_as_it_says(tmp_path, monkeypatch):
    """The settings the scheduler reads at every top-up, by mode: the
    informative and balanced modes, and both at once (decision 301), and the
    rankings' labels each mode reports."""
    from django.conf import settings as live

    from ladder.services import matchmaking

    lc = _benchmark()
    seen = []
    real_top_up = matchmaking.top_up_ladder

    def top_up_ladder(ladder, rng, fair=None):
        seen.append((live.CARDROOM_PAIRING, live.CARDROOM_SEATING))
        return real_top_up(ladder, rng, fair)

    monkeypatch.setattr(matchmaking, "top_up_ladder", top_up_ladder)
    store = lc.MatchStore(tmp_path / "m.jsonl")
    names = lc.QUICK_FIELD
    expected = {
        "single": ("elo", "shuffled"),
        "informative": ("informative", "shuffled"),
        "balanced": ("elo", "balanced"),
        "informative-balanced": ("informative", "balanced"),
    }
    runs = []
    for mode, settings_seen in expected.items():
        seen.clear()
        runs.append(lc.ladder_run(store, "allegory", 2, names, names, mode, horizon=4.0, seed=0))
        assert seen and set(seen) == {settings_seen}, (mode, seen)
        suffix = "" if mode == "single" else f"-{mode}"
        assert {"elo" + suffix, "adjusted" + suffix} <= set(runs[-1].orders)
    summary = lc.summarise(runs, names)
    assert "adjusted-balanced/adjusted-informative-balanced" in summary["ratios"]
    assert "elo/adjusted-informative-balanced" in summary["ratios"]


def test_sets_over_single_ratio():
    lc = _benchmark()
    one_swap = ["a", "b", "c", "e", "d", "f", "g", "h"]
    two_swaps = ["b", "a", "c", "e", "d", "f", "g", "h"]
    single = lc.Run("single", checkpoints=[1.0, 2.0, 3.0, 4.0])
    single.orders = {"elo": [two_swaps, one_swap, TRUE, TRUE]}  # held from 2
    sets = lc.Run("sets", checkpoints=[1.0, 2.0, 3.0, 4.0])
    sets.orders = {"elo-sets": [two_swaps, two_swaps, two_swaps, one_swap]}  # held from 4
    ratio = lc.summarise([single, sets], TRUE)["ratios"]["elo-sets/elo"]["tau_held"]
    assert ratio["estimate"] == pytest.approx(2.0)


def test_a_run_that_never_holds_counts_at_the_horizon_not_left_out():
    """Leaving out the runs where a ranking never holds favoured it (its mean
    was over its lucky runs only); *_or_horizon counts them at the horizon."""
    lc = _benchmark()
    one_swap = ["a", "b", "c", "e", "d", "f", "g", "h"]
    two_swaps = ["b", "a", "c", "e", "d", "f", "g", "h"]
    runs = []
    for elo in ([two_swaps, two_swaps, two_swaps, one_swap], [one_swap, two_swaps, one_swap, two_swaps]):
        run = lc.Run("single", checkpoints=[10.0, 20.0, 30.0, 40.0])
        run.orders = {"elo": elo, "plain": [two_swaps, TRUE, TRUE, TRUE]}
        runs.append(run)
    summary = lc.summarise(runs, TRUE)
    elo = summary["rankings"]["elo"]
    assert elo["tau_held"]["values"] == [40.0]  # the second run never holds: left out
    assert elo["tau_held_or_horizon"]["values"] == [40.0, 40.0]
    assert elo["tau_held_or_horizon"]["runs_reaching"] == 1
    assert summary["rankings"]["plain"]["tau_held_or_horizon"]["values"] == [20.0, 20.0]
    assert summary["ratios"]["elo/plain"]["tau_held_or_horizon"]["estimate"] == pytest.approx(2.0)


@pytest.mark.django_db
def test_fresh_deals_give_each_run_deals_of_its_own(tmp_path):
    """By default the runs share their deals (deal j of a line-up is the
    same in every run), so their spread leaves the deals out; with
    fresh_deals each run plays deals of its own."""
    lc = _benchmark()
    store = lc.MatchStore(tmp_path / "m.jsonl")
    seeds: dict[int, set[int]] = {}
    real_play = store.play

    def play(game, seats, seed, keyed, luck):
        seeds.setdefault(run[0], set()).add(seed)
        return real_play(game, seats, seed, keyed, luck)

    store.play = play
    names = lc.QUICK_FIELD
    run = [0]
    for fresh in (False, True):
        seeds.clear()
        for r in (0, 1):
            run[0] = r
            lc.ladder_run(store, "allegory", 2, names, names, "single", horizon=4.0, seed=r, fresh_deals=fresh)
        shared = seeds[0] & seeds[1]
        assert bool(shared) is not fresh


def test_the_separated_field_keeps_the_ends_and_maximises_the_smallest_gap():
    """Decision 295: of the subsets holding the first and the last, the one
    whose smallest neighbour gap is largest (then the next smallest)."""
    lc = _benchmark()
    points = {"a": 1.0, "b": 0.95, "c": 0.8, "d": 0.78, "e": 0.6, "f": 0.45, "g": 0.44, "h": 0.3, "i": 0.1, "j": 0.0}
    standings = [{"bot": bot, "points_per_match": p} for bot, p in points.items()]
    chosen = lc.separated_field(standings, size=5)
    # every 5-subset with a and j has a gap of at most 0.2; a, c, e, h, j has
    # 0.2, 0.2, 0.3, 0.3: no other reaches 0.2 twice with a larger next gap
    assert chosen == {"field": ["a", "c", "e", "h", "j"], "gaps": [0.2, 0.2, 0.3, 0.3]}
    assert lc.separated_field(standings, size=10)["field"] == list(points)
    with pytest.raises(ValueError, match="3 candidates for a field of 8"):
        lc.separated_field(standings[:3])


def test_truth_deals_and_horizons_per_player_count_and_per_game():
    """A game's own entry wins over its player count's (decision 295's
    Allegory truth is 80 deals a table, the others' as before; decision
    296's Allegory horizon at 2 players is 240 matches per bot)."""
    lc = _benchmark()
    deals = lc._per_players("2:20,4:16,allegory:2:80")
    assert [lc._for(deals, g, k) for g, k in (("allegory", 2), ("allegra", 2), ("allegory", 4))] == [80, 20, 16]
    horizon = lc._per_players("2:120,4:80,allegory:2:240", float)
    cells = (("allegory", 2), ("allegra", 2), ("allegra", 4))
    assert [lc._for(horizon, g, k) for g, k in cells] == [240.0, 120.0, 80.0]
