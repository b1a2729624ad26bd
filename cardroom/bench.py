"""``cardroom bench``: engine speed with in-process random play.

Measures whole games (chance events included) on one core, the same loop the
runner uses minus the bots' protocol, and prints decisions and games per
second for each game and player count. Not a test: a figure to compare with
the target of 100,000 decisions per second.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from engine import game_ids, new_game


def play_random_game(game, rng: random.Random) -> int:
    """Play one game with uniformly random decisions; return the number of decisions."""
    state = game.new_initial_state()
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


def run_bench(games: Sequence[str] | None = None, player_counts: Sequence[int] = (2, 4, 6), seconds: float = 3.0) -> list[dict]:
    rows = []
    print(f"{'game':<10} {'players':>7} {'games':>7} {'decisions':>10} {'decisions/s':>12} {'games/s':>9}")
    for game_id in games or game_ids():
        for n in player_counts:
            g, d, elapsed = measure(game_id, n, seconds)
            row = {"game": game_id, "players": n, "games": g, "decisions": d, "dps": d / elapsed, "gps": g / elapsed}
            rows.append(row)
            print(f"{game_id:<10} {n:>7} {g:>7} {d:>10} {row['dps']:>12,.0f} {row['gps']:>9,.1f}", flush=True)
    return rows
