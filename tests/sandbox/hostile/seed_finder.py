"""Hostile bot: looks for the match seed in ``match_id`` and rebuilds the
deal from it (issue 35, finding 5: ``cardroom play`` sent
``local-<seed>``, ``cardroom tournament`` ``local-<event seed>-<n>``).

Seated first, it takes every number in the id (each run of digits, and the
id's hex runs read as numbers) as a candidate seed: a match seed (the
runner's one stream), or an event seed, whose match and deal seeds it
derives as cardroom.tournament.seeds does, for the first rounds, tables and
deals. It deals each candidate's cards with the engine and compares them
with what it sees before any card has moved: in Allegory its first
observation (its Moral, the Pool), in Allegra, at its first turn after the
reveals, every card turned up and the discard.
A match whose deal it rebuilt, it says so on stderr ("FOUND ...") and
exits 3 (a crash forfeit in the replay: the signal a tournament's replays
keep); otherwise it plays the first legal action."""
import hashlib
import json
import random
import re
import sys

import cardroom_sdk

TRIED = 6  # rounds, tables and deals of an event tried for each number


def derive(seed, *parts):
    text = ":".join(["cardroom-tournament", str(int(seed)), *(str(p) for p in parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 2


class Keyed:
    def __init__(self, seed):
        self.seed, self.streams = seed, {}

    def __call__(self, state):
        kind = state.chance_kind()
        if kind not in self.streams:
            self.streams[kind] = random.Random(derive(self.seed, "chance", kind))
        return self.streams[kind]


def numbers(match_id):
    found = [int(run, 16) for run in re.findall(r"[0-9a-f]{6,}", match_id)]
    found += [int(run) for run in re.findall(r"\d+", match_id)]
    return list(dict.fromkeys(found))[:4]


def chance_sources(match_id):
    for n in numbers(match_id):
        stream = random.Random(n)
        yield f"match seed {n}", lambda _state, stream=stream: stream
        for d in range(TRIED):
            yield f"event {n} deal {d}", Keyed(derive(n, "deal", d))
            for r in range(TRIED):
                for t in range(TRIED):
                    stream = random.Random(derive(n, "match", r, t, d))
                    yield f"event {n} match {r}:{t}:{d}", lambda _state, stream=stream: stream


def dealt(start, source):
    state = cardroom_sdk.new_game(start["game"], start["num_players"], start.get("options")).new_initial_state()
    while state.is_chance_node():
        state.apply_chance(state.sample_chance(source(state)))
    return state


def agrees(start, state, observation):
    """Whether the deal ``state`` shows the seat what it saw."""
    if start["game"] == "allegory":
        return state.observation(start["seat"]) == observation
    full = state.observation(None)  # every card of the deal
    if full["discard"] != observation["discard"]:
        return False
    for grid, seen in zip(full["grids"], observation["grids"]):
        for row, seen_row in zip(grid, seen):
            for card, shown in zip(row, seen_row):
                if shown != "?" and shown != card:
                    return False
    return True


def time_to_look(start, observation):
    """Seated first, before any card has moved."""
    if start["seat"] != 0:
        return False
    return start["game"] == "allegory" or observation["phase"] != "reveal"


start, looked = None, False
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        start = message
        reply = {"type": "ready"}
    elif message["type"] == "act":
        if not looked and time_to_look(start, message["observation"]):
            looked = True
            tried = 0
            for name, source in chance_sources(str(start.get("match_id"))):
                tried += 1
                if agrees(start, dealt(start, source), message["observation"]):
                    sys.stderr.write(f"FOUND the deal: {name}, from match_id {start.get('match_id')!r}\n")
                    sys.stderr.flush()
                    sys.exit(3)
            sys.stderr.write(f"not found: {tried} candidate seeds from match_id {start.get('match_id')!r}\n")
        first = message["legal"][0]
        if first["type"] == "distribute":
            first = {"type": "distribute", "chips": {first["cards"][0]: first["total"]} if first["total"] else {}}
        reply = {"type": "action", "action": first}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
