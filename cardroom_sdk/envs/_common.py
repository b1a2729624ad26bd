"""What the PettingZoo and OpenSpiel interfaces share, so that both play the
same action indices the same way, score alike and record alike (numpy,
pettingzoo and pyspiel are not needed here)."""

from __future__ import annotations

from typing import Any

from engine.replay import FORMAT, VERSION


def rank_rewards(ranks: list[int]) -> list[float]:
    """(n - rank) / (n - 1): 1 for first, 0 for last, as the ladder scores a match."""
    n = len(ranks)
    return [(n - r) / (n - 1) for r in ranks]


def decision_step(codec: Any, state: Any, seat: int, obs: dict[str, Any], index: int,
                  pending: list[int] | None) -> tuple[dict[str, Any] | None, list[int] | None]:  # fmt: skip
    """Action ``index`` of ``seat`` in the engine ``state`` (``obs`` is the
    seat's observation): ``(protocol action, None)``, or ``(None, chips per
    Pool position so far)`` while an Allegory ``distribute`` is being placed
    one chip a step (decision 107); the last chip gives the whole action."""
    action = codec.action_to_protocol(obs, index)
    if action["type"] != "distribute":
        return action, None
    pending, whole = codec.add_chip(obs, pending, index, state.legal_actions(seat)[0]["total"])
    return whole, pending


def replay_document(game: Any, seed: int | None, names: list[str], bot: str, events: list[dict[str, Any]],
                    state: Any) -> dict[str, Any]:  # fmt: skip
    """The game so far in replay format v1 (``engine.replay.verify``, and
    ``cardroom verify``, check a finished one)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": game.id,
        "options": dict(game.options),
        "num_players": game.num_players,
        "seed": seed if seed is not None else 0,
        "players": [{"seat": s, "name": name, "bot": bot} for s, name in enumerate(names)],
        "events": list(events),
        "result": state.result().as_dict() if state.is_terminal() else None,
    }
