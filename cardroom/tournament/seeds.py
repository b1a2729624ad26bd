"""Every random number of an event comes from its one event seed.

A seed for a purpose is derived by hashing the event seed with the purpose's
name (``derive(seed, "deal", 3)``), so the schedule, each match and each
deal get independent streams, and nothing depends on the order in which
matches happen to be played (in parallel, on other machines).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

# Derived seeds stay below 2**62: they fit a signed 64-bit database column.
SEED_BITS = 62


def derive(seed: int, *parts: Any) -> int:
    text = ":".join(["cardroom-tournament", str(int(seed)), *(str(p) for p in parts)])
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


class KeyedChance:
    """One random stream per kind of chance event (``State.chance_kind()``).

    A duplicate deal hands every seat rotation a fresh ``KeyedChance`` of the
    deal's seed: Allegory's setup and every Allegra round's deal then come out
    the same whatever was played, and the n-th reshuffle of a match is drawn
    from the same stream in every rotation (its cards depend on play)."""

    def __init__(self, seed: int):
        self.seed = seed
        self._streams: dict[str, random.Random] = {}

    def __call__(self, state) -> random.Random:
        kind = state.chance_kind()
        rng = self._streams.get(kind)
        if rng is None:
            rng = self._streams[kind] = random.Random(derive(self.seed, "chance", kind))
        return rng
