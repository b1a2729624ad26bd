"""A strict check of replay format v1's shape, written from
docs/replay-format.md alone, as an independent verifier reads a replay: exactly the
keys it names, of the types it names. ``engine.replay.verify`` (and
``cardroom verify``) re-plays the game; this checks what it leaves alone,
such as a key too many or a ``result`` without ``forfeits``. Standard
library only: research_conformance.py imports it inside the wheel's venv."""

from __future__ import annotations

from typing import Any

TOP = {"format", "version", "game", "options", "num_players", "seed", "players", "events", "result"}


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def strict_problems(doc: Any) -> list[str]:
    """Every way ``doc`` departs from replay v1's shape (empty when none)."""
    if not isinstance(doc, dict):
        return ["not an object"]
    problems = []
    if set(doc) != TOP:
        problems.append(f"top-level keys {sorted(doc)}, not {sorted(TOP)}")
    if doc.get("format") != "cardroom-replay" or doc.get("version") != 1:
        problems.append("format/version are not cardroom-replay/1")
    if doc.get("game") not in ("allegory", "allegra"):
        problems.append(f"game {doc.get('game')!r}")
    if not isinstance(doc.get("options"), dict):
        problems.append("options is not an object")
    n = doc.get("num_players")
    if not _int(n) or not 2 <= n <= 6:
        problems.append(f"num_players {n!r}")
        n = 0
    if not _int(doc.get("seed")):
        problems.append("seed is not an integer")
    players = doc.get("players")
    if not isinstance(players, list) or len(players) != n:
        problems.append("players does not list every seat")
    else:
        for i, player in enumerate(players):
            if not isinstance(player, dict) or set(player) != {"seat", "name", "bot"} or player["seat"] != i:
                problems.append(f"players[{i}] is not exactly {{seat: {i}, name, bot}}")
            elif not isinstance(player["name"], str) or not isinstance(player["bot"], str):
                problems.append(f"players[{i}] name and bot must be strings")
    events = doc.get("events")
    if not isinstance(events, list):
        problems.append("events is not a list")
        events = []
    for i, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("action"), dict):
            problems.append(f"events[{i}] is not an object with an action object")
        elif event.get("by") == "chance":
            if set(event) != {"by", "action"}:
                problems.append(f"events[{i}]: a chance event has exactly by and action, not {sorted(event)}")
        elif not _int(event.get("by")) or not 0 <= event["by"] < max(n, 1):
            problems.append(f"events[{i}].by {event.get('by')!r}")
        elif not {"by", "action", "ms"} <= set(event) <= {"by", "action", "ms", "forfeit"}:
            problems.append(f"events[{i}]: a decision has by, action, ms (and forfeit), not {sorted(event)}")
        elif not _int(event["ms"]) or event["ms"] < 0 or event.get("forfeit", True) is not True:
            problems.append(f"events[{i}]: ms must be a whole number of ms, forfeit only ever true")
    result = doc.get("result")
    if not isinstance(result, dict) or set(result) != {"scores", "ranks", "forfeits"}:
        problems.append(f"result has keys {sorted(result) if isinstance(result, dict) else result!r}, not forfeits, ranks, scores")
        return problems
    for key in ("scores", "ranks"):
        if not isinstance(result[key], list) or len(result[key]) != n or not all(_int(v) for v in result[key]):
            problems.append(f"result.{key} must list {n} integers")
    if not isinstance(result["forfeits"], list):
        problems.append("result.forfeits is not a list")
    else:
        for i, forfeit in enumerate(result["forfeits"]):
            if not isinstance(forfeit, dict) or set(forfeit) != {"seat", "reason", "event"}:
                problems.append(f"result.forfeits[{i}] is not exactly {{seat, reason, event}}")
    return problems
