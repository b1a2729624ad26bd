"""Fuzzing the reply path (issue 25): whatever bytes a bot writes as its
reply, the result is that bot's forfeit (invalid_json, invalid_message,
illegal_action) or a legal action, never an error of the runner; and what
is kept of it (the replay's event, the forfeit's detail, the log) is
strict JSON and UTF-8.

Two levels: ``action_of`` (the bounded parse and the shape check) and the
engine's ``apply`` on real positions of both games, with arbitrary bytes
and with near-valid replies (a legal action with one thing changed, JSON
with NaN, duplicate keys, deep nesting, huge numbers, lone surrogates);
then the whole path, a real bot process writing the bytes in a match."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardroom.launch import PlainLauncher
from cardroom.players import (
    ILLEGAL_ACTION,
    INVALID_JSON,
    INVALID_MESSAGE,
    MAX_DETAIL_CHARS,
    BotFault,
    TimeControl,
    action_of,
)
from cardroom.runner import run_match
from engine import new_game
from engine.core import IllegalActionError
from engine.replay import verify

REFUSALS = {INVALID_JSON, INVALID_MESSAGE}


def _positions(game_id: str, players: int, seed: int, every: int = 7) -> list:
    """Decision points of one random game: (state, seat)."""
    state = new_game(game_id, players).new_initial_state()
    rng = random.Random(seed)
    found, n = [], 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        if n % every == 0:
            found.append((state.clone(), seat))
        n += 1
        state.apply(seat, state.random_action(seat, rng))
    return found


POSITIONS = [p for g, n, s in [("allegory", 2, 1), ("allegory", 4, 2), ("allegra", 2, 3), ("allegra", 4, 4)] for p in _positions(g, n, s)][::3]


def _filled(action: dict, rng: random.Random) -> dict:
    if action["type"] == "distribute":  # the template, filled in
        chips: dict[str, int] = {}
        for _ in range(action["total"]):
            card = rng.choice(action["cards"])
            chips[card] = chips.get(card, 0) + 1
        return {"type": "distribute", "chips": chips}
    return dict(action)


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "\udfff", "\x00", "owl:-2", "key:4", "draw", "A" * 5000]),
    st.lists(st.integers(-3, 12), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _json_text(value, rng: random.Random) -> str:
    """``value`` as JSON text, with the liberties a hostile bot takes: NaN
    and Infinity, a duplicated key, extra nesting (the JSON module writes
    none of these itself)."""
    if isinstance(value, dict):
        items = [f"{json.dumps(k)}:{_json_text(v, rng)}" for k, v in value.items()]
        if items and rng.random() < 0.1:
            items.append(items[0])  # a duplicate key
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v, rng) for v in value) + "]"
    if isinstance(value, float) and rng.random() < 0.05:
        return rng.choice(["NaN", "Infinity", "-Infinity", "1e400"])
    if isinstance(value, str):
        return json.dumps(value)  # lone surrogates written as \\ud800 escapes
    return json.dumps(value)


@st.composite
def near_valid_replies(draw) -> tuple[int, bytes]:
    """(index into POSITIONS, a reply line): a legal action of that
    position with one key changed, dropped or added, in a message that is
    itself sometimes changed, written with a hostile bot's liberties."""
    index = draw(st.integers(0, len(POSITIONS) - 1))
    state, seat = POSITIONS[index]
    rng = random.Random(draw(st.integers(0, 2**32)))
    action = _filled(rng.choice(state.legal_actions(seat)), rng)
    change = draw(st.sampled_from(["none", "value", "drop", "add", "type"]))
    key = rng.choice(sorted(action))
    if change == "value":
        action[key] = draw(ODD_VALUES)
    elif change == "drop":
        del action[key]
    elif change == "add":
        action[draw(st.text(max_size=8))] = draw(ODD_VALUES)
    elif change == "type":
        action["type"] = draw(ODD_VALUES)
    message: object = {"type": "action", "action": action}
    wrap = draw(st.sampled_from(["plain", "plain", "plain", "nested", "list", "extra", "bare"]))
    if wrap == "nested":
        message = {"type": "action", "action": action, "deep": json.loads("[" * 20 + "]" * 20)}
    elif wrap == "list":
        message = [message]
    elif wrap == "extra":
        message = {"type": "action", "action": action, "x": draw(ODD_VALUES)}
    elif wrap == "bare":
        message = action
    line = _json_text(message, rng).encode("utf-8", errors="surrogatepass")
    cut = draw(st.sampled_from([None, None, None, "truncate", "byte", "depth"]))
    if cut == "truncate" and line:
        line = line[: rng.randrange(len(line))]
    elif cut == "byte":
        at = rng.randrange(len(line) + 1)
        line = line[:at] + bytes([rng.choice([0, 0xFF, 0xC0, 0x80, 0x22, 0x5B, 0x7B])]) + line[at:]
    elif cut == "depth":
        depth = rng.choice([17, 1000, 100_000])
        line = b'{"type":"action","action":' + b"[" * depth + b"]" * depth + b"}"
    return index, line


def _check_line(index: int, line: bytes) -> None:
    """What the runner does with a reply line at POSITIONS[index]: a
    refusal, an illegal action, or a legal one that is kept as strict JSON."""
    state, seat = POSITIONS[index]
    try:
        action = action_of(line)
    except BotFault as fault:
        assert fault.reason in REFUSALS, fault.reason
        _check_detail(fault)
        return
    try:
        state.clone().apply(seat, action)
    except IllegalActionError as exc:
        _check_detail(BotFault(ILLEGAL_ACTION, exc.reason))
        return
    event = json.dumps({"by": seat, "action": action, "ms": 1}, allow_nan=False)
    event.encode("utf-8")
    # The kept action reads back as itself.
    assert action_of(json.dumps({"type": "action", "action": action}).encode()) == action


def _check_detail(fault: BotFault) -> None:
    assert isinstance(fault.detail, str) and len(fault.detail) <= MAX_DETAIL_CHARS + 30
    fault.detail.encode("utf-8")


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(POSITIONS) - 1), line=st.binary(max_size=300))
def test_arbitrary_bytes_are_refused_or_judged(index, line):
    _check_line(index, line.split(b"\n")[0])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid_replies())
def test_near_valid_replies_are_refused_or_judged(case):
    _check_line(*case)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(), lambda children: st.lists(children) | st.dictionaries(st.text(), children), max_leaves=30))
def test_any_json_value_is_refused_or_judged(value):
    text = json.dumps({"type": "action", "action": value} if isinstance(value, dict) else value)
    _check_line(0, text.encode("utf-8", errors="surrogatepass"))


def test_known_bombs_are_refused_quickly():
    """The two of the issue, and their kin, each refused as invalid_json."""
    bombs = [
        b"[" * 200_000 + b"]" * 200_000,
        b'{"type":"action","action":{"type":"bid","amount":' + b"9" * 5000 + b"}}",
        b'{"type":"action","action":{"type":"bid","amount":1e400}}',
        b'{"type":"action","action":{"type":"bid","amount":NaN}}',
        b'{"type":"action","action":{"type":"draw"},"action":{"type":"knock"}}',
        b'{"type":"action","action":{"type":"\\ud800"}}',
        b'{"type":"action","action":{"type":"draw"}}\x00',
        b'{"type":"action","action":{"type":"dr\xffaw"}}',
    ]
    for bomb in bombs:
        with pytest.raises(BotFault) as caught:
            action_of(bomb)
        assert caught.value.reason == INVALID_JSON, (bomb[:60], caught.value)


# -- the whole path: a real bot process writes the bytes in a match ------------------------

REPLAYER = """import json, sys
data = open("reply.bin", "rb").read()
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "act":
        moves += 1
        if moves == 2:
            sys.stdout.buffer.write(data + b"\\n")
            sys.stdout.flush()
            continue
        action = message["legal"][0]
        if action["type"] == "distribute":
            action = {"type": "distribute", "chips": {action["cards"][0]: action["total"]}}
        print(json.dumps({"type": "action", "action": action}), flush=True)
    else:
        break
"""
FAST = TimeControl(startup_ms=5000, per_move_ms=400, overage_ms=200, total_ms=20_000, end_grace_ms=200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=200), near_valid_replies().map(lambda case: case[1])), game=st.sampled_from(["allegory", "allegra"]))
def test_whole_reply_path_in_a_real_match(tmp_path_factory, data, game):
    folder: Path = tmp_path_factory.mktemp("replayer")
    (folder / "main.py").write_text(REPLAYER)
    (folder / "reply.bin").write_bytes(data)
    (folder / "cardroom.toml").write_text('entry = "main.py"\nprotocol = 1\n')
    record = run_match(game, ["builtin:random", str(folder)], seed=3, time=FAST, launcher=PlainLauncher())
    forfeits = record.replay["result"]["forfeits"]
    assert all(f["seat"] == 1 for f in forfeits)
    if forfeits:
        assert forfeits[0]["reason"] in REFUSALS | {ILLEGAL_ACTION}, record.forfeits[0].detail
        _check_detail(record.forfeits[0])
    text = json.dumps(record.replay, allow_nan=False)
    text.encode("utf-8")
    record.logs[1].encode("utf-8")
    verify(json.loads(text))


# -- the nesting pre-scan -------------------------------------------------------------------


def _nesting_by_tokens(line: bytes, limit: int) -> bool:
    """The pre-scan as it was written first, token by token (the reference)."""
    import re

    depth = 0
    for token in re.finditer(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', line):
        char = token.group()[:1]
        if char in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif char in b"]}":
            depth -= 1
    return False


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b"\n", b",", b"\xff", b"1"]), max_size=80),
    st.sampled_from([0, 1, 3, 16]),
)
def test_the_nesting_prescan_counts_as_the_token_by_token_reference(parts, limit):
    """The pre-scan is C code throughout now (issue 36: 30 ms for a 64 KiB
    API body token by token); it must answer exactly as the reference,
    brackets inside strings, escapes, unterminated strings and all."""
    from cardroom.players import _nested_deeper

    line = b"".join(parts)
    assert _nested_deeper(line, limit) == _nesting_by_tokens(line, limit)
