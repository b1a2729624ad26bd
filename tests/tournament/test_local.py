"""`cardroom tournament` end to end with built-in bots: duplicate deals share
their chance events, seeds make an event replay byte for byte, the output
files and exit statuses are as docs/tournaments.md says."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cardroom.cli import main
from cardroom.tournament.seeds import KeyedChance
from engine.replay import load, verify

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cardroom", "tournament", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def replays(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "replays").iterdir())]


def chance_events(replay: dict, kind: str) -> list:
    return [e["action"] for e in replay["events"] if e["by"] == "chance" and e["action"]["type"] == kind]


@pytest.mark.parametrize("game,kind", [("allegra", "deal"), ("allegory", "setup")])
def test_duplicate_gives_every_entry_every_seat_on_the_same_cards(tmp_path, game, kind):
    out = tmp_path / "ev"
    bots = ["builtin:greedy", "builtin:random", "builtin:random", "builtin:greedy"]
    status = main(["tournament", game, *bots, "--format", "duplicate", "--deals", "2", "--seed", "9", "--out", str(out), "--jobs", "2"])
    assert status == 0
    doc = json.loads((out / "standings.json").read_text())
    by_deal: dict[int, list[dict]] = {}
    for m in doc["matches"]:
        by_deal.setdefault(m["deal"], []).append(m)
    assert sorted(by_deal) == [0, 1]
    for matches in by_deal.values():
        assert len(matches) == 4  # one table, four rotations
        seats = Counter((e, s) for m in matches for s, e in enumerate(m["seats"]))
        assert seats == Counter({(e, s): 1 for e in range(4) for s in range(4)})
        docs = [json.loads((out / m["replay"]).read_text()) for m in matches]
        first = chance_events(docs[0], kind)
        assert first  # Allegra: one deal per round; Allegory: the setup
        for replay in docs[1:]:
            assert chance_events(replay, kind) == first
            assert replay["seed"] == docs[0]["seed"]
        for replay in docs:
            assert verify(replay).result.ranks == replay["result"]["ranks"]
    # the two deals are different cards
    d0 = json.loads((out / by_deal[0][0]["replay"]).read_text())
    d1 = json.loads((out / by_deal[1][0]["replay"]).read_text())
    assert chance_events(d0, kind) != chance_events(d1, kind)


def test_reshuffles_draw_from_their_own_stream_whatever_else_was_drawn():
    class FakeState:
        def __init__(self, kind):
            self.kind = kind

        def chance_kind(self):
            return self.kind

    a, b = KeyedChance(77), KeyedChance(77)
    # a draws two deals before its first reshuffle, b one: the reshuffle
    # stream is the same
    a(FakeState("deal")).random()
    a(FakeState("deal")).random()
    b(FakeState("deal")).random()
    assert [a(FakeState("reshuffle")).random() for _ in range(3)] == [b(FakeState("reshuffle")).random() for _ in range(3)]
    assert a(FakeState("deal")).random() != random.Random(77).random()


def without_timing(replay: dict) -> str:
    """The replay's bytes with the thinking times (``ms``, measured, never
    seeded) set to 0."""
    for e in replay["events"]:
        if "ms" in e:
            e["ms"] = 0
    return json.dumps(replay, separators=(",", ":"))


@pytest.mark.parametrize("fmt", ["round-robin", "swiss", "duplicate"])
def test_the_same_seed_replays_the_event_byte_for_byte(tmp_path, fmt):
    bots = ["builtin:greedy", "builtin:random", "builtin:random", "builtin:greedy"]
    deals = "1" if fmt == "duplicate" else "2"
    args = ["allegra", *bots, "--format", fmt, "--table-size", "3", "--deals", deals, "--seed", "21"]
    if fmt == "swiss":
        args += ["--rounds", "3"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["tournament", *args, "--out", str(one), "--jobs", "1"]) == 0
    assert main(["tournament", *args, "--out", str(two), "--jobs", "2"]) == 0
    assert (one / "standings.json").read_bytes() == (two / "standings.json").read_bytes()
    names = sorted(p.name for p in (one / "replays").iterdir())
    assert names == sorted(p.name for p in (two / "replays").iterdir())
    assert len(names) == json.loads((one / "standings.json").read_text())["event"]["matches"]
    for name in names:
        a = json.loads((one / "replays" / name).read_text())
        b = json.loads((two / "replays" / name).read_text())
        assert without_timing(a) == without_timing(b), name
    # another seed is another event
    three = tmp_path / "three"
    assert main(["tournament", *args[:-1], "22", "--out", str(three), "--jobs", "1"]) == 0
    assert (three / "standings.json").read_bytes() != (one / "standings.json").read_bytes()


def test_cli_output_when_piped_is_the_table_only(tmp_path):
    out = tmp_path / "ev"
    proc = run_cli("allegory", "builtin:greedy", "builtin:random", "--format", "round-robin", "--deals", "6",
                   "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress bar when not on a terminal
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("allegory round-robin (complete), 2 entries at tables of 2, 6 deal(s)")
    assert any(line.split()[:2] == ["1", "greedy"] for line in lines)
    assert any("95% CI (t-per-match)" in line for line in lines)
    assert any(line.strip().startswith("greedy - random:") for line in lines)
    # the columns a reader cannot guess are explained right under the table
    header = next(k for k, line in enumerate(lines) if "95% CI" in line and "h2h" in line)
    legend = [line.strip() for line in lines[header + 3 : header + 3 + 4]]  # after the two entries' rows
    assert legend[1].startswith("margin: per game, score minus the mean of the others at the table"), lines
    assert legend[2].startswith("h2h: among entries level on points and margin, +1"), lines
    assert "/docs/tournaments/#standings" in legend[3]
    standings = json.loads((out / "standings.json").read_text())
    assert standings["event"]["matches"] == 6 and len(standings["matches"]) == 6
    for p in (out / "replays").iterdir():
        verify(load(p))


@pytest.mark.parametrize(
    "args,message",
    [
        (["allegra", "builtin:greedy", "--format", "swiss"], "at least 2 bots"),
        (["allegra", *["builtin:random"] * 7, "--format", "swiss"], "--table-size is needed with 7 bots"),
        (["allegra", "builtin:greedy", "builtin:nobody", "--format", "swiss"], "unknown built-in bot 'nobody'"),
        (["allegra", "builtin:greedy", "/no/such/bot.py", "--format", "swiss"], "no such file or folder"),
        (["allegra", "builtin:greedy", "builtin:random", "--format", "knockout"], "invalid choice: 'knockout'"),
        (["allegra", "builtin:greedy", "builtin:random", "--format", "swiss", "--table-size", "3"], "a table of 3 needs at least 3"),
        (["allegra", "builtin:greedy", "builtin:random", "--format", "swiss", "--jobs", "0"], "--jobs must be at least 1"),
        (["allegory", "builtin:greedy", "builtin:random", "--format", "swiss", "--option", "colour=red"], "no option 'colour'"),
        (["chess", "builtin:greedy", "builtin:random", "--format", "swiss"], "unknown game"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(tmp_path, args, message):
    proc = run_cli(*args, "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x").exists()
