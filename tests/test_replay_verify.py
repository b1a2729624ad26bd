"""``cardroom verify`` and engine.replay: the shared example replays pass, and
every kind of tampering is caught with the event index and the reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardroom.runner import run_match
from engine.replay import ReplayError, verify

REPLAYS = sorted((Path(__file__).resolve().parent / "data" / "replays").glob("*.json"))
from tests.sdk.replay_schema import strict_problems  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "replays"


def load(name: str) -> dict:
    return json.loads((Path(__file__).resolve().parent / "data" / "replays" / name).read_text())


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.name)
def test_example_replay_verifies_and_reaches_recorded_result(path):
    doc = json.loads(path.read_text())
    report = verify(doc)
    assert report.result.scores == doc["result"]["scores"]
    assert report.result.ranks == doc["result"]["ranks"]
    assert report.events == len(doc["events"])
    assert strict_problems(doc) == []  # the strict shape check accepts the independent examples


def test_a_result_without_forfeits_is_not_replay_v1():
    """Replay v1's result always lists its forfeits (empty when none): the
    research environments once left the key out, which verify accepted."""
    doc = load("allegra-2p.json")
    del doc["result"]["forfeits"]
    with pytest.raises(ReplayError, match="result.forfeits must be a list"):
        verify(doc)
    assert strict_problems(doc)


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared/replays beside this checkout")
def test_every_shared_replay_is_also_in_the_repository():
    # The copies under tests/data must not drift from the shared test vectors.
    for path in SHARED.glob("*.json"):
        assert json.loads(path.read_text()) == json.loads((REPLAYS[0].parent / path.name).read_text()), path.name


def expect_error(doc: dict, event: int | None, fragment: str) -> None:
    with pytest.raises(ReplayError) as info:
        verify(doc)
    assert info.value.event == event, str(info.value)
    assert fragment in str(info.value)


def test_illegal_action_is_reported_with_its_event_index():
    doc = load("allegory-2p.json")
    doc["events"][3]["action"] = {"type": "bid", "amount": 99}
    expect_error(doc, 3, "illegal action")


def test_decision_by_wrong_seat_is_reported():
    doc = load("allegra-3p-knocks.json")
    doc["events"][7]["by"] = 2
    expect_error(doc, 7, "may not act now")


def test_changed_score_is_a_mismatch():
    doc = load("allegra-2p.json")
    doc["result"]["scores"][0] += 1
    expect_error(doc, len(doc["events"]) - 1, "recorded scores")


def test_changed_rank_is_a_mismatch():
    doc = load("allegory-4p.json")
    doc["result"]["ranks"] = list(reversed(doc["result"]["ranks"]))
    expect_error(doc, len(doc["events"]) - 1, "recorded ranks")


def test_truncated_replay_ends_before_the_game():
    doc = load("allegra-2p.json")
    del doc["events"][-5:]
    expect_error(doc, len(doc["events"]), "ends before the game is over")


def test_event_after_the_end_is_rejected():
    doc = load("allegory-2p.json")
    doc["events"].append(copy.deepcopy(doc["events"][-1]))
    expect_error(doc, len(doc["events"]) - 1, "already over")


def test_tampered_deal_is_not_a_permutation_of_the_deck():
    doc = load("allegra-2p.json")
    doc["events"][0]["action"]["deck"][0] = 11 if doc["events"][0]["action"]["deck"][0] != 11 else 10
    expect_error(doc, 0, "chance")


def test_missing_forfeit_marking_is_rejected():
    doc = load("allegory-6p-forfeit.json")
    index = doc["result"]["forfeits"][0]["event"]
    del doc["events"][index]["forfeit"]
    expect_error(doc, index, "must be marked forfeit")


def test_forfeit_marking_on_another_seat_is_rejected():
    doc = load("allegra-5p-forfeit.json")
    doc["events"][20]["forfeit"] = True
    expect_error(doc, 20, "not among the forfeits")


def test_wrong_forfeit_event_index_is_rejected():
    doc = load("allegra-5p-forfeit.json")
    doc["result"]["forfeits"][0]["event"] = 49
    with pytest.raises(ReplayError):
        verify(doc)


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d.update(format="other"), "format"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d.update(game="chess"), "unknown game"),
        (lambda d: d.update(num_players=7), "2 to 6 players"),
        (lambda d: d.update(options={"colour": True}), "no option"),
        (lambda d: d.pop("events"), "no 'events'"),
        (lambda d: d["players"].pop(), "players must list"),
    ],
)
def test_malformed_header_is_rejected(mutate, fragment):
    doc = load("allegory-2p.json")
    mutate(doc)
    expect_error(doc, None, fragment)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(["allegory", "allegra"]),
    players=st.integers(2, 6),
    seed=st.integers(0, 2**31 - 1),
    greedy_seats=st.sets(st.integers(0, 5)),
)
def test_every_replay_the_runner_writes_verifies(game, players, seed, greedy_seats):
    bots = ["builtin:greedy" if s in greedy_seats else "builtin:random" for s in range(players)]
    record = run_match(game, bots, seed=seed)
    report = verify(json.loads(json.dumps(record.replay)))
    assert report.result.scores == record.result.scores
