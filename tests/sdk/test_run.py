"""``cardroom_sdk.run``: protocol v1 around a ``choose`` function."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap

import pytest

from cardroom_sdk import Context, run

START = {
    "type": "start",
    "protocol": 1,
    "game": "allegory",
    "seat": 1,
    "num_players": 2,
    "match_id": "m-1",
    "options": {"unique_morals": False},
    "time": {"per_move_ms": 1000, "total_ms": 60000},
}
LEGAL = [{"type": "rest"}, {"type": "bid", "amount": 1}]
ACT = {"type": "act", "observation": {"seat": 1, "round": 1}, "legal": LEGAL, "time_left_ms": 59000}
DISTRIBUTE = {
    "type": "act",
    "observation": {"seat": 1, "round": 2},
    "legal": [{"type": "distribute", "total": 3, "cards": ["owl:5", "key:1"]}],
    "time_left_ms": 58000,
}


def exchange(choose, *messages, **kwargs):
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    out = io.StringIO()
    run(choose, stdin=io.StringIO(lines), stdout=out, **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_two_argument_choose_answers_start_and_each_act_and_stops_at_end():
    calls = []

    def choose(observation, legal):
        calls.append((observation, legal))
        return legal[-1]

    replies = exchange(choose, START, ACT, {"type": "end", "observation": {}, "result": {}}, ACT)
    assert replies == [{"type": "ready"}, {"type": "action", "action": {"type": "bid", "amount": 1}}]
    assert calls == [(ACT["observation"], LEGAL)]  # nothing after "end" is read


def test_a_three_argument_choose_gets_the_start_the_time_left_and_the_history():
    contexts = []

    def choose(observation, legal, context):
        contexts.append((context.time_left_ms, list(context.history), context.seat, context.per_move_ms))
        assert isinstance(context, Context) and context.start == START
        return legal[0]

    second = dict(ACT, observation={"seat": 1, "round": 2}, time_left_ms=58500)
    exchange(choose, START, ACT, second)
    assert contexts == [(59000, [], 1, 1000), (58500, [ACT["observation"]], 1, 1000)]


def test_the_context_random_generator_owes_nothing_to_what_the_match_sends(monkeypatch):
    """Two runs sent the very same messages draw differently (the seed is the
    operating system's, which no other seat sees); CARDROOM_BOT_SEED, set by
    the author, replays the draws whatever the match id."""
    draws = []

    def choose(observation, legal, context):
        draws.append(context.rng.getrandbits(64))
        return legal[0]

    monkeypatch.delenv("CARDROOM_BOT_SEED", raising=False)
    exchange(choose, START, ACT)
    exchange(choose, START, ACT)
    assert draws[0] != draws[1]
    monkeypatch.setenv("CARDROOM_BOT_SEED", "debug-7")
    exchange(choose, START, ACT)
    exchange(choose, dict(START, match_id="m-2", seat=0), ACT)
    assert draws[2] == draws[3] != draws[0]


def test_an_exception_in_choose_is_logged_and_answered_with_a_legal_action(capsys):
    def choose(observation, legal):
        raise RuntimeError("my bug")

    replies = exchange(choose, START, ACT, DISTRIBUTE)
    assert replies[1:] == [
        {"type": "action", "action": {"type": "rest"}},
        {"type": "action", "action": {"type": "distribute", "chips": {"owl:5": 3}}},
    ]
    err = capsys.readouterr()
    assert "RuntimeError: my bug" in err.err and "Traceback" in err.err
    assert err.out == ""
    with pytest.raises(RuntimeError, match="my bug"):
        exchange(choose, START, ACT, fallback_on_error=False)


def test_a_line_that_is_not_json_is_reported_on_stderr_and_skipped(capsys):
    out = io.StringIO()
    run(lambda o, legal: legal[0], stdin=io.StringIO("not json\n" + json.dumps(ACT) + "\n"), stdout=out)
    assert json.loads(out.getvalue()) == {"type": "action", "action": {"type": "rest"}}
    assert "not JSON" in capsys.readouterr().err


BOT = textwrap.dedent(
    """
    import cardroom_sdk
    cardroom_sdk.run(lambda observation, legal: legal[0])
    """
)


def test_a_closed_pipe_ends_the_bot_quietly(tmp_path):
    """The platform stops reading (the match is over, or it gave up on the
    bot): the bot's next answer meets a closed pipe, and it exits 0 without
    a traceback in its log."""
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    proc = subprocess.Popen(
        [sys.executable, str(bot)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdin.write((json.dumps(START) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline()) == {"type": "ready"}
    proc.stdout.close()
    proc.stdin.write((json.dumps(ACT) + "\n").encode())
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stderr.read().decode() == ""


def test_an_act_without_an_observation_or_legal_actions_is_reported_and_skipped(capsys):
    def choose(observation, legal):
        raise AssertionError("not called")

    replies = exchange(choose, START, {"type": "act", "legal": LEGAL}, dict(ACT, legal=[]), {"type": "act"})
    assert replies == [{"type": "ready"}]
    assert capsys.readouterr().err.count("ignoring an act message") == 3
