"""The engine plays exactly as it did before the speed work of issue 22.

7,500 seeded random games (both games, 2-6 players, Allegory with and without
unique_morals) are replayed and each digest (events, result, and for the
first games of a table every observation and legal action list at every
step) is compared with the one recorded from the engine at commit 0792d29
(tests/engine/engine_digests.py says how). A faster engine must keep every
digest; a deliberate rule change re-records the file in its own commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.engine_digests import GAMES_PER_TABLE, OBSERVED_GAMES, TABLES, digest_game, table_key

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "data" / "engine_digests.json").read_text())


@pytest.mark.parametrize(("game_id", "n", "options"), TABLES, ids=[table_key(*t) for t in TABLES])
def test_random_games_match_the_recorded_engine(game_id, n, options):
    expected = RECORDED[table_key(game_id, n, options)]
    assert len(expected) == GAMES_PER_TABLE
    differing = [
        seed
        for seed in range(GAMES_PER_TABLE)
        if digest_game(game_id, n, options, seed, seed < OBSERVED_GAMES) != expected[seed]
    ]
    assert not differing, f"{len(differing)} games differ from the recorded engine, first seeds {differing[:5]}"
