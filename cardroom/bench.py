"""``cardroom bench``: engine speed with in-process random play, and what a
search bot gets out of it.

Three tables, each on one core:

* whole random games (chance events included), the same loop the runner uses
  minus the bots' protocol: decisions and games per second, against the
  target of 100,000 decisions per second;
* random playouts from sampled worlds: for positions of seeded random games
  (each seat's observation with its history), ``cardroom_sdk.sample_world``
  and a random playout to the end, per second (with the sample's time and
  without it, as docs/sdk.md counts);
* ``builtin:ismcts``'s search iterations per second from the same positions.

Not tests: figures to compare (measured on a busy machine they are noise
unless the load average is said beside them).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence

from engine import game_ids, new_game

POSITIONS = 24  # sampled positions per table, from seeded random games


def play_random_game(game, rng: random.Random) -> int:
    """Play one game with uniformly random decisions; return the number of decisions."""
    state = game.new_initial_state()
    return play_out(state, rng)


def play_out(state, rng: random.Random) -> int:
    """Play ``state`` to its end at random (in place); return the number of decisions."""
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        state.apply(seat, state.random_action(seat, rng))
        decisions += 1
    return decisions


def measure(game_id: str, players: int, seconds: float, seed: int = 1) -> tuple[int, int, float]:
    game = new_game(game_id, players)
    rng = random.Random(seed)
    games = decisions = 0
    start = time.perf_counter()
    while True:
        decisions += play_random_game(game, rng)
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return games, decisions, elapsed


def positions(
    game_id: str, players: int, count: int = POSITIONS, seed: int = 1
) -> list[tuple[dict, list[dict], list[dict]]]:
    """``count`` decisions of seeded random games, spread over whole games:
    (the observation of a seat to act, that seat's earlier observations,
    its legal actions)."""
    rng = random.Random(seed)
    game = new_game(game_id, players)
    found: list[tuple[dict, list[dict], list[dict]]] = []
    while len(found) < count:
        state = game.new_initial_state()
        histories: list[list[dict]] = [[] for _ in range(players)]
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_chance(state.sample_chance(rng))
                continue
            seat = state.to_act()[0]
            obs = state.observation(seat)
            if rng.random() < 0.03 and len(found) < count:
                found.append((obs, list(histories[seat]), state.legal_actions(seat)))
            histories[seat].append(obs)
            state.apply(seat, state.random_action(seat, rng))
    return found


def _cycle(items: list) -> Iterator:
    while True:
        yield from items


def measure_sampled_playouts(game_id: str, players: int, seconds: float, seed: int = 1) -> dict:
    """Per second: a sampled world and a random playout from it to the end,
    in turn over ``positions``; the time of the samples is kept apart."""
    from cardroom_sdk import sample_world

    rng = random.Random(seed)
    sampling = playing = 0.0
    playouts = 0
    for obs, history, _legal in _cycle(positions(game_id, players, seed=seed)):
        t0 = time.perf_counter()
        world = sample_world(obs, rng, history)
        t1 = time.perf_counter()
        play_out(world, rng)
        t2 = time.perf_counter()
        sampling += t1 - t0
        playing += t2 - t1
        playouts += 1
        if sampling + playing >= seconds:
            return {
                "playouts": playouts,
                "playout_only": playouts / playing,
                "with_sample": playouts / (sampling + playing),
            }
    raise AssertionError("unreachable")


def measure_search(game_id: str, players: int, seconds: float, seed: int = 1) -> dict:
    """``builtin:ismcts``'s iterations per second: a search from each of the
    ``positions`` in turn, for an equal share of ``seconds``."""
    from bots.ismcts_bot import candidates, new_search

    found = positions(game_id, players, seed=seed)
    share = seconds / len(found)
    iterations = 0
    elapsed = 0.0
    for i, (obs, history, legal) in enumerate(found):
        search = new_search(obs, history, random.Random(seed * 1000 + i), candidates(legal))
        start = time.perf_counter()
        while True:
            search.iterate()
            iterations += 1
            took = time.perf_counter() - start
            if took >= share:
                break
        elapsed += took
    return {"iterations": iterations, "per_second": iterations / elapsed}


def run_bench(
    games: Sequence[str] | None = None,
    player_counts: Sequence[int] = (2, 4, 6),
    seconds: float = 3.0,
    search_counts: Sequence[int] = (2, 4),
) -> dict[str, list[dict]]:
    """Print the three tables; return their rows. The sampled-world tables
    are measured at ``search_counts`` players (those of ``player_counts`` when
    given a subset)."""
    games = list(games or game_ids())
    search_counts = [n for n in search_counts if n in player_counts] or list(player_counts)
    rows: dict[str, list[dict]] = {"engine": [], "sampled": [], "search": []}
    print(f"{'game':<10} {'players':>7} {'games':>7} {'decisions':>10} {'decisions/s':>12} {'games/s':>9}")
    for game_id in games:
        for n in player_counts:
            g, d, elapsed = measure(game_id, n, seconds)
            row = {"game": game_id, "players": n, "games": g, "decisions": d, "dps": d / elapsed, "gps": g / elapsed}
            rows["engine"].append(row)
            print(f"{game_id:<10} {n:>7} {g:>7} {d:>10} {row['dps']:>12,.0f} {row['gps']:>9,.1f}", flush=True)
    tables = (
        ("sampled", measure_sampled_playouts, ("playouts", "sampled-world playouts/s", "with the sample")),
        ("search", measure_search, ("iterations", "ismcts iterations/s")),
    )
    for name, measure_one, columns in tables:
        print()
        print(f"{'game':<10} {'players':>7} {columns[0]:>10}" + "".join(f" {c:>25}" for c in columns[1:]))
        for game_id in games:
            for n in search_counts:
                r = measure_one(game_id, n, seconds)
                rows[name].append({"game": game_id, "players": n, **r})
                count, *rates = r.values()
                print(f"{game_id:<10} {n:>7} {count:>10}" + "".join(f" {x:>25,.0f}" for x in rates), flush=True)
    return rows
