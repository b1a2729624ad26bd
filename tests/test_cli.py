"""The ``cardroom`` command line as a user runs it: a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sdk.replay_schema import strict_problems

ROOT = Path(__file__).resolve().parents[1]
REPLAYS = ROOT / "tests" / "data" / "replays"


def cardroom(*args: str, env_none: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "CARDROOM_SANDBOX": "none"} if env_none else None
    return subprocess.run(
        [sys.executable, "-m", "cardroom", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )


def test_play_prints_result_and_writes_a_verifiable_replay(tmp_path):
    replay = tmp_path / "m.json"
    out = cardroom("play", "allegory", "builtin:greedy", "builtin:random", "builtin:random", "--seed", "5", "--replay", str(replay))
    assert out.returncode == 0, out.stderr
    assert "allegory, 3 players, seed 5" in out.stdout
    assert "builtin:greedy" in out.stdout
    doc = json.loads(replay.read_text())
    assert doc["format"] == "cardroom-replay" and doc["seed"] == 5
    check = cardroom("verify", str(replay))
    assert check.returncode == 0 and ": OK:" in check.stdout


def test_play_with_option_is_recorded_in_the_replay(tmp_path):
    replay = tmp_path / "m.json"
    out = cardroom("play", "allegory", "builtin:random", "builtin:random", "--option", "unique_morals=true", "--replay", str(replay))
    assert out.returncode == 0, out.stderr
    assert json.loads(replay.read_text())["options"] == {"unique_morals": True}


def test_play_writes_each_seats_log(tmp_path):
    bot = ROOT / "tests" / "bots" / "misbehaving_bot.py"
    out = cardroom("play", "allegra", str(bot), "builtin:random", "--logs", str(tmp_path / "logs"), "--seed", "2")
    assert out.returncode == 0, out.stderr
    assert "move 1" in (tmp_path / "logs" / "seat-0.log").read_text()
    assert (tmp_path / "logs" / "seat-1.log").exists()


CRASHER = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        print(json.dumps({"type": "ready"}), flush=True)
    elif message["type"] == "act":
        for n in range(30):
            sys.stderr.write(f"thinking, line {n}\\n")
        sys.stderr.write("colour \\x1b[31mred\\x1b[0m and a bell \\x07\\n")
        raise RuntimeError("deliberate crash")
"""


@pytest.mark.parametrize("with_logs", [False, True])
def test_play_shows_the_end_of_a_crashed_bots_stderr(tmp_path, with_logs):
    """Issue 25: a bot that crashed said only "crash" unless --logs was
    given. Now its stderr's last lines are shown, control characters
    escaped, with where the whole log is."""
    bot = tmp_path / "crasher.py"
    bot.write_text(CRASHER)
    logs = ["--logs", str(tmp_path / "logs"), "--replay", str(tmp_path / "m.json")] if with_logs else []
    out = cardroom("play", "allegra", str(bot), "builtin:random", "--seed", "2", *logs)
    assert out.returncode == 0, out.stderr
    assert "crash at event" in out.stdout
    if with_logs:  # the runner's replay of a forfeited match is replay v1 exactly
        replay = json.loads((tmp_path / "m.json").read_text())
        assert strict_problems(replay) == [] and replay["result"]["forfeits"][0]["seat"] == 0
    err = out.stderr
    assert "seat 0 forfeited (crash); the last 10 of the 35 lines of its stderr" in err, err
    assert "  | RuntimeError: deliberate crash" in err
    assert "  | colour \\x1b[31mred\\x1b[0m and a bell \\x07" in err and "\x1b" not in err and "\x07" not in err
    assert "thinking, line 25" in err and "thinking, line 24" not in err  # only the tail (the traceback is 4 lines)
    where = err.split("(the whole log is ")[1].split("):")[0]
    if with_logs:
        assert where == str(tmp_path / "logs" / "seat-0.log")
    full = Path(where).read_text()
    try:
        assert "thinking, line 0\n" in full and "RuntimeError: deliberate crash" in full
    finally:
        if not with_logs:
            Path(where).unlink()


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "chess", "builtin:random", "builtin:random"], "unknown game 'chess'"),
        (["play", "allegra", "builtin:random"], "2 to 6 players, not 1"),
        (["play", "allegra"] + ["builtin:random"] * 7, "2 to 6 players, not 7"),
        (["play", "allegra", "builtin:random", "builtin:nobody"], "unknown built-in bot 'nobody'"),
        (["play", "allegra", "builtin:random", "no/such/bot.py"], "no such file or folder"),
        (["play", "allegory", "builtin:random", "builtin:random", "--option", "speed=3"], "no option 'speed'"),
        (["play", "allegory", "builtin:random", "builtin:random", "--option", "unique_morals=maybe"], "true or false"),
        (["play", "allegory", "builtin:random", "builtin:random", "--option", "unique_morals"], "KEY=VALUE"),
        (["play", "allegory", "builtin:random", "builtin:random", "--seed", "x"], "invalid int value"),
        (["fly"], "invalid choice"),
        (["verify", "no-such-file.json"], "cannot read"),
    ],
)
def test_bad_arguments_give_one_line_and_nonzero_exit(args, message):
    out = cardroom(*args)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert message in lines[0]
    assert "Traceback" not in out.stderr


def test_verify_accepts_every_example_replay():
    files = sorted(str(p) for p in REPLAYS.glob("*.json"))
    out = cardroom("verify", *files)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(": OK:") == len(files) == 9


def test_verify_rejects_a_tampered_replay_naming_the_event(tmp_path):
    doc = json.loads((REPLAYS / "allegra-3p-knocks.json").read_text())
    doc["events"][12]["action"]["slot"] = [0, 0, 0]  # a knocker may only place in its own area
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = cardroom("verify", str(bad))
    assert out.returncode == 1
    assert "event 12" in out.stderr and "INVALID" in out.stderr


def test_verify_rejects_a_file_that_is_not_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = cardroom("verify", str(bad))
    assert out.returncode == 1
    assert "not valid JSON (line 1" in out.stderr


def test_games_lists_both_games():
    out = cardroom("games")
    assert out.returncode == 0
    assert "allegory" in out.stdout and "unique_morals=false" in out.stdout
    assert "allegra" in out.stdout


def test_two_stalling_allegra_bots_end_every_round_at_the_turn_limit(tmp_path):
    # Two bots that never turn a card up by choice: before the turn limit this
    # match could run for ever; now every round ends after its 400th turn.
    replay = tmp_path / "stall.json"
    staller = "tests/bots/allegra_staller.py"
    out = cardroom("play", "allegra", staller, staller, "--seed", "3", "--replay", str(replay), env_none=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(replay.read_text())
    assert doc["result"]["forfeits"] == []
    check = cardroom("verify", str(replay))
    assert check.returncode == 0 and ": OK:" in check.stdout, check.stdout + check.stderr
    from engine.replay import replay_to_end

    details = replay_to_end(doc).score_details()
    assert details["turn_limit_ends"] == [True, True, True]
    assert details["enders"] == [None, None, None]


def test_bench_reports_engine_sampled_world_and_search_speed():
    """Both forms of the engine side by side: the reference, the compiled
    form (where make setup built it: this checkout) and their ratio."""
    import engine

    out = cardroom("bench", "--game", "allegra", "--players", "2", "--seconds", "0.2")
    assert out.returncode == 0, out.stderr
    forms, *tables = out.stdout.split("\n\n")
    assert forms.startswith("reference = pure Python; ") and "load average" in forms, forms
    assert len(tables) == 3, out.stdout
    built = engine.ENGINE_FORM == "compiled"
    assert ("compiled = mypyc" in forms) == built, forms
    for table, heading in zip(tables, ("decisions/s", "sampled-world playouts/s", "ismcts iterations/s")):
        header, row = table.strip().splitlines()
        assert f"{heading} reference" in header and "compiled" in header
        fields = row.split()
        assert fields[:2] == ["allegra", "2"]
        numbers = [x for x in fields[2:] if x != "-"]
        assert len(numbers) == (len(fields) - 2 if built else (len(fields) - 2) // 3), row
        assert all(float(x.replace(",", "")) > 0 for x in numbers), row
