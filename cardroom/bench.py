"""``cardroom bench``: engine speed with in-process random play, and what a
search bot gets out of it, for both forms of the engine side by side: the
pure-Python reference and the compiled one (``engine/form.py``).

Each form runs in a process of its own (``CARDROOM_ENGINE``), and the two take
turns in short slices of every measurement, so that both see the same load
on a shared machine. Three tables, each on one core:

* whole random games (chance events included), the same loop the runner uses
  minus the bots' protocol: decisions and games per second, against the
  target of 100,000 decisions per second;
* random playouts from sampled worlds: for positions of seeded random games
  (each seat's observation with its history), ``cardroom_sdk.sample_world``
  and a random playout to the end, per second (with the sample's time and
  without it, as docs/sdk.md counts);
* ``builtin:ismcts``'s search iterations per second from the same positions.

Rates are per second of the measuring process's CPU time (one core), not of
the clock: on a shared machine the clock counts the other processes' turns
too. They are still figures to compare, not tests (a busy machine's caches
slow both forms); the ratio of the two forms, measured in turns, is the
steadier figure.
"""

from __future__ import annotations

import functools
import json
import os
import random
import subprocess
import sys
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
    start = time.process_time()
    while True:
        decisions += play_random_game(game, rng)
        games += 1
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return games, decisions, elapsed


@functools.cache
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
        t0 = time.process_time()
        world = sample_world(obs, rng, history)
        t1 = time.process_time()
        play_out(world, rng)
        t2 = time.process_time()
        sampling += t1 - t0
        playing += t2 - t1
        playouts += 1
        if sampling + playing >= seconds:
            return {"playouts": playouts, "playing": playing, "sampling": sampling}
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
        start = time.process_time()
        while True:
            search.iterate()
            iterations += 1
            took = time.process_time() - start
            if took >= share:
                break
        elapsed += took
    return {"iterations": iterations, "elapsed": elapsed}


def measure_engine(game_id: str, players: int, seconds: float, seed: int = 1) -> dict:
    games, decisions, elapsed = measure(game_id, players, seconds, seed)
    return {"games": games, "decisions": decisions, "elapsed": elapsed}


MEASURES = {"engine": measure_engine, "sampled": measure_sampled_playouts, "search": measure_search}
FORMS = ("reference", "compiled")
SLICES = 3  # turns each form takes at every measurement


class FormProcess:
    """A process running one form of the engine (``CARDROOM_ENGINE``), which
    measures on request: ``python -m cardroom.bench --worker``."""

    def __init__(self, form: str):
        env = dict(os.environ, CARDROOM_ENGINE=form)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cardroom.bench", "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        hello = self.proc.stdout.readline()
        if not hello:
            error = self.proc.stderr.read().strip().splitlines()
            self.close()
            raise RuntimeError(error[-1] if error else f"the {form} engine did not start")
        self.form, self.why = json.loads(hello)

    def measure(self, table: str, game_id: str, players: int, seconds: float) -> dict:
        self.proc.stdin.write(json.dumps([table, game_id, players, seconds]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.form} engine's process ended: {self.proc.stderr.read().strip()}")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def worker() -> None:
    """The measuring side of ``FormProcess``: its form first, then one JSON
    result line per request line."""
    import engine

    print(json.dumps([engine.ENGINE_FORM, engine.ENGINE_FORM_WHY]), flush=True)
    for line in sys.stdin:
        table, game_id, players, seconds = json.loads(line)
        print(json.dumps(MEASURES[table](game_id, players, seconds)), flush=True)


def _measure_both(procs: list[FormProcess], table: str, game_id: str, players: int, seconds: float) -> list[dict]:
    """Each form's totals over ``SLICES`` turns of ``seconds / SLICES``."""
    totals: list[dict] = [{} for _ in procs]
    for _ in range(SLICES):
        for proc, total in zip(procs, totals):
            for key, value in proc.measure(table, game_id, players, seconds / SLICES).items():
                total[key] = total.get(key, 0) + value
    return totals


def _rates(table: str, total: dict) -> list[float]:
    if table == "engine":
        return [total["decisions"] / total["elapsed"], total["games"] / total["elapsed"]]
    if table == "sampled":
        return [total["playouts"] / total["playing"], total["playouts"] / (total["playing"] + total["sampling"])]
    return [total["iterations"] / total["elapsed"]]


COLUMNS = {
    "engine": ("decisions/s", "games/s"),
    "sampled": ("sampled-world playouts/s", "with the sample"),
    "search": ("ismcts iterations/s",),
}




def run_bench(
    games: Sequence[str] | None = None,
    player_counts: Sequence[int] = (2, 4, 6),
    seconds: float = 3.0,
    search_counts: Sequence[int] = (2, 4),
) -> dict[str, list[dict]]:
    """Print the form line and the three tables, the reference beside the
    compiled form (``seconds`` each); return their rows. The sampled-world
    tables are measured at ``search_counts`` players (those of
    ``player_counts`` when given a subset)."""
    games = list(games or game_ids())
    search_counts = [n for n in search_counts if n in player_counts] or list(player_counts)
    procs = [FormProcess("reference")]
    try:
        procs.append(FormProcess("compiled"))
        compiled = f"compiled = mypyc, {procs[1].why}"
    except RuntimeError as exc:
        compiled = f"compiled: not available ({exc})"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"reference = pure Python; {compiled}; rates per CPU second; load average {load} ({os.cpu_count()} cores)")
    rows: dict[str, list[dict]] = {"engine": [], "sampled": [], "search": []}
    try:
        for table in ("engine", "sampled", "search"):
            print()
            head = f"{'game':<10} {'players':>7}"
            for column in COLUMNS[table]:
                head += f" {column + ' reference':>34} {'compiled':>10} {'x':>5}"
            print(head)
            for game_id in games:
                for n in player_counts if table == "engine" else search_counts:
                    totals = _measure_both(procs, table, game_id, n, seconds)
                    rates = [_rates(table, t) for t in totals]
                    compiled_rates = rates[1] if len(rates) > 1 else None
                    rows[table].append({"game": game_id, "players": n, "reference": rates[0], "compiled": compiled_rates})
                    line = f"{game_id:<10} {n:>7}"
                    for k, ref in enumerate(rates[0]):
                        if compiled_rates:
                            line += f" {ref:>34,.0f} {compiled_rates[k]:>10,.0f} {compiled_rates[k] / ref:>5.2f}"
                        else:
                            line += f" {ref:>34,.0f} {'-':>10} {'-':>5}"
                    print(line, flush=True)
    finally:
        for proc in procs:
            proc.close()
    return rows


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    worker()
