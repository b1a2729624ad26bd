"""What the PettingZoo and OpenSpiel interfaces share, so that both play the
same action indices the same way, score alike and record alike (numpy,
pettingzoo and pyspiel are not needed here)."""

from __future__ import annotations

from typing import Any

from engine.core import CHANCE
from engine.replay import document


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
    action = codec.action_to_protocol_fast(obs, index)
    if action["type"] != "distribute":
        return action, None
    pending, whole = codec.add_chip(obs, pending, index, state.legal_actions(seat)[0]["total"])
    return whole, pending


def replay_document(game: Any, seed: int | None, names: list[str], bot: str, events: list[dict[str, Any]],
                    state: Any, forfeits: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """The game so far in replay format v1 (``engine.replay.verify``, and
    ``cardroom verify``, check a finished one), written by the engine's one
    replay writer; ``forfeits``: the seats whose program forfeited
    (``{"seat", "reason", "event"}``), their events from then on marked."""
    forfeits = forfeits or []
    seats = {f["seat"]: f["event"] for f in forfeits}
    marked = [
        {**e, "forfeit": True} if e["by"] in seats and e["by"] != CHANCE and i >= seats[e["by"]] else e
        for i, e in enumerate(events)
    ]
    players = [{"seat": s, "name": name, "bot": bot} for s, name in enumerate(names)]
    result = state.result(frozenset(seats)) if state.is_terminal() else None
    return document(game, seed if seed is not None else 0, players, marked, result, forfeits)
